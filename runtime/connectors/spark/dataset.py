"""Where a dataset lives on disk, and which of its files are data (the rules Spark's readers use).

Only local (or locally mounted, e.g. NFS shared with a cluster) paths are supported: the commit
log relies on the POSIX guarantees of `link` (exclusive create) and `rename` (atomic move).
"""

from __future__ import annotations

import os
from pathlib import Path

from ...api.errors import ConfigError

FORMATS = ("parquet", "orc", "json", "csv")


def local_root(path: str) -> Path:
    """The dataset directory of a `path` config (`/x`, `file:/x` or `file:///x`)."""
    if path.startswith("file:"):
        path = path[len("file:") :]
        while path.startswith("//"):
            path = path[1:]
    elif "://" in path:
        raise ConfigError("path", path, "only local or locally mounted paths (file:) are supported")
    return Path(path).absolute()


def hidden(name: str) -> bool:
    """Spark and Hadoop readers skip names starting with `_` or `.` (staging dirs, logs, .crc)."""
    return name.startswith("_") or name.startswith(".")


def data_files(root: Path) -> list[str]:
    """Visible data files under `root`, relative and sorted (partition dirs `col=value` included)."""
    found: list[str] = []
    if not root.is_dir():
        return found
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = [d for d in dirnames if not hidden(d)]
        for name in filenames:
            if not hidden(name):
                found.append(os.path.relpath(os.path.join(dirpath, name), root))
    return sorted(found)
