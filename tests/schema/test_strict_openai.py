"""OpenAI strict structured outputs: every type kind's strict schema keeps OpenAI's documented
rules (checked by `tests/helpers/openai_strict.py`, written from OpenAI's guide), enums and consts
carry a type, and what is too big is refused before it is sent (AUTO then uses the final-answer
tool)."""

from __future__ import annotations

import dataclasses
import datetime
import enum
import uuid
from typing import Any, Literal, NotRequired, Optional, TypedDict, Union

import attrs
import pytest
from hypothesis import given, settings

from reactloop._errors import ConfigurationError, StrictSchemaError
from reactloop._output._schema import WRAPPER_KEY, OutputSpec, strict_schema_openai
from reactloop._output._spec import OutputStrategy, build_output
from reactloop._schema._generate import Invalid
from reactloop._schema._raw import compile_raw
from tests.helpers.openai_strict import openai_strict_problems
from tests.helpers.strategies import examples, object_schemas, output_types


class Color(enum.Enum):
    RED = "red"
    BLUE = "blue"


class Size(enum.StrEnum):
    S = "s"
    M = "m"


class Level(enum.IntEnum):
    LOW = 1
    HIGH = 2


class Ratio(enum.Enum):
    HALF = 0.5
    ONE = 1


class Mixed(enum.Enum):
    NAME = "x"
    NUMBER = 3
    FLAG = True


@attrs.frozen
class Cat:
    kind: Literal["cat"]
    lives: int = 9


@dataclasses.dataclass
class Dog:
    kind: Literal["dog"]
    good: bool


class Fish(TypedDict):
    kind: Literal["fish"]
    fins: NotRequired[int]


@attrs.frozen
class Node:
    kids: list[Node]


class Bird:
    """A plain class (neither attrs, a dataclass nor a TypedDict): not a schema type."""


@attrs.frozen
class Owner:
    name: str
    pet: Cat | Dog | Fish
    colors: list[Color] = attrs.Factory(list)
    level: Level | None = None


@attrs.frozen
class Household:
    owners: tuple[Owner, ...]
    size: Size
    rating: Literal[1, 2, 3] | None = None


KINDS: list[tuple[Any, Any]] = [
    (str, "s"),
    (int, 3),
    (float, 1.5),
    (bool, False),
    (None, None),
    (Color, "blue"),
    (Size, "m"),
    (Level, 2),
    (Ratio, 0.5),
    (Mixed, True),
    (Literal["a", "b"], "b"),
    (Literal[1, 2], 2),
    (Literal[True], True),
    (Literal["a", 1, False, None], 1),
    (Literal[None], None),
    (Literal["on"] | None, None),
    (Optional[Color], "red"),  # noqa: UP045 (the spelling is what is tested)
    (Union[int, str], "x"),  # noqa: UP007
    (Color | Level | None, 1),
    (Cat | Dog | Fish, {"kind": "fish", "fins": 2}),
    (list[Literal["x", "y"]], ["y"]),
    (tuple[Level, str], [1, "a"]),
    (tuple[Color, ...], ["red"]),
    (Owner, {"name": "Ada", "pet": {"kind": "dog", "good": True}, "colors": ["red"]}),
    (Household, {"owners": [{"name": "B", "pet": {"kind": "cat"}}], "size": "s", "rating": 2}),
]


def _sent(schema: dict[str, Any], value: Any) -> Any:
    """`value` as OpenAI sends it: every optional property present, null if left out."""
    if isinstance(value, dict) and "properties" in schema:
        return {name: _sent(sub, value.get(name)) for name, sub in schema["properties"].items()}
    if isinstance(value, list) and isinstance(schema.get("items"), dict):
        return [_sent(schema["items"], item) for item in value]
    if isinstance(value, dict | list) and "anyOf" in schema:
        for member in schema["anyOf"]:
            try:
                return compile_raw(member)(_sent(member, value), "")
            except Invalid:
                continue
    return value


@pytest.mark.parametrize(("output", "value"), KINDS)
def test_every_type_kind_has_a_strict_schema_openai_accepts(output: Any, value: Any) -> None:
    spec = OutputSpec.of(output)
    strict = strict_schema_openai(spec.schema)
    assert openai_strict_problems(strict) == []
    wire = value if not spec.wrapped else {WRAPPER_KEY: value}
    sent = _sent(strict, wire)
    assert compile_raw(strict)(sent, "") == sent  # what OpenAI may send is valid
    assert spec.convert(sent) == spec.convert(wire)  # and converts as the answer would


@pytest.mark.parametrize(
    ("values", "expected"),
    [
        (["a", "b"], {"type": "string", "enum": ["a", "b"]}),
        ([1, 2], {"type": "integer", "enum": [1, 2]}),
        ([0.5, 1], {"type": "number", "enum": [1, 0.5]}),
        ([True], {"type": "boolean", "enum": [True]}),
        ([None], {"type": "null"}),
        (
            ["a", 1, None, False],
            {
                "anyOf": [
                    {"type": "string", "enum": ["a"]},
                    {"type": "integer", "enum": [1]},
                    {"type": "null"},
                    {"type": "boolean", "enum": [False]},
                ]
            },
        ),
    ],
)
def test_an_untyped_enum_gets_the_type_of_its_values(values: list[Any], expected: Any) -> None:
    schema = {"type": "object", "properties": {"e": {"enum": values}}, "required": ["e"]}
    assert strict_schema_openai(schema)["properties"]["e"] == expected


def test_a_const_becomes_a_typed_one_value_enum() -> None:
    schema = {
        "type": "object",
        "properties": {"c": {"const": "cat"}, "t": {"type": "integer", "const": 3}},
        "required": ["c", "t"],
    }
    strict = strict_schema_openai(schema)
    assert strict["properties"] == {
        "c": {"type": "string", "enum": ["cat"]},
        "t": {"type": "integer", "enum": [3]},
    }
    assert openai_strict_problems(strict) == []


@pytest.mark.parametrize(
    ("output", "error", "found"),
    [
        (dict[str, int], StrictSchemaError, "free-form keys"),
        (Bird, ConfigurationError, "Bird"),
        (datetime.datetime, ConfigurationError, "datetime"),
        (uuid.UUID, ConfigurationError, "UUID"),
        ({"type": "object", "properties": {"e": {"enum": [[1]]}}}, StrictSchemaError, "[[1]]"),
        ({"type": "object", "properties": {"e": {"enum": []}}}, StrictSchemaError, "[]"),
    ],
)
def test_what_has_no_strict_form_is_a_typed_error_naming_it(
    output: Any, error: type[Exception], found: str
) -> None:
    with pytest.raises(error) as caught:
        strict_schema_openai(OutputSpec.of(output).schema)
    assert found in str(caught.value)


def test_a_recursive_class_is_refused_and_a_recursive_raw_schema_is_sent() -> None:
    with pytest.raises(ConfigurationError, match="recursive type"):
        OutputSpec.of(Node)
    tree = {
        "type": "object",
        "properties": {"kids": {"type": "array", "items": {"$ref": "#"}}},
        "required": ["kids"],
    }
    assert openai_strict_problems(strict_schema_openai(tree)) == []


def _closed(properties: dict[str, Any]) -> dict[str, Any]:
    """An object schema already in strict form (so the checker judges its size alone)."""
    return {
        "type": "object",
        "properties": properties,
        "required": list(properties),
        "additionalProperties": False,
    }


def _nested(levels: int) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "string"}
    for _ in range(levels):
        schema = _closed({"x": schema})
    return schema


def _wide(count: int) -> dict[str, Any]:
    return _closed({f"p{i}": {"type": "integer"} for i in range(count)})


def _enums(count: int, size: int = 1, text: str = "v") -> dict[str, Any]:
    choices = {"type": "string", "enum": [f"{text}{i}" for i in range(size)]}
    return _closed({f"e{i}": choices for i in range(count)})


@pytest.mark.parametrize(
    ("within", "beyond", "where", "problem"),
    [
        (_nested(10), _nested(11), "#" + "/properties/x" * 10, "11 levels of nested objects"),
        (_wide(5000), _wide(5001), "#", "5001 object properties, more than the 5000"),
        (_enums(1000), _enums(1001), "#", "1001 enum values, more than the 1000"),
        (_enums(10, 100, "v" * 110), _enums(11, 90, "v" * 121), "#", "characters"),
        (_enums(1, 250, "v" * 80), _enums(1, 251, "v" * 60), "#/properties/e0", "251 values"),
    ],
)
def test_a_schema_over_openais_size_limits_is_refused_naming_where(
    within: dict[str, Any], beyond: dict[str, Any], where: str, problem: str
) -> None:
    assert strict_schema_openai(within) == within
    assert openai_strict_problems(within) == []
    assert openai_strict_problems(beyond) != []  # what OpenAI's guide says it refuses
    with pytest.raises(StrictSchemaError) as caught:
        strict_schema_openai(beyond)
    assert caught.value.location == where and problem in caught.value.problem


def test_a_root_any_of_is_refused() -> None:
    schema = {
        "type": "object",
        "properties": {"a": {"type": "string"}},
        "oneOf": [_nested(1), _wide(1)],
    }
    with pytest.raises(StrictSchemaError, match="must not be an anyOf"):
        strict_schema_openai(schema)


@attrs.frozen
class _NativeModel:
    """What `build_output` reads of a model: native outputs, OpenAI's strict rewrite."""

    supports_native_output: bool = True

    def strict_output_schema(self, schema: dict[str, Any]) -> dict[str, Any]:
        return strict_schema_openai(schema)


def test_auto_takes_the_final_answer_tool_for_a_schema_too_big_for_strict_mode() -> None:
    model: Any = _NativeModel()
    assert build_output(Household, model).strategy is OutputStrategy.NATIVE
    assert build_output(_wide(5001), model).strategy is OutputStrategy.TOOL
    with pytest.raises(StrictSchemaError, match="5001 object properties"):
        build_output(_wide(5001), model, strategy=OutputStrategy.NATIVE)


@settings(max_examples=examples(200), deadline=None)
@given(output_types())
def test_every_generated_output_type_has_a_schema_openai_accepts(output: Any) -> None:
    schema = OutputSpec.of(output).schema
    assert openai_strict_problems(strict_schema_openai(schema)) == []


@settings(max_examples=examples(150), deadline=None)
@given(object_schemas(3))
def test_every_generated_object_schema_has_a_strict_form_openai_accepts(
    schema: dict[str, Any],
) -> None:
    assert openai_strict_problems(strict_schema_openai(schema)) == []
