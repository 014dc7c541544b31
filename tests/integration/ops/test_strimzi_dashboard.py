"""Strimzi's Kafka Connect Grafana dashboard and alert rules (strimzi/, verbatim from Strimzi) over this runtime:
a standalone worker and a 3-worker distributed cluster, scraped by Debian's Prometheus with the labels Strimzi's
PodMonitor gives a KafkaConnect's pods (tests/support/prometheus.py), each deployment one KafkaConnect for the
dashboard's cluster variable. Every panel that can apply to a Python process is evaluated as Grafana would and
shows data that agrees with the REST API; both failure alerts fire on the pods running the failures and clear
once they run again.

Panels that cannot apply are listed in NOT_APPLICABLE with the reason. The Workers row reads the group's metrics
(connect-coordinator-metrics, connect-worker-rebalance-metrics), which a standalone worker does not have, as
the reference's does not: in standalone mode those three panels are empty, and the test checks that too.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.integration.scenarios.helpers import Api, sink_config, source_config
from tests.support.broker import unique
from tests.support.cluster import Cluster
from tests.support.prometheus import STRIMZI_NAMESPACE, PrometheusServer, StrimziPod
from tests.support.worker import WorkerProcess, wait_for

pytestmark = pytest.mark.integration

STRIMZI = Path(__file__).parent / "strimzi"
DASHBOARD = json.loads((STRIMZI / "strimzi-kafka-connect.json").read_text())

NOT_APPLICABLE = {
    "CPU Usage": "reads cAdvisor's container_cpu_usage_seconds_total, which the kubelet reports for a container "
    "and no process serves (in Kubernetes it shows a Python worker's container unchanged); the same panel of "
    "Strimzi's metrics-reporter dashboard reads the worker's process_cpu_seconds_total, checked here",
    "JVM Memory": "jvm_memory_used_bytes: a Python process has no JVM (its memory is process_resident_memory_bytes)",
    "Time Spent in GC": "jvm_gc_collection_seconds_sum: CPython's collector reports collections "
    "(python_gc_collections_total), not the time they take",
    "JVM Thread Count": "jvm_threads_current: JVM threads; a Python process reports none",
}
GROUP_PANELS = ("Assigned Connectors by Worker", "Rebalancing", "Assigned Tasks per Worker")

# The "CPU Usage" panel of Strimzi's metrics-reporter dashboard (packaging/examples/metrics/
# strimzi-metrics-reporter/grafana-dashboards/strimzi-kafka-connect.json), whose other panels read the
# metrics reporter's names rather than the JMX exporter's this runtime renders
REPORTER_CPU_USAGE = (
    'sum(rate(process_cpu_seconds_total{namespace="$kubernetes_namespace",pod=~"$strimzi_connect_cluster_name-'
    'connect-.+",container="$strimzi_connect_cluster_name-connect"}[5m])) by (pod)'
)
ROLES = ("source", "sink", "paused", "broken_connector", "broken_task")  # the connectors of each deployment
ALERT_HOLD = "2s"  # the rules hold an alert 5m before it fires; the expressions are Strimzi's own


def dashboard_panels() -> dict[str, list[str]]:
    """Panel title -> its queries, rows unfolded."""
    panels: dict[str, list[str]] = {}

    def walk(items: list[dict[str, Any]]) -> None:
        for panel in items:
            if panel.get("type") == "row":
                walk(panel.get("panels", []))
            else:
                panels[panel["title"]] = [target["expr"] for target in panel.get("targets", [])]

    walk(DASHBOARD["panels"])
    return panels


def alert_rules(path: Path) -> Path:
    """Strimzi's Connect alert rules as a Prometheus rule file: the PrometheusRule's groups, each alert held
    ALERT_HOLD instead of minutes, without ConnectContainersDown (absent(cAdvisor's container_last_seen):
    outside Kubernetes nothing reports containers, so it would always fire)."""
    rule = yaml.safe_load((STRIMZI / "prometheus-kafka-connect-rules.yaml").read_text())
    groups = rule["spec"]["groups"]
    for group in groups:
        group["rules"] = [{**r, "for": ALERT_HOLD} for r in group["rules"] if r["alert"] != "ConnectContainersDown"]
    path.write_text(json.dumps({"groups": groups}))
    return path


@dataclass
class Deployment:
    """One KafkaConnect's workers, as the pods Prometheus scrapes."""

    cluster: str  # the dashboard's $strimzi_connect_cluster_name
    workers: list[WorkerProcess]
    distributed: bool
    names: dict[str, str]  # role -> connector name

    def __post_init__(self) -> None:
        self.api = Api(self.workers[0].url)

    @property
    def pods(self) -> list[StrimziPod]:
        return [StrimziPod(f"127.0.0.1:{w.port}", self.cluster, i) for i, w in enumerate(self.workers)]

    def pod_of(self, worker_id: str) -> str:
        port = int(worker_id.rsplit(":", 1)[1])
        return next(p.name for p, w in zip(self.pods, self.workers, strict=True) if w.port == port)

    def bind(self, expr: str) -> str:
        """A dashboard query with the dashboard's variables set to this deployment."""
        bound = expr.replace("$kubernetes_namespace", STRIMZI_NAMESPACE).replace(
            "$strimzi_connect_cluster_name", self.cluster
        )
        assert "$" not in bound, bound
        return bound

    def connectors(self) -> dict[str, dict[str, Any]]:
        response = self.api.get("/connectors", params=[("expand", "status"), ("expand", "info")])
        assert response.status_code == 200, response.text
        return response.json()

    def tasks(self) -> list[tuple[str, dict[str, Any]]]:
        return [(name, task) for name, c in self.connectors().items() for task in c["status"]["tasks"]]


def create_connectors(deployment: Deployment, out: Path) -> None:
    """A running source with two tasks and a sink reading its topic, a second sink paused once running, a
    source whose connector fails to start and one whose task does."""
    api, names = deployment.api, deployment.names
    topic = unique("strimzi")
    api.create(names["source"], source_config(topic, 2, throughput=20))
    api.create(names["sink"], sink_config(topic, out / f"{deployment.cluster}.jsonl"))
    api.create(names["paused"], sink_config(topic, out / f"{deployment.cluster}-paused.jsonl"))
    api.create(names["broken_connector"], source_config(unique("t"), **{"connector.start.fail": "true"}))
    api.create(names["broken_task"], source_config(unique("t"), **{"task.start.fail": "all"}))
    api.wait_state(names["paused"], "RUNNING", 1, "RUNNING", timeout_s=60)
    assert api.put(f"/connectors/{names['paused']}/pause").status_code == 202


def settled(deployment: Deployment) -> None:
    states = {
        "source": ("RUNNING", 2, "RUNNING"),
        "sink": ("RUNNING", 1, "RUNNING"),
        "paused": ("PAUSED", 1, "PAUSED"),
        "broken_connector": ("FAILED", 0, None),
        "broken_task": ("RUNNING", 1, "FAILED"),
    }
    for role, (connector, tasks, task_state) in states.items():
        deployment.api.wait_state(deployment.names[role], connector, tasks, task_state, timeout_s=60)


@dataclass
class Stack:
    deployments: dict[str, Deployment]  # "standalone" and "distributed"
    prometheus: PrometheusServer


@pytest.fixture(scope="module")
def stack(bootstrap_servers: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    """Prometheus, the standalone worker and the cluster start side by side, each deployment then creates
    its connectors."""
    root = tmp_path_factory.mktemp("strimzi")
    standalone = WorkerProcess(root / "standalone", bootstrap_servers)
    cluster = Cluster(root / "cluster", bootstrap_servers, 3)
    deployments = {
        mode: Deployment(
            name, workers, mode == "distributed", {r: unique(f"{name}-{r.replace('_', '-')}") for r in ROLES}
        )
        for mode, name, workers in (("standalone", "solo", [standalone]), ("distributed", "dist", cluster.workers))
    }
    pods = [pod for deployment in deployments.values() for pod in deployment.pods]
    prometheus = PrometheusServer(root / "prometheus", pods, rule_files=[alert_rules(root / "connect-rules.json")])

    def deploy(start: Callable[[], Any], deployment: Deployment) -> None:
        start()
        create_connectors(deployment, root)

    try:
        with ThreadPoolExecutor(3) as pool:
            started = [
                pool.submit(prometheus.start),
                pool.submit(deploy, standalone.start, deployments["standalone"]),
                pool.submit(deploy, cluster.start, deployments["distributed"]),
            ]
            for future in started:
                future.result()
        yield Stack(deployments, prometheus)
    finally:
        for deployment in deployments.values():
            deployment.api.close()
        prometheus.stop()
        standalone.stop()
        cluster.stop()


def agree(what: str, observe: Callable[[], tuple[Any, Any]], timeout_s: float = 60.0) -> None:
    """Wait until the dashboard (first) shows what the REST API (second) says; fail showing both."""
    last: tuple[Any, Any] = (None, None)

    def check() -> bool:
        nonlocal last
        last = observe()
        return last[0] == last[1]

    try:
        wait_for(check, timeout_s, 0.5, what)
    except AssertionError:
        raise AssertionError(f"{what}: the dashboard shows {last[0]!r}, the REST API says {last[1]!r}") from None


def value(samples: list[dict[str, Any]]) -> float | None:
    """The single value of a sum() query (None when it has no data)."""
    assert len(samples) <= 1, samples
    return float(samples[0]["value"][1]) if samples else None


def by_label(samples: list[dict[str, Any]], label: str) -> dict[str, float]:
    return {s["metric"][label]: float(s["value"][1]) for s in samples}


@pytest.mark.parametrize("mode", ["standalone", "distributed"])
def test_every_applicable_panel_shows_what_the_rest_api_says(mode: str, stack: Stack) -> None:
    deployment, prometheus = stack.deployments[mode], stack.prometheus
    panels = dashboard_panels()
    assert set(NOT_APPLICABLE) <= set(panels), "the dashboard changed: review NOT_APPLICABLE"
    checked = {title: queries for title, queries in panels.items() if title not in NOT_APPLICABLE}
    assert len(checked) == 12, sorted(checked)  # a panel Strimzi adds must be reviewed here
    settled(deployment)
    names, cluster = deployment.names, deployment.cluster
    all_pods = {p.name for p in deployment.pods}

    def panel(title: str, index: int = 0) -> list[dict[str, Any]]:
        return prometheus.query(deployment.bind(checked[title][index]))

    def series(metric: str) -> list[dict[str, Any]]:
        return prometheus.query(f"{metric}{{strimzi_io_cluster='{cluster}'}}")

    def pods_in(samples: list[dict[str, Any]], positive: bool = False) -> set[str]:
        """The pods with a line in a per-pod result (with a value above 0)."""
        return {p for p, v in by_label(samples, "kubernetes_pod_name").items() if v > 0 or not positive}

    def task_pods(kind: str | None = None, connector: str | None = None) -> set[str]:
        """The pods running tasks, per the REST API (of connectors of a type, or of one connector)."""
        return {
            deployment.pod_of(t["worker_id"])
            for name, c in deployment.connectors().items()
            for t in c["status"]["tasks"]
            if kind in (None, c["status"]["type"]) and connector in (None, name)
        }

    def clients(metric: str) -> set[str]:
        return {client for client, v in by_label(series(metric), "clientId").items() if v > 0}

    agree("Prometheus scraping every pod", lambda: (pods_in(series("up"), positive=True), all_pods))

    # ---- Overview ----
    agree("Number of Connectors", lambda: (value(panel("Number of Connectors")), float(len(deployment.connectors()))))
    agree("Number of Tasks", lambda: (value(panel("Number of Tasks")), float(len(deployment.tasks()))))
    # Connection Count sums each line's clients: every task's client holding connections, per the REST API,
    # and every pod's admin client
    agree(
        "Connection Count: producers",
        lambda: (
            clients("kafka_producer_connection_count"),
            {f"connector-producer-{names['source']}-{i}" for i in (0, 1)},
        ),
    )
    agree(
        "Connection Count: consumers",
        lambda: (
            clients("kafka_consumer_connection_count"),
            {f"connector-consumer-{names[r]}-0" for r in ("sink", "paused")},
        ),
    )
    agree(
        "Connection Count: admin clients' pods",
        lambda: (pods_in(series("kafka_admin_client_connection_count"), positive=True), all_pods),
    )
    assert all((value(panel("Connection Count", i)) or 0) >= 1 for i in range(3))
    # a line from each pod running a task's client from the task's start (a byte total reads 0 until the
    # client's first statistics, 30 s by default), above 0 on the pods sending and receiving records
    title_out, title_in = "(Source/Producers) Outgoing Bytes per Second", "(Sink/Consumers) Incoming Bytes per Second"
    agree(title_out, lambda: (pods_in(panel(title_out)), task_pods("source")))
    agree(title_in, lambda: (pods_in(panel(title_in)), task_pods("sink")))
    agree(f"{title_out}: sending", lambda: (pods_in(panel(title_out), True), task_pods(connector=names["source"])))
    agree(f"{title_in}: receiving", lambda: (pods_in(panel(title_in), True), task_pods("sink")))

    # ---- Workers: the group's metrics ----
    if deployment.distributed:

        def per_pod(owners: list[str]) -> dict[str, float]:
            counts = Counter(deployment.pod_of(worker_id) for worker_id in owners)
            return {pod: float(counts.get(pod, 0)) for pod in all_pods}

        agree(
            "Assigned Connectors by Worker",
            lambda: (
                by_label(panel("Assigned Connectors by Worker"), "kubernetes_pod_name"),
                per_pod([c["status"]["connector"]["worker_id"] for c in deployment.connectors().values()]),
            ),
        )
        agree(
            "Assigned Tasks per Worker",
            lambda: (
                by_label(panel("Assigned Tasks per Worker"), "kubernetes_pod_name"),
                per_pod([t["worker_id"] for _, t in deployment.tasks()]),
            ),
        )
        agree("Rebalancing", lambda: (value(panel("Rebalancing")), 0.0))
    else:
        for title in GROUP_PANELS:
            assert panel(title) == [], f"{title}: a standalone worker has no group, as the reference's has none"

    # ---- Connectors and Tasks ----
    def tasks_in(state: str) -> Counter[str]:
        return Counter(name for name, t in deployment.tasks() if t["state"].lower() == state)

    for index, state in enumerate(("paused", "failed", "unassigned", "destroyed")):
        agree(
            f"Connector Tasks with Issues: {state}",
            lambda index=index, state=state: (
                by_label(panel("Connector Tasks with Issues", index), "connector"),
                {name: float(n) for name, n in tasks_in(state).items()},
            ),
        )
    for index, state in enumerate(("running", "paused", "failed", "unassigned", "destroyed")):
        agree(
            f"Connector Task State: {state}",
            lambda index=index, state=state: (
                value(panel("Connector Task State", index)),
                float(tasks_in(state).total()),
            ),
        )

    versions = {p["class"]: p["version"] for p in deployment.api.get("/connector-plugins").json()}
    columns = ("connector", "status", "connector_class", "connector_version", "connector_type", "kubernetes_pod_name")

    def connector_rows() -> set[tuple[str, ...]]:
        rows = set()
        for name, c in deployment.connectors().items():
            status, connector_class = c["status"], c["info"]["config"]["connector.class"]
            state, pod = status["connector"]["state"].lower(), deployment.pod_of(status["connector"]["worker_id"])
            rows.add((name, state, connector_class, versions[connector_class], status["type"], pod))
        return rows

    agree(
        "Connector Status",
        lambda: ({tuple(s["metric"][k] for k in columns) for s in panel("Connector Status")}, connector_rows()),
    )
    task_columns = ("connector", "task", "status", "kubernetes_pod_name")
    agree(
        "Connector Task Status",  # the value is the task's record failures: none here
        lambda: (
            {(*(s["metric"][k] for k in task_columns), float(s["value"][1])) for s in panel("Connector Task Status")},
            {
                (n, str(t["id"]), t["state"].lower(), deployment.pod_of(t["worker_id"]), 0.0)
                for n, t in deployment.tasks()
            },
        ),
    )

    # the process's metrics: the metrics-reporter dashboard's CPU Usage draws a line for every pod
    agree(
        "CPU Usage (metrics-reporter dashboard)",
        lambda: (
            {p for p, v in by_label(prometheus.query(deployment.bind(REPORTER_CPU_USAGE)), "pod").items() if v > 0},
            all_pods,
        ),
    )


@pytest.mark.parametrize("mode", ["standalone", "distributed"])
def test_failed_connector_and_task_alerts_fire_and_clear(mode: str, stack: Stack) -> None:
    deployment, prometheus = stack.deployments[mode], stack.prometheus
    settled(deployment)
    names = deployment.names
    api = deployment.api
    pods = {p.name for p in deployment.pods}

    def firing(alert: str) -> set[str]:
        query = f'ALERTS{{alertname="{alert}",alertstate="firing",namespace="{STRIMZI_NAMESPACE}"}}'
        return {s["metric"]["pod"] for s in prometheus.query(query)} & pods

    broken = api.status(names["broken_connector"])
    agree(
        "ConnectFailedConnector",
        lambda: (firing("ConnectFailedConnector"), {deployment.pod_of(broken["connector"]["worker_id"])}),
    )
    broken_task = api.status(names["broken_task"])
    agree(
        "ConnectFailedTask",
        lambda: (firing("ConnectFailedTask"), {deployment.pod_of(t["worker_id"]) for t in broken_task["tasks"]}),
    )

    # fixed and restarted: both alerts clear
    assert api.put(f"/connectors/{names['broken_connector']}/config", source_config(unique("t"))).status_code == 200
    assert api.put(f"/connectors/{names['broken_task']}/config", source_config(unique("t"))).status_code == 200
    restart = api.post(f"/connectors/{names['broken_task']}/restart?includeTasks=true&onlyFailed=true")
    assert restart.status_code in (200, 202, 204), restart.text
    api.wait_state(names["broken_connector"], "RUNNING", 1, "RUNNING", timeout_s=60)
    api.wait_state(names["broken_task"], "RUNNING", 1, "RUNNING", timeout_s=60)
    agree("ConnectFailedConnector cleared", lambda: (firing("ConnectFailedConnector"), set()))
    agree("ConnectFailedTask cleared", lambda: (firing("ConnectFailedTask"), set()))
