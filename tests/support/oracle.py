"""The reference Apache Kafka Connect 3.9 (the "oracle"), run as a real Java process for conformance tests.

`../shared/tools/kafka-connect-oracle` beside the checkout (or $KAFKA_CONNECT_ORACLE) lays out the jars (`setup`, idempotent)
and runs `ConnectStandalone` (or, with `mode="distributed"`, `ConnectDistributed`) in the foreground. `OracleProcess`
mirrors `tests.support.worker.WorkerProcess`: `start()`, `.url`, `stop()`. Java missing -> `require` (skip locally,
fail in CI).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from runtime.embedded_broker import free_port

from .env import have_java, require
from .process import ServiceProcess
from .worker import write_properties

# shared/ sits beside the repository's checkout (in CI and on developers' machines)
CANDIDATE_TOOLS = (
    Path(__file__).resolve().parents[3] / "shared" / "tools" / "kafka-connect-oracle",
    Path("/work/shared/tools/kafka-connect-oracle"),
)


def oracle_tool() -> Path | None:
    """The launcher script, from $KAFKA_CONNECT_ORACLE, PATH, or the shared tools folder."""
    env = os.environ.get("KAFKA_CONNECT_ORACLE")
    if env:
        return Path(env)
    on_path = shutil.which("kafka-connect-oracle")
    if on_path:
        return Path(on_path)
    return next((tool for tool in CANDIDATE_TOOLS if tool.exists()), None)


def require_oracle() -> Path:
    """Java and the launcher must exist, and `setup` must have run (run it here: it is idempotent)."""
    require(have_java(), "Java 17+ (for the reference Kafka Connect oracle)")
    tool = oracle_tool()
    require(tool is not None and tool.exists(), "the kafka-connect-oracle launcher")
    assert tool is not None
    # setup downloads a wheel once and copies jars; later calls return at once.
    done = subprocess.run([str(tool), "setup"], capture_output=True, text=True, timeout=900)
    require(done.returncode == 0, f"kafka-connect-oracle setup (exit {done.returncode}: {done.stderr[-2000:]})")
    return tool


# C1-only JIT and one GC thread: the JVM starts sooner and leaves more of two cores to the tests.
FAST_START_JAVA_OPTIONS = "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC"

# A distributed worker logs each assignment it gets: `... got assignment: Assignment{..., leaderUrl='http://h:p/', ...}`.
LEADER_URL = re.compile(r"leaderUrl='([^']+)'")


class OracleProcess(ServiceProcess):
    """Java Kafka Connect 3.9 on loopback: standalone with its own offsets file under `workdir`, or a
    distributed worker (`mode="distributed"`; group and internal topics come from `props`).

    `java_options` go to the JVM through JAVA_TOOL_OPTIONS (the launcher fixes -Xms/-Xmx itself; options it
    does not set, e.g. C1-only compilation for a faster start in tests, still apply). Benchmarks pass none.
    """

    process_group = True  # the launcher is a shell script; its java child must get the signals too

    def __init__(
        self,
        workdir: Path,
        bootstrap_servers: str,
        props: dict[str, Any] | None = None,
        connector_files: Iterable[Path] = (),
        port: int | None = None,
        tool: Path | None = None,
        mode: str = "standalone",
        java_options: str = "",
    ) -> None:
        if mode not in ("standalone", "distributed"):
            raise ValueError(f"mode must be standalone or distributed, not {mode!r}")
        self.workdir = Path(workdir)
        self.workdir.mkdir(parents=True, exist_ok=True)
        self.port = port or free_port()
        super().__init__(self.workdir / f"oracle-{self.port}.log")
        self.tool = tool or oracle_tool() or CANDIDATE_TOOLS[0]
        defaults: dict[str, Any] = {
            "bootstrap.servers": bootstrap_servers,
            "listeners": f"http://127.0.0.1:{self.port}",
            "offset.flush.interval.ms": 1000,
            "key.converter": "org.apache.kafka.connect.json.JsonConverter",
            "value.converter": "org.apache.kafka.connect.json.JsonConverter",
            "consumer.session.timeout.ms": 6000,
            # The vendored reflections library is too old for the default hybrid_warn scan.
            "plugin.discovery": "service_load",
        }
        if mode == "standalone":
            defaults["offset.storage.file.filename"] = str(self.workdir / "connect.offsets")
        self.mode = mode
        self.java_options = java_options
        self.props = {**defaults, **(props or {})}
        self.connector_files = [Path(p) for p in connector_files]

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def leader_url(self) -> str | None:
        """Distributed mode: the group leader's REST URL from this worker's latest assignment (None before one)."""
        try:
            found = LEADER_URL.findall(self.log_path.read_text(errors="replace"))
        except OSError:
            return None
        return found[-1].rstrip("/") if found else None

    def start(self, timeout_s: float = 120.0) -> OracleProcess:
        props_file = write_properties(self.workdir / f"worker-{self.port}.properties", self.props)
        env = {**os.environ, "JAVA_TOOL_OPTIONS": self.java_options} if self.java_options else None
        files = [*map(str, self.connector_files)] if self.mode == "standalone" else []
        # Jetty answers 404 to everything until the resources are registered; /health is 200 only once
        # the herder is ready (standalone: after the command-line connectors; distributed: in the group).
        self.launch(
            [str(self.tool), self.mode, str(props_file), *files],
            self.url + "/health",
            timeout_s,
            env=env,
            poll_s=0.2,
            what=f"{self.mode} oracle",
        )
        return self

    def __enter__(self) -> OracleProcess:
        return self.start()
