import importlib
import importlib.metadata
import json
from pathlib import Path

import airflow
import jsonschema

from airflow_provider_connect.get_provider_info import get_provider_info
from tests.support.env import require

SCHEMA = Path(airflow.__file__).parent / "provider_info.schema.json"


def test_valid_against_airflows_own_schema():
    jsonschema.validate(get_provider_info(), json.loads(SCHEMA.read_text()))


def test_package_name_is_the_canonical_distribution_name():
    import tomllib

    project = tomllib.loads((Path(__file__).parents[3] / "pyproject.toml").read_text())["project"]["name"]
    canonical = project.lower().replace("_", "-").replace(".", "-")
    assert get_provider_info()["package-name"] == canonical == "airflow-provider-connect"


def test_every_listed_module_and_hook_imports():
    info = get_provider_info()
    for section in ("hooks", "operators", "sensors", "triggers"):
        for entry in info[section]:
            for module in entry["python-modules"]:
                importlib.import_module(module)
    for conn in info["connection-types"]:
        module, _, cls = conn["hook-class-name"].rpartition(".")
        hook = getattr(importlib.import_module(module), cls)
        assert hook.conn_type == conn["connection-type"] == "kafka_connect"


def test_connection_form_declares_url_auth_tls_timeout_headers():
    conn = get_provider_info()["connection-types"][0]
    assert {"verify_ssl", "ca_bundle", "timeout", "headers"} <= set(conn["conn-fields"])
    assert conn["conn-fields"]["headers"]["schema"]["format"] == "password"  # may hold tokens
    assert conn["ui-field-behaviour"]["relabeling"]["host"] == "REST URL"
    assert {"login", "password"}.isdisjoint(conn["ui-field-behaviour"]["hidden-fields"])


def test_registered_with_airflow_providers_manager():
    try:
        importlib.metadata.distribution("airflow-provider-connect")
    except importlib.metadata.PackageNotFoundError:
        require(False, "airflow-provider-connect installed (pip install -e . --no-deps)")
    from airflow.providers_manager import ProvidersManager
    from airflow.sdk.providers_manager_runtime import ProvidersManagerTaskRuntime

    manager = ProvidersManager()
    assert "airflow-provider-connect" in manager.providers
    hook = ProvidersManagerTaskRuntime().hooks["kafka_connect"]
    assert hook is not None and hook.hook_class_name.endswith("ConnectHook")
    assert "extra__kafka_connect__verify_ssl" in manager.connection_form_widgets
    assert manager.field_behaviours["kafka_connect"]["relabeling"]["host"] == "REST URL"
