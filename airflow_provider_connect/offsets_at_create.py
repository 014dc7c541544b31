"""Creating a connector that starts from given offsets, on any Kafka Connect cluster: KIP-995 where the
cluster has it, KIP-980's recipe (create STOPPED, PATCH the offsets, move to the target state) where not.

Detected, not configured. The create is sent with `initial_offsets` and `initial_state: STOPPED`:
- a cluster with KIP-995 writes the offsets before it stores the connector, or creates nothing when they are
  bad, and says so in the 201 answer (`offsets_status`, the message PATCH would give);
- Apache Kafka Connect up to 3.9 refuses the unknown field (500 `Unrecognized field "initial_offsets"`,
  nothing created): the connector is created STOPPED without it;
- a cluster that ignored the field silently answers 201 without `offsets_status`.
Unless the answer carries `offsets_status`, the offsets are PATCHed while the connector is STOPPED. Creating
STOPPED is what keeps the last case safe: no task can start, from wherever it likes, before the offsets are
in place, and nothing has to be known about the cluster beforehand. The connector is then moved to its
target state (one request: a resume, a pause, or nothing for STOPPED).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from airflow_provider_connect.errors import ConnectorConflictError, InitialOffsetsUnsupportedError
from airflow_provider_connect.hooks.base import normalise_config
from airflow_provider_connect.hooks.connect import ConnectHook
from airflow_provider_connect.status import ConnectState


@dataclass(frozen=True)
class CreatedWithOffsets:
    """The outcome: `info` as the create answered (or as found); `created` by this call; `in_create` when the
    cluster took the offsets with the create (KIP-995), else `patched` when they were PATCHed; `message` is
    what the cluster said about them. A connector found (not created) and not STOPPED was left alone."""

    info: dict[str, Any]
    created: bool
    in_create: bool
    patched: bool
    message: str | None

    @property
    def offsets_written(self) -> bool:
        return self.in_create or self.patched


def create_with_offsets(
    hook: ConnectHook,
    name: str,
    config: Mapping[str, Any],
    offsets: Sequence[Mapping[str, Any]],
    state: ConnectState = ConnectState.RUNNING,
) -> CreatedWithOffsets:
    """Create `name` (config without or with its `name`) starting from `offsets`, then move it to `state`.

    Idempotent: a connector found with the same config and STOPPED (an earlier try's) gets the offsets PATCHed
    and is moved on; one found in any other state may have moved on from them already, so it is never rewound
    (nothing is written: `offsets_written` is False, and the caller decides). A connector found with another
    config is someone else's: ConnectorConflictError, and nothing is written."""
    if not offsets:
        raise ValueError("create_with_offsets needs at least one {'partition', 'offset'} entry")
    stopped = ConnectState.STOPPED.value
    try:
        info, created = hook.create_connector(name, config, stopped, initial_offsets=offsets)
    except InitialOffsetsUnsupportedError as exc:
        hook.log.info("The cluster does not take offsets at create (KIP-995): %s; PATCHing them instead", exc)
        info, created = hook.create_connector(name, config, stopped)
    message = info.get("offsets_status") if created else None
    if message is not None:
        hook.log.info("Created %s STOPPED with its offsets (KIP-995): %s", name, message)
        set_target_state(hook, name, state)
        return CreatedWithOffsets(info, created, in_create=True, patched=False, message=message)
    if not created:
        found, desired = dict(info.get("config") or {}), normalise_config(name, config)
        if found != desired:
            keys = sorted(k for k in set(found) | set(desired) if found.get(k) != desired.get(k))
            raise ConnectorConflictError(
                f"Connector {name} exists with a different config (differing keys: {', '.join(keys)}); "
                "its offsets were not written"
            )
        if (hook.get_connector_status(name).get("connector") or {}).get("state") != stopped:
            return CreatedWithOffsets(info, created, in_create=False, patched=False, message=None)
    hook.ensure_stopped(name)  # PATCH's precondition, shown in the status (a found one may still be stopping)
    message = hook.alter_offsets(name, offsets)
    hook.log.info("Altered the offsets of STOPPED connector %s: %s", name, message)
    set_target_state(hook, name, state)
    return CreatedWithOffsets(info, created, in_create=False, patched=True, message=message)


def set_target_state(hook: ConnectHook, name: str, state: ConnectState) -> None:
    """Move `name` to RUNNING, PAUSED or STOPPED (one idempotent request)."""
    {
        ConnectState.RUNNING: hook.resume_connector,
        ConnectState.PAUSED: hook.pause_connector,
        ConnectState.STOPPED: hook.stop_connector,
    }[state](name)
