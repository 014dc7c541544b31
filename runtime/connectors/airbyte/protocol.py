"""The Airbyte protocol: messages through the protocol's own models (airbyte-protocol-models), and the
source's spec, check and discover commands.

The models are read with pydantic's TypeAdapter, which takes the pydantic variant of the models
(airbyte-protocol-models-pdv2, this connector's extra) and the dataclass variant airbyte-cdk installs
under the same module name alike.
"""

from __future__ import annotations

import functools
import logging
import re
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import orjson

from ...api import ConfigError, ConnectError
from ..tap_process import PrivateDir, recent, run_command, tail

log = logging.getLogger(__name__)

_TOPIC_UNSAFE = re.compile(r"[^a-zA-Z0-9._-]")


@functools.cache
def models() -> Any:
    try:
        import airbyte_protocol.models as airbyte_models  # a namespace package: import the module itself
    except ImportError as exc:  # pragma: no cover - the extra is missing
        raise ConnectError(
            "The Airbyte connector needs the Airbyte protocol models: pip install 'airflow-provider-connect[airbyte]'"
        ) from exc
    return airbyte_models


@functools.cache
def _adapter(name: str) -> Any:
    from pydantic import TypeAdapter

    return TypeAdapter(getattr(models(), name))


def parse(model: str, data: Any) -> Any:
    """`data` (a parsed JSON object) as the protocol model `model` (e.g. "AirbyteStateMessage")."""
    return _adapter(model).validate_python(data)


def dump(model: str, value: Any) -> Any:
    return _adapter(model).dump_python(value, mode="json", exclude_none=True)


def stream_key(name: str, namespace: str | None) -> str:
    """The name a stream's offsets and topic go by: `namespace.name`, or `name` without a namespace."""
    return f"{namespace}.{name}" if namespace else name


def topic_for(prefix: str, key: str) -> str:
    return prefix + _TOPIC_UNSAFE.sub("_", key)


def messages(output: str) -> list[dict[str, Any]]:
    """The JSON objects of a command's stdout (Airbyte's platform skips other lines too: logged here)."""
    found = []
    for line in output.splitlines():
        if not line.strip():
            continue
        try:
            message = orjson.loads(line)
        except orjson.JSONDecodeError:
            log.debug("Skipping a line that is not an Airbyte message: %.200s", line)
            continue
        if isinstance(message, dict):
            found.append(message)
    return found


def error_text(found: list[dict[str, Any]]) -> str:
    """What the source said went wrong: its TRACE errors, else its ERROR and FATAL log lines."""
    errors = []
    for message in found:
        if message.get("type") == "TRACE" and (message.get("trace") or {}).get("type") == "ERROR":
            error = parse("AirbyteTraceMessage", message["trace"]).error
            errors.append(error.message + (f" ({error.internal_message})" if error.internal_message else ""))
    if not errors:
        errors = [
            m["log"].get("message", "")
            for m in found
            if m.get("type") == "LOG" and (m.get("log") or {}).get("level") in ("ERROR", "FATAL")
        ]
    return "\n".join(errors)


class Source:
    """A source executable and its config, for the short commands (spec, check, discover)."""

    def __init__(self, executable: str, config: dict[str, Any], timeout_s: float, secrets: list[str]) -> None:
        self.executable = executable
        self.config = config
        self.timeout_s = timeout_s
        self.secrets = secrets
        self.name = Path(executable).name

    def _run(self, command: str, with_config: bool) -> list[dict[str, Any]]:
        with PrivateDir("airbyte-") as private:
            args = [self.executable, command]
            if with_config:
                args += ["--config", private.write_json("config.json", self.config)]
            code, out, err = run_command(args, self.timeout_s, self.secrets)
        found = messages(out)
        if code != 0:
            said = error_text(found) or tail(err) or "(no output on stderr)"
            raise ConfigError(f"The source's {command} ({self.name} {command}) exited with code {code}: {said}")
        return found

    def _expect(self, found: list[dict[str, Any]], kind: str, field: str, command: str) -> dict[str, Any]:
        for message in found:
            if message.get("type") == kind and isinstance(message.get(field), dict):
                return message[field]
        said = error_text(found)
        raise ConfigError(f"The source's {command} wrote no {kind} message" + (f": {said}" if said else ""))

    def spec(self) -> dict[str, Any]:
        """The source's ConnectorSpecification (reused for REUSE_S: spec does not depend on the config)."""

        def run() -> dict[str, Any]:
            spec = self._expect(self._run("spec", False), "SPEC", "spec", "spec")
            parse("ConnectorSpecification", spec)
            return spec

        return recent(["airbyte-spec", self.executable], run)

    def check(self) -> str | None:
        """None when the source's check succeeds, else its message."""
        status = self._expect(self._run("check", True), "CONNECTION_STATUS", "connectionStatus", "check")
        parsed = parse("AirbyteConnectionStatus", status)
        if parsed.status.value == "SUCCEEDED":
            return None
        return parsed.message or "the check failed without a message"

    def discover(self) -> dict[str, Any]:
        """The source's AirbyteCatalog (reused from a discover of the last moments)."""

        def run() -> dict[str, Any]:
            catalog = self._expect(self._run("discover", True), "CATALOG", "catalog", "discover")
            return dump("AirbyteCatalog", parse("AirbyteCatalog", catalog))

        return recent(["airbyte-discover", self.executable, self.config], run)


def config_errors(spec: Mapping[str, Any], config: Mapping[str, Any]) -> list[str]:
    """The source config's violations of the spec's connectionSpecification (JSON Schema), one per problem."""
    import jsonschema

    schema = spec.get("connectionSpecification") or {}
    validator_class: Callable[..., Any] = jsonschema.validators.validator_for(schema, jsonschema.Draft7Validator)
    problems = []
    for error in sorted(validator_class(schema).iter_errors(config), key=lambda e: list(e.absolute_path)):
        where = ".".join(str(p) for p in error.absolute_path) or "(the config)"
        # the message quotes the value: a secret's value is replaced before it is shown (see tap_process.redact)
        problems.append(f"{where}: {error.message}")
    return problems


def secret_keys(spec: Mapping[str, Any]) -> set[str]:
    """Names of the spec's properties marked `airbyte_secret` (at any depth)."""
    names: set[str] = set()

    def walk(node: Any) -> None:
        if isinstance(node, Mapping):
            for key, child in (node.get("properties") or {}).items():
                if isinstance(child, Mapping) and child.get("airbyte_secret"):
                    names.add(key)
                walk(child)
            for key in ("oneOf", "anyOf", "allOf"):
                for child in node.get(key) or []:
                    walk(child)
            if isinstance(node.get("items"), Mapping):
                walk(node["items"])

    walk(spec.get("connectionSpecification") or {})
    return names
