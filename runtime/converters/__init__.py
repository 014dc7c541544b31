"""Bundled converters: JSON (Kafka Connect's format), String, ByteArray, and header converters."""
