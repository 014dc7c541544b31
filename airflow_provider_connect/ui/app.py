"""The FastAPI app behind the Kafka Connect page in Airflow's UI (mounted by the plugin under /kafka-connect).

Airflow does not authenticate a plugin's app, so every data route asks for Airflow's user (its JWT, from
the `Authorization` header or the UI's cookie) and the auth manager's verdict on each connection: reading
a cluster needs read access to its Airflow connection (GET), acting on it (restart failed, pause, resume,
stop) needs edit access (PUT). Actions also need the page's own header, which a form on another site
cannot send.
"""

# No `from __future__ import annotations`: FastAPI reads the routes' Annotated dependencies at definition
# time, and they name the app factory's own `current_user`.
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Annotated, Any, Protocol

from fastapi import Depends, FastAPI, Header, HTTPException
from fastapi.responses import FileResponse

from airflow_provider_connect.errors import ConnectApiError
from airflow_provider_connect.hooks.connect import ConnectHook
from airflow_provider_connect.hooks.retries import RetryPolicy
from airflow_provider_connect.ui import connections
from airflow_provider_connect.ui.overview import Action, cluster_overview, perform

STATIC = Path(__file__).with_name("static")
ACTION_HEADER = "X-Kafka-Connect-View"
# The page refreshes every few seconds: a cluster that does not answer gets one more try, not five.
READ_RETRIES = RetryPolicy(max_attempts=2)


class Authorizer(Protocol):
    def can_read(self, user: Any, conn_id: str) -> bool: ...

    def can_act(self, user: Any, conn_id: str) -> bool: ...


class AirflowAuthorizer:
    """Airflow's auth manager on the connection: GET to read its cluster, PUT to act on it."""

    def can_read(self, user: Any, conn_id: str) -> bool:
        return self._allowed("GET", user, conn_id)

    def can_act(self, user: Any, conn_id: str) -> bool:
        return self._allowed("PUT", user, conn_id)

    @staticmethod
    def _allowed(method: Any, user: Any, conn_id: str) -> bool:
        from airflow.api_fastapi.app import get_auth_manager
        from airflow.api_fastapi.auth.managers.models.resource_details import ConnectionDetails

        details = ConnectionDetails(conn_id=conn_id)
        return get_auth_manager().is_authorized_connection(method=method, details=details, user=user)


def airflow_user() -> Callable[..., Any]:
    from airflow.api_fastapi.core_api.security import get_user

    return get_user


def create_app(
    authorizer: Authorizer | None = None,
    conn_ids: Callable[[], list[str]] = connections.kafka_connect_conn_ids,
    hook_for: Callable[..., ConnectHook] = connections.hook_for,
    user: Callable[..., Any] | None = None,
) -> FastAPI:
    authorizer = authorizer or AirflowAuthorizer()
    current_user = user or airflow_user()
    app = FastAPI(title="Kafka Connect", docs_url=None, redoc_url=None, openapi_url=None)
    User = Annotated[Any, Depends(current_user)]

    @app.get("/", include_in_schema=False)
    def page() -> FileResponse:
        return FileResponse(STATIC / "index.html")

    @app.get("/static/{name}", include_in_schema=False)
    def asset(name: str) -> FileResponse:
        if name not in ("view.js", "view.css"):
            raise HTTPException(404, "Not found")
        return FileResponse(STATIC / name)

    @app.get("/api/overview")
    def overview(who: User) -> dict[str, Any]:
        readable = [conn_id for conn_id in conn_ids() if authorizer.can_read(who, conn_id)]

        def cluster(conn_id: str) -> dict[str, Any]:
            entry: dict[str, Any] = {"conn_id": conn_id, "can_act": authorizer.can_act(who, conn_id), "connectors": []}
            hook = None
            try:
                hook = hook_for(conn_id, READ_RETRIES)
                entry["url"] = hook.settings.base_url
                entry["connectors"] = cluster_overview(hook)
            except (ConnectApiError, ValueError) as exc:
                entry["error"] = str(exc)
            finally:
                if hook is not None:
                    hook.close()
            return entry

        with ThreadPoolExecutor(max_workers=4, thread_name_prefix="connect-view") as pool:
            return {"connections": list(pool.map(cluster, readable))}

    @app.post("/api/connections/{conn_id}/connectors/{name}/{action}")
    def act(
        conn_id: str,
        name: str,
        action: Action,
        who: User,
        marker: Annotated[str | None, Header(alias=ACTION_HEADER)] = None,
    ) -> dict[str, str]:
        if marker != "1":
            raise HTTPException(403, f"Actions must come from the Kafka Connect page ({ACTION_HEADER} header)")
        if conn_id not in conn_ids():
            raise HTTPException(404, f"No Kafka Connect connection {conn_id!r}")
        if not (authorizer.can_read(who, conn_id) and authorizer.can_act(who, conn_id)):
            raise HTTPException(403, f"Your Airflow role may not change the connectors of {conn_id!r}")
        hook = hook_for(conn_id)
        try:
            return {"message": perform(hook, name, action)}
        except ConnectApiError as exc:
            raise HTTPException(exc.status_code or 502, exc.server_message or str(exc)) from None
        finally:
            hook.close()

    return app
