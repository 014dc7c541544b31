"""The commit log alone: atomic exclusive entries, folding, conflicts, alter/reset, crash repair."""

from __future__ import annotations

import json
import os

import pytest

from runtime.api.records import TopicPartition
from runtime.connectors.spark.commit_log import COMPACT_INTERVAL, LOG_DIR, CommitConflict, CommitLog, committed_files
from runtime.connectors.spark.dataset import data_files

T0, T1 = TopicPartition("t", 0), TopicPartition("t", 1)


def stage(root, commit_log: CommitLog, writer: str, names: list[str]) -> str:
    staging = commit_log.new_staging(writer)
    for name in names:
        path = root / staging / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(name)
    return staging


def test_entries_fold_in_order_and_a_second_reader_sees_them(tmp_path):
    log = CommitLog(tmp_path)
    assert log.append({T0: 10}, writer="w") == 0
    assert log.append({T1: 5}, writer="w") == 1
    assert log.append({T0: 20}, writer="w") == 2
    reader = CommitLog(tmp_path)
    assert reader.refresh().offsets == {T0: 20, T1: 5}
    assert reader.state.batch == 2


def test_two_writers_never_share_a_batch_number(tmp_path):
    a, b = CommitLog(tmp_path), CommitLog(tmp_path)
    a.refresh()
    b.refresh()  # both believe the next number is 0
    assert a.append({T0: 1}, writer="a") == 0
    assert b.append({T1: 1}, writer="b") == 1  # lost the race for 0, took 1 without overwriting
    assert CommitLog(tmp_path).refresh().offsets == {T0: 1, T1: 1}
    assert sorted(os.listdir(tmp_path / LOG_DIR)) == [f"{0:020d}.json", f"{1:020d}.json"]


def test_a_batch_built_on_stale_offsets_is_refused(tmp_path):
    a, b = CommitLog(tmp_path), CommitLog(tmp_path)
    a.append({T0: 10}, writer="a")
    b.refresh()
    a.append({T0: 20}, writer="a")  # e.g. a zombie task, or the new owner of the partition
    with pytest.raises(CommitConflict):
        b.append({T0: 20}, ["x.parquet"], writer="b", expected={T0: 10})
    assert CommitLog(tmp_path).refresh().files == []


def test_files_are_visible_only_after_their_entry(tmp_path):
    log = CommitLog(tmp_path)
    staging = stage(tmp_path, log, "w", ["part-1.parquet", "k=a/part-2.parquet"])
    assert data_files(tmp_path) == []  # staged files are hidden from readers
    log.append({T0: 3}, ["part-1.parquet", "k=a/part-2.parquet"], staging, writer="w")
    assert data_files(tmp_path) == []  # committed but not yet published: still hidden, never duplicated
    assert log.publish() == 2
    assert data_files(tmp_path) == ["k=a/part-2.parquet", "part-1.parquet"]
    assert not (tmp_path / staging).exists()


def test_crash_between_files_and_entry_discards_the_files(tmp_path):
    log = CommitLog(tmp_path)
    log.append({T0: 3}, writer="w")
    stage(tmp_path, log, "w", ["part-9.parquet"])  # ... and the process dies before append
    restarted = CommitLog(tmp_path)
    restarted.recover("w")
    assert restarted.offsets == {T0: 3}  # the records are consumed again from here
    assert data_files(tmp_path) == []
    assert not (tmp_path / "_connect_staging" / "w").exists()


def test_crash_between_entry_and_publish_is_repaired_by_the_next_reader(tmp_path):
    log = CommitLog(tmp_path)
    staging = stage(tmp_path, log, "w", ["part-1.parquet"])
    log.append({T0: 3}, ["part-1.parquet"], staging, writer="w")  # ... and dies before publish
    assert committed_files(tmp_path) == [str(tmp_path / "part-1.parquet")]
    assert data_files(tmp_path) == ["part-1.parquet"]


def test_recovery_of_one_writer_keeps_another_writers_staging(tmp_path):
    log = CommitLog(tmp_path)
    other = stage(tmp_path, log, "other", ["part-2.parquet"])
    CommitLog(tmp_path).recover("w")
    assert (tmp_path / other / "part-2.parquet").exists()


def test_alter_and_reset_rewrite_the_offsets(tmp_path):
    log = CommitLog(tmp_path)
    log.append({T0: 10, T1: 10}, writer="w")
    log.append({T0: 4, T1: None}, writer="alter")
    assert CommitLog(tmp_path).refresh().offsets == {T0: 4}
    log.append({}, writer="reset", reset=True)
    assert CommitLog(tmp_path).refresh().offsets == {}
    log.append({T1: 7}, writer="w")
    assert CommitLog(tmp_path).refresh().offsets == {T1: 7}


def test_snapshots_bound_reads_and_keep_the_state(tmp_path):
    log = CommitLog(tmp_path)
    for i in range(COMPACT_INTERVAL + 3):
        staging = stage(tmp_path, log, "w", [f"part-{i}.parquet"])
        log.append({T0: i + 1}, [f"part-{i}.parquet"], staging, writer="w")
        log.publish()
    compact = tmp_path / LOG_DIR / f"{COMPACT_INTERVAL:020d}.compact.json"
    assert json.loads(compact.read_text())["batch"] == COMPACT_INTERVAL
    # Older entries are no longer needed once a snapshot exists: a reader starts from it.
    for i in range(COMPACT_INTERVAL):
        (tmp_path / LOG_DIR / f"{i:020d}.json").unlink()
    state = CommitLog(tmp_path).refresh()
    assert state.offsets == {T0: COMPACT_INTERVAL + 3}
    assert sorted(state.files) == sorted(f"part-{i}.parquet" for i in range(COMPACT_INTERVAL + 3))


def test_a_gap_in_the_log_is_an_error_not_silent_loss(tmp_path):
    log = CommitLog(tmp_path)
    log.append({T0: 1}, writer="w")
    log.append({T0: 2}, writer="w")
    (tmp_path / LOG_DIR / f"{0:020d}.json").rename(tmp_path / "elsewhere.json")
    with pytest.raises(Exception, match="missing entry 0"):
        CommitLog(tmp_path).refresh()
