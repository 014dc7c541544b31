"""The sink's commit log: which data files and which Kafka offsets a dataset holds, committed together.

Modelled on Spark's file sink (`_spark_metadata`): a batch is written to a hidden staging directory,
then log entry N (`_connect_log/<N>.json`) is created atomically and exclusively (write a temp file,
`link` it to its final name: fails if N exists) listing the batch's files and the next offset of every
topic partition it covers. Only then are the files moved to their visible names ("published").
So a crash at any moment leaves either no entry (the staging files are garbage and the records are
consumed again from the logged offsets) or an entry (whose files any later writer or reader
publishes). Spark and Hadoop readers skip `_`-prefixed paths, so plain `spark.read` never sees
uncommitted data.

State is the fold of the entries in order: `offsets` override per partition (null removes one),
`reset` clears all offsets. Every 10th entry a `<N>.compact.json` snapshot bounds start-up reads.
Several tasks may share a log: a writer passes the offsets its batch assumed, and a commit whose
partitions moved meanwhile (another task, a zombie) raises CommitConflict instead of duplicating.
"""

from __future__ import annotations

import json
import logging
import os
import re
import shutil
import time
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ...api.errors import ConnectError
from ...api.records import TopicPartition

log = logging.getLogger(__name__)

LOG_DIR = "_connect_log"
STAGING_DIR = "_connect_staging"
COMPACT_INTERVAL = 10
VERSION = 1
_ENTRY = re.compile(r"^(\d{20})\.json$")
_COMPACT = re.compile(r"^(\d{20})\.compact\.json$")


class CommitConflict(ConnectError):
    """Another writer committed offsets for a partition of this batch since it was prepared."""


@dataclass
class LogState:
    batch: int = -1
    offsets: dict[TopicPartition, int] = field(default_factory=dict)
    files: list[str] = field(default_factory=list)

    def apply(self, entry: Mapping[str, Any]) -> None:
        self.batch = entry["batch"]
        if entry.get("reset"):
            self.offsets.clear()
        for item in entry.get("offsets", []):
            tp = TopicPartition(item["topic"], int(item["partition"]))
            if item["offset"] is None:
                self.offsets.pop(tp, None)
            else:
                self.offsets[tp] = int(item["offset"])
        self.files.extend(entry.get("files", []))


def _offsets_json(offsets: Mapping[TopicPartition, int | None]) -> list[dict[str, Any]]:
    return [
        {"topic": tp.topic, "partition": tp.partition, "offset": off}
        for tp, off in sorted(offsets.items(), key=lambda kv: (kv[0].topic, kv[0].partition))
    ]


class CommitLog:
    """Reads, appends to and repairs the commit log of the dataset at `root`."""

    def __init__(self, root: Path) -> None:
        self.root = Path(root)
        self.dir = self.root / LOG_DIR
        self.state = LogState()
        self._pending: list[dict[str, Any]] = []  # entries read but possibly not yet published

    # ---- reading -------------------------------------------------------------------------------
    def _entry_path(self, batch: int) -> Path:
        return self.dir / f"{batch:020d}.json"

    def _listing(self) -> tuple[list[int], list[int]]:
        entries, compacts = [], []
        if self.dir.is_dir():
            for name in os.listdir(self.dir):
                if m := _ENTRY.match(name):
                    entries.append(int(m.group(1)))
                elif m := _COMPACT.match(name):
                    compacts.append(int(m.group(1)))
        return sorted(entries), sorted(compacts)

    def refresh(self) -> LogState:
        """Fold entries committed since the last read (from the newest snapshot on first read)."""
        entries, compacts = self._listing()
        if self.state.batch < 0 and compacts:
            snapshot = json.loads((self.dir / f"{compacts[-1]:020d}.compact.json").read_text())
            self.state = LogState()
            self.state.apply(snapshot)
        for batch in entries:
            if batch <= self.state.batch:
                continue
            if batch != self.state.batch + 1:
                raise ConnectError(f"Commit log {self.dir} is missing entry {self.state.batch + 1}")
            entry = json.loads(self._entry_path(batch).read_text())
            self.state.apply(entry)
            if entry.get("files"):
                self._pending.append(entry)
        return self.state

    @property
    def offsets(self) -> dict[TopicPartition, int]:
        return dict(self.state.offsets)

    # ---- writing -------------------------------------------------------------------------------
    def _write_atomically(self, target: Path, body: Mapping[str, Any], exclusive: bool) -> bool:
        self.dir.mkdir(parents=True, exist_ok=True)
        tmp = self.dir / f".tmp-{uuid.uuid4().hex}"
        with open(tmp, "w") as out:
            json.dump(body, out)
            out.flush()
            os.fsync(out.fileno())
        renamed = False
        try:
            if exclusive:
                try:
                    os.link(tmp, target)  # atomic, and fails if another writer took this number
                except FileExistsError:
                    return False
            else:
                os.replace(tmp, target)
                renamed = True
            _fsync_dir(self.dir)
            return True
        finally:
            if not renamed:
                tmp.unlink(missing_ok=True)

    def append(
        self,
        offsets: Mapping[TopicPartition, int | None],
        files: Sequence[str] = (),
        staging: str | None = None,
        writer: str = "",
        reset: bool = False,
        expected: Mapping[TopicPartition, int | None] | None = None,
    ) -> int:
        """Commit one entry and return its batch number.

        `expected`: the committed offset (None = none) each partition had when the batch was built;
        if the log moved on for one of them, raise CommitConflict and commit nothing.
        """
        while True:
            self.refresh()
            if expected is not None:
                moved = {
                    tp: (want, self.state.offsets.get(tp))
                    for tp, want in expected.items()
                    if self.state.offsets.get(tp) != want
                }
                if moved:
                    raise CommitConflict(f"Offsets moved since the batch was prepared: {moved}")
            batch = self.state.batch + 1
            entry = {
                "version": VERSION,
                "batch": batch,
                "writer": writer,
                "timestamp": int(time.time() * 1000),
                "reset": reset,
                "offsets": _offsets_json(offsets),
                "files": list(files),
                "staging": staging,
            }
            if self._write_atomically(self._entry_path(batch), entry, exclusive=True):
                self.state.apply(entry)
                if files:
                    self._pending.append(entry)
                if batch > 0 and batch % COMPACT_INTERVAL == 0:
                    self._compact()
                return batch
            # Lost the race for this number: read what the other writer committed and re-check.

    def _compact(self) -> None:
        self.publish()  # a snapshot forgets staging dirs, so everything in it must be visible first
        snapshot = {
            "version": VERSION,
            "batch": self.state.batch,
            "reset": True,
            "offsets": _offsets_json(self.state.offsets),
            "files": self.state.files,
        }
        self._write_atomically(self.dir / f"{self.state.batch:020d}.compact.json", snapshot, exclusive=False)

    # ---- publishing and cleanup -----------------------------------------------------------------
    def publish(self) -> int:
        """Move committed files still in staging to their visible names; idempotent. Returns moves."""
        moved = 0
        for entry in self._pending:
            staging = entry.get("staging")
            if not staging:
                continue
            for rel in entry["files"]:
                source, target = self.root / staging / rel, self.root / rel
                if target.exists() or not source.exists():
                    continue
                target.parent.mkdir(parents=True, exist_ok=True)
                try:
                    os.rename(source, target)
                    moved += 1
                except FileNotFoundError:
                    pass  # another writer published it first
            shutil.rmtree(self.root / staging, ignore_errors=True)
        self._pending.clear()
        return moved

    def new_staging(self, writer: str) -> str:
        """A fresh staging dir (relative to the root) for one batch of `writer`."""
        return f"{STAGING_DIR}/{_safe(writer)}/{uuid.uuid4().hex}"

    def discard_staging(self, writer: str) -> None:
        """Drop `writer`'s uncommitted staging dirs (after `refresh` + `publish` saved committed ones)."""
        shutil.rmtree(self.root / STAGING_DIR / _safe(writer), ignore_errors=True)

    def recover(self, writer: str) -> None:
        """Start-up repair: read the log, publish committed files, delete this writer's leftovers."""
        self.refresh()
        self.publish()
        self.discard_staging(writer)


def _safe(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]", "_", name) or "writer"


def _fsync_dir(path: Path) -> None:
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def committed_files(root: Path | str) -> list[str]:
    """Absolute paths of the committed data files of a dataset (publishing any still in staging)."""
    commit_log = CommitLog(Path(root))
    commit_log.refresh()
    commit_log.publish()
    return [str(commit_log.root / rel) for rel in commit_log.state.files]
