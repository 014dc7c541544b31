"""Building dlt destinations and pipelines from the sink's settings (dlt is imported here, on first use:
it costs a worker that never runs the sink nothing)."""

from __future__ import annotations

import os
import shutil
import tempfile
from typing import Any

from ...api.errors import ConfigError
from .config import DESTINATION, SinkSettings, safe_name


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


class Workspace:
    """A dlt pipeline in a working directory of its own: the sink's loads only pass through it (committed
    offsets live in the destination), so a task starts each time with a fresh one."""

    def __init__(self, settings: SinkSettings, pipeline_name: str) -> None:
        dlt = _dlt()
        self._own_dir = settings.pipelines_dir is None
        self.dir = tempfile.mkdtemp(prefix="connect-dlt-") if self._own_dir else str(settings.pipelines_dir)
        self.pipeline = dlt.pipeline(
            pipeline_name=safe_name(pipeline_name),
            pipelines_dir=self.dir,
            destination=destination(settings),
            dataset_name=settings.dataset,
            progress=None,
        )
        # state is never restored from the destination: the sink's own offsets are what it resumes from
        self.pipeline.config.restore_from_destination = False
        if not self._own_dir:
            self.pipeline.abort_packages()  # a crashed load's package: its offsets never committed

    def close(self) -> None:
        if self._own_dir:
            shutil.rmtree(self.dir, ignore_errors=True)
