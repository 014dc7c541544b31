"""An in-memory Kafka Connect REST API for respx: enough state to test operators end to end.

Only pure HTTP is faked here; the integration tests in tests/integration/airflow run the real runtime.
"""

from __future__ import annotations

import json
import re
from typing import Any
from urllib.parse import unquote

import httpx
import respx


class FakeConnect:
    def __init__(self, base_url: str) -> None:
        self.base_url = base_url
        self.connectors: dict[str, dict[str, Any]] = {}
        self.calls: list[tuple[str, str]] = []
        self.fail_next: list[httpx.Response | Exception] = []  # injected answers, consumed first
        self.failing: dict[tuple[str, str], list[httpx.Response]] = {}  # per request, see fail()
        # KIP-995's `initial_offsets` on a create: "refuse" as Apache Kafka Connect 3.9 does (500, nothing
        # created), "support" as this runtime does (written, `offsets_status` answered), "ignore" as a server
        # that drops unknown fields would
        self.initial_offsets = "refuse"

    # -- state helpers for tests --
    def add(
        self,
        name: str,
        config: dict[str, str],
        state: str = "RUNNING",
        tasks: int = 1,
        offsets: list[dict[str, Any]] | None = None,
        task_states: list[str] | None = None,
    ) -> None:
        self.connectors[name] = {
            "config": {**config, "name": name},
            "state": state,
            "tasks": task_states if task_states is not None else ([state] * tasks if state != "STOPPED" else []),
            "ntasks": tasks,
            "offsets": offsets or [],
        }

    def fail(self, method: str, path: str, *answers: httpx.Response) -> None:
        """Answer `method path` with `answers`, one per request, before answering it normally."""
        self.failing[(method, path)] = list(answers)

    def mount(self, router: respx.MockRouter) -> FakeConnect:
        router.route(url__startswith=self.base_url).mock(side_effect=self._handle)
        return self

    def _handle(self, request: httpx.Request) -> httpx.Response:
        path = unquote(request.url.raw_path.decode().split("?")[0]).rstrip("/") or "/"
        self.calls.append((request.method, path))
        if self.fail_next:
            injected = self.fail_next.pop(0)
            if isinstance(injected, Exception):
                raise injected
            return injected
        if self.failing.get((request.method, path)):
            return self.failing[(request.method, path)].pop(0)
        body = json.loads(request.content) if request.content else None
        params: dict[str, Any] = dict(request.url.params)
        if "expand" in params:
            params["expand"] = request.url.params.get_list("expand")
        return self.route(request.method, path, params, body)

    def _status(self, name: str) -> dict[str, Any]:
        c = self.connectors[name]
        traces = c.get("traces", {})
        return {
            "name": name,
            "connector": {"state": c["state"], "worker_id": "w:8083"},
            "tasks": [
                {"id": i, "state": s, "worker_id": f"w{i % 2}:8083", **({"trace": traces[i]} if i in traces else {})}
                for i, s in enumerate(c["tasks"])
            ],
            "type": "source",
        }

    def _info(self, name: str) -> dict[str, Any]:
        c = self.connectors[name]
        return {
            "name": name,
            "config": c["config"],
            "type": "source",
            "tasks": [{"connector": name, "task": i} for i in range(len(c["tasks"]))],
        }

    def _expanded(self, name: str, expand: list[str]) -> dict[str, Any]:
        views = {"status": self._status, "info": self._info}
        return {view: views[view](name) for view in expand if view in views}

    def route(self, method: str, path: str, params: dict[str, Any], body: Any) -> httpx.Response:
        if path == "/connectors" and method == "POST":
            name = body["name"]
            if name in self.connectors:
                return _err(409, f"Connector {name} already exists")
            offsets = body.get("initial_offsets")
            if offsets is not None and self.initial_offsets == "refuse":
                return _err(500, UNRECOGNIZED_INITIAL_OFFSETS)
            state = (body.get("initial_state") or "RUNNING").upper()
            self.add(name, {k: str(v) for k, v in body["config"].items()}, state=state)
            info = self._info(name)
            if offsets is not None and self.initial_offsets == "support":
                self.connectors[name]["offsets"] = offsets
                info["offsets_status"] = "The offsets for this connector have been altered successfully"
            return httpx.Response(201, json=info)
        if path == "/connectors" and method == "GET":
            expand = params.get("expand")
            if not expand:
                return httpx.Response(200, json=list(self.connectors))
            return httpx.Response(200, json={name: self._expanded(name, expand) for name in self.connectors})
        m = re.fullmatch(r"/connectors/([^/]+)(/.*)?", path)
        if not m:
            return _err(404, "HTTP 404 Not Found")
        name, rest = m.group(1), m.group(2) or ""
        if rest == "/config" and method == "PUT":
            created = name not in self.connectors
            if created:
                self.add(name, body)
            else:
                self.connectors[name]["config"] = {**body, "name": name}
            return httpx.Response(201 if created else 200, json=self._info(name))
        if name not in self.connectors:
            return _err(404, f"Connector {name} not found")
        c = self.connectors[name]
        if rest == "" and method == "GET":
            return httpx.Response(200, json=self._info(name))
        if rest == "" and method == "DELETE":
            del self.connectors[name]
            return httpx.Response(204)
        if rest == "/config" and method == "GET":
            return httpx.Response(200, json=c["config"])
        if rest == "/status":
            return httpx.Response(200, json=self._status(name))
        if rest == "/stop":
            c["state"], c["tasks"] = "STOPPED", []
            return httpx.Response(204)
        if rest == "/pause":
            c["state"], c["tasks"] = "PAUSED", ["PAUSED"] * len(c["tasks"])
            return httpx.Response(202)
        if rest == "/resume":
            c["state"], c["tasks"] = "RUNNING", ["RUNNING"] * max(c["ntasks"], 1)
            return httpx.Response(202)
        if rest == "/restart":
            if params.get("onlyFailed") == "true":  # the KIP-745 plan shows what restarts as RESTARTING
                plan = self._status(name)
                for instance in [plan["connector"], *plan["tasks"]]:
                    instance["state"] = "RESTARTING" if instance["state"] == "FAILED" else instance["state"]
                if c["state"] == "FAILED":
                    c["state"] = "RUNNING"
                c["tasks"] = ["RUNNING" if t == "FAILED" else t for t in c["tasks"]]
                return httpx.Response(202, json=plan)
            return httpx.Response(204)
        if rest == "/topics" and method == "GET":
            return httpx.Response(200, json={name: {"topics": c.get("topics", [])}})
        if rest == "/offsets" and method == "GET":
            return httpx.Response(200, json={"offsets": c["offsets"]})
        if rest == "/offsets" and method in ("PATCH", "DELETE"):
            if c["state"] != "STOPPED":
                return _err(400, "Connectors must be in the STOPPED state before their offsets can be modified.")
            if method == "DELETE":
                c["offsets"] = []
                return httpx.Response(
                    200, json={"message": "The offsets for this connector have been reset successfully"}
                )
            c["offsets"] = body["offsets"]
            return httpx.Response(
                200, json={"message": "The offsets for this connector have been altered successfully"}
            )
        return _err(404, "HTTP 404 Not Found")


UNRECOGNIZED_INITIAL_OFFSETS = (
    'Unrecognized field "initial_offsets" (class org.apache.kafka.connect.runtime.rest.entities.'
    'CreateConnectorRequest), not marked as ignorable (3 known properties: "config", "name", "initial_state"])'
)


def _err(status: int, message: str) -> httpx.Response:
    return httpx.Response(status, json={"error_code": status, "message": message})
