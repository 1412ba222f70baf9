"""Output specs: every output kind round trips, wrapping, raw schemas, strict provider rewrites."""

from __future__ import annotations

import dataclasses
import enum
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Literal, NotRequired, TypedDict

import attrs
import orjson
import pytest
from hypothesis import given, settings

from reactloop._errors import ConfigurationError, StrictSchemaError
from reactloop._output._schema import (
    WRAPPER_KEY,
    OutputSpec,
    strict_schema_anthropic,
    strict_schema_openai,
)
from reactloop._schema._generate import Invalid
from reactloop._schema._raw import compile_raw
from reactloop._schema._strict import admits_null
from tests.helpers.openai_strict import openai_strict_problems
from tests.helpers.strategies import examples, object_schemas, values_of
from tests.providers.conftest import OPENAPI
from tests.providers.protocol import OpenAIRequestSchema


class Status(enum.Enum):
    OPEN = "open"
    PAID = "paid"


@dataclasses.dataclass
class Line:
    sku: str
    qty: int = 1
    tags: list[str] = dataclasses.field(default_factory=list)


class Address(TypedDict):
    city: str
    zip: NotRequired[str]


@attrs.frozen
class Invoice:
    number: str
    lines: list[Line]
    address: Address
    status: Status = Status.OPEN
    note: str | None = None


@attrs.frozen
class Cat:
    kind: Literal["cat"]
    lives: int


@dataclasses.dataclass
class Dog:
    kind: Literal["dog"]
    lives: int


INVOICE_JSON = {
    "number": "A-1",
    "lines": [{"sku": "x", "qty": 2}],
    "address": {"city": "Lyon"},
    "status": "paid",
}
INVOICE = Invoice("A-1", [Line("x", 2)], {"city": "Lyon"}, Status.PAID)


OUTPUT_KINDS: list[tuple[Any, Any, Any]] = [
    (Invoice, INVOICE_JSON, INVOICE),
    (Line, {"sku": "y"}, Line("y")),
    (Address, {"city": "Oslo", "zip": "0150"}, {"city": "Oslo", "zip": "0150"}),
    (int, {WRAPPER_KEY: 3}, 3),
    (str, {WRAPPER_KEY: "hi"}, "hi"),
    (float, {WRAPPER_KEY: 2}, 2.0),
    (bool, {WRAPPER_KEY: True}, True),
    (list[str], {WRAPPER_KEY: ["a", "b"]}, ["a", "b"]),
    (tuple[int, str], {WRAPPER_KEY: [1, "a"]}, (1, "a")),
    (dict[str, int], {"a": 1}, {"a": 1}),
    (Literal["yes", "no"], {WRAPPER_KEY: "no"}, "no"),
    (Status, {WRAPPER_KEY: "open"}, Status.OPEN),
    (Cat | Dog, {WRAPPER_KEY: {"kind": "dog", "lives": 1}}, Dog("dog", 1)),
    (list[Line], {WRAPPER_KEY: [{"sku": "z"}]}, [Line("z")]),
    (int | None, {WRAPPER_KEY: None}, None),
]


@pytest.mark.parametrize(("output", "wire", "expected"), OUTPUT_KINDS)
def test_every_output_kind_converts_to_its_typed_value(
    output: Any, wire: Any, expected: Any
) -> None:
    spec = OutputSpec.of(output)
    converted = spec.convert(wire)
    assert converted == expected and type(converted) is type(expected)
    assert compile_raw(spec.schema)(wire, "") == wire  # the schema admits what converts


@pytest.mark.parametrize(("output", "wire", "expected"), OUTPUT_KINDS[:9] + OUTPUT_KINDS[10:])
@pytest.mark.parametrize("rewrite", [strict_schema_openai, strict_schema_anthropic])
def test_every_output_kind_has_a_strict_form_whose_answers_convert_back(
    output: Any, wire: Any, expected: Any, rewrite: Any
) -> None:
    spec = OutputSpec.of(output)
    strict = rewrite(spec.schema)
    sent = _with_nulls(spec.schema, wire) if rewrite is strict_schema_openai else wire
    compile_raw(strict)(sent, "")
    assert spec.convert(sent) == expected


def test_a_mapping_output_has_no_strict_form() -> None:
    assert OUTPUT_KINDS[9][0] == dict[str, int]
    with pytest.raises(StrictSchemaError, match="free-form keys"):
        strict_schema_anthropic(OutputSpec.of(dict[str, int]).schema)


@pytest.mark.parametrize(
    ("output", "wire", "path"),
    [
        (Invoice, {**INVOICE_JSON, "lines": [{"sku": 1}]}, "lines[0].sku"),
        (Invoice, {**INVOICE_JSON, "address": {"zip": "1"}}, "address"),
        (Invoice, {**INVOICE_JSON, "status": "lost"}, "status"),
        (list[int], {WRAPPER_KEY: [1, "x"]}, f"{WRAPPER_KEY}[1]"),
        (Cat | Dog, {WRAPPER_KEY: {"kind": "dog", "lives": "9"}}, f"{WRAPPER_KEY}.lives"),
        (int, {"other": 1}, ""),
    ],
)
def test_an_invalid_output_names_the_path(output: Any, wire: Any, path: str) -> None:
    with pytest.raises(Invalid) as info:
        OutputSpec.of(output).convert(wire)
    assert info.value.path == path
    assert str(info.value).startswith(f"{path or 'output'}: ")


def test_objects_are_sent_as_they_are_and_other_outputs_wrapped() -> None:
    invoice, numbers = OutputSpec.of(Invoice), OutputSpec.of(list[int])
    assert not invoice.wrapped and invoice.schema is invoice.value_schema
    assert numbers.wrapped and numbers.schema == {
        "type": "object",
        "properties": {WRAPPER_KEY: {"type": "array", "items": {"type": "integer"}}},
        "required": [WRAPPER_KEY],
        "additionalProperties": False,
    }


def test_the_name_comes_from_the_class_the_title_or_a_default() -> None:
    assert OutputSpec.of(Invoice).name == "Invoice"
    assert OutputSpec.of({"title": "My answer!", "type": "object"}).name == "My_answer_"
    assert OutputSpec.of(list[int]).name == "output"
    assert OutputSpec.of(int, name="count").name == "count"


@pytest.mark.parametrize("name", ["", "a b", "x" * 65, 3])
def test_a_bad_name_is_refused(name: Any) -> None:
    with pytest.raises(ConfigurationError, match="name must be"):
        OutputSpec.of(int, name=name)


@pytest.mark.parametrize("output", [set[int], object, {"type": "array", "items": {"$ref": "#/x"}}])
def test_an_output_without_a_schema_is_a_configuration_error(output: Any) -> None:
    with pytest.raises(ConfigurationError, match="output_type must be"):
        OutputSpec.of(output)


def test_parse_reads_json_text_and_refuses_other_text() -> None:
    assert OutputSpec.of(Line).parse('{"sku": "q"}') == Line("q")
    with pytest.raises(Invalid, match=r"^output: not valid JSON"):
        OutputSpec.of(Line).parse("{sku")


def test_a_null_for_an_optional_field_gets_its_default() -> None:
    wire = {**INVOICE_JSON, "lines": [{"sku": "x", "qty": None, "tags": None}], "status": None}
    wire["address"] = {"city": "Lyon", "zip": None}
    assert OutputSpec.of(Invoice).convert(wire) == Invoice(
        "A-1", [Line("x")], {"city": "Lyon"}, Status.OPEN
    )


def test_a_null_for_a_nullable_optional_field_stays_null() -> None:
    @attrs.frozen
    class Note:
        text: str | None = "none yet"

    assert OutputSpec.of(Note).convert({"text": None}) == Note(None)


# --- raw JSON schemas --------------------------------------------------------------------------

PERSON = {
    "title": "person",
    "type": "object",
    "properties": {
        "name": {"type": "string", "minLength": 1},
        "age": {"type": "integer", "minimum": 0},
        "tags": {"type": "array", "items": {"enum": ["a", "b"]}, "maxItems": 2},
        "pet": {"$ref": "#/$defs/pet"},
    },
    "required": ["name"],
    "additionalProperties": False,
    "$defs": {"pet": {"anyOf": [{"const": "cat"}, {"type": "null"}]}},
}


def test_a_raw_schema_output_is_the_parsed_json() -> None:
    value = {"name": "Ada", "age": 36, "tags": ["a"], "pet": "cat"}
    assert OutputSpec.of(PERSON).convert(value) == value


@pytest.mark.parametrize(
    ("value", "path", "problem"),
    [
        ({"age": 1}, "", "missing required properties ['name']"),
        ({"name": ""}, "name", "minLength is 1, got ''"),
        ({"name": "x", "age": -1}, "age", "minimum is 0, got -1"),
        ({"name": "x", "age": True}, "age", "expected integer, got boolean True"),
        ({"name": "x", "tags": ["c"]}, "tags[0]", "expected one of ['a', 'b'], got 'c'"),
        ({"name": "x", "tags": ["a", "a", "b"]}, "tags", "maxItems is 2, got ['a', 'a', 'b']"),
        ({"name": "x", "pet": "dog"}, "pet", "matches no alternative"),
        ({"name": "x", "owner": 1}, "", "unexpected property 'owner'"),
        ([], "", "expected object, got array []"),
    ],
)
def test_the_raw_validator_names_path_and_problem(value: Any, path: str, problem: str) -> None:
    with pytest.raises(Invalid) as info:
        OutputSpec.of(PERSON).convert(value)
    assert info.value.path == path and problem in info.value.problem


def test_a_raw_non_object_schema_is_wrapped_with_its_definitions_at_the_top() -> None:
    schema = {"type": "array", "items": {"$ref": "#/$defs/n"}, "$defs": {"n": {"type": "number"}}}
    spec = OutputSpec.of(schema)
    assert spec.wrapped and spec.schema["$defs"] == {"n": {"type": "number"}}
    assert spec.convert({WRAPPER_KEY: [1, 2.5]}) == [1, 2.5]
    with pytest.raises(Invalid, match=r"result\[0\]: expected number"):
        spec.convert({WRAPPER_KEY: ["1"]})


def test_raw_one_of_wants_exactly_one_match_and_refs_may_recurse() -> None:
    tree = {
        "type": "object",
        "properties": {"kids": {"type": "array", "items": {"$ref": "#"}}},
        "oneOf": [{"required": ["kids"]}, {"required": ["leaf"]}],
    }
    check = compile_raw(tree)
    assert check({"kids": [{"kids": []}, {"leaf": 1}]}, "") == {"kids": [{"kids": []}, {"leaf": 1}]}
    with pytest.raises(Invalid, match=r"kids\[0\]: matches 0 alternatives"):
        check({"kids": [{}]}, "")
    with pytest.raises(Invalid, match="matches 2 alternatives"):
        check({"kids": [], "leaf": 1}, "")


def test_a_raw_null_for_an_optional_non_nullable_property_is_dropped() -> None:
    assert OutputSpec.of(PERSON).convert({"name": "x", "age": None, "pet": None}) == {
        "name": "x",
        "pet": None,
    }


# --- strict provider rewrites ------------------------------------------------------------------


def _objects(schema: Any) -> Iterator[dict[str, Any]]:
    if isinstance(schema, dict):
        if schema.get("type") == "object" or "properties" in schema:
            yield schema
        for value in schema.values():
            yield from _objects(value)
    elif isinstance(schema, list):
        for item in schema:
            yield from _objects(item)


def _with_nulls(schema: dict[str, Any], value: Any, nullable_only: bool = False) -> Any:
    """`value` as a strict provider sends it: absent optional properties present as null (with
    `nullable_only`, as it comes back: null kept only where the property's own schema allows)."""
    if isinstance(value, dict) and "properties" in schema:
        return {
            name: _with_nulls(sub, value[name], nullable_only) if name in value else None
            for name, sub in schema["properties"].items()
            if name in value or not nullable_only or admits_null(sub)
        }
    if isinstance(value, list) and "items" in schema:
        return [_with_nulls(schema["items"], item, nullable_only) for item in value]
    if isinstance(value, list) and "prefixItems" in schema:
        pairs = zip(schema["prefixItems"], value, strict=True)
        return [_with_nulls(s, item, nullable_only) for s, item in pairs]
    return value


@settings(max_examples=examples(150), deadline=None)
@given(object_schemas(3).flatmap(lambda s: values_of(s).map(lambda v: (s, v))))
def test_openai_strict_objects_require_everything_and_the_value_comes_back(
    pair: tuple[dict[str, Any], Any],
) -> None:
    schema, value = pair
    strict = strict_schema_openai(schema)
    for obj in _objects(strict):
        assert obj["additionalProperties"] is False
        assert obj["required"] == list(obj["properties"])
    sent = _with_nulls(schema, value)
    assert compile_raw(strict)(sent, "") is not None
    assert compile_raw(schema)(sent, "") == _with_nulls(schema, value, nullable_only=True)


@settings(max_examples=examples(150), deadline=None)
@given(object_schemas(3).flatmap(lambda s: values_of(s).map(lambda v: (s, v))))
def test_anthropic_strict_objects_are_closed_and_accept_every_valid_value(
    pair: tuple[dict[str, Any], Any],
) -> None:
    schema, value = pair
    strict = strict_schema_anthropic(schema)
    for obj in _objects(strict):
        assert obj["additionalProperties"] is False
        assert set(obj["required"]) <= set(obj["properties"])
    assert compile_raw(strict)(value, "") == value


def test_openai_strict_keeps_supported_keywords_and_moves_the_rest_to_the_description() -> None:
    schema = {
        "type": "object",
        "properties": {
            "n": {"type": "integer", "minimum": 1, "default": 3, "description": "How many."},
            "s": {"type": "string", "format": "uri", "minLength": 2, "pattern": "^a"},
            "d": {"type": "string", "format": "date"},
        },
        "required": ["s", "d"],
        "additionalProperties": False,
    }
    props = strict_schema_openai(schema)["properties"]
    assert props["n"] == {
        "type": ["integer", "null"],
        "minimum": 1,
        "description": "How many.\n\n{default: 3}",
    }
    assert props["s"] == {
        "type": "string",
        "pattern": "^a",
        "description": '{format: "uri", minLength: 2}',
    }
    assert props["d"] == {"type": "string", "format": "date"}


def test_anthropic_strict_keeps_optional_properties_and_drops_numeric_constraints() -> None:
    schema = OutputSpec.of(Invoice).schema
    strict = strict_schema_anthropic(schema)
    assert strict["required"] == ["number", "lines", "address"]
    bounded = {"type": "object", "properties": {"n": {"type": "integer", "maximum": 9}}}
    assert strict_schema_anthropic(bounded)["properties"]["n"] == {
        "type": "integer",
        "description": "{maximum: 9}",
    }
    listed = {"type": "object", "properties": {"l": {"type": "array", "items": {}, "minItems": 1}}}
    with pytest.raises(StrictSchemaError, match="any type"):
        strict_schema_anthropic(listed)


def test_a_fixed_tuple_becomes_items_of_its_member_schemas() -> None:
    schema = OutputSpec.of(tuple[int, str, int]).schema
    item = strict_schema_openai(schema)["properties"][WRAPPER_KEY]
    assert item == {
        "type": "array",
        "items": {"anyOf": [{"type": "integer"}, {"type": "string"}]},
        "minItems": 3,
        "maxItems": 3,
    }
    anthropic = strict_schema_anthropic(schema)["properties"][WRAPPER_KEY]
    assert anthropic["description"] == "{minItems: 3, maxItems: 3}"


def test_openai_strict_makes_optional_unions_and_refs_nullable() -> None:
    schema = {
        "type": "object",
        "properties": {"e": {"enum": ["x"], "description": "E."}, "r": {"$ref": "#/$defs/r"}},
        "$defs": {"r": {"type": "boolean"}},
        "oneOf": [{"required": ["e"]}],
    }
    with pytest.raises(StrictSchemaError):
        strict_schema_openai(schema)  # a oneOf member without a type has no strict form
    del schema["oneOf"]
    strict = strict_schema_openai(schema)
    assert strict["properties"]["e"] == {
        "anyOf": [{"type": "string", "enum": ["x"]}, {"type": "null"}],
        "description": "E.",
    }
    assert strict["properties"]["r"] == {"anyOf": [{"$ref": "#/$defs/r"}, {"type": "null"}]}


@pytest.mark.parametrize(
    ("output", "where"),
    [
        (dict[str, int], "#"),
        (Any, f"#/properties/{WRAPPER_KEY}"),
        (list[Any], f"#/properties/{WRAPPER_KEY}/items"),
        ({"type": "object"}, "#"),
        ({"type": "object", "properties": {}, "allOf": [{}, {}]}, "#"),
    ],
)
def test_what_strict_mode_cannot_express_is_an_error_naming_where(output: Any, where: str) -> None:
    schema = OutputSpec.of(output).schema
    with pytest.raises(StrictSchemaError) as info:
        strict_schema_openai(schema)
    assert info.value.location == where and info.value.provider == "OpenAI"
    assert isinstance(info.value, ConfigurationError)


@pytest.mark.parametrize("rewrite", [strict_schema_openai, strict_schema_anthropic])
def test_the_top_must_be_an_object_and_the_input_is_not_changed(rewrite: Any) -> None:
    with pytest.raises(StrictSchemaError, match="top level must be an object"):
        rewrite({"type": "array", "items": {"type": "integer"}})
    schema = OutputSpec.of(Invoice).schema
    before = repr(schema)
    rewrite(schema)
    assert repr(schema) == before


def test_a_strict_value_of_a_typed_output_converts_back() -> None:
    spec = OutputSpec.of(Invoice)
    strict = strict_schema_openai(spec.schema)
    sent = {**INVOICE_JSON, "note": None}
    sent["lines"] = [{"sku": "x", "qty": 2, "tags": None}]
    sent["address"] = {"city": "Lyon", "zip": None}
    compile_raw(strict)(sent, "")
    assert spec.convert(sent) == INVOICE


@pytest.mark.parametrize("rewrite", [strict_schema_openai, strict_schema_anthropic])
def test_object_enum_values_are_refused(rewrite: Any) -> None:
    schema = {"type": "object", "properties": {"e": {"enum": [{"a": 1}]}}}
    with pytest.raises(StrictSchemaError, match="scalars"):
        rewrite(schema)


# --- wire fixtures -----------------------------------------------------------------------------

WIRE = Path(__file__).parent.parent / "fixtures" / "wire"


@attrs.frozen
class Ticket:
    title: str
    priority: Literal["low", "high"]
    tags: list[str]
    assignee: str | None = None
    estimate_hours: int = 1


TICKET = Ticket("Login page times out for EU users", "high", ["login", "eu"])


def _fixture(name: str) -> Any:
    return orjson.loads((WIRE / name).read_bytes())


def test_the_structured_output_fixtures_carry_the_strict_schemas_of_their_type() -> None:
    spec = OutputSpec.of(Ticket)
    openai = _fixture("openai/request_structured_output.synthetic.json")["response_format"]
    assert openai["json_schema"] == {
        "name": spec.name,
        "schema": strict_schema_openai(spec.schema),
        "strict": True,
    }
    assert openai_strict_problems(openai["json_schema"]["schema"]) == []
    tool = _fixture("openai/request_strict_tool.synthetic.json")["tools"][0]["function"]
    assert tool["parameters"] == strict_schema_openai(spec.schema) and tool["strict"] is True
    anthropic = _fixture("anthropic/request_structured_output.synthetic.json")["output_config"]
    assert anthropic["format"] == {
        "type": "json_schema",
        "schema": strict_schema_anthropic(spec.schema),
    }
    tool = _fixture("anthropic/request_strict_tool.synthetic.json")["tools"][0]
    assert tool["input_schema"] == strict_schema_anthropic(spec.schema) and tool["strict"] is True


def test_the_structured_answers_of_both_providers_convert_to_the_type() -> None:
    spec = OutputSpec.of(Ticket)
    message = _fixture("openai/nonstream_structured_output.synthetic.json")["choices"][0]["message"]
    assert spec.parse(message["content"]) == TICKET
    [block] = _fixture("anthropic/nonstream_structured_output.synthetic.json")["content"]
    assert spec.parse(block["text"]) == TICKET


def test_the_streamed_answers_join_into_the_same_value() -> None:
    spec = OutputSpec.of(Ticket)
    text = ""
    for line in (WIRE / "openai/stream_json_schema_answer.synthetic.sse").read_text().splitlines():
        if line.startswith("data: {"):
            for choice in orjson.loads(line[6:])["choices"]:
                text += choice["delta"].get("content") or ""
    assert spec.parse(text) == TICKET
    text = ""
    for line in (
        (WIRE / "anthropic/stream_output_format_answer.synthetic.sse").read_text().splitlines()
    ):
        event = orjson.loads(line[6:]) if line.startswith("data: ") else {}
        text += event.get("delta", {}).get("text", "")
    assert spec.parse(text) == TICKET


def test_the_refusal_fixtures_carry_no_answer() -> None:
    refusal = _fixture("openai/nonstream_structured_refusal.synthetic.json")["choices"][0]
    assert refusal["message"]["content"] is None and refusal["message"]["refusal"]
    assert _fixture("anthropic/nonstream_structured_refusal.synthetic.json")["stop_reason"] == (
        "refusal"
    )


@pytest.mark.parametrize(
    "name", ["request_structured_output.synthetic.json", "request_strict_tool.synthetic.json"]
)
def test_the_openai_request_fixtures_follow_the_published_request_schema(name: str) -> None:
    OpenAIRequestSchema(OPENAPI).check(_fixture(f"openai/{name}"))


def test_the_description_is_a_written_docstring_or_the_schemas_own() -> None:
    @dataclasses.dataclass
    class Plain:
        a: int

    @attrs.frozen
    class Documented:
        """An answer.

        With details."""

        a: int

    class Level(enum.Enum):
        LOW = 1

    assert OutputSpec.of(Documented).description == "An answer.\n\nWith details."
    assert OutputSpec.of(Plain).description is None
    assert OutputSpec.of(Level).description is None
    assert OutputSpec.of(list[int]).description is None
    assert OutputSpec.of({"type": "object", "description": "Raw."}).description == "Raw."


TREE: dict[str, Any] = {
    "type": "object",
    "properties": {
        "label": {"type": "string"},
        "kids": {"type": "array", "items": {"$ref": "#/$defs/node"}},
        "best": {"$ref": "#/$defs/leaf", "description": "The best leaf."},
    },
    "required": ["label", "kids", "best"],
    "$defs": {
        "node": {
            "type": "object",
            "properties": {"kids": {"type": "array", "items": {"$ref": "#/$defs/node"}}},
            "required": ["kids"],
        },
        "leaf": {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]},
    },
}


def test_openai_inlines_a_ref_with_a_description_and_keeps_recursive_refs() -> None:
    strict = strict_schema_openai(TREE)
    assert strict["properties"]["best"] == {
        "type": "object",
        "properties": {"n": {"type": "integer"}},
        "required": ["n"],
        "additionalProperties": False,
        "description": "The best leaf.",
    }
    assert strict["properties"]["kids"]["items"] == {"$ref": "#/$defs/node"}
    assert strict["$defs"]["node"]["additionalProperties"] is False


def test_anthropic_keeps_a_described_ref_and_refuses_recursion() -> None:
    with pytest.raises(StrictSchemaError, match="recursive") as info:
        strict_schema_anthropic(TREE)
    assert info.value.location == "#/$defs/node"
    flat = {**TREE, "properties": {"best": TREE["properties"]["best"]}, "required": ["best"]}
    strict = strict_schema_anthropic(flat)
    assert strict["properties"]["best"] == {"$ref": "#/$defs/leaf", "description": "The best leaf."}


def test_a_ref_pointing_nowhere_cannot_be_inlined() -> None:
    schema = {"type": "object", "properties": {"x": {"$ref": "#/$defs/gone", "title": "X"}}}
    with pytest.raises(StrictSchemaError, match="points nowhere"):
        strict_schema_openai(schema)
