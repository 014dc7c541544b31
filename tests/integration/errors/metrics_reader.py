"""Reading a worker's /metrics as a test would read what Prometheus scrapes."""

from __future__ import annotations

from prometheus_client.parser import text_string_to_metric_families

from tests.integration.scenarios.helpers import Api


def samples(api: Api, name: str, **labels: str) -> list[float]:
    """The values of the series of the worker's /metrics with this name and these labels."""
    response = api.get("/metrics")
    assert response.status_code == 200, response.text
    return [
        s.value
        for family in text_string_to_metric_families(response.text)
        for s in family.samples
        if s.name == name and all(s.labels.get(k) == v for k, v in labels.items())
    ]


def sample(api: Api, name: str, **labels: str) -> float | None:
    """The value of one series of the worker's /metrics (None when absent)."""
    found = samples(api, name, **labels)
    return found[0] if found else None
