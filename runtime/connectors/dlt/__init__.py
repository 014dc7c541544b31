"""The dlt sink: Kafka topics into any dlt destination (databases, warehouses, lakes), exactly once."""

from .sink import DltSinkConnector, DltSinkTask

__all__ = ["DltSinkConnector", "DltSinkTask"]
