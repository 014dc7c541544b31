"""What the REST layer and the worker bootstrap may ask of a herder, whichever the mode.

Both StandaloneHerder and DistributedHerder satisfy `Herder`; the REST routes are typed against it, so a
route never probes a herder for a method it may not have. Every method may block (it waits for the herder
thread, the tick thread or Kafka): the REST layer calls them off the event loop.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

from ..control.restart import RestartRequest
from ..plugins import Plugins
from .signatures import RequestSignature

if TYPE_CHECKING:
    from ..worker.worker import Worker


class Herder(Protocol):
    kafka_cluster_id: str | None
    plugins: Plugins

    @property
    def worker(self) -> Worker | None:
        """The worker running this herder's connectors and tasks (the metrics collector reads it at scrape
        time; None where a herder has none)."""
        ...

    # ---- lifecycle (the bootstrap) ----------------------------------------------------------------

    def start(self) -> None: ...

    def mark_ready(self) -> None: ...

    def stop(self) -> None: ...

    # ---- reads ----------------------------------------------------------------------------------

    def health(self) -> tuple[int, dict[str, str]]: ...

    def connector_names(self) -> list[str]: ...

    def connector_listing(self, status: bool, info: bool) -> dict[str, dict[str, Any]]: ...

    def connector_info(self, name: str) -> dict[str, Any]: ...

    def connector_config(self, name: str) -> dict[str, str]: ...

    def connector_status(self, name: str) -> dict[str, Any]: ...

    def task_infos(self, name: str) -> list[dict[str, Any]]: ...

    def tasks_config(self, name: str) -> dict[str, dict[str, str]]: ...

    def task_status(self, name: str, index: int) -> dict[str, Any]: ...

    def assigned_counts(self) -> tuple[int, int] | None:
        """The connectors and tasks the group's current assignment gives this worker (the reference's
        connect-coordinator-metrics, read at scrape time); None in standalone mode, which has no group."""
        ...

    def owns(self, name: str, task: int | None) -> bool:
        """Whether this worker runs the connector (task None) or the task now (self-healing acts on those)."""
        ...

    def is_leader(self) -> bool:
        """Standalone: always; distributed: while this worker leads the group."""
        ...

    def connector_topics(self, name: str) -> dict[str, Any]: ...

    def connector_offsets(self, name: str) -> dict[str, Any]: ...

    def plugin_config(self, plugin: str) -> list[dict[str, Any]]: ...

    def validate(self, config: dict[str, Any]) -> dict[str, Any]: ...

    # ---- changes: leader-only ones raise NotLeader (or NotAssigned) in distributed mode -----------

    def put_connector_config(
        self,
        name: str,
        config: dict[str, Any],
        allow_replace: bool,
        initial_state: str | None = None,
        initial_offsets: list[dict[str, Any]] | None = None,
    ) -> tuple[bool, dict[str, Any]]:
        """Create or replace `name`: (created, ConnectorInfo). `initial_offsets` (KIP-995: PATCH offsets'
        entries) apply to a create only: written before any task starts, replacing whatever offsets the
        name had; the info then carries `offsets_status`, the message PATCH would give. Bad offsets are
        PATCH's 400s, and nothing is created."""
        ...

    def patch_connector_config(self, name: str, patch: dict[str, Any]) -> dict[str, Any]: ...

    def delete_connector(self, name: str) -> None: ...

    def pause_connector(self, name: str) -> None: ...

    def resume_connector(self, name: str) -> None: ...

    def stop_connector(self, name: str) -> None: ...

    def restart_connector(self, name: str) -> None: ...

    def restart_connector_and_tasks(self, request: RestartRequest) -> dict[str, Any]: ...

    def restart_task(self, name: str, index: int) -> None: ...

    def reset_connector_topics(self, name: str) -> None: ...

    def alter_offsets(self, name: str, entries: list[dict[str, Any]]) -> str: ...

    def reset_offsets(self, name: str) -> str: ...

    def set_cluster_log_level(self, namespace: str, level: str) -> None:
        """KIP-976's cluster scope: every worker sets `namespace` to `level` (a valid log4j name)."""
        ...

    def leader_url(self) -> str | None:
        """The URL of the leader this worker follows now (None: not known, or standalone); the REST layer
        routes a forwarded request again when it changes."""
        ...

    def settle_forwarded(self, name: str) -> None:
        """A change of `name` forwarded to the leader succeeded: return once this worker shows it too."""
        ...

    # ---- internal endpoints (InternalClusterResource) -----------------------------------------------

    def put_task_configs(
        self, name: str, configs: list[dict[str, Any]], signature: RequestSignature | None
    ) -> None: ...

    def fence_zombies(self, name: str, signature: RequestSignature | None) -> None: ...
