"""Config providers (KIP-297, KIP-421): `${provider:[path:]key}` references resolved inside the worker.

Stored connector configs and `GET .../config` keep the references; connectors and tasks receive the
resolved values; task configs generated from resolved values get their references back before they
are stored (so secrets never reach a store or a REST response).

Worker settings, as in Kafka Connect:
    config.providers=file,env
    config.providers.file.class=org.apache.kafka.common.config.provider.FileConfigProvider
    config.providers.env.class=org.apache.kafka.common.config.provider.EnvVarConfigProvider
    config.providers.<name>.param.<setting>=...
Third-party providers register in the entry-point group `kafka_connect_runtime.config_providers`.
"""

from __future__ import annotations

import logging
import os
import re
from abc import ABC, abstractmethod
from collections.abc import Mapping
from importlib.metadata import entry_points
from pathlib import Path

from .api.errors import ConfigError
from .worker_config import WorkerConfig

log = logging.getLogger(__name__)

# Kafka's ConfigTransformer pattern: ${provider:[path:]key}
REFERENCE = re.compile(r"\$\{([^}]*?):(([^}]*?):)?([^}]*?)\}")


class ConfigProvider(ABC):
    def configure(self, configs: dict[str, str]) -> None:
        pass

    @abstractmethod
    def get(self, path: str, keys: set[str]) -> dict[str, str]:
        """Values for `keys` at `path`; missing keys are simply absent."""

    def close(self) -> None:
        pass


class FileConfigProvider(ConfigProvider):
    """`${file:/path/to/file.properties:key}`: a key of a Java properties file."""

    def configure(self, configs: dict[str, str]) -> None:
        self.allowed = [Path(p.strip()).resolve() for p in configs.get("allowed.paths", "").split(",") if p.strip()]

    def _check(self, path: str) -> Path:
        resolved = Path(path).resolve()
        if getattr(self, "allowed", None) and not any(resolved.is_relative_to(a) for a in self.allowed):
            raise ConfigError(f"The path {path} is not allowed to be accessed")
        return resolved

    def get(self, path: str, keys: set[str]) -> dict[str, str]:
        from .worker_config import read_properties

        if not path:
            return {}
        try:
            props = read_properties(self._check(path), encoding="utf-8")  # as Kafka's FileConfigProvider
        except UnicodeDecodeError as exc:
            raise ConfigError(f"Could not read properties from file {path}: not UTF-8 ({exc.reason})") from None
        except OSError as exc:
            raise ConfigError(f"Could not read properties from file {path}: {exc.strerror or exc}") from None
        return {k: v for k, v in props.items() if k in keys}


class DirectoryConfigProvider(FileConfigProvider):
    """`${dir:/path/to/dir:file}`: the content of a file in a folder (e.g. mounted secrets)."""

    def get(self, path: str, keys: set[str]) -> dict[str, str]:
        folder = self._check(path)
        result = {}
        for key in keys:
            candidate = folder / key
            if candidate.is_file() and candidate.parent == folder:
                result[key] = candidate.read_text(encoding="utf-8")
        return result


class EnvVarConfigProvider(ConfigProvider):
    """`${env:NAME}` (or `${env::NAME}`): an environment variable, optionally limited by `allowlist.pattern`."""

    def configure(self, configs: dict[str, str]) -> None:
        pattern = configs.get("allowlist.pattern")
        self.allowlist = re.compile(pattern) if pattern else None

    def get(self, path: str, keys: set[str]) -> dict[str, str]:
        if path:
            return {}
        allow = getattr(self, "allowlist", None)
        return {k: os.environ[k] for k in keys if k in os.environ and (allow is None or allow.fullmatch(k))}


ALIASES = {
    "org.apache.kafka.common.config.provider.FileConfigProvider": FileConfigProvider,
    "org.apache.kafka.common.config.provider.DirectoryConfigProvider": DirectoryConfigProvider,
    "org.apache.kafka.common.config.provider.EnvVarConfigProvider": EnvVarConfigProvider,
    "FileConfigProvider": FileConfigProvider,
    "DirectoryConfigProvider": DirectoryConfigProvider,
    "EnvVarConfigProvider": EnvVarConfigProvider,
}


def _provider_class(name: str | type) -> type[ConfigProvider]:
    if isinstance(name, type):
        if not issubclass(name, ConfigProvider):
            raise ConfigError(f"{name.__name__} is not a ConfigProvider")
        return name
    if name in ALIASES:
        return ALIASES[name]
    for ep in entry_points(group="kafka_connect_runtime.config_providers"):
        if ep.name == name or ep.value.replace(":", ".") == name:
            return ep.load()
    from .plugins import import_object

    try:
        cls = import_object(name)
    except Exception as exc:  # noqa: BLE001 - importing a plugin runs its code: whatever it raises, it cannot be loaded
        raise ConfigError(f"Config provider class {name} cannot be loaded: {exc}") from None
    if not (isinstance(cls, type) and issubclass(cls, ConfigProvider)):
        raise ConfigError(f"{name} is not a ConfigProvider")
    return cls


class ConfigResolver:
    """Resolves references with the providers the worker configures."""

    def __init__(self, providers: Mapping[str, ConfigProvider]) -> None:
        self.providers = dict(providers)

    @classmethod
    def from_worker_config(cls, config: WorkerConfig) -> ConfigResolver:
        providers: dict[str, ConfigProvider] = {}
        for name, provider_class, params in config.config_providers():
            provider = _provider_class(provider_class)()
            provider.configure(params)
            providers[name] = provider
        return cls(providers)

    def has_references(self, config: Mapping[str, str]) -> bool:
        return bool(self.providers) and any(isinstance(v, str) and "${" in v for v in config.values())

    def resolve(self, config: Mapping[str, str]) -> dict[str, str]:
        """A copy with every resolvable reference replaced; unknown providers/keys stay as written."""
        if not self.has_references(config):
            return dict(config)
        wanted: dict[tuple[str, str], set[str]] = {}
        for value in config.values():
            if isinstance(value, str):
                for match in REFERENCE.finditer(value):
                    provider, path, key = match.group(1), match.group(3) or "", match.group(4)
                    if provider in self.providers:
                        wanted.setdefault((provider, path), set()).add(key)
        lookups: dict[tuple[str, str], dict[str, str]] = {}
        for (provider, path), keys in wanted.items():
            lookups[(provider, path)] = self.providers[provider].get(path, keys)

        def replace(match: re.Match[str]) -> str:
            found = lookups.get((match.group(1), match.group(3) or ""), {})
            return found.get(match.group(4), match.group(0))

        return {k: REFERENCE.sub(replace, v) if isinstance(v, str) else v for k, v in config.items()}

    @staticmethod
    def restore_references(
        raw: Mapping[str, str], resolved: Mapping[str, str], task_configs: list[dict[str, str]]
    ) -> list[dict[str, str]]:
        """Put the connector config's references back into generated task configs (the reference's
        reverseTransform): a task value equal to a resolved connector value shows the raw reference."""
        referenced = {
            k: v for k, v in raw.items() if isinstance(v, str) and REFERENCE.search(v) and resolved.get(k) != v
        }
        if not referenced:
            return task_configs
        restored = []
        for task_config in task_configs:
            copy = dict(task_config)
            for key, raw_value in referenced.items():
                if key in copy and copy[key] == resolved.get(key):
                    copy[key] = raw_value
            restored.append(copy)
        return restored
