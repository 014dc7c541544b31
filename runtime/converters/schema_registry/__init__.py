"""Converters for Confluent Schema Registry formats: Avro, Protobuf and JSON Schema."""
