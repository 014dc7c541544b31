"""TransformationChain building and applying, and validate_transform_configs' messages and counts."""

from __future__ import annotations

import pytest

from runtime.api.config import ConfigDef, Importance, Range, Type
from runtime.api.errors import ConfigError, ConnectError
from runtime.api.records import Header
from runtime.api.transforms import Transformation
from runtime.transforms import BUILTIN_PREDICATES, BUILTIN_TRANSFORMS, REFERENCE_ALIASES, load, resolve_builtin
from runtime.worker.transform_chain import TransformationChain, validate_transform_configs, validate_transforms
from tests.unit.transforms.conftest import sink

K = "org.apache.kafka.connect.transforms."


class Doubler(Transformation):
    """A test plugin with a validated setting, so embedded-key validation is exercised."""

    closed = 0

    def configure(self, configs: dict) -> None:
        self.factor = int(configs["factor"])

    def config(self) -> ConfigDef:
        return ConfigDef().define("factor", Type.INT, validator=Range.at_least(2), importance=Importance.HIGH)

    def apply(self, record):
        return record.new_record(value=record.value * self.factor)

    def close(self) -> None:
        Doubler.closed += 1


def test_every_reference_name_resolves_to_a_configurable_plugin() -> None:
    assert len(BUILTIN_TRANSFORMS) == 26 and len(BUILTIN_PREDICATES) == 3
    assert set(REFERENCE_ALIASES) >= {K + "InsertField$Value", K + "predicates.TopicNameMatches", K + "Filter"}
    for java_name in REFERENCE_ALIASES:
        cls = resolve_builtin(java_name, "transformation")
        assert cls is load(REFERENCE_ALIASES[java_name])
        assert cls().config() is not None
    assert resolve_builtin("TopicNameMatches", "predicate") is load(K + "predicates.TopicNameMatches")
    with pytest.raises(LookupError):
        resolve_builtin("com.example.Nope", "transformation")


def test_empty_chain_is_flagged() -> None:
    chain = TransformationChain({"name": "c"}, resolve_builtin)
    assert chain.empty and len(chain) == 0
    record = sink(1)
    assert chain.apply(record) is record


def test_chain_applies_in_order_with_predicates_and_negation() -> None:
    config = {
        "transforms": "hoist, insert, dropOthers",
        "transforms.hoist.type": K + "HoistField$Value",
        "transforms.hoist.field": "line",
        "transforms.insert.type": K + "InsertField$Value",
        "transforms.insert.static.field": "src",
        "transforms.insert.static.value": "file",
        "transforms.insert.predicate": "tagged",
        "transforms.dropOthers.type": "Filter",
        "transforms.dropOthers.predicate": "isOrders",
        "transforms.dropOthers.negate": "true",
        "predicates": "isOrders,tagged",
        "predicates.isOrders.type": K + "predicates.TopicNameMatches",
        "predicates.isOrders.pattern": "orders.*",
        "predicates.tagged.type": K + "predicates.HasHeaderKey",
        "predicates.tagged.name": "tag",
    }
    chain = TransformationChain(config, resolve_builtin)
    assert not chain.empty and [s.alias for s in chain.stages] == ["hoist", "insert", "dropOthers"]
    assert chain.apply(sink("a", topic="orders")).value == {"line": "a"}
    assert chain.apply(sink("b", topic="orders-eu", headers=[Header("tag", 1)])).value == {"line": "b", "src": "file"}
    assert chain.apply(sink("c", topic="clicks")) is None
    chain.close()


def test_chain_configures_plugins_without_the_framework_keys_and_closes_them() -> None:
    resolve = lambda name, kind: Doubler if name == "Doubler" else resolve_builtin(name, kind)
    Doubler.closed = 0
    chain = TransformationChain(
        {
            "transforms": "d,d2",
            "transforms.d.type": "Doubler",
            "transforms.d.factor": "3",
            "transforms.d2.type": "Doubler",
            "transforms.d2.factor": "2",
        },
        resolve,
    )
    assert chain.apply(sink(5)).value == 30
    chain.close()
    assert Doubler.closed == 2


def test_chain_build_errors() -> None:
    with pytest.raises(ConfigError, match="Class com.example.Nope could not be found"):
        TransformationChain({"transforms": "t", "transforms.t.type": "com.example.Nope"}, resolve_builtin)
    with pytest.raises(ConnectError, match="No field insertion configured"):
        TransformationChain({"transforms": "t", "transforms.t.type": K + "InsertField$Value"}, resolve_builtin)
    with pytest.raises(ConfigError, match='Missing required configuration "predicates.p.type"'):
        TransformationChain(
            {"transforms": "t", "transforms.t.type": "Filter", "transforms.t.predicate": "p"}, resolve_builtin
        )


@pytest.mark.parametrize(
    "config, expected",
    [
        (
            {"transforms": "t,t", "transforms.t.type": K + "InsertField$Value"},
            [("transforms", "Invalid value [t, t] for configuration transforms: Duplicate alias provided.")],
        ),
        (
            {"transforms": "t"},
            [("transforms.t.type", 'Missing required configuration "transforms.t.type" which has no default value.')],
        ),
        (
            {"transforms": "t", "transforms.t.type": "com.example.NoSuchTransform"},
            [
                (
                    "transforms.t.type",
                    "Invalid value com.example.NoSuchTransform for configuration transforms.t.type: "
                    "Class com.example.NoSuchTransform could not be found.",
                )
            ],
        ),
        (
            {"transforms": "t", "transforms.t.type": K + "predicates.HasHeaderKey"},
            [
                (
                    "transforms.t.type",
                    "Class class runtime.transforms.predicates.HasHeaderKey does not implement the "
                    "Transformation interface",
                )
            ],
        ),
        (
            {"transforms": "t", "transforms.t.type": K + "Filter", "transforms.t.negate": "true"},
            [
                (
                    "transforms.t.type",
                    "Config 'transforms.t.negate' was provided but there is no config "
                    "'transforms.t.predicate' defining a predicate to be negated.",
                )
            ],
        ),
        (
            {"predicates": "p,p", "predicates.p.type": K + "predicates.RecordIsTombstone"},
            [("predicates", "Invalid value [p, p] for configuration predicates: Duplicate alias provided.")],
        ),
        (
            {"predicates": "p"},
            [("predicates.p.type", 'Missing required configuration "predicates.p.type" which has no default value.')],
        ),
        (
            {"predicates": "p", "predicates.p.type": K + "Filter"},
            [
                (
                    "predicates.p.type",
                    "Class class runtime.transforms.filter.Filter does not implement the Predicate interface",
                )
            ],
        ),
        (
            {"transforms": "t", "transforms.t.type": K + "Filter", "transforms.t.predicate": "ghost"},
            [
                (
                    "transforms.t.predicate",
                    "Invalid value ghost for configuration transforms.t.predicate: Predicate alias "
                    "'ghost' is not defined; list it in 'predicates' and set 'predicates.ghost.type'",
                )
            ],
        ),
        (
            {"transforms": "m", "transforms.m.type": K + "MaskField$Value"},
            [
                (
                    "transforms.m.fields",
                    'Missing required configuration "transforms.m.fields" which has no default value.',
                )
            ],
        ),
        (
            {"transforms": "m", "transforms.m.type": K + "MaskField$Value", "transforms.m.fields": ""},
            [("transforms.m.fields", "Invalid value [] for configuration fields: Empty list")],
        ),
        (
            {
                "transforms": "c",
                "transforms.c.type": K + "Cast$Value",
                "transforms.c.spec": "a:int8",
                "transforms.c.replace.null.with.default": "maybe",
            },
            [
                (
                    "transforms.c.replace.null.with.default",
                    "Invalid value maybe for configuration "
                    "transforms.c.replace.null.with.default: Expected value to be either true or false",
                )
            ],
        ),
        (
            {"predicates": "p", "predicates.p.type": K + "predicates.TopicNameMatches"},
            [
                (
                    "predicates.p.pattern",
                    'Missing required configuration "predicates.p.pattern" which has no default value.',
                )
            ],
        ),
    ],
)
def test_validation_messages(config: dict, expected: list) -> None:
    assert validate_transform_configs(config, resolve_builtin) == expected


def test_valid_config_has_no_errors_and_lists_embedded_keys_in_kafka_order() -> None:
    config = {
        "transforms": "c",
        "transforms.c.type": K + "Cast$Value",
        "transforms.c.spec": "a:int8",
        "transforms.c.predicate": "p",
        "predicates": "p",
        "predicates.p.type": K + "predicates.HasHeaderKey",
        "predicates.p.name": "h",
    }
    result = validate_transforms(config, resolve_builtin)
    assert result.errors() == []
    assert [k.name for k, _ in result.entries] == [
        "transforms.c.type",
        "transforms.c.spec",
        "transforms.c.negate",
        "transforms.c.predicate",
        "transforms.c.replace.null.with.default",
        "predicates.p.type",
        "predicates.p.name",
    ]
    assert result.groups == ["Transforms: c", "Predicates: p"]
    assert [k.order_in_group for k, _ in result.entries][:3] == [0, 1, 2]
    assert {v.name: v.value for _, v in result.entries}["transforms.c.negate"] is False


def test_custom_plugin_settings_are_validated_with_its_config_def() -> None:
    resolve = lambda name, kind: Doubler if name == "Doubler" else None
    errors = validate_transform_configs(
        {"transforms": "d", "transforms.d.type": "Doubler", "transforms.d.factor": "1"}, resolve
    )
    assert errors == [("transforms.d.factor", "Invalid value 1 for configuration factor: Value must be at least 2")]
