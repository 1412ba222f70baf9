"""`@tool`: schema from signature and docstring, validation, context injection, presets."""

from __future__ import annotations

import dataclasses
import threading
from typing import Annotated, Any, Literal, Required, TypedDict

import pytest

from reactloop import RunContext, tool
from reactloop._tools._tool import parse_docstring
from reactloop.errors import ToolArgumentsError, ToolDefinitionError

pytestmark = pytest.mark.anyio


@tool
async def get_weather(city: str, units: Literal["c", "f"] = "c") -> str:
    """Current weather for a city.

    Args:
        city: City name, e.g. "Paris".
            Any city works.
        units: Temperature units.
    """
    return f"{city}:{units}"


def test_spec_has_description_and_parameter_docs() -> None:
    spec = get_weather.spec
    assert spec.description == "Current weather for a city."
    assert spec.parameters["properties"]["city"]["description"] == (
        'City name, e.g. "Paris". Any city works.'
    )
    assert spec.parameters["properties"]["units"]["default"] == "c"
    assert spec.parameters["required"] == ["city"]


def test_docstring_sections_after_args_are_ignored() -> None:
    summary, args = parse_docstring("Do it.\n\nArgs:\n    a: first\n\nReturns:\n    b: no")
    assert (summary, args) == ("Do it.", {"a": "first"})


def test_arguments_are_validated() -> None:
    with pytest.raises(ToolArgumentsError, match="expected one of"):
        get_weather.parse_arguments('{"city": "Paris", "units": "k"}')


def test_invalid_json_arguments_are_a_typed_error() -> None:
    with pytest.raises(ToolArgumentsError, match="not valid JSON"):
        get_weather.parse_arguments('{"city": ')


def test_empty_arguments_mean_no_arguments() -> None:
    @tool
    def ping() -> str:
        """Ping."""
        return "pong"

    assert ping.parse_arguments("") == {}


async def test_context_parameter_is_injected_and_hidden() -> None:
    @tool
    async def whoami(ctx: RunContext[str], greeting: str) -> str:
        """Say who runs."""
        return f"{greeting} {ctx.deps}"

    assert "ctx" not in whoami.spec.parameters["properties"]
    context = RunContext(run_id="r", deps="alice")
    assert await whoami.invoke({"greeting": "hi"}, context) == "hi alice"


async def test_presets_are_hidden_and_bound() -> None:
    @tool
    async def search(query: str, api_key: str) -> str:
        """Search."""
        return f"{query}/{api_key}"

    bound = search.bind(api_key="secret")
    assert list(bound.spec.parameters["properties"]) == ["query"]
    args = bound.parse_arguments('{"query": "x"}')
    assert await bound.invoke(args, RunContext(run_id="r", deps=None)) == "x/secret"


def test_unknown_preset_is_rejected() -> None:
    with pytest.raises(ToolDefinitionError, match="is not a parameter"):
        get_weather.bind(colour="red")


async def test_sync_tool_runs_in_a_worker_thread() -> None:
    @tool
    def where() -> str:
        """Name the thread."""
        return threading.current_thread().name

    name = await where.invoke({}, RunContext(run_id="r", deps=None))
    assert name != threading.main_thread().name


def test_missing_annotation_is_a_definition_error() -> None:
    def bad(x) -> str:  # type: ignore[no-untyped-def]
        return "x"

    with pytest.raises(ToolDefinitionError, match="no type annotation"):
        tool(bad)


def test_unsupported_annotation_is_a_definition_error() -> None:
    def bad(x: set[int]) -> str:
        return "x"

    with pytest.raises(ToolDefinitionError, match="no JSON schema"):
        tool(bad)


@pytest.mark.parametrize(
    ("annotation", "shown"), [(set[int], "set[int]"), (list[complex], "list[complex]")]
)
def test_an_unsupported_annotation_names_the_tool_the_parameter_and_the_annotation(
    annotation: Any, shown: str
) -> None:
    def book(city: str, nights: int, extras: str) -> str:
        return city

    book.__annotations__["nights"] = annotation
    with pytest.raises(ToolDefinitionError) as caught:
        tool(book)
    message = str(caught.value)
    assert "tool 'book'" in message and "parameter 'nights'" in message and shown in message
    assert "'city'" not in message and "'extras'" not in message


def test_decorator_options() -> None:
    @tool(name="lookup", timeout=2.0, exclusive=True, description="Look it up.")
    def find(key: str) -> str:
        return key

    assert (find.name, find.timeout, find.exclusive) == ("lookup", 2.0, True)
    assert find.spec.description == "Look it up."


async def test_a_decorated_function_is_still_callable_as_written() -> None:
    @tool(timeout=1.0)
    def add(a: int, b: int) -> int:
        """Add."""
        return a + b

    assert add(2, b=3) == 5
    assert await get_weather("Oslo", "f") == "Oslo:f"
    assert await get_weather.bind(units="c")("Rome", "f") == "Rome:f"  # as written: no presets


def test_annotated_mapping_and_literal_parameters_arrive_converted() -> None:
    @tool
    def tally(
        counts: dict[str, int], scale: Annotated[int, "a factor"], mode: Literal["sum", "max"]
    ) -> int:
        """Tally counts."""
        return 0

    properties = tally.spec.parameters["properties"]
    assert properties["scale"] == {"type": "integer"}
    assert properties["counts"] == {"type": "object", "additionalProperties": {"type": "integer"}}
    arguments = '{"counts": {"a": 1, "b": 2}, "scale": 3, "mode": "max"}'
    assert tally.parse_arguments(arguments) == {
        "counts": {"a": 1, "b": 2},
        "scale": 3,
        "mode": "max",
    }


@dataclasses.dataclass
class _Stop:
    city: str
    nights: int = 1


class _Traveller(TypedDict, total=False):
    name: Required[str]
    age: int


def test_dataclass_and_typeddict_parameters_arrive_typed() -> None:
    @tool
    def book(stops: list[_Stop], who: _Traveller, seats: int = 1) -> str:
        """Book a trip."""
        return ""

    properties = book.spec.parameters["properties"]
    assert properties["who"]["required"] == ["name"]
    assert properties["stops"]["items"]["required"] == ["city"]
    arguments = '{"stops": [{"city": "Rome", "nights": null}], "who": {"name": "A"}, "seats": null}'
    assert book.parse_arguments(arguments) == {"stops": [_Stop("Rome")], "who": {"name": "A"}}


def test_a_recursive_parameter_type_is_a_definition_error() -> None:
    with pytest.raises(ToolDefinitionError, match="recursive type _Node"):

        @tool
        def walk(node: _Node) -> str:
            """Walk."""
            return ""


@dataclasses.dataclass
class _Node:
    children: list[_Node]
