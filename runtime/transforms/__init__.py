"""The single message transforms and predicates bundled with Apache Kafka Connect (connect-transforms 3.9),
ported to this runtime's plugin API. Each is also known by its Kafka class name (REFERENCE_ALIASES), so
connector configs written for Kafka Connect (`transforms.x.type=org.apache.kafka.connect.transforms.Cast$Value`)
work unchanged.
"""

from __future__ import annotations

import importlib

_KAFKA = "org.apache.kafka.connect.transforms."
_FAMILIES = {  # Kafka class (without package) -> module:Class here
    "Cast$Key": "cast:CastKey",
    "Cast$Value": "cast:CastValue",
    "DropHeaders": "headers:DropHeaders",
    "ExtractField$Key": "extract_field:ExtractFieldKey",
    "ExtractField$Value": "extract_field:ExtractFieldValue",
    "Filter": "filter:Filter",
    "Flatten$Key": "flatten:FlattenKey",
    "Flatten$Value": "flatten:FlattenValue",
    "HeaderFrom$Key": "headers:HeaderFromKey",
    "HeaderFrom$Value": "headers:HeaderFromValue",
    "HoistField$Key": "hoist_field:HoistFieldKey",
    "HoistField$Value": "hoist_field:HoistFieldValue",
    "InsertField$Key": "insert_field:InsertFieldKey",
    "InsertField$Value": "insert_field:InsertFieldValue",
    "InsertHeader": "headers:InsertHeader",
    "MaskField$Key": "mask_field:MaskFieldKey",
    "MaskField$Value": "mask_field:MaskFieldValue",
    "RegexRouter": "regex_router:RegexRouter",
    "ReplaceField$Key": "replace_field:ReplaceFieldKey",
    "ReplaceField$Value": "replace_field:ReplaceFieldValue",
    "SetSchemaMetadata$Key": "set_schema_metadata:SetSchemaMetadataKey",
    "SetSchemaMetadata$Value": "set_schema_metadata:SetSchemaMetadataValue",
    "TimestampConverter$Key": "timestamp_converter:TimestampConverterKey",
    "TimestampConverter$Value": "timestamp_converter:TimestampConverterValue",
    "TimestampRouter": "timestamp_router:TimestampRouter",
    "ValueToKey": "value_to_key:ValueToKey",
}
_PREDICATES = {
    "HasHeaderKey": "predicates:HasHeaderKey",
    "RecordIsTombstone": "predicates:RecordIsTombstone",
    "TopicNameMatches": "predicates:TopicNameMatches",
}

BUILTIN_TRANSFORMS: list[str] = [f"{__name__}.{target}" for target in _FAMILIES.values()]
BUILTIN_PREDICATES: list[str] = [f"{__name__}.{target}" for target in _PREDICATES.values()]

# Kafka class name -> dotted Python path (module.Class) of the port.
REFERENCE_ALIASES: dict[str, str] = {
    **{_KAFKA + name: f"{__name__}.{target.replace(':', '.')}" for name, target in _FAMILIES.items()},
    **{_KAFKA + "predicates." + name: f"{__name__}.{target.replace(':', '.')}" for name, target in _PREDICATES.items()},
}


# Kafka also accepts a plugin's simple class name when it is unambiguous (`Filter`, `TopicNameMatches`).
_SIMPLE_NAMES = {name.rpartition(".")[2]: path for name, path in REFERENCE_ALIASES.items() if "$" not in name}


def load(path: str) -> object:
    """What `module:Class` or `module.Class` names (Kafka's full or simple names accepted): the caller checks
    that it is a class of the kind it needs."""
    path = path.strip()
    path = REFERENCE_ALIASES.get(path) or _SIMPLE_NAMES.get(path) or path
    module, sep, attr = path.partition(":") if ":" in path else path.rpartition(".")
    if not sep or not module:
        raise ImportError(f"{path} is not a dotted path")
    found: object = importlib.import_module(module)
    for part in attr.split("."):
        found = getattr(found, part)
    return found


def resolve_builtin(name: str, kind: str) -> object:
    """A `resolve(name, kind)` for TransformationChain that knows the bundled plugins and importable paths.

    Raises LookupError when nothing by that name can be loaded; the caller checks the class's kind.
    """
    try:
        return load(name)
    except (ImportError, AttributeError, ValueError) as exc:
        raise LookupError(f"Class {name} could not be found.") from exc
