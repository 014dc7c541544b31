"""Conformance of KIP-618's preflight checks (`exactly.once.support`, `transaction.boundary`): distributed mode
only, as the reference runs them in its DistributedHerder.

Two sets of answers:
- workers without exactly-once support (both clusters of this suite): live, request by request;
- a reference worker with `exactly.once.source.support=enabled`, compared with what our validation answers
  for a worker with it enabled (computed in this process: our distributed worker refuses to start with
  `enabled` until the control plane of issue 25 lands; then this comparison can move to a live cluster).
  The reference runs exactly-once on Tansu as far as these checks need (and further: it creates an
  exactly-once FileStreamSource whose records commit), see the README's exactly-once section.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from runtime.herder.validation import check_source_exactly_once, invalid_config_message, validate_connector_config
from runtime.plugins import Plugins
from tests.support.oracle import OracleProcess, require_oracle

from ..conftest import _wanted
from ..harness import ORACLE, Conformance
from ..scenario import source_config
from ..test_a_root_plugins import _errors_only
from .conftest import JAVA_OPTIONS, group_props

pytestmark = pytest.mark.oracle

VALIDATE = "/connector-plugins/FileStreamSourceConnector/config/validate"

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


def test_validation_on_workers_without_exactly_once(cf: Conformance) -> None:
    for label, extra in CASES.items():
        cf.call("PUT", VALIDATE, case_config(extra), status=200, project=_errors_only, label=label)
    cf.call(
        "POST",
        "/connectors",
        {"name": "<<c>>", "config": case_config(CASES["required, unsupported without a file (stdin)"], "<<c>>")},
        status=400,
        label="create with exactly.once.support=required: 400 listing the errors",
    )


@pytest.fixture(scope="module")
def exactly_once_reference(bootstrap_servers: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[httpx.Client]:
    if not _wanted(ORACLE):
        pytest.skip("CONFORMANCE_TARGETS=ours: no reference to compare with")
    props = {**group_props(), "exactly.once.source.support": "enabled"}
    oracle = OracleProcess(
        tmp_path_factory.mktemp("oracle-eos"),
        bootstrap_servers,
        props=props,
        tool=require_oracle(),
        mode="distributed",
        java_options=JAVA_OPTIONS,
    )
    oracle.start(timeout_s=180)
    try:
        with httpx.Client(base_url=oracle.url, timeout=60) as client:
            yield client
    finally:
        oracle.stop()


def ours_with_exactly_once(config: dict[str, Any]) -> dict[str, Any]:
    """Our validation as a distributed worker with exactly.once.source.support=enabled answers it."""
    plugins = Plugins()
    infos = validate_connector_config(plugins, config)
    check_source_exactly_once(plugins, infos, config, worker_enabled=True)
    return infos


def test_validation_on_a_worker_with_exactly_once_enabled(exactly_once_reference: httpx.Client, tmp_path: Path) -> None:
    differences = []
    for label, extra in CASES.items():
        config = {
            k: str(v).replace("<<v>>", "v").replace("<<dir>>", str(tmp_path)).replace("<<topic>>", "t")
            for k, v in case_config(extra).items()
        }
        theirs = exactly_once_reference.put(VALIDATE, json=config)
        assert theirs.status_code == 200, theirs.text
        want, got = _errors_only(theirs.json()), _errors_only(ours_with_exactly_once(config))
        if want != got:
            differences.append(f"{label}:\n  reference {want}\n  ours      {got}")
        if got["error_count"]:
            created = exactly_once_reference.post("/connectors", json={"name": config["name"], "config": config})
            if (created.status_code, created.json()["message"]) != (
                400,
                invalid_config_message(ours_with_exactly_once(config)),
            ):
                differences.append(f"{label}, create: reference {created.status_code} {created.text}")
    assert not differences, "\n".join(differences)
