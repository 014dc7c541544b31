"""The Avro side of bench/run.py's measure (e): a raw loop's codec using confluent-kafka's own
AvroSerializer / AvroDeserializer, against the worker's AvroConverter, through one Schema Registry."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from confluent_kafka.schema_registry import SchemaRegistryClient
from confluent_kafka.schema_registry.avro import AvroDeserializer, AvroSerializer
from confluent_kafka.serialization import MessageField, SerializationContext

from runtime.connectors.testing import SEQUENCE_VALUE_SCHEMA
from runtime.converters.schema_registry.avro_data import connect_to_avro_schema

STRING_CONVERTER = "org.apache.kafka.connect.storage.StringConverter"
AVRO_CONVERTER = "io.confluent.connect.avro.AvroConverter"


def worker_converters(registry_url: str) -> dict[str, str]:
    """String keys and Avro values, as most Schema Registry deployments configure a connector."""
    return {
        "key.converter": STRING_CONVERTER,
        "value.converter": AVRO_CONVERTER,
        "value.converter.schema.registry.url": registry_url,
    }


class AvroCodec:
    """SequenceSource-shaped records with confluent-kafka's serializers: the Avro schema is the one the
    worker's AvroConverter registers for SequenceSource's Connect schema, so both write the same bytes."""

    def __init__(self, registry_url: str) -> None:
        self.client = SchemaRegistryClient({"url": registry_url})
        self.schema_str = json.dumps(connect_to_avro_schema(SEQUENCE_VALUE_SCHEMA), separators=(",", ":"))

    def key_bytes(self, topic: str, key: str) -> bytes:
        return key.encode()

    def value_encoder(self, topic: str) -> Callable[[int], bytes]:
        serialize = AvroSerializer(self.client, self.schema_str)
        context = SerializationContext(topic, MessageField.VALUE)
        return lambda seqno: serialize({"task": 0, "seqno": seqno}, context)

    def key_decoder(self) -> Callable[[str, bytes | None], Any]:
        return lambda topic, raw: None if raw is None else raw.decode()

    def value_decoder(self) -> Callable[[str, bytes | None], Any]:
        deserialize = AvroDeserializer(self.client)
        contexts: dict[str, SerializationContext] = {}

        def decode(topic: str, raw: bytes | None) -> Any:
            context = contexts.get(topic) or contexts.setdefault(topic, SerializationContext(topic, MessageField.VALUE))
            return deserialize(raw, context)

        return decode
