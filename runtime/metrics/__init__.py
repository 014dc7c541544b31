"""Prometheus metrics of a worker, named as Strimzi's JMX exporter rules render the reference's metrics."""

from .connect_collector import ConnectCollector, metrics_registry

__all__ = ["ConnectCollector", "metrics_registry"]
