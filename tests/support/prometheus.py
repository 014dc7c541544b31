"""A real Prometheus server (Debian's `prometheus` package) on loopback, scraping given targets every second.

Targets are plain `host:port` strings (job `connect`), or `StrimziPod`s: workers scraped as the pods of a
Strimzi KafkaConnect resource are, with the labels the Prometheus Operator and Strimzi's PodMonitor give them
(`namespace`, `pod`, `container`, `kubernetes_pod_name`, `strimzi_io_*`, ...), so Strimzi's dashboards and
alert rules select them unchanged.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

from runtime.embedded_broker import free_port

from .env import require
from .process import ServiceProcess

STRIMZI_NAMESPACE = "myproject"  # the namespace Strimzi's examples deploy to
STRIMZI_POD_MONITOR = "kafka-resources-metrics"  # Strimzi's PodMonitor for Kafka, KafkaConnect and MM2 pods


@dataclass(frozen=True)
class StrimziPod:
    """A worker as pod `index` of KafkaConnect `cluster`: the Kubernetes service-discovery labels its scrape
    starts from (Strimzi names a KafkaConnect's pods `<cluster>-connect-<n>`, its container `<cluster>-connect`)."""

    target: str  # host:port of the worker's /metrics
    cluster: str
    index: int
    namespace: str = STRIMZI_NAMESPACE

    @property
    def name(self) -> str:
        return f"{self.cluster}-connect-{self.index}"

    def discovery_labels(self) -> dict[str, str]:
        return {
            "__meta_kubernetes_namespace": self.namespace,
            "__meta_kubernetes_pod_name": self.name,
            "__meta_kubernetes_pod_container_name": f"{self.cluster}-connect",
            "__meta_kubernetes_pod_node_name": "node-0",
            "__meta_kubernetes_pod_host_ip": "127.0.0.1",
            "__meta_kubernetes_pod_label_strimzi_io_cluster": self.cluster,
            "__meta_kubernetes_pod_label_strimzi_io_kind": "KafkaConnect",
            "__meta_kubernetes_pod_label_strimzi_io_name": f"{self.cluster}-connect",
            "__meta_kubernetes_pod_label_strimzi_io_component_type": "kafka-connect",
        }


def _replace(source: str, target: str) -> dict[str, Any]:
    return {"source_labels": [source], "separator": ";", "regex": "(.*)", "target_label": target, "replacement": "$1"}


# What the Prometheus Operator generates for a PodMonitor endpoint before the endpoint's own relabelings
# (namespace, container, pod; job `<namespace>/<PodMonitor>`; endpoint the port's name), then the relabelings
# of Strimzi's PodMonitor `kafka-resources-metrics` (packaging/examples/metrics/prometheus-install/
# pod-monitors/kafka-resources-metrics.yaml in strimzi/strimzi-kafka-operator), as Prometheus' scrape config.
STRIMZI_RELABEL_CONFIGS: list[dict[str, Any]] = [
    _replace("__meta_kubernetes_namespace", "namespace"),
    _replace("__meta_kubernetes_pod_container_name", "container"),
    _replace("__meta_kubernetes_pod_name", "pod"),
    {"target_label": "job", "replacement": f"{STRIMZI_NAMESPACE}/{STRIMZI_POD_MONITOR}"},
    {"target_label": "endpoint", "replacement": "tcp-prometheus"},
    {
        "separator": ";",
        "regex": "__meta_kubernetes_pod_label_(strimzi_io_.+)",
        "replacement": "$1",
        "action": "labelmap",
    },
    _replace("__meta_kubernetes_namespace", "namespace"),
    _replace("__meta_kubernetes_pod_name", "kubernetes_pod_name"),
    _replace("__meta_kubernetes_pod_node_name", "node_name"),
    _replace("__meta_kubernetes_pod_host_ip", "node_ip"),
]


class PrometheusServer(ServiceProcess):
    """`start()`, `.url`, `query(promql)` (the instant vector's samples), `stop()`."""

    def __init__(
        self,
        workdir: Path,
        targets: Sequence[str | StrimziPod],
        metrics_path: str = "/metrics",
        rule_files: Sequence[Path] = (),
    ) -> None:
        self.workdir = Path(workdir)
        self.workdir.mkdir(parents=True, exist_ok=True)
        super().__init__(self.workdir / "prometheus.log")
        self.port = free_port()
        self.targets = list(targets)
        self.metrics_path = metrics_path
        self.rule_files = [Path(p) for p in rule_files]

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def _config(self) -> dict[str, Any]:
        plain = [t for t in self.targets if isinstance(t, str)]
        pods = [t for t in self.targets if isinstance(t, StrimziPod)]
        jobs: list[dict[str, Any]] = []
        if plain:
            jobs.append(
                {"job_name": "connect", "metrics_path": self.metrics_path, "static_configs": [{"targets": plain}]}
            )
        if pods:
            jobs.append(
                {
                    "job_name": "strimzi-pods",
                    "metrics_path": self.metrics_path,
                    "static_configs": [{"targets": [p.target], "labels": p.discovery_labels()} for p in pods],
                    "relabel_configs": STRIMZI_RELABEL_CONFIGS,
                }
            )
        return {
            "global": {"scrape_interval": "1s", "evaluation_interval": "1s"},
            "rule_files": [str(p) for p in self.rule_files],
            "scrape_configs": jobs,
        }

    def start(self, timeout_s: float = 60.0) -> PrometheusServer:
        binary = shutil.which("prometheus")
        require(binary is not None, "Prometheus (Debian's prometheus package)")
        assert binary is not None
        config = self.workdir / "prometheus.yml"
        config.write_text(json.dumps(self._config(), indent=1))  # JSON is YAML
        self.launch(
            [
                binary,
                f"--config.file={config}",
                f"--storage.tsdb.path={self.workdir / 'data'}",
                f"--web.listen-address=127.0.0.1:{self.port}",
                "--log.level=warn",
            ],
            self.url + "/-/ready",
            timeout_s,
            what="prometheus",
        )
        return self

    def query(self, promql: str) -> list[dict[str, Any]]:
        response = httpx.get(self.url + "/api/v1/query", params={"query": promql}, timeout=10)
        response.raise_for_status()
        body = response.json()
        assert body["status"] == "success", body
        return body["data"]["result"]

    def __enter__(self) -> PrometheusServer:
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.stop()
