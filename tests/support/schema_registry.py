"""A Schema Registry HTTP API on loopback, for tests: the endpoints confluent-kafka's client calls.

No registry server can be installed from the package registries this project reaches, so this serves
Confluent's REST API for the calls the converters and confluent-kafka's serializers make: register
(`POST /subjects/{s}/versions`), look up (`POST /subjects/{s}`), `GET /schemas/ids/{id}`,
`GET /subjects/{s}/versions/{v|latest}`, `GET /subjects`, `POST /compatibility/subjects/{s}/versions/{v}`
and `PUT|GET /config[/{s}]`. Ids are global and shared by equal schemas, versions count per subject,
errors carry Confluent's error codes (40401 subject, 40402 version, 40403 schema not found, 409
incompatible). Compatibility is checked for Avro records under BACKWARD (the default): every field
of the new schema either has a default or exists in the latest version with the same type; other
formats are accepted as compatible.

`CONNECT_TEST_SCHEMA_REGISTRY_URL` points the same tests at a real registry instead.
Faults for outage tests: `outage("refuse")` answers 503, `outage("hang")` holds requests unanswered
until `outage(None)` or the client's timeout.
"""

from __future__ import annotations

import base64
import json
import os
import ssl
import subprocess
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, unquote, urlparse

ENV_URL = "CONNECT_TEST_SCHEMA_REGISTRY_URL"


class RegistryState:
    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.ids: dict[tuple[str, str, str], int] = {}  # (type, schema, refs) -> id
        self.schemas: dict[int, dict[str, Any]] = {}  # id -> {"schema", "schemaType", "references"}
        self.subjects: dict[str, list[int]] = {}  # subject -> ids by version - 1
        self.compatibility: dict[str | None, str] = {None: "BACKWARD"}
        self.mode: str | None = None  # None | "refuse" | "hang"
        self.released = threading.Event()
        self.requests = 0
        self.user_info: str | None = None  # "user:password" to require HTTP basic authentication

    def schema_id(self, body: dict[str, Any]) -> int:
        key = (body.get("schemaType") or "AVRO", body["schema"], json.dumps(body.get("references") or []))
        if key not in self.ids:
            new_id = len(self.schemas) + 1
            self.ids[key] = new_id
            self.schemas[new_id] = {
                "schema": body["schema"],
                "schemaType": key[0],
                "references": body.get("references") or [],
            }
        return self.ids[key]


def _same(a: dict[str, Any], b: dict[str, Any]) -> bool:
    return (a.get("schemaType") or "AVRO") == (b.get("schemaType") or "AVRO") and _normal(a) == _normal(b)


def _normal(entry: dict[str, Any]) -> Any:
    if (entry.get("schemaType") or "AVRO") in ("AVRO", "JSON"):
        try:
            return json.loads(entry["schema"])
        except ValueError:
            return entry["schema"]
    return entry["schema"]


def avro_backward_compatible(new: Any, old: Any) -> bool:
    """Whether a reader with `new` can read data written with `old` (records, top level and nested)."""
    if isinstance(new, dict) and new.get("type") == "record" and isinstance(old, dict) and old.get("type") == "record":
        old_fields = {f["name"]: f for f in old.get("fields", [])}
        for field in new.get("fields", []):
            previous = old_fields.get(field["name"])
            if previous is None:
                if "default" not in field:
                    return False
            elif not avro_backward_compatible(field["type"], previous["type"]):
                return False
        return True
    return _type_name(new) == _type_name(old) or (_type_name(old), _type_name(new)) in {
        ("int", "long"),
        ("int", "float"),
        ("int", "double"),
        ("long", "double"),
        ("float", "double"),
    }


def _type_name(avro: Any) -> Any:
    if isinstance(avro, dict):
        return avro.get("type") if avro.get("type") not in ("record", "enum", "fixed") else avro.get("name")
    if isinstance(avro, list):
        return tuple(_type_name(a) for a in avro)
    return avro


class _Handler(BaseHTTPRequestHandler):
    server: _Server
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def _body(self) -> dict[str, Any]:
        length = int(self.headers.get("Content-Length") or 0)
        return json.loads(self.rfile.read(length) or b"{}") if length else {}

    def _send(self, status: int, body: Any) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/vnd.schemaregistry.v1+json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _error(self, status: int, code: int, message: str) -> None:
        self._send(status, {"error_code": code, "message": message})

    def do_GET(self) -> None:
        self._dispatch("GET")

    def do_POST(self) -> None:
        self._dispatch("POST")

    def do_PUT(self) -> None:
        self._dispatch("PUT")

    def _dispatch(self, method: str) -> None:
        state = self.server.state
        if state.user_info is not None:
            expected = "Basic " + base64.b64encode(state.user_info.encode()).decode()
            if self.headers.get("Authorization") != expected:
                self._body()
                return self._error(401, 401, "Unauthorized")
        with state.lock:
            state.requests += 1
            mode = state.mode
        if mode == "hang":
            state.released.wait(120)
        elif mode == "refuse":
            self._error(503, 50003, "Schema Registry is unavailable (test outage)")
            return
        url = urlparse(self.path)
        path = [unquote(p) for p in url.path.strip("/").split("/")]
        query = parse_qs(url.query)
        body = self._body() if method in ("POST", "PUT") else {}
        with state.lock:
            self._route(state, method, path, query, body)

    def _route(
        self, state: RegistryState, method: str, path: list[str], query: dict[str, list[str]], body: dict[str, Any]
    ) -> None:
        if method == "GET" and path == ["subjects"]:
            return self._send(200, sorted(state.subjects))
        if method == "GET" and len(path) == 3 and path[:2] == ["schemas", "ids"]:
            entry = state.schemas.get(int(path[2])) if path[2].isdigit() else None
            if entry is None:
                return self._error(404, 40403, f"Schema {path[2]} not found")
            return self._send(200, {k: v for k, v in entry.items() if v or k == "schema"})
        if path[:1] == ["subjects"] and len(path) >= 2:
            subject = path[1]
            if method == "POST" and len(path) == 3 and path[2] == "versions":
                return self._register(state, subject, body)
            if method == "POST" and len(path) == 2:
                return self._lookup(state, subject, body)
            if method == "GET" and len(path) == 4 and path[2] == "versions":
                return self._version(state, subject, path[3])
            if method == "GET" and len(path) == 3 and path[2] == "versions":
                if subject not in state.subjects:
                    return self._error(404, 40401, f"Subject '{subject}' not found.")
                return self._send(200, list(range(1, len(state.subjects[subject]) + 1)))
        if method == "POST" and len(path) == 5 and path[:2] == ["compatibility", "subjects"]:
            return self._send(200, {"is_compatible": self._compatible(state, path[2], body)})
        if path[:1] == ["config"]:
            subject = path[1] if len(path) > 1 else None
            if method == "PUT":
                state.compatibility[subject] = body["compatibility"]
                return self._send(200, {"compatibility": body["compatibility"]})
            level = state.compatibility.get(subject, state.compatibility[None])
            return self._send(200, {"compatibilityLevel": level})
        return self._error(404, 404, f"HTTP 404 Not Found: {method} /{'/'.join(path)}")

    def _registered(self, state: RegistryState, subject: str, version: int) -> dict[str, Any]:
        schema_id = state.subjects[subject][version - 1]
        entry = state.schemas[schema_id]
        body = {"subject": subject, "version": version, "id": schema_id, "schema": entry["schema"]}
        if entry["schemaType"] != "AVRO":
            body["schemaType"] = entry["schemaType"]
        if entry["references"]:
            body["references"] = entry["references"]
        return body

    def _register(self, state: RegistryState, subject: str, body: dict[str, Any]) -> None:
        versions = state.subjects.setdefault(subject, [])
        for schema_id in versions:
            if _same(state.schemas[schema_id], body):
                return self._send(200, {"id": schema_id})
        if versions and not self._compatible(state, subject, body):
            return self._error(
                409, 409, f'Schema being registered is incompatible with an earlier schema for subject "{subject}"'
            )
        schema_id = state.schema_id(body)
        versions.append(schema_id)
        return self._send(200, {"id": schema_id, "subject": subject, "version": len(versions)})

    def _lookup(self, state: RegistryState, subject: str, body: dict[str, Any]) -> None:
        if subject not in state.subjects:
            return self._error(404, 40401, f"Subject '{subject}' not found.")
        for version, schema_id in enumerate(state.subjects[subject], start=1):
            if _same(state.schemas[schema_id], body):
                return self._send(200, self._registered(state, subject, version))
        return self._error(404, 40403, "Schema not found")

    def _version(self, state: RegistryState, subject: str, version: str) -> None:
        if subject not in state.subjects or not state.subjects[subject]:
            return self._error(404, 40401, f"Subject '{subject}' not found.")
        number = len(state.subjects[subject]) if version in ("latest", "-1") else int(version)
        if not 1 <= number <= len(state.subjects[subject]):
            return self._error(404, 40402, f"Version {version} not found.")
        return self._send(200, self._registered(state, subject, number))

    def _compatible(self, state: RegistryState, subject: str, body: dict[str, Any]) -> bool:
        level = state.compatibility.get(subject, state.compatibility[None])
        versions = state.subjects.get(subject) or []
        if level == "NONE" or not versions or (body.get("schemaType") or "AVRO") != "AVRO":
            return True
        latest = json.loads(state.schemas[versions[-1]]["schema"])
        return avro_backward_compatible(json.loads(body["schema"]), latest)


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    state: RegistryState

    def handle_error(self, request: Any, client_address: Any) -> None:
        # A client that gave up on a held ("hang") request is what the outage tests expect: no traceback.
        if not isinstance(sys.exc_info()[1], (BrokenPipeError, ConnectionResetError)):
            super().handle_error(request, client_address)


class SchemaRegistryServer:
    """The fixture registry, on an ephemeral loopback port; HTTPS with `tls=(certificate, key)` PEM files,
    HTTP basic authentication with `user_info="user:password"`."""

    def __init__(self, tls: tuple[str, str] | None = None, user_info: str | None = None) -> None:
        self.state = RegistryState()
        self.state.user_info = user_info
        self._server = _Server(("127.0.0.1", 0), _Handler)
        self._server.state = self.state
        scheme = "http"
        if tls is not None:
            context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
            context.load_cert_chain(*tls)
            self._server.socket = context.wrap_socket(self._server.socket, server_side=True)
            scheme = "https"
        self.url = f"{scheme}://127.0.0.1:{self._server.server_address[1]}"
        self._thread = threading.Thread(target=self._server.serve_forever, name="schema-registry", daemon=True)

    def __enter__(self) -> SchemaRegistryServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.outage(None)
        self._server.shutdown()
        self._server.server_close()

    def outage(self, mode: str | None) -> None:
        """None: serve; "refuse": answer 503; "hang": hold every request until the next outage(None)."""
        with self.state.lock:
            self.state.mode = mode
            if mode == "hang":
                self.state.released.clear()
            else:
                self.state.released.set()


def self_signed_certificate(directory: str) -> tuple[str, str]:
    """A certificate for 127.0.0.1 and its key, as PEM files made with the openssl command."""
    cert, key = os.path.join(directory, "registry.pem"), os.path.join(directory, "registry-key.pem")
    subprocess.run(
        [
            "openssl",
            "req",
            "-x509",
            "-newkey",
            "rsa:2048",
            "-nodes",
            "-days",
            "2",
            "-subj",
            "/CN=127.0.0.1",
            "-addext",
            "subjectAltName=IP:127.0.0.1",
            "-keyout",
            key,
            "-out",
            cert,
        ],
        check=True,
        capture_output=True,
    )
    return cert, key


def registry_url_from_env() -> str | None:
    url = os.environ.get(ENV_URL)
    return url.rstrip("/") if url else None
