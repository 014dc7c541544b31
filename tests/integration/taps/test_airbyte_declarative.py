"""A declarative Airbyte source: airbyte-cdk's source-declarative-manifest (from airbyte-source-faker's virtualenv,
which has airbyte-cdk) with a manifest file, reading an HTTP API served on loopback. Its check runs at
validation: a key the API refuses is a 400 with the source's message."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from tests.integration.scenarios.helpers import Api, Kafka, assert_error
from tests.support.broker import unique
from tests.support.tool_venvs import SOURCE_FAKER, tool_venv
from tests.support.worker import WorkerProcess, wait_for

pytestmark = [pytest.mark.integration, pytest.mark.tool_venvs("source-faker")]

API_KEY = "good-key-7d1f"
ITEMS = [{"id": i, "label": f"item-{i}"} for i in range(1, 6)]

MANIFEST = """
version: "6.0.0"
type: DeclarativeSource
check:
  type: CheckStream
  stream_names: ["items"]
streams:
  - type: DeclarativeStream
    name: items
    primary_key: ["id"]
    schema_loader:
      type: InlineSchemaLoader
      schema:
        type: object
        properties:
          id: {type: integer}
          label: {type: string}
    retriever:
      type: SimpleRetriever
      requester:
        type: HttpRequester
        url_base: "{{ config['base_url'] }}"
        path: /items
        http_method: GET
        authenticator:
          type: BearerAuthenticator
          api_token: "{{ config['api_key'] }}"
      record_selector:
        type: RecordSelector
        extractor:
          type: DpathExtractor
          field_path: ["items"]
spec:
  type: Spec
  connection_specification:
    type: object
    required: [base_url, api_key]
    properties:
      base_url: {type: string}
      api_key: {type: string, airbyte_secret: true}
"""


class _Api(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        if self.headers.get("Authorization") != f"Bearer {API_KEY}":
            self.send_response(401)
            self.end_headers()
            self.wfile.write(b'{"error": "invalid api key"}')
            return
        body = json.dumps({"items": ITEMS}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture(scope="module")
def http_api() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Api)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()


@pytest.fixture(scope="module")
def worker(bootstrap_servers: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[WorkerProcess]:
    with WorkerProcess(tmp_path_factory.mktemp("worker"), bootstrap_servers) as proc:
        yield proc
        proc.stop()


def config(manifest: Path, base_url: str, api_key: str, prefix: str) -> dict[str, str]:
    source = tool_venv("source-faker", SOURCE_FAKER) / "bin" / "source-declarative-manifest"
    return {
        "connector.class": "AirbyteSourceConnector",
        "source": str(source),
        "source.manifest": str(manifest),
        "source.config": json.dumps({"base_url": base_url, "api_key": api_key}),
        "topic.prefix": prefix,
        "poll.interval.ms": "3600000",
        "value.converter": "org.apache.kafka.connect.json.JsonConverter",
        "value.converter.schemas.enable": "false",
    }


def test_a_manifest_source_reads_an_api_and_its_check_runs_at_validation(
    http_api: str, worker: WorkerProcess, bootstrap_servers: str, tmp_path: Path
) -> None:
    manifest = tmp_path / "manifest.yaml"
    manifest.write_text(MANIFEST)
    api = Api(worker.url, timeout_s=180)
    try:
        refused = api.post(
            "/connectors", {"name": unique("api-bad"), "config": config(manifest, http_api, "bad-key-93x", "x.")}
        )
        body = assert_error(refused, 400, "The source's check failed")
        assert "Stream items" in body["message"] and "bad-key-93x" not in body["message"], body

        name, prefix = unique("api"), unique("api") + "."
        api.create(name, config(manifest, http_api, API_KEY, prefix))
        kafka = Kafka(bootstrap_servers)

        def items() -> list[dict]:
            return [json.loads(v) for _, _, _, v in kafka.read_all(prefix + "items", timeout_s=60)]

        rows = wait_for(lambda: (r := items()) and len(r) >= len(ITEMS) and r, 120, 1.0, "the API's items")
        assert sorted(rows, key=lambda r: r["id"]) == ITEMS
        assert API_KEY not in worker.log_path.read_text()
        api.delete(f"/connectors/{name}")
    finally:
        api.close()
