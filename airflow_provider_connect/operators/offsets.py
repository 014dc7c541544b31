"""Offsets operators (KIP-875): read, alter and reset a connector's offsets."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar

from airflow.sdk import Context

from airflow_provider_connect.errors import ConnectorStateError
from airflow_provider_connect.operators.base import ConnectOperatorBase, load_json_value
from airflow_provider_connect.status import ConnectState


class ConnectorGetOffsetsOperator(ConnectOperatorBase):
    """Push the connector's offsets (`[{"partition": {...}, "offset": {...}}]`) to XCom. Any state."""

    def execute(self, context: Context) -> list[dict[str, Any]]:
        offsets = self.hook.get_offsets(self.connector_name)
        self.log.info("Connector %s has offsets for %d partition(s)", self.connector_name, len(offsets))
        return offsets


class _ModifyOffsetsOperator(ConnectOperatorBase):
    verb: str

    def __init__(
        self, *, connector_name: str, stop_first: bool = False, stop_timeout: float = 120.0, **kwargs: Any
    ) -> None:
        super().__init__(connector_name=connector_name, **kwargs)
        self.stop_first = stop_first
        self.stop_timeout = stop_timeout

    def ensure_stopped(self) -> None:
        """Connect only modifies offsets of a STOPPED connector: refuse clearly, or stop it when asked."""
        status = self.hook.get_connector_status(self.connector_name)
        state = (status.get("connector") or {}).get("state")
        if state == ConnectState.STOPPED.value and not status.get("tasks"):
            return
        if not self.stop_first:
            raise ConnectorStateError(
                f"Cannot {self.verb} offsets of connector {self.connector_name}: it is {state}, and Kafka Connect "
                "only modifies offsets of a STOPPED connector. Stop it first (ConnectorStopOperator) "
                "or pass stop_first=True."
            )
        self.log.info("Stopping connector %s (was %s) before %s its offsets", self.connector_name, state, self.verb)
        self.hook.ensure_stopped(self.connector_name, timeout=self.stop_timeout)


class ConnectorAlterOffsetsOperator(_ModifyOffsetsOperator):
    """PATCH offsets. `offsets` (templated; JSON text, `.json` file or list) is the `offsets` list of the
    request: `[{"partition": {...}, "offset": {...} | null}]`. Returns the server's message."""

    template_fields: Sequence[str] = ("connector_name", "kafka_connect_conn_id", "offsets")
    template_ext: Sequence[str] = (".json",)
    template_fields_renderers: ClassVar[dict[str, str]] = {"offsets": "json"}
    verb = "alter"

    def __init__(self, *, connector_name: str, offsets: Any, **kwargs: Any) -> None:
        super().__init__(connector_name=connector_name, **kwargs)
        self.offsets = offsets

    def execute(self, context: Context) -> str:
        offsets = load_json_value(self.offsets, "offsets")
        if isinstance(offsets, dict) and "offsets" in offsets:
            offsets = offsets["offsets"]
        if not isinstance(offsets, list) or not offsets:
            raise ValueError("offsets must be a non-empty list of {'partition': ..., 'offset': ...} entries")
        self.ensure_stopped()
        message = self.hook.alter_offsets(self.connector_name, offsets)
        self.log.info("%s", message)
        return message


class ConnectorResetOffsetsOperator(_ModifyOffsetsOperator):
    """DELETE offsets (connector must be STOPPED; `stop_first=True` stops it). Returns the server's message."""

    verb = "reset"

    def execute(self, context: Context) -> str:
        self.ensure_stopped()
        message = self.hook.reset_offsets(self.connector_name)
        self.log.info("%s", message)
        return message
