"""Toolsets in the loop: opened per run or per `async with loop:`, listed per step, collisions."""

from __future__ import annotations

from collections.abc import Sequence

import anyio
import pytest

from reactloop import ConfigurationError, MemoryStore, ReActLoop, StopReason, Tool
from reactloop._core._contracts import ToolSelector, Toolset
from reactloop._core._messages import ModelRequest, ToolCall
from reactloop._errors import ContractError
from reactloop.approval import ApprovalOptions
from reactloop.errors import ErrorCode, ReactLoopError
from reactloop.output import OutputOptions, OutputStrategy
from reactloop.testing import FakeTool, FakeToolset, FunctionModel, ScriptedModel, call
from reactloop.tools import ToolSelection

pytestmark = pytest.mark.anyio


def _offered(request: ModelRequest) -> list[str]:
    return [spec.name for spec in request.tools]


async def test_a_toolsets_tools_are_offered_beside_the_loops_own() -> None:
    model = ScriptedModel(["done"])
    server = FakeToolset("server", [FakeTool("lookup"), FakeTool("fetch")])
    loop = ReActLoop(model, tools=[FakeTool("local"), server])
    await loop.run("go")
    assert _offered(model.requests[0]) == ["local", "lookup", "fetch"]


async def test_the_model_calls_a_toolsets_tool() -> None:
    lookup = FakeTool("lookup", result="found it")
    model = ScriptedModel([call("lookup", q="x"), "done"])
    result = await ReActLoop(model, tools=[FakeToolset("server", [lookup])]).run("go")
    assert lookup.calls == [{"q": "x"}]
    assert result.steps[0].tool_results[0].content == "found it"


async def test_a_run_opens_a_closed_toolset_for_itself_and_closes_it() -> None:
    server = FakeToolset("server", [FakeTool("lookup")])
    loop = ReActLoop(ScriptedModel(["a", "b"]), tools=[server])
    await loop.run("one")
    await loop.run("two")
    assert (server.connects, server.closes) == (2, 2)


async def test_a_cancelled_run_closes_the_toolset_it_opened() -> None:
    gate = anyio.Event()
    server = FakeToolset("server", [FakeTool("wait", gate=gate)])
    loop = ReActLoop(ScriptedModel([call("wait"), "done"]), tools=[server])
    with anyio.move_on_after(0.05):
        await loop.run("go")
    assert (server.connects, server.closes) == (1, 1)


async def test_a_failed_run_closes_the_toolset_it_opened() -> None:
    server = FakeToolset("server", [FakeTool("lookup")])
    loop = ReActLoop(ScriptedModel([]), tools=[server])
    result = await loop.run("go")
    assert result.stop_reason is StopReason.ERROR
    assert (server.connects, server.closes) == (1, 1)


async def test_async_with_loop_keeps_one_connection_for_every_run() -> None:
    server = FakeToolset("server", [FakeTool("lookup")])
    loop = ReActLoop(ScriptedModel(["a", "b"]), tools=[server])
    async with loop:
        await loop.run("one")
        await loop.run("two")
        assert (server.connects, server.closes) == (1, 0)
    assert server.closes == 1


async def test_an_entered_toolset_is_shared_and_left_open() -> None:
    server = FakeToolset("server", [FakeTool("lookup")])
    loop = ReActLoop(ScriptedModel(["a"]), tools=[server])
    async with server, loop:
        await loop.run("one")
        assert (server.connects, server.closes) == (1, 0)
    assert server.closes == 1


async def test_entering_a_loop_twice_at_once_is_refused() -> None:
    loop = ReActLoop(ScriptedModel([]), tools=[FakeToolset("server", [])])
    async with loop:
        with pytest.raises(ConfigurationError, match="entered once at a time"):
            await loop.__aenter__()


async def test_a_toolset_that_fails_to_connect_fails_the_run_with_its_error() -> None:
    class Down(ReactLoopError):
        code = ErrorCode.CONFIGURATION

    server = FakeToolset("server", [], fail_on_connect=Down("server did not start"))
    result = await ReActLoop(ScriptedModel(["a"]), tools=[server]).run("go")
    assert result.stop_reason is StopReason.ERROR
    assert isinstance(result.error, Down)


async def test_a_changed_list_is_offered_from_the_next_step() -> None:
    server = FakeToolset("server", [FakeTool("first")])
    added = FakeTool("second", result="new")

    def respond(request: ModelRequest) -> str | ToolCall:
        if len(request.messages) == 1:
            server.set_tools([FakeTool("first"), added])
            return call("first")
        return "done" if "second" not in _offered(request) or added.calls else call("second")

    model = FunctionModel(respond)
    result = await ReActLoop(model, tools=[server]).run("go")
    assert [_offered(r) for r in model.requests[:2]] == [["first"], ["first", "second"]]
    assert added.calls == [{}]
    assert result.stop_reason is StopReason.COMPLETED


async def test_an_unchanged_list_reuses_the_built_catalog() -> None:
    server = FakeToolset("server", [FakeTool("lookup")])
    model = ScriptedModel([call("lookup"), call("lookup"), "done"])
    await ReActLoop(model, tools=[server]).run("go")
    first, *rest = (request.tools for request in model.requests)
    assert all(specs is first for specs in rest)


async def test_a_name_in_the_loop_and_a_toolset_is_a_configuration_error() -> None:
    server = FakeToolset("server", [FakeTool("lookup")])
    result = await ReActLoop(ScriptedModel(["a"]), tools=[FakeTool("lookup"), server]).run("go")
    assert isinstance(result.error, ConfigurationError)
    assert "the loop's tools" in result.error.message
    assert "toolset 'server'" in result.error.message


async def test_two_toolsets_with_one_name_is_a_configuration_error_naming_both() -> None:
    one = FakeToolset("one", [FakeTool("lookup")])
    two = FakeToolset("two", [FakeTool("lookup")])
    with pytest.raises(ConfigurationError, match="toolset 'one' and from toolset 'two'"):
        await ReActLoop(ScriptedModel(["a"]), tools=[one, two], strict=True).run("go")


async def test_a_toolset_listing_something_else_than_tools_breaks_its_contract() -> None:
    server = FakeToolset("server", [])
    object.__setattr__(server, "tools", ("not a tool",))  # past FakeToolset's own check
    result = await ReActLoop(ScriptedModel(["a"]), tools=[server]).run("go")
    assert isinstance(result.error, ContractError)
    assert "ToolSource.list_tools returns Tool objects" in result.error.message


def test_the_same_toolset_twice_is_refused() -> None:
    server = FakeToolset("server", [])
    with pytest.raises(ConfigurationError, match="each toolset given once"):
        ReActLoop(ScriptedModel([]), tools=[server, server])


async def test_a_toolset_that_requires_approval_needs_a_store_or_a_key(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("REACTLOOP_STATE_KEY", raising=False)
    server = FakeToolset("server", [], requires_approval=True)
    with pytest.raises(ConfigurationError, match="state_key"):
        await ReActLoop(ScriptedModel(["hi"]), tools=[server]).run("go")
    await ReActLoop(ScriptedModel(["hi"]), tools=[server], store=MemoryStore()).run("go")


async def test_a_toolset_tool_needing_approval_holds_the_call() -> None:
    lookup = FakeTool("lookup", requires_approval=True)
    server = FakeToolset("server", [lookup])
    loop = ReActLoop(ScriptedModel([call("lookup")]), tools=[server], store=MemoryStore())
    result = await loop.run("go")
    assert result.stop_reason is StopReason.AWAITING_APPROVAL
    assert [p.tool for p in result.pending] == ["lookup"]
    assert lookup.calls == []


async def test_a_listed_tool_needing_approval_without_a_store_or_key_fails_the_run(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("REACTLOOP_STATE_KEY", raising=False)
    server = FakeToolset("server", [FakeTool("lookup", requires_approval=True)])
    result = await ReActLoop(ScriptedModel([call("lookup")]), tools=[server]).run("go")
    assert isinstance(result.error, ConfigurationError)
    assert "'lookup' of toolset 'server' needs approval" in result.error.message


async def test_a_toolset_tool_held_without_a_store_pauses_with_a_state_token() -> None:
    lookup = FakeTool("lookup", requires_approval=True)
    server = FakeToolset("server", [lookup])
    model = ScriptedModel([call("lookup"), "done"])
    loop = ReActLoop(model, tools=[server], approval=ApprovalOptions(state_key="k" * 32))
    paused = await loop.run("go")
    assert paused.state is not None
    decisions = {paused.pending[0].call_id: True}
    resumed = await loop.resume(state=paused.state, decisions=decisions)
    assert resumed.stop_reason is StopReason.COMPLETED
    assert lookup.calls == [{}]


def _by_names(*names: str) -> ToolSelector:
    def select(run: object, tools: Sequence[Tool]) -> list[Tool]:
        return [tool for tool in tools if tool.name in names]

    return select


async def test_a_selector_chooses_the_tools_offered_each_step() -> None:
    model = ScriptedModel(["done"])
    tools = [FakeTool("a"), FakeTool("b"), FakeTool("c")]
    await ReActLoop(
        model, tools=tools, tool_selection=ToolSelection(selector=_by_names("c", "a"))
    ).run("go")
    assert _offered(model.requests[0]) == ["a", "c"]


async def test_an_async_selector_sees_the_toolsets_tools_too() -> None:
    seen: list[list[str]] = []

    async def select(run: object, tools: Sequence[Tool]) -> Sequence[Tool]:
        seen.append([tool.name for tool in tools])
        return list(reversed(tools))

    model = ScriptedModel(["done"])
    server = FakeToolset("server", [FakeTool("remote")])
    await ReActLoop(
        model, tools=[FakeTool("local"), server], tool_selection=ToolSelection(selector=select)
    ).run("go")
    assert seen == [["local", "remote"]]
    assert _offered(model.requests[0]) == ["remote", "local"]


async def test_the_cap_keeps_the_selectors_first_choices() -> None:
    model = ScriptedModel(["done"])
    tools = [FakeTool(name) for name in "abcde"]

    def select(run: object, tools: Sequence[Tool]) -> Sequence[Tool]:
        return list(reversed(tools))

    loop = ReActLoop(model, tools=tools, tool_selection=ToolSelection(selector=select, max_tools=2))
    await loop.run("go")
    assert _offered(model.requests[0]) == ["e", "d"]


@pytest.mark.parametrize("from_toolset", [False, True], ids=["loop", "toolset"])
async def test_a_selected_out_tool_gets_the_unknown_tool_result_naming_those_offered(
    from_toolset: bool,
) -> None:
    hidden = FakeTool("hidden")
    model = ScriptedModel([call("hidden"), "done"])
    served: list[Tool | Toolset] = [FakeToolset("server", [hidden])] if from_toolset else [hidden]
    tools = [FakeTool("shown"), *served]
    result = await ReActLoop(
        model, tools=tools, tool_selection=ToolSelection(selector=_by_names("shown"))
    ).run("go")
    outcome = result.steps[0].tool_results[0]
    assert outcome.is_error and outcome.error_code is ErrorCode.TOOL_ERROR
    assert "the available tools are shown" in outcome.content
    assert hidden.calls == []


async def test_the_final_answer_tool_is_kept_first_whatever_the_selection() -> None:
    model = ScriptedModel([call("final_answer", result="x")])
    loop = ReActLoop(
        model,
        output_type=str,
        output=OutputOptions(strategy=OutputStrategy.TOOL),
        tools=[FakeTool("a"), FakeTool("b")],
        tool_selection=ToolSelection(selector=_by_names("b"), max_tools=1),
    )
    result = await loop.run("go")
    assert _offered(model.requests[0]) == ["final_answer"]
    assert result.output == "x"


@pytest.mark.parametrize(
    ("answer", "rule"),
    [
        ("ab", "returns a sequence of tools"),
        ([FakeTool("a")], "returns tools it was given"),
        (None, "returns a sequence of tools"),
    ],
)
async def test_a_selector_answering_otherwise_breaks_its_contract(
    answer: object, rule: str
) -> None:
    def select(run: object, tools: Sequence[Tool]) -> Sequence[Tool]:
        return answer  # type: ignore[return-value]

    loop = ReActLoop(
        ScriptedModel(["x"]), tools=[FakeTool("a")], tool_selection=ToolSelection(selector=select)
    )
    result = await loop.run("go")
    assert isinstance(result.error, ContractError)
    assert rule in result.error.message


async def test_a_selector_naming_a_tool_twice_breaks_its_contract() -> None:
    loop = ReActLoop(
        ScriptedModel(["x"]),
        tools=[FakeTool("a")],
        tool_selection=ToolSelection(selector=lambda r, t: [t[0], t[0]]),
    )
    result = await loop.run("go")
    assert isinstance(result.error, ContractError)
    assert "each tool at most once" in result.error.message


@pytest.mark.parametrize(
    ("option", "value"),
    [
        ("tool_selector", "rank"),
        ("tool_selector", lambda run: []),
        ("max_tools_per_request", 0),
        ("max_tools_per_request", True),
        ("max_tools_per_request", 2.5),
    ],
)
def test_selection_options_are_checked(option: str, value: object) -> None:
    with pytest.raises(ConfigurationError) as raised:
        ReActLoop(ScriptedModel([]), **{option: value})  # type: ignore[call-overload]
    assert raised.value.option == option


def test_a_tools_entry_that_is_none_of_the_kinds_names_them() -> None:
    with pytest.raises(ConfigurationError, match="a Tool, a function, or a Toolset"):
        ReActLoop(ScriptedModel([]), tools=[42])  # type: ignore[list-item]


async def test_a_stored_run_that_used_a_toolsets_tool_resumes() -> None:
    lookup = FakeTool("lookup", requires_approval=True)
    store = MemoryStore()
    loop = ReActLoop(
        ScriptedModel([call("lookup"), "done"]), tools=[FakeToolset("s", [lookup])], store=store
    )
    paused = await loop.run("go")
    resumed = await loop.resume(paused.run_id, decisions={paused.pending[0].call_id: True})
    assert resumed.stop_reason is StopReason.COMPLETED
    assert lookup.calls == [{}]


async def test_a_cap_alone_ranks_the_tools_by_relevance() -> None:
    model = ScriptedModel(["done"])
    tools = [FakeTool("send_email"), FakeTool("get_weather"), FakeTool("book_flight")]
    await ReActLoop(model, tools=tools, tool_selection=ToolSelection(max_tools=1)).run(
        "What is the weather?"
    )
    assert _offered(model.requests[0]) == ["get_weather"]
