"""KIP-745 restart plans: which instances a restart request restarts."""

from __future__ import annotations

from dataclasses import dataclass

from ..storage.states import State


@dataclass(frozen=True)
class RestartRequest:
    connector: str
    only_failed: bool = False
    include_tasks: bool = False

    @property
    def legacy(self) -> bool:
        """Neither flag: the connector-only restart answered with 204."""
        return not self.only_failed and not self.include_tasks

    def restart_connector(self, state: State) -> bool:
        return not self.only_failed or state is State.FAILED

    def restart_task(self, state: State) -> bool:
        return self.include_tasks and (not self.only_failed or state is State.FAILED)

    def impact(self) -> int:
        """Rank used to keep the strongest pending request per connector (distributed mode)."""
        return (0 if self.only_failed else 2) + (1 if self.include_tasks else 0)


@dataclass(frozen=True)
class RestartPlan:
    request: RestartRequest
    connector: bool
    tasks: tuple[int, ...]

    @classmethod
    def build(cls, request: RestartRequest, connector_state: State, task_states: dict[int, State]) -> RestartPlan:
        tasks = tuple(i for i, s in sorted(task_states.items()) if request.restart_task(s))
        return cls(request, request.restart_connector(connector_state), tasks)
