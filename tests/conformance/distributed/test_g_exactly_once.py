"""Conformance of KIP-618's preflight checks (`exactly.once.support`, `transaction.boundary`): distributed mode
only, as the reference runs them in its DistributedHerder.

Two comparisons, both live and request by request:
- workers without exactly-once support: the two clusters of this suite;
- workers with `exactly.once.source.support=enabled`: one reference worker and one of ours, each a group of
  its own with the suite's settings (group_props). Beyond validation and refused creations, a connector
  with `exactly.once.support=required` is created on both, runs, and is fenced (`PUT /connectors/{c}/fence`,
  a round of zombie fencing). The reference runs exactly-once on Tansu as far as these checks need, see the
  README's exactly-once section.
`PUT /connectors/{c}/fence` on a standalone worker (500, "... does not support exactly-once source
connectors.") is compared in tests/conformance/test_f_internal.py.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from tests.support.cluster import Cluster
from tests.support.oracle import FAST_START_JAVA, OracleProcess, require_oracle

from ..conftest import _wanted
from ..harness import ORACLE, OURS, Conformance, Target
from ..scenario import source_config, state_is, write_lines
from ..test_a_root_plugins import _errors_only
from .conftest import group_props, run_side_by_side

pytestmark = pytest.mark.oracle

VALIDATE = "/connector-plugins/FileStreamSourceConnector/config/validate"
ENABLED = {"exactly.once.source.support": "enabled"}

# label -> the settings added to a FileStreamSource config (a file, unless the case takes it away)
CASES: dict[str, dict[str, Any]] = {
    "required, supported with a file": {"exactly.once.support": "required"},
    "required, unsupported without a file (stdin)": {"exactly.once.support": "REQUIRED", "file": None},
    "requested asks nothing": {"exactly.once.support": "requested", "file": None},
    "connector-defined boundaries FileStreamSource cannot define": {"transaction.boundary": "connector"},
    "required and connector boundaries together": {
        "exactly.once.support": "required",
        "transaction.boundary": "CONNECTOR",
    },
    "invalid values are only checked as values": {
        "exactly.once.support": "sometimes",
        "transaction.boundary": "batch",
        "transaction.boundary.interval.ms": "-5",
    },
    "interval boundary with its interval": {
        "transaction.boundary": "interval",
        "transaction.boundary.interval.ms": "100",
    },
}


def case_config(extra: dict[str, Any], name: str = "<<v>>") -> dict[str, Any]:
    config = source_config(name=name, **{k: v for k, v in extra.items() if v is not None})
    for key in [k for k, v in extra.items() if v is None]:
        del config[key]
    return config


def compare_validation(cf: Conformance) -> None:
    """Every case validated, and each case the reference refuses also refused at creation (400 listing the
    errors); the answers of the targets compared."""
    for label, extra in CASES.items():
        step = cf.call("PUT", VALIDATE, case_config(extra), status=200, project=_errors_only, label=label)
        if next(iter(step.answers.values())).body["error_count"]:
            cf.call(
                "POST",
                "/connectors",
                {"name": "<<c>>", "config": case_config(extra, "<<c>>")},
                status=400,
                label=f"{label}: create refused",
            )


def test_validation_on_workers_without_exactly_once(cf: Conformance) -> None:
    compare_validation(cf)


@pytest.fixture(scope="module")
def exactly_once_targets(bootstrap_servers: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[list[Target]]:
    """A reference worker and one of ours, each alone in a group of its own, with exactly-once enabled."""
    oracle = (
        OracleProcess(
            tmp_path_factory.mktemp("oracle-eos"),
            bootstrap_servers,
            props={**group_props(), **ENABLED},
            tool=require_oracle(),
            mode="distributed",
            java_options=FAST_START_JAVA,
        )
        if _wanted(ORACLE)
        else None
    )
    ours = (
        Cluster(tmp_path_factory.mktemp("ours-eos"), bootstrap_servers, 1, **group_props(), **ENABLED)
        if _wanted(OURS)
        else None
    )
    workers: list[OracleProcess | Cluster] = [w for w in (oracle, ours) if w is not None]
    targets: list[Target] = []
    try:
        run_side_by_side([w.start for w in workers])
        for name, url in [(ORACLE, oracle.url if oracle else None), (OURS, ours.workers[0].url if ours else None)]:
            if url is not None:
                client = httpx.Client(base_url=url, timeout=60)
                targets.append(Target(name, url, tmp_path_factory.mktemp(f"{name}-eos-data"), client))
        yield targets
    finally:
        for target in targets:
            target.client.close()
        run_side_by_side([w.stop for w in workers])


@pytest.fixture
def eos_cf(
    request: pytest.FixtureRequest, exactly_once_targets: list[Target], bootstrap_servers: str
) -> Iterator[Conformance]:
    """As the suite's `cf`, against the exactly-once targets: the reference's status codes always, bodies
    compared when both answer."""
    conformance = Conformance(
        request.node.name, exactly_once_targets, None, recording=False, bootstrap_servers=bootstrap_servers, settle=True
    )
    yield conformance
    if conformance.diffs:
        pytest.fail(conformance.report(), pytrace=False)


def test_exactly_once_on_workers_with_it_enabled(eos_cf: Conformance) -> None:
    cf = eos_cf
    compare_validation(cf)
    write_lines(cf, "<<dir>>/<<topic>>.in", ["a", "b"])
    config = case_config(CASES["required, supported with a file"], "<<c>>")
    cf.call("POST", "/connectors", {"name": "<<c>>", "config": config}, status=201)
    cf.poll("/connectors/<<c>>/status", state_is("RUNNING", ["RUNNING"]))
    cf.call("PUT", "/connectors/<<c>>/fence", status=204, label="fence a running exactly-once source connector")
    cf.call("PUT", "/connectors/<<c>>/stop", status=204)
    cf.poll("/connectors/<<c>>/status", state_is("STOPPED", []))
    cf.call("PUT", "/connectors/<<c>>/fence", status=204, label="fence a STOPPED exactly-once source connector")
    cf.call("PUT", "/connectors/<<nope>>/fence", status=404)
    cf.call("DELETE", "/connectors/<<c>>", status=204)
