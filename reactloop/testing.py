"""Fakes for testing agents and single phases; reactloop's own tests use exactly these.

- `ScriptedModel`: canned responses in order; records requests; `assert_complete()`.
- `FunctionModel`: computes each response from the request.
- `FakeTool`: a tool that returns, raises or blocks as told, and records its calls.
- `FakeToolset`: a toolset (like an MCP server) whose tool list can change; counts its connections.
- `make_run` / `run_phase`: build a run's state by hand and run one phase on it.
- `FakeClock`: an injectable clock for time budgets.
- `Cassette`, `RecordingModel`, `ReplayModel`: turn a recorded or stored run into a regression
  test that replays its model responses and checks every request.
- The provider kit (docs/adding-a-provider.md): `CONFORMANCE_CHECKS` and `check_provider` run a
  provider against the `ProviderHarness` its author writes (`Features`, `ScriptedAnswer`,
  `ScriptedReasoning`, `ScriptedError`/`ErrorKind`, `SentRequest`), over the loopback
  `WireServer` (`WireReply`, `WireRequest`, `WireEnding`, `json_reply`, `sse_reply`); a failure
  is a `ConformanceError` listing each `ConformanceFailure`, a check that does not apply raises
  `CheckSkipped` (a `unittest.SkipTest`, so pytest reports a skip).
"""

from __future__ import annotations

import inspect
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Sequence
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import Any, Unpack

import anyio
import orjson
from attrs import define, field

from reactloop._cassettes import Cassette, RecordingModel, ReplayModel
from reactloop._core import (
    NO_USAGE,
    AssistantMessage,
    DeltaSink,
    Event,
    FinishReason,
    Message,
    ModelRequest,
    ModelResponse,
    Phase,
    PhaseDecision,
    ReasoningPart,
    RunContext,
    RunState,
    Tool,
    ToolCall,
    ToolSource,
    ToolSpec,
    Usage,
    UserMessage,
    deltas_of,
    publish,
)
from reactloop._errors import (
    ConfigurationError,
    ContractError,
    ScriptExhaustedError,
    ToolArgumentsError,
)
from reactloop._kit import (
    CONFORMANCE_CHECKS,
    CheckSkipped,
    ConformanceCheck,
    ConformanceError,
    ConformanceFailure,
    ConformanceReport,
    ErrorKind,
    Features,
    ProviderHarness,
    ScriptedAnswer,
    ScriptedError,
    ScriptedReasoning,
    SentRequest,
    WireEnding,
    WireReply,
    WireRequest,
    WireServer,
    check_provider,
    json_reply,
    sse_reply,
)
from reactloop._loop import HOMES, OPTION_NAMES, LoopOptions, Run, build_config
from reactloop._loop import message as _message
from reactloop._validate import (
    boolean,
    checked_arguments,
    function,
    instance,
    integer,
    number,
    optional_instance,
    optional_number,
    reject_unknown,
    sequence_of,
    text,
    tool_name,
)

ScriptItem = ModelResponse | str | ToolCall | Sequence[ToolCall] | Exception


def call(name: str, /, **arguments: Any) -> ToolCall:
    """A tool call with these arguments, e.g. `call("get_weather", city="Paris")`."""
    return ToolCall.of(name, arguments)


def reply(
    text: str = "",
    *calls: ToolCall,
    usage: Usage | None = None,
    model: str | None = None,
    reasoning: str | ReasoningPart | None = None,
) -> ModelResponse:
    """A model response with text and/or tool calls; `reasoning` (a text or a `ReasoningPart`)
    comes first, as a thinking model's does."""
    if not isinstance(text, str):
        raise ConfigurationError.invalid("reply.text", text, "a str (tool calls go after it)")
    for item in calls:
        if not isinstance(item, ToolCall):
            raise ConfigurationError.invalid("reply.calls", item, "ToolCall values (see call())")
    reason = FinishReason.TOOL_CALLS if calls else FinishReason.STOP
    message = AssistantMessage(text, tuple(calls))
    if reasoning is not None:
        thought = ReasoningPart(reasoning) if isinstance(reasoning, str) else reasoning
        if not isinstance(thought, ReasoningPart):
            rule = "a str or a ReasoningPart"
            raise ConfigurationError.invalid("reply.reasoning", reasoning, rule)
        message = AssistantMessage(parts=(thought, *message.parts))
    return ModelResponse(message, usage or NO_USAGE, reason, model)  # one shared zero


_SCRIPT_RULE = (
    "a ModelResponse, a text (str), a ToolCall, a list of ToolCalls (one response with"
    " parallel calls) or an Exception to raise"
)


def _script_item(option: str, item: object) -> ModelResponse | Exception:
    """One scripted item as the response (or exception) it stands for."""
    if isinstance(item, ModelResponse | Exception):
        return item
    if isinstance(item, str):
        return reply(item)
    if isinstance(item, ToolCall):
        return reply("", item)
    if isinstance(item, list | tuple) and item and all(isinstance(c, ToolCall) for c in item):
        return reply("", *item)
    if isinstance(item, ScriptedAnswer | ScriptedError | ScriptedReasoning):
        kit = f"{_SCRIPT_RULE} ({type(item).__name__} is the provider kit's: a harness renders it)"
        raise ConfigurationError.invalid(option, item, kit)
    raise ConfigurationError.invalid(option, item, _SCRIPT_RULE)


def _as_response(item: object) -> ModelResponse:
    """What a `FunctionModel`'s function returned, as a response (anything else breaks its
    contract)."""
    try:
        response = _script_item("response", item)
    except ConfigurationError:
        response = None
    if not isinstance(response, ModelResponse):
        rule = "a FunctionModel's function returns a ModelResponse, a str or tool calls"
        raise ContractError("FunctionModel.fn", rule, item)
    return response


class _RecordingModel:
    """Records requests and streams any response as deltas."""

    def __init__(self) -> None:
        self.requests: list[ModelRequest] = []

    async def respond(self, request: ModelRequest) -> ModelResponse:
        raise NotImplementedError

    async def request(self, request: ModelRequest) -> ModelResponse:
        """Record the request and answer it."""
        self.requests.append(request)
        return await self.respond(request)

    async def stream(self, request: ModelRequest, on_delta: DeltaSink) -> ModelResponse:
        """Answer the request, delivering the answer as deltas first."""
        response = await self.request(request)
        for delta in deltas_of(response):
            await on_delta(delta)
        return response


@checked_arguments
class ScriptedModel(_RecordingModel):
    """Answers with scripted items in order: responses, texts, tool calls (a list of calls is
    one response with parallel calls), or errors to raise."""

    def __init__(self, script: Iterable[ScriptItem]) -> None:
        super().__init__()
        if isinstance(script, str) or not isinstance(script, Iterable):
            raise ConfigurationError.invalid("script", script, "a list of scripted items")
        items = list(script)
        self.script = [_script_item(f"script[{i}]", item) for i, item in enumerate(items)]
        self.position = 0

    async def respond(self, request: ModelRequest) -> ModelResponse:
        """The next scripted response (or raise the next scripted exception)."""
        await anyio.lowlevel.checkpoint()
        if self.position >= len(self.script):
            raise ScriptExhaustedError(len(self.script))
        item = self.script[self.position]
        self.position += 1
        if isinstance(item, Exception):
            raise item
        return item

    @property
    def remaining(self) -> int:
        """How many scripted items were not used."""
        return len(self.script) - self.position

    def assert_complete(self) -> None:
        """Fail if some scripted items were left unused."""
        if self.remaining:
            raise AssertionError(
                f"scripted model: {self.remaining} of {len(self.script)} responses were not used"
            )


Answer = ModelResponse | str | ToolCall | Sequence[ToolCall]
Responder = Callable[[ModelRequest], Answer | Awaitable[Answer]]


@checked_arguments
class FunctionModel(_RecordingModel):
    """Computes each response from the request with `fn` (sync or async)."""

    def __init__(self, fn: Responder) -> None:
        super().__init__()
        self.fn: Responder = function("FunctionModel.fn", fn, 1)

    async def respond(self, request: ModelRequest) -> ModelResponse:
        """Call `fn` on the request."""
        await anyio.lowlevel.checkpoint()
        produced = self.fn(request)
        item = await produced if inspect.isawaitable(produced) else produced
        return _as_response(item)


@checked_arguments
@define
class FakeTool:
    """A tool that returns `result`, raises `raises`, or waits for `gate`; records every call."""

    name: str
    result: object = "ok"
    raises: Exception | None = None
    gate: anyio.Event | None = None
    timeout: float | None = None
    exclusive: bool = False
    parameters: dict[str, Any] = field(factory=lambda: {"type": "object"})
    idempotent: bool = False
    requires_approval: bool = False
    external: bool = False
    calls: list[dict[str, Any]] = field(factory=list)
    running: int = 0
    peak_running: int = 0

    def __attrs_post_init__(self) -> None:
        tool_name("FakeTool.name", self.name)
        optional_instance("FakeTool.raises", self.raises, Exception, "an exception to raise")
        optional_instance("FakeTool.gate", self.gate, anyio.Event, "an anyio.Event to wait for")
        optional_number("FakeTool.timeout", self.timeout)
        for flag in ("exclusive", "idempotent", "requires_approval", "external"):
            boolean(f"FakeTool.{flag}", getattr(self, flag))
        instance("FakeTool.parameters", self.parameters, dict, "a JSON schema (a dict)")
        instance("FakeTool.calls", self.calls, list, "a list (the calls recorded)")
        integer("FakeTool.running", self.running, minimum=0)
        integer("FakeTool.peak_running", self.peak_running, minimum=0)

    @property
    def spec(self) -> ToolSpec:
        """A spec with the given parameter schema."""
        return ToolSpec(self.name, f"fake tool {self.name}", self.parameters)

    def parse_arguments(self, arguments: str) -> dict[str, Any]:
        """Any JSON object is accepted."""
        try:
            value = orjson.loads(arguments or "{}")
        except orjson.JSONDecodeError as exc:
            raise ToolArgumentsError(self.name, [f"not JSON: {exc}"]) from None
        if not isinstance(value, dict):
            raise ToolArgumentsError(self.name, ["arguments must be a JSON object"])
        return value

    async def invoke(self, arguments: dict[str, Any], context: RunContext[Any]) -> object:
        """Record the call, wait for the gate if any, then return or raise."""
        self.calls.append(arguments)
        self.running += 1
        self.peak_running = max(self.peak_running, self.running)
        try:
            if self.gate is not None:
                await self.gate.wait()
            await anyio.lowlevel.checkpoint()
        finally:
            self.running -= 1
        if self.raises is not None:
            raise self.raises
        return self.result


def _tool_tuple(tools: Iterable[Tool]) -> tuple[Tool, ...]:
    return sequence_of("FakeToolset.tools", tools, _a_tool, "tools")


def _a_tool(option: str, value: object) -> Tool:
    return instance(option, value, Tool, "a tool (name, spec, parse_arguments, invoke)")  # type: ignore[type-abstract]


class _FakeSource:
    """An open connection to a `FakeToolset`: lists the toolset's current tools."""

    def __init__(self, toolset: FakeToolset) -> None:
        self._toolset = toolset

    async def list_tools(self) -> Sequence[Tool]:
        """The toolset's tools now (the same tuple until `set_tools` changes them)."""
        self._toolset.listings += 1
        await anyio.lowlevel.checkpoint()
        return self._toolset.tools


@checked_arguments
@define
class FakeToolset:
    """A toolset serving `tools`, as an MCP server would: `set_tools` changes the list (as a
    server announcing a change), `connects`/`closes` count connections, `fail_on_connect` makes
    connecting raise, and `async with toolset:` keeps one connection open for every run."""

    name: str
    tools: tuple[Tool, ...] = field(converter=_tool_tuple)
    fail_on_connect: Exception | None = None
    requires_approval: bool = False
    connects: int = 0
    closes: int = 0
    listings: int = 0
    _entered: list[AbstractAsyncContextManager[ToolSource]] = field(factory=list, init=False)
    _open: ToolSource | None = field(default=None, init=False)

    def __attrs_post_init__(self) -> None:
        text("FakeToolset.name", self.name)
        rule = "an exception to raise on connecting"
        optional_instance("FakeToolset.fail_on_connect", self.fail_on_connect, Exception, rule)
        boolean("FakeToolset.requires_approval", self.requires_approval)
        for count in ("connects", "closes", "listings"):
            integer(f"FakeToolset.{count}", getattr(self, count), minimum=0)

    @property
    def open_source(self) -> ToolSource | None:
        """The connection kept while the toolset is entered."""
        return self._open

    def set_tools(self, tools: Iterable[Tool]) -> None:
        """Change the tools offered from now on."""
        self.tools = _tool_tuple(tools)

    @asynccontextmanager
    async def connect(self) -> AsyncIterator[ToolSource]:
        """A new connection; counted when opened and when closed."""
        await anyio.lowlevel.checkpoint()
        if self.fail_on_connect is not None:
            raise self.fail_on_connect
        self.connects += 1
        try:
            yield _FakeSource(self)
        finally:
            self.closes += 1

    async def __aenter__(self) -> FakeToolset:
        manager = self.connect()
        self._open = await manager.__aenter__()
        self._entered.append(manager)
        return self

    async def __aexit__(self, *exc_info: Any) -> None:
        self._open = None
        await self._entered.pop().__aexit__(*exc_info)


@checked_arguments
@define
class FakeClock:
    """A clock that only moves when told: pass it as `clock=` and call `advance`."""

    now: float = 0.0

    def __attrs_post_init__(self) -> None:
        number("FakeClock.now", self.now, inclusive=True)

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        """Move time forward (a clock for durations never goes back)."""
        self.now += number("FakeClock.advance.seconds", seconds, inclusive=True)


@checked_arguments
def make_run(
    *,
    model: Any = None,
    messages: Sequence[Message] | None = None,
    events: list[Event] | None = None,
    deps: Any = None,
    open_step: bool = True,
    output_type: object = None,
    **options: Unpack[LoopOptions],
) -> Run:
    """A run built by hand, with an open step, ready for one phase: `await run_phase(phase, run)`.

    `options` are the loop's (`LoopOptions`); the clock defaults to a `FakeClock`. Pass a list as
    `events` to collect what the phase emits, and `output_type` to test the output phase.
    """
    reject_unknown("make_run", options, OPTION_NAMES | set(MAKE_RUN_PARAMETERS), HOMES)
    given = (_messages(messages) if messages is not None else []) or [UserMessage("hello")]
    if events is not None and not isinstance(events, list):
        raise ConfigurationError.invalid("events", events, "a list (to collect events) or None")
    boolean("open_step", open_step)
    options.setdefault("clock", FakeClock())
    config = build_config(model if model is not None else ScriptedModel([]), output_type, **options)
    state = RunState("test-run", given)
    instructions = options.get("instructions")
    state.instructions = instructions if isinstance(instructions, str) else None
    if open_step:
        state.open_step(config.clock())
    sink = events.append if events is not None else None
    return Run(state, config, RunContext(run_id="test-run", deps=deps), _async(sink))


MAKE_RUN_PARAMETERS = ("model", "messages", "events", "deps", "open_step", "output_type")


def _messages(messages: object) -> list[Message]:
    return list(sequence_of("messages", messages, _message, "messages"))


def _async(append: Callable[[Event], None] | None) -> Callable[[Event], Awaitable[None]] | None:
    if append is None:
        return None

    async def sink(event: Event) -> None:
        append(event)

    return sink


async def run_phase(phase: Phase, run: Run) -> PhaseDecision:
    """Run one phase on a hand-built run and return its decision."""
    return await phase(run)


__all__ = [
    "CONFORMANCE_CHECKS",
    "Cassette",
    "CheckSkipped",
    "ConformanceCheck",
    "ConformanceError",
    "ConformanceFailure",
    "ConformanceReport",
    "ErrorKind",
    "FakeClock",
    "FakeTool",
    "FakeToolset",
    "Features",
    "FunctionModel",
    "ProviderHarness",
    "RecordingModel",
    "ReplayModel",
    "ScriptedAnswer",
    "ScriptedError",
    "ScriptedModel",
    "ScriptedReasoning",
    "SentRequest",
    "WireEnding",
    "WireReply",
    "WireRequest",
    "WireServer",
    "call",
    "check_provider",
    "deltas_of",
    "json_reply",
    "make_run",
    "reply",
    "run_phase",
    "sse_reply",
]

publish(__name__, globals())
