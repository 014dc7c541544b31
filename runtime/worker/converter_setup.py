"""Build a connector's key, value and header converters (connector settings win over the worker's)."""

from __future__ import annotations

from typing import Any

from ..converters.base import Converter, HeaderConverter
from ..converters.headers import ConverterHeaderConverter
from ..plugins import Plugins
from ..worker_config import WorkerConfig


def _settings(prefix: str, worker: WorkerConfig, connector_config: dict[str, str]) -> tuple[str, dict[str, Any]]:
    if prefix in connector_config:
        class_name = connector_config[prefix]
        source: dict[str, Any] = connector_config
    else:
        class_name = str(worker.originals.get(prefix) or worker.get(prefix))
        source = worker.originals
    dot = prefix + "."
    return class_name, {k[len(dot) :]: v for k, v in source.items() if k.startswith(dot)}


def build_converter(plugins: Plugins, prefix: str, worker: WorkerConfig, connector_config: dict[str, str]) -> Converter:
    class_name, settings = _settings(prefix, worker, connector_config)
    converter = plugins.converter_class(class_name)()
    converter.configure(settings, prefix == "key.converter")
    return converter


def build_header_converter(plugins: Plugins, worker: WorkerConfig, connector_config: dict[str, str]) -> HeaderConverter:
    class_name, settings = _settings("header.converter", worker, connector_config)
    converter = plugins.converter_class(class_name, header=True)()
    if not isinstance(converter, HeaderConverter):  # a plain converter used for headers, as its values
        converter = ConverterHeaderConverter(converter)
    converter.configure(settings)
    return converter
