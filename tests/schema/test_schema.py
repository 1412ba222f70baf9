"""Annotation -> JSON schema, and validation of JSON values against it."""

from __future__ import annotations

import dataclasses
import enum
from typing import Annotated, Any, Literal, NotRequired, Optional, Required, TypedDict

import attrs
import pytest

from reactloop._schema._generate import Invalid, UnsupportedType, compile_object, compile_type


class Color(enum.Enum):
    RED = "red"
    BLUE = "blue"


@attrs.frozen
class Point:
    x: int
    y: int = 0


def convert(tp: Any, value: Any) -> Any:
    return compile_type(tp)[1](value, "v")


@pytest.mark.parametrize(
    ("tp", "schema"),
    [
        (str, {"type": "string"}),
        (int, {"type": "integer"}),
        (float, {"type": "number"}),
        (bool, {"type": "boolean"}),
        (None, {"type": "null"}),
        (Literal["a", "b"], {"enum": ["a", "b"]}),
        (Color, {"enum": ["red", "blue"]}),
        (list[int], {"type": "array", "items": {"type": "integer"}}),
        (tuple[str, ...], {"type": "array", "items": {"type": "string"}}),
        (dict[str, bool], {"type": "object", "additionalProperties": {"type": "boolean"}}),
        (Optional[int], {"anyOf": [{"type": "integer"}, {"type": "null"}]}),  # noqa: UP045
        (int | str, {"anyOf": [{"type": "integer"}, {"type": "string"}]}),
    ],
)
def test_schema_of_supported_annotations(tp: Any, schema: dict[str, Any]) -> None:
    assert compile_type(tp)[0] == schema


def test_fixed_tuple_schema_has_prefix_items_and_size() -> None:
    schema = compile_type(tuple[int, str])[0]
    assert schema["prefixItems"] == [{"type": "integer"}, {"type": "string"}]
    assert schema["minItems"] == schema["maxItems"] == 2


def test_attrs_class_becomes_object_with_required_fields() -> None:
    schema = compile_type(Point)[0]
    assert schema["properties"]["y"] == {"type": "integer", "default": 0}
    assert schema["required"] == ["x"]


def test_values_are_converted_to_python_types() -> None:
    assert convert(bool, False) is False
    assert convert(str, "x") == "x"
    assert convert(Color, "red") is Color.RED
    assert convert(tuple[int, str], [1, "a"]) == (1, "a")
    assert convert(Point, {"x": 3}) == Point(3, 0)
    assert convert(float, 2) == 2.0
    assert convert(int, 4.0) == 4


@pytest.mark.parametrize(
    ("tp", "value"),
    [(int, "3"), (int, True), (str, 1), (bool, 0), (Literal["a"], "b"), (Color, "green"),
     (list[int], [1, "x"]), (tuple[int, int], [1]), (dict[str, int], []), (int | None, "x")],
)  # fmt: skip
def test_mismatches_raise_invalid(tp: Any, value: Any) -> None:
    with pytest.raises(Invalid):
        convert(tp, value)


def test_invalid_names_the_path() -> None:
    with pytest.raises(Invalid) as info:
        convert(list[Point], [{"x": 1}, {"x": "no"}])
    assert info.value.path == "v[1].x"


def test_object_rejects_unknown_and_missing_properties() -> None:
    _, conv = compile_object({"a": (int, attrs.NOTHING)}, {})
    with pytest.raises(Invalid, match="unexpected properties"):
        conv({"a": 1, "b": 2}, "")
    with pytest.raises(Invalid, match="missing required"):
        conv({}, "")


def test_unsupported_annotation_is_reported() -> None:
    with pytest.raises(UnsupportedType):
        compile_type(set[int])


@pytest.mark.parametrize(
    ("tp", "value"),
    [(Literal["a", "b"], "a"), (Literal["a", "b"], "b"), (Literal[1, 2], 2), (Literal[True], True)],
)
def test_every_literal_choice_is_accepted_as_itself(tp: Any, value: Any) -> None:
    assert convert(tp, value) == value and type(convert(tp, value)) is type(value)


@pytest.mark.parametrize(
    ("tp", "value"), [(Literal[1], True), (Literal[True], 1), (Literal[1], 1.0)]
)
def test_a_literal_choice_of_another_type_is_rejected(tp: Any, value: Any) -> None:
    with pytest.raises(Invalid, match="expected one of"):
        convert(tp, value)


def test_mapping_values_are_converted_and_kept() -> None:
    assert convert(dict[str, int], {"a": 1, "b": 2.0}) == {"a": 1, "b": 2}
    assert convert(dict[str, Color], {"x": "red"}) == {"x": Color.RED}
    assert convert(dict, {"any": [1, "x"]}) == {"any": [1, "x"]}


def test_mapping_value_errors_name_the_key() -> None:
    with pytest.raises(Invalid) as info:
        convert(dict[str, int], {"ok": 1, "bad": "x"})
    assert info.value.path == "v.bad"


def test_mapping_keys_must_be_strings() -> None:
    with pytest.raises(UnsupportedType, match="dict keys must be str"):
        compile_type(dict[int, str])


def test_annotated_uses_the_underlying_type() -> None:
    schema, conv = compile_type(Annotated[int, "a count"])
    assert schema == {"type": "integer"}
    assert conv(3, "v") == 3
    with pytest.raises(Invalid):
        conv("3", "v")


@pytest.mark.parametrize(
    ("tp", "value", "message"),
    [
        (str, 5, "v: expected string, got int 5"),
        (str, None, "v: expected string, got null None"),
        (bool, "yes", "v: expected boolean, got string 'yes'"),
        (int, [1], "v: expected integer, got array [1]"),
        (int, 1.5, "v: expected integer, got float 1.5"),
        (float, True, "v: expected number, got boolean True"),
        (None, {}, "v: expected null, got object {}"),
        (list[int], {"a": 1}, "v: expected array, got object {'a': 1}"),
        (list[int], [1, "x"], "v[1]: expected integer, got string 'x'"),
        (tuple[int, str], [1], "v: expected array of 2 items, got [1]"),
        (tuple[int, str], [1, 2], "v[1]: expected string, got int 2"),
        (dict[str, int], [], "v: expected object, got array []"),
        (dict[str, int], {"a": "x"}, "v.a: expected integer, got string 'x'"),
        (Literal["a", "b"], "c", "v: expected one of ['a', 'b'], got 'c'"),
        (Color, "green", "v: expected one of ['red', 'blue'], got 'green'"),
        (Point, 5, "v: expected object, got int 5"),
        (Point, {"x": 1, "z": 2}, "v: unexpected properties ['z']; allowed are ['x', 'y']"),
        (Point, {"x": "a"}, "v.x: expected integer, got string 'a'"),
        (
            int | None,
            "x",
            "v: matches no alternative: expected integer, got string 'x' | "
            "expected null, got string 'x'",
        ),
    ],
)
def test_a_mismatch_says_where_what_was_expected_and_what_came(
    tp: Any, value: Any, message: str
) -> None:
    with pytest.raises(Invalid) as info:
        convert(tp, value)
    assert str(info.value) == message


def test_missing_properties_are_listed_in_their_order() -> None:
    fields = {name: (int, attrs.NOTHING) for name in ("a", "b", "c")}
    _, conv = compile_object(fields, {})
    with pytest.raises(Invalid) as info:
        conv({"b": 1}, "v")
    assert str(info.value) == "v: missing required properties ['a', 'c']"


def test_a_mismatch_at_the_top_level_names_the_arguments() -> None:
    _, conv = compile_object({"a": (int, attrs.NOTHING)}, {})
    with pytest.raises(Invalid) as info:
        conv([], "")
    assert str(info.value) == "arguments: expected object, got array []"


def test_a_property_of_the_top_level_object_is_named_without_a_prefix() -> None:
    _, conv = compile_object({"a": (int, attrs.NOTHING)}, {})
    with pytest.raises(Invalid) as info:
        conv({"a": "x"}, "")
    assert (info.value.path, str(info.value)) == ("a", "a: expected integer, got string 'x'")


@pytest.mark.parametrize(
    ("tp", "value", "expected"),
    [
        (list[int], [1, 2.0], [1, 2]),
        (list, [1, "x"], [1, "x"]),
        (tuple[int, ...], [1, 2], (1, 2)),
        (tuple, [1, "x"], (1, "x")),
    ],
)
def test_arrays_arrive_as_the_annotated_container(tp: Any, value: Any, expected: Any) -> None:
    converted = convert(tp, value)
    assert converted == expected and type(converted) is type(expected)


@pytest.mark.parametrize("tp", [list, tuple])
def test_a_bare_container_accepts_any_items(tp: Any) -> None:
    assert compile_type(tp)[0] == {"type": "array", "items": {}}


def test_fixed_tuple_schema_is_an_array_of_exactly_its_items() -> None:
    assert compile_type(tuple[int, str])[0] == {
        "type": "array",
        "prefixItems": [{"type": "integer"}, {"type": "string"}],
        "minItems": 2,
        "maxItems": 2,
    }


def test_object_schema_has_descriptions_defaults_and_no_extra_properties() -> None:
    fields = {
        "city": (str, attrs.NOTHING),
        "unit": (Color, Color.RED),
        "note": (str | None, None),
        "tags": (tuple[str, ...], ("a",)),
    }
    schema, _ = compile_object(fields, {"city": "Where.", "unit": "Which."})
    assert schema == {
        "type": "object",
        "properties": {
            "city": {"type": "string", "description": "Where."},
            "unit": {"enum": ["red", "blue"], "description": "Which.", "default": "red"},
            "note": {"anyOf": [{"type": "string"}, {"type": "null"}], "default": None},
            "tags": {"type": "array", "items": {"type": "string"}},
        },
        "required": ["city"],
        "additionalProperties": False,
    }


@dataclasses.dataclass
class Box:
    label: str
    size: int = 1
    tags: list[str] = dataclasses.field(default_factory=list)
    hidden: int = dataclasses.field(default=0, init=False)


class Total(TypedDict):
    a: int
    b: NotRequired[str]


class Partial(TypedDict, total=False):
    a: Required[int]
    b: str


@attrs.define
class Bag:
    _secret: int
    items: list[int] = attrs.Factory(list)


def test_a_dataclass_is_an_object_of_its_init_fields() -> None:
    schema, conv = compile_type(Box)
    assert schema["required"] == ["label"]
    assert list(schema["properties"]) == ["label", "size", "tags"]
    assert schema["properties"]["size"] == {"type": "integer", "default": 1}
    assert schema["properties"]["tags"] == {"type": "array", "items": {"type": "string"}}
    assert conv({"label": "x", "tags": ["t"]}, "v") == Box("x", 1, ["t"])


@pytest.mark.parametrize("td", [Total, Partial])
def test_a_typeddict_requires_exactly_its_required_keys(td: Any) -> None:
    schema, conv = compile_type(td)
    assert schema["required"] == ["a"]
    assert conv({"a": 1}, "v") == {"a": 1}
    assert conv({"a": 1, "b": "x"}, "v") == {"a": 1, "b": "x"}
    with pytest.raises(Invalid, match="missing required properties"):
        conv({"b": "x"}, "v")


def test_an_attrs_factory_default_is_optional_and_a_private_field_uses_its_alias() -> None:
    schema, conv = compile_type(Bag)
    assert schema["required"] == ["secret"] and "default" not in schema["properties"]["items"]
    assert conv({"secret": 1}, "v") == Bag(1, [])


def test_null_for_an_optional_field_that_cannot_be_null_means_its_default() -> None:
    assert convert(Point, {"x": 1, "y": None}) == Point(1, 0)
    assert convert(Box, {"label": "b", "size": None, "tags": None}) == Box("b")
    assert convert(Partial, {"a": 1, "b": None}) == {"a": 1}
    with pytest.raises(Invalid, match=r"v\.x: expected integer"):
        convert(Point, {"x": None})


@attrs.frozen
class Cat:
    kind: Literal["cat"]
    name: str


@dataclasses.dataclass
class Dog:
    kind: Literal["dog"]
    name: str
    good: bool = True


class Fish(TypedDict):
    kind: Literal["fish", "eel"]
    name: str


def test_a_union_of_classes_is_dispatched_on_its_tag_field() -> None:
    pet = Cat | Dog | Fish
    assert convert(pet, {"kind": "dog", "name": "Rex"}) == Dog("dog", "Rex")
    assert convert(pet, {"kind": "cat", "name": "Tom"}) == Cat("cat", "Tom")
    assert convert(pet, {"kind": "eel", "name": "E"}) == {"kind": "eel", "name": "E"}
    with pytest.raises(Invalid) as info:
        convert(pet, {"kind": "dog", "name": 3})
    assert info.value.path == "v.name"  # the tag chose Dog: its own error, at its own path


def test_an_untagged_union_of_classes_takes_the_first_member_that_fits() -> None:
    @attrs.frozen
    class Small:
        a: int

    @attrs.frozen
    class Large:
        a: int
        b: int

    assert convert(Small | Large, {"a": 1, "b": 2}) == Large(1, 2)
    assert convert(Small | Large, {"a": 1}) == Small(1)
    with pytest.raises(Invalid, match=r"matches no alternative: .*v.a: expected integer"):
        convert(Small | Large, {"a": "x"})


def test_a_tag_of_an_unknown_value_falls_back_to_the_members_in_order() -> None:
    with pytest.raises(Invalid, match="matches no alternative"):
        convert(Cat | Dog, {"kind": "cow", "name": "x"})
    with pytest.raises(Invalid, match="matches no alternative"):
        convert(Cat | Dog, {"kind": 1, "name": "x"})


def test_an_unknown_tag_is_reported_for_every_member_at_the_values_path() -> None:
    with pytest.raises(Invalid) as info:
        convert(Cat | Dog, {"kind": "cow", "name": "x"})
    assert info.value.path == "v"
    assert info.value.problem == (
        "matches no alternative: v.kind: expected one of ['cat'], got 'cow' | "
        "v.kind: expected one of ['dog'], got 'cow'"
    )


def test_a_tag_that_cannot_be_a_key_is_an_invalid_value_not_a_crash() -> None:
    with pytest.raises(Invalid, match="matches no alternative"):
        convert(Cat | Dog, {"kind": ["cat"], "name": "x"})


@pytest.mark.parametrize(
    ("tp", "value", "problem"),
    [
        (int | list[int], ["a"], "v[0]: expected integer, got string 'a'"),
        (Literal["a", "b"] | int, "c", "expected one of ['a', 'b'], got 'c'"),
        (Color | list[int], "green", "expected one of ['red', 'blue'], got 'green'"),
        (
            Annotated[int | str, "either"] | list[int],
            ["a"],
            "v[0]: expected integer, got string 'a'",
        ),
        # A whole float is of kind number and integer: a number-only member is tried, a string not.
        (Literal[1.5] | str, 3.0, "expected one of [1.5], got 3.0"),
        # A Literal's kinds are its choices' kinds: neither member admits a fraction, so both are.
        (
            Literal["x"] | int,
            3.5,
            "expected one of ['x'], got 3.5 | expected integer, got float 3.5",
        ),
    ],
)
def test_a_union_names_only_the_alternatives_of_the_values_json_kind(
    tp: Any, value: Any, problem: str
) -> None:
    with pytest.raises(Invalid) as info:
        convert(tp, value)
    assert info.value.problem == f"matches no alternative: {problem}"


def test_a_member_that_admits_anything_is_tried_for_every_kind() -> None:
    anything = Annotated[Any | int, "anything"] | list[int]
    assert convert(anything, {"a": 1}) == {"a": 1}


def test_a_value_of_no_json_kind_is_invalid_not_a_crash() -> None:
    with pytest.raises(Invalid, match="matches no alternative"):
        convert(int | list[int], (1, 2))


def test_a_whole_float_is_taken_by_an_integer_member_first() -> None:
    whole = convert(int | float, 3.0)
    assert whole == 3 and type(whole) is int
    assert type(convert(int | float, 3.5)) is float
    assert convert(list[int] | int, 2.0) == 2


def test_a_recursive_class_is_refused_not_looped_on() -> None:
    with pytest.raises(UnsupportedType, match="recursive type Tree"):
        compile_type(Tree)
    with pytest.raises(UnsupportedType, match="recursive type Tree"):
        compile_type(list[Tree])


def test_a_class_used_twice_side_by_side_is_not_recursive() -> None:
    @attrs.frozen
    class Segment:
        start: Point
        end: Point

    assert convert(Segment, {"start": {"x": 1}, "end": {"x": 2}}) == Segment(Point(1), Point(2))


@dataclasses.dataclass
class Tree:
    children: list[Tree]


def test_a_tagged_union_may_also_hold_null() -> None:
    assert convert(Cat | Dog | None, {"kind": "dog", "name": "Rex"}) == Dog("dog", "Rex")
    assert convert(Cat | Dog | None, None) is None
    with pytest.raises(Invalid) as info:
        convert(Cat | Dog | None, {"kind": "cat", "name": 1})
    assert info.value.path == "v.name"


@attrs.frozen
class Positive:
    n: int = attrs.field(validator=attrs.validators.gt(0))


@dataclasses.dataclass
class Window:
    low: int
    high: int

    def __post_init__(self) -> None:
        if self.low > self.high:
            raise ValueError(f"low {self.low} is above high {self.high}")


@pytest.mark.parametrize(
    ("tp", "value", "message"),
    [
        (Positive, {"n": 0}, "v.p: Positive refused it: 'n' must be > 0: 0"),
        (Window, {"low": 2, "high": 1}, "v.p: Window refused it: low 2 is above high 1"),
    ],
)
def test_a_class_refusing_its_values_is_invalid_at_its_path(
    tp: Any, value: Any, message: str
) -> None:
    with pytest.raises(Invalid) as info:
        convert(dict[str, tp], {"p": value})
    assert str(info.value) == message


def test_an_enum_member_in_a_literal_is_offered_and_matched_by_its_value() -> None:
    schema, converter = compile_type(Literal[Color.RED])
    assert schema == {"enum": ["red"]}
    assert converter("red", "v") is Color.RED
    with pytest.raises(Invalid, match="expected one of \\['red'\\], got 'blue'"):
        converter("blue", "v")


class Corner(enum.Enum):
    TOP_LEFT = (0, 0)


SCALARS_RULE = "must be JSON scalars (str, int, float, bool or None)"


@pytest.mark.parametrize(
    ("tp", "message"),
    [
        (Literal[b"x"], f"Literal choices {SCALARS_RULE}, got b'x'"),
        (Literal["a"] | Literal[b"x"], f"Literal choices {SCALARS_RULE}, got b'x'"),
        (Corner, f"the values of Enum Corner {SCALARS_RULE}, got (0, 0)"),
        (Corner | None, f"the values of Enum Corner {SCALARS_RULE}, got (0, 0)"),
    ],
)
def test_a_choice_no_json_value_can_match_is_refused_when_compiled(tp: Any, message: str) -> None:
    with pytest.raises(UnsupportedType) as info:
        compile_type(tp)
    assert str(info.value) == message
