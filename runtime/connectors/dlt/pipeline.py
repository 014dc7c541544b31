"""Building dlt destinations and pipelines from the sink's settings (dlt is imported here, on first use:
it costs a worker that never runs the sink nothing)."""

from __future__ import annotations

import logging
import os
import shutil
import tempfile
from typing import Any

from ...api.errors import ConfigError, ConnectError
from .config import DESTINATION, SinkSettings, safe_name
from .fence import Commit, Fence, LoadFenced, fenced_destination

log = logging.getLogger(__name__)


def _dlt() -> Any:
    # dlt reports usage to its vendor unless told not to: a worker sends nothing anywhere it was not
    # configured to (RUNTIME__DLTHUB_TELEMETRY=true allows it). And where Airflow is importable, dlt reads
    # every config value through Airflow's Variables (a database query each, tens of seconds per pipeline):
    # a worker is no Airflow task (PROVIDERS__ENABLE_AIRFLOW_SECRETS=true turns it back on).
    os.environ.setdefault("RUNTIME__DLTHUB_TELEMETRY", "false")
    os.environ.setdefault("PROVIDERS__ENABLE_AIRFLOW_SECRETS", "false")
    import dlt

    return dlt


def destination(settings: SinkSettings) -> Any:
    """The dlt destination named by `destination`, with the credentials and `destination.*` options given."""
    _dlt()
    from dlt.common.destination import Destination
    from dlt.common.destination.exceptions import UnknownDestinationModule

    kwargs: dict[str, Any] = dict(settings.destination_options)
    if settings.credentials:
        kwargs["credentials"] = settings.credentials
    try:
        return Destination.from_reference(settings.destination, **kwargs)
    except (UnknownDestinationModule, ImportError, TypeError) as exc:
        raise ConfigError(DESTINATION, settings.destination, f"not a dlt destination ({type(exc).__name__})") from None


def normalize_table(name: str) -> str:
    """The table name dlt gives `name` (its default naming convention)."""
    _dlt()
    from dlt.common.schema import Schema

    return Schema("connect").naming.normalize_table_identifier(name)


class LoadFailed(ConnectError):
    """A load did not commit. `load_id` names its rows, if any reached the destination; `fenced` is set when
    the cause was partitions that moved (see fence.py)."""

    def __init__(self, load_id: str | None, cause: BaseException) -> None:
        super().__init__(f"Load {load_id or '(not started)'} did not commit: {cause}")
        self.load_id = load_id
        self.fenced = _fenced_cause(cause)


def _fenced_cause(error: BaseException | None) -> LoadFenced | None:
    seen: set[int] = set()
    while error is not None and id(error) not in seen:
        if isinstance(error, LoadFenced):
            return error
        seen.add(id(error))
        error = getattr(error, "exception", None) or error.__cause__ or error.__context__
    return None


class Workspace:
    """A dlt pipeline in a working directory of its own: the sink's loads only pass through it (committed
    offsets live in the destination), so a task starts each time with a fresh one. Its destination commits
    through `fence` (fence.py); `guarantee` says how firmly."""

    def __init__(self, settings: SinkSettings, pipeline_name: str) -> None:
        dlt = _dlt()
        self._own_dir = settings.pipelines_dir is None
        self.dir = tempfile.mkdtemp(prefix="connect-dlt-") if self._own_dir else str(settings.pipelines_dir)
        self.fence = Fence()
        self.file_format = settings.file_format
        fenced, self.guarantee = fenced_destination(destination(settings), self.fence)
        self.pipeline = dlt.pipeline(
            pipeline_name=safe_name(pipeline_name),
            pipelines_dir=self.dir,
            destination=fenced,
            dataset_name=settings.dataset,
            progress=None,
        )
        # state is never restored from the destination: the sink's own offsets are what it resumes from
        self.pipeline.config.restore_from_destination = False
        if not self._own_dir:
            self.pipeline.abort_packages()  # a crashed load's package: its offsets never committed

    def load(self, resources: Any, commit: Commit) -> None:
        """One dlt load of `resources` committing `commit`; LoadFailed when it did not commit."""
        with self.fence.committing(commit):
            try:
                # one file format for every load: a table's files (the filesystem destination) all alike
                self.pipeline.run(resources, loader_file_format=self.file_format).raise_on_failed_jobs()
            except Exception as exc:
                # The package's rows may be partly in the destination, but it did not commit: drop the
                # package so that dlt never loads it again (the caller deletes its rows).
                try:
                    self.pipeline.abort_packages()
                except Exception:  # a new package gets a new load id anyway
                    log.exception("Could not drop the package of a failed load")
                raise LoadFailed(getattr(exc, "load_id", None), exc) from exc

    def close(self) -> None:
        if self._own_dir:
            shutil.rmtree(self.dir, ignore_errors=True)
