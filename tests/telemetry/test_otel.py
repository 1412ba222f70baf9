"""OpenTelemetry GenAI traces and metrics of runs, read back from the SDK's in-memory exporter
and metric reader: span tree, names, kinds, attributes, errors, retries, sub-agents, threads."""

from __future__ import annotations

import json
import threading
from collections.abc import Sequence
from typing import Any

import anyio
import attrs
import pytest
from opentelemetry import trace
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import HistogramDataPoint, InMemoryMetricReader
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind, StatusCode

from reactloop import Limits, ReActLoop, RetryPolicy, Usage, tool
from reactloop._core._plan import StepPlan
from reactloop._loop._run import Run
from reactloop._telemetry._settings import Telemetry
from reactloop.errors import ModelTimeoutError, ProviderUnavailableError, ScriptExhaustedError
from reactloop.events import PhaseFinished
from reactloop.messages import AssistantMessage, ReasoningPart, TextPart
from reactloop.models import ModelRequest, ModelResponse
from reactloop.testing import FakeTool, FakeToolset, FunctionModel, ScriptedModel, call, reply

pytestmark = pytest.mark.anyio


class Traces:
    """A tracer and a meter provider writing to memory, and what they caught."""

    def __init__(self) -> None:
        self.exporter = InMemorySpanExporter()
        self.tracer_provider = TracerProvider()
        self.tracer_provider.add_span_processor(SimpleSpanProcessor(self.exporter))
        self.reader = InMemoryMetricReader()
        self.meter_provider = MeterProvider(metric_readers=[self.reader])

    def telemetry(self, **options: Any) -> Telemetry:
        return Telemetry(
            tracer_provider=self.tracer_provider, meter_provider=self.meter_provider, **options
        )

    @property
    def spans(self) -> Sequence[ReadableSpan]:
        return self.exporter.get_finished_spans()

    def named(self, prefix: str) -> list[ReadableSpan]:
        return [span for span in self.spans if span.name.startswith(prefix)]

    def one(self, name: str) -> ReadableSpan:
        (span,) = [span for span in self.spans if span.name == name]
        return span

    def points(self, metric: str) -> list[HistogramDataPoint]:
        data = self.reader.get_metrics_data()
        assert data is not None
        return [
            point
            for resource in data.resource_metrics
            for scope in resource.scope_metrics
            for found in scope.metrics
            if found.name == metric
            for point in found.data.data_points
            if isinstance(point, HistogramDataPoint)
        ]


@pytest.fixture
def traces() -> Traces:
    return Traces()


def parent_of(span: ReadableSpan) -> int | None:
    return None if span.parent is None else span.parent.span_id


def span_id(span: ReadableSpan) -> int:
    assert span.context is not None
    found: int = span.context.span_id
    return found


@tool
async def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


@tool
async def explode() -> str:
    """Always fails."""
    raise RuntimeError("secret detail")


def two_calls_then_done() -> ScriptedModel:
    usage = Usage(input_tokens=11, output_tokens=7, cache_read_tokens=4, reasoning_tokens=3)
    first = reply("", ADD_1, ADD_2, usage=usage, model="m-2024")
    return ScriptedModel([first, reply("7 and 3", usage=Usage(5, 2), model="m-2024")])


ADD_1, ADD_2 = call("add", a=1, b=2), call("add", a=3, b=4)


async def test_run_with_parallel_tools_is_one_tree(traces: Traces) -> None:
    loop = ReActLoop(
        two_calls_then_done(), tools=[add], telemetry=traces.telemetry(agent_name="calc")
    )
    await loop.run("add things")
    run = traces.one("invoke_agent calc")
    assert run.kind is SpanKind.INTERNAL and parent_of(run) is None
    chats, tools = traces.named("chat"), traces.named("execute_tool")
    assert [span.kind for span in chats] == [SpanKind.CLIENT, SpanKind.CLIENT]
    assert [span.kind for span in tools] == [SpanKind.INTERNAL, SpanKind.INTERNAL]
    assert {parent_of(span) for span in [*chats, *tools]} == {span_id(run)}
    assert len(traces.spans) == 5
    assert {span.context.trace_id for span in traces.spans if span.context} == {
        run.context.trace_id if run.context else 0
    }


async def test_parallel_tool_calls_are_overlapping_siblings(traces: Traces) -> None:
    both = anyio.Event()
    arrived = 0

    @tool
    async def meet(n: int) -> int:
        """Waits until both calls run."""
        nonlocal arrived
        arrived += 1
        if arrived == 2:
            both.set()
        await both.wait()
        return n

    model = ScriptedModel([reply("", call("meet", n=1), call("meet", n=2)), "done"])
    await ReActLoop(model, tools=[meet], telemetry=traces.telemetry()).run("go")
    first, second = traces.named("execute_tool meet")
    assert parent_of(first) == parent_of(second) == span_id(traces.one("invoke_agent"))
    assert first.start_time is not None and second.end_time is not None
    assert first.start_time < second.end_time and second.start_time < first.end_time  # type: ignore[operator]


async def test_span_attributes_use_the_conventions_names(traces: Traces) -> None:
    loop = ReActLoop(
        two_calls_then_done(), tools=[add], telemetry=traces.telemetry(agent_name="calc")
    )
    result = await loop.run("add things")
    run = traces.one("invoke_agent calc").attributes or {}
    assert run["gen_ai.operation.name"] == "invoke_agent"
    assert run["gen_ai.agent.name"] == "calc"
    assert run["gen_ai.provider.name"] == "_OTHER"
    assert run["gen_ai.usage.input_tokens"] == 16 and run["gen_ai.usage.output_tokens"] == 9
    assert run["reactloop.run.id"] == result.run_id
    chat = traces.named("chat")[0].attributes or {}
    assert chat["gen_ai.operation.name"] == "chat"
    assert chat["gen_ai.response.model"] == "m-2024"
    assert chat["gen_ai.response.finish_reasons"] == ("tool_calls",)
    assert (chat["gen_ai.usage.input_tokens"], chat["gen_ai.usage.output_tokens"]) == (11, 7)
    assert chat["gen_ai.usage.cache_read.input_tokens"] == 4
    assert chat["gen_ai.usage.reasoning.output_tokens"] == 3
    assert "gen_ai.usage.reasoning.output_tokens" not in (traces.named("chat")[1].attributes or {})
    tool_spans = traces.named("execute_tool add")
    ids = {(span.attributes or {})["gen_ai.tool.call.id"] for span in tool_spans}
    assert ids == {ADD_1.id, ADD_2.id}
    first = tool_spans[0].attributes or {}
    assert first["gen_ai.operation.name"] == "execute_tool"
    assert first["gen_ai.tool.name"] == "add" and first["gen_ai.tool.type"] == "function"


async def test_a_provider_model_names_provider_and_request_model(traces: Traces) -> None:
    model = two_calls_then_done()
    model.provider = "openai"  # type: ignore[attr-defined]  # what OpenAIModel declares
    model.model = "gpt-test"  # type: ignore[attr-defined]
    await ReActLoop(model, tools=[add], telemetry=traces.telemetry()).run("go")
    chat = traces.named("chat gpt-test")[0].attributes or {}
    assert chat["gen_ai.provider.name"] == "openai"
    assert chat["gen_ai.request.model"] == "gpt-test"


async def test_content_is_not_recorded_by_default(traces: Traces) -> None:
    await ReActLoop(two_calls_then_done(), tools=[add], telemetry=traces.telemetry()).run("hi")
    content = {
        "gen_ai.input.messages",
        "gen_ai.output.messages",
        "gen_ai.system_instructions",
        "gen_ai.tool.call.arguments",
        "gen_ai.tool.call.result",
    }
    for span in traces.spans:
        assert content.isdisjoint(span.attributes or {}), span.name


async def test_content_is_recorded_when_asked(traces: Traces) -> None:
    telemetry = traces.telemetry(record_content=True)
    loop = ReActLoop(
        two_calls_then_done(), tools=[add], telemetry=telemetry, instructions="Be brief"
    )
    await loop.run("hi")
    chat = traces.named("chat")[0].attributes or {}
    assert json.loads(str(chat["gen_ai.input.messages"])) == [
        {"role": "user", "parts": [{"type": "text", "content": "hi"}]}
    ]
    assert json.loads(str(chat["gen_ai.system_instructions"])) == [
        {"type": "text", "content": "Be brief"}
    ]
    output = json.loads(str(chat["gen_ai.output.messages"]))
    assert output[0]["parts"][0] == {
        "type": "tool_call", "id": ADD_1.id, "name": "add", "arguments": {"a": 1, "b": 2}
    }  # fmt: skip
    (tool_span,) = [
        span.attributes or {}
        for span in traces.named("execute_tool")
        if (span.attributes or {})["gen_ai.tool.call.id"] == ADD_1.id
    ]
    assert tool_span["gen_ai.tool.call.arguments"] == '{"a":1,"b":2}'
    assert tool_span["gen_ai.tool.call.result"] == "3"


async def test_a_failing_tool_marks_its_span(traces: Traces) -> None:
    model = ScriptedModel([reply("", call("explode")), "sorry"])
    await ReActLoop(model, tools=[explode], telemetry=traces.telemetry()).run("go")
    span = traces.one("execute_tool explode")
    assert span.status.status_code is StatusCode.ERROR
    assert (span.attributes or {})["error.type"] == "tool_error"
    assert "secret detail" not in str(span.status.description)  # content stays out by default
    assert traces.one("invoke_agent").status.status_code is StatusCode.UNSET


async def test_a_failed_run_marks_the_run_and_chat_spans(traces: Traces) -> None:
    down = [ProviderUnavailableError("down")] * 2
    loop = ReActLoop(
        ScriptedModel(down), retry=RetryPolicy(max_retries=1), sleep=_no_wait,
        telemetry=traces.telemetry(),
    )  # fmt: skip
    result = await loop.run("go")
    assert result.error is not None
    run = traces.one("invoke_agent")
    assert run.status.status_code is StatusCode.ERROR
    assert (run.attributes or {})["error.type"] == result.error.code.value
    for chat in traces.named("chat"):
        assert chat.status.status_code is StatusCode.ERROR
        assert (chat.attributes or {})["error.type"] == "provider_unavailable"


async def test_each_retry_is_a_chat_span_of_its_own(traces: Traces) -> None:
    model = ScriptedModel([ProviderUnavailableError("down"), "fine"])
    loop = ReActLoop(model, sleep=_no_wait, telemetry=traces.telemetry())
    assert (await loop.run("go")).output == "fine"
    failed, answered = traces.named("chat")
    assert failed.status.status_code is StatusCode.ERROR
    assert answered.status.status_code is StatusCode.UNSET
    assert parent_of(failed) == parent_of(answered) == span_id(traces.one("invoke_agent"))


async def test_a_model_call_cut_by_its_timeout_is_marked_and_measured(traces: Traces) -> None:
    async def stall(request: ModelRequest) -> str:
        await anyio.Event().wait()
        return "never"

    telemetry = traces.telemetry()
    loop = ReActLoop(
        FunctionModel(stall), limits=Limits(model_timeout=0.001), retry=RetryPolicy(max_retries=0),
        telemetry=telemetry,
    )  # fmt: skip
    result = await loop.run("go")
    assert isinstance(result.error, ModelTimeoutError)
    (chat,) = traces.named("chat")
    assert chat.status.status_code is StatusCode.ERROR
    assert (chat.attributes or {})["error.type"] == "cancelled"
    (measured,) = traces.points("gen_ai.client.operation.duration")
    assert dict(measured.attributes or {})["error.type"] == "cancelled"
    run = traces.one("invoke_agent").attributes or {}
    assert run["error.type"] == "timeout"


async def test_a_tool_timeout_marks_the_tool_span(traces: Traces) -> None:
    @tool(timeout=0.001)
    async def slow() -> str:
        """Never answers in time."""
        await anyio.Event().wait()
        return "never"

    model = ScriptedModel([reply("", call("slow")), "gave up"])
    await ReActLoop(model, tools=[slow], telemetry=traces.telemetry()).run("go")
    span = traces.one("execute_tool slow")
    assert (span.attributes or {})["error.type"] == "timeout"
    assert span.status.status_code is StatusCode.ERROR


async def test_a_streamed_run_says_its_calls_stream(traces: Traces) -> None:
    loop = ReActLoop(ScriptedModel(["hi"]), telemetry=traces.telemetry())
    async with loop.stream("go") as events:
        async for _ in events:
            pass
    (chat,) = traces.named("chat")
    assert (chat.attributes or {})["gen_ai.request.stream"] is True


async def test_a_model_prepare_step_swaps_in_is_traced_too(traces: Traces) -> None:
    other = ScriptedModel(["from the other model"])
    other.model = "other-model"  # type: ignore[attr-defined]

    def swap(run: Run, plan: StepPlan) -> StepPlan:
        return attrs.evolve(plan, model=other)

    loop = ReActLoop(ScriptedModel([]), prepare_step=swap, telemetry=traces.telemetry())
    assert (await loop.run("go")).output == "from the other model"
    assert [span.name for span in traces.named("chat")] == ["chat other-model"]


async def test_a_strict_run_that_raises_marks_its_span(traces: Traces) -> None:
    loop = ReActLoop(ScriptedModel([]), strict=True, telemetry=traces.telemetry())
    with pytest.raises(ScriptExhaustedError):
        await loop.run("go")
    run = traces.one("invoke_agent")
    assert run.status.status_code is StatusCode.ERROR
    assert (run.attributes or {})["error.type"] == ScriptExhaustedError(0).code.value


async def test_the_run_span_records_input_and_output_when_asked(traces: Traces) -> None:
    telemetry = traces.telemetry(record_content=True)
    await ReActLoop(ScriptedModel(["the answer"]), telemetry=telemetry).run("the question")
    run = traces.one("invoke_agent").attributes or {}
    assert "the question" in str(run["gen_ai.input.messages"])
    assert json.loads(str(run["gen_ai.output.messages"]))[0]["parts"] == [
        {"type": "text", "content": "the answer"}
    ]


async def test_a_sub_agent_run_nests_under_the_tool_call(traces: Traces) -> None:
    inner = ReActLoop(
        ScriptedModel(["inner answer"]), telemetry=traces.telemetry(agent_name="helper")
    )

    @tool
    async def ask_helper(question: str) -> str:
        """Ask the helper agent."""
        return str((await inner.run(question)).output)

    model = ScriptedModel([reply("", call("ask_helper", question="why")), "done"])
    outer = ReActLoop(model, tools=[ask_helper], telemetry=traces.telemetry(agent_name="boss"))
    await outer.run("go")
    tool_span = traces.one("execute_tool ask_helper")
    helper = traces.one("invoke_agent helper")
    assert parent_of(helper) == span_id(tool_span)
    assert [parent_of(span) for span in traces.named("chat")].count(span_id(helper)) == 1
    assert len({span.context.trace_id for span in traces.spans if span.context}) == 1


async def test_an_agent_tools_sub_run_nests_under_its_tool_call(traces: Traces) -> None:
    inner = ReActLoop(
        ScriptedModel(["inner answer"]), telemetry=traces.telemetry(agent_name="researcher")
    )
    agent = inner.as_tool(name="researcher", description="Finds facts.")
    model = ScriptedModel([reply("", call("researcher", input="why")), "done"])
    outer = ReActLoop(model, tools=[agent], telemetry=traces.telemetry(agent_name="boss"))
    await outer.run("go")
    tool_span = traces.one("execute_tool researcher")
    sub = traces.one("invoke_agent researcher")
    assert parent_of(sub) == span_id(tool_span)
    assert parent_of(tool_span) == span_id(traces.one("invoke_agent boss"))
    assert [parent_of(span) for span in traces.named("chat")].count(span_id(sub)) == 1


async def test_a_sync_tool_in_a_worker_thread_stays_in_the_trace(traces: Traces) -> None:
    seen: list[tuple[int, int]] = []

    @tool
    def where() -> str:
        """Runs in a worker thread."""
        context = trace.get_current_span().get_span_context()
        seen.append((threading.get_ident(), context.span_id))
        return "here"

    model = ScriptedModel([reply("", call("where")), "done"])
    await ReActLoop(model, tools=[where], telemetry=traces.telemetry()).run("go")
    ((thread, current),) = seen
    assert thread != threading.get_ident()
    assert current == span_id(traces.one("execute_tool where"))


async def test_a_toolset_tool_call_gets_its_span_too(traces: Traces) -> None:
    server = FakeToolset("server", [FakeTool("lookup")])
    model = ScriptedModel([reply("", call("lookup", q="x")), "done"])
    await ReActLoop(model, tools=[server], telemetry=traces.telemetry()).run("go")
    span = traces.one("execute_tool lookup")
    assert parent_of(span) == span_id(traces.one("invoke_agent"))


async def test_phase_spans_are_off_by_default(traces: Traces) -> None:
    await ReActLoop(two_calls_then_done(), tools=[add], telemetry=traces.telemetry()).run("go")
    assert traces.named("phase") == []


async def test_phase_spans_hold_the_calls_of_their_phase(traces: Traces) -> None:
    telemetry = traces.telemetry(phase_spans=True)
    await ReActLoop(two_calls_then_done(), tools=[add], telemetry=telemetry).run("go")
    run = traces.one("invoke_agent")
    phases = traces.named("phase ")
    assert {parent_of(span) for span in phases} == {span_id(run)}
    reasoning = [s for s in phases if s.name == "phase ReasoningPhase"]
    tools = [s for s in phases if s.name == "phase ToolPhase"]
    assert [(s.attributes or {})["reactloop.step"] for s in reasoning] == [1, 2]
    assert parent_of(traces.named("chat")[0]) == span_id(reasoning[0])
    assert {parent_of(s) for s in traces.named("execute_tool")} == {span_id(tools[0])}
    assert (tools[-1].attributes or {})["reactloop.decision"] == "Stop"


async def test_phase_spans_keep_the_phase_names_in_events(traces: Traces) -> None:
    telemetry = traces.telemetry(phase_spans=True)
    loop = ReActLoop(ScriptedModel(["hi"]), telemetry=telemetry)
    async with loop.stream("go") as events:
        names = [event.phase async for event in events if isinstance(event, PhaseFinished)]
    assert "ReasoningPhase" in names and "TracedPhase" not in names


async def test_metrics_record_token_usage_by_type_and_duration(traces: Traces) -> None:
    await ReActLoop(two_calls_then_done(), tools=[add], telemetry=traces.telemetry()).run("go")
    usage = traces.points("gen_ai.client.token.usage")
    by_type = {str(dict(point.attributes or {})["gen_ai.token.type"]): point for point in usage}
    assert by_type["input"].sum == 16 and by_type["input"].count == 2
    assert by_type["output"].sum == 9
    measured = dict(by_type["input"].attributes or {})
    assert measured["gen_ai.operation.name"] == "chat"
    assert measured["gen_ai.response.model"] == "m-2024"
    assert list(by_type["input"].explicit_bounds)[:3] == [1, 4, 16]
    (duration,) = traces.points("gen_ai.client.operation.duration")
    assert duration.count == 2 and duration.sum >= 0
    assert list(duration.explicit_bounds)[:2] == [0.01, 0.02]


async def test_a_failed_call_is_measured_with_its_error_type(traces: Traces) -> None:
    model = ScriptedModel([ProviderUnavailableError("down"), "fine"])
    await ReActLoop(model, sleep=_no_wait, telemetry=traces.telemetry()).run("go")
    failed = [
        point
        for point in traces.points("gen_ai.client.operation.duration")
        if dict(point.attributes or {}).get("error.type") == "provider_unavailable"
    ]
    assert [point.count for point in failed] == [1]


async def _no_wait(seconds: float) -> None:
    await anyio.lowlevel.checkpoint()


async def test_spans_carry_the_response_id_and_the_session_as_the_conversation(
    traces: Traces,
) -> None:
    first = ModelResponse(AssistantMessage("", (ADD_1,)), id="chatcmpl-1")
    model = ScriptedModel([first, "3", "Again 3."])
    loop = ReActLoop(model, tools=[add], telemetry=traces.telemetry())
    await loop.run("go", session_id="session-7")
    await loop.run("again")
    ids = [(span.attributes or {}).get("gen_ai.response.id") for span in traces.named("chat")]
    assert ids == ["chatcmpl-1", None, None]
    agents = [span.attributes or {} for span in traces.named("invoke_agent")]
    assert [agent.get("gen_ai.conversation.id") for agent in agents] == ["session-7", None]


SIGNATURE, REDACTED, ENCRYPTED = "sig-SECRET", "redacted-SECRET", "encrypted-SECRET"


def thinking_then_done() -> ScriptedModel:
    thought = ReasoningPart("Add them with the tool.", signature=SIGNATURE)
    hidden = ReasoningPart(redacted=REDACTED)
    first = ModelResponse(
        AssistantMessage(parts=[thought, hidden, TextPart("Adding."), ADD_1], refusal=None)
    )
    sealed = ReasoningPart(summary=("Read the sum.",), id="rs_1", encrypted=ENCRYPTED)
    last = ModelResponse(AssistantMessage(parts=[sealed, TextPart("3")], refusal=None))
    return ScriptedModel([first, last])


async def test_reasoning_is_recorded_as_reasoning_parts_in_the_models_order(
    traces: Traces,
) -> None:
    telemetry = traces.telemetry(record_content=True)
    await ReActLoop(thinking_then_done(), tools=[add], telemetry=telemetry).run("hi")
    first, second = (span.attributes or {} for span in traces.named("chat"))
    [output] = json.loads(str(first["gen_ai.output.messages"]))
    assert [part["type"] for part in output["parts"]] == ["reasoning", "text", "tool_call"]
    assert output["parts"][0] == {"type": "reasoning", "content": "Add them with the tool."}
    sent = json.loads(str(second["gen_ai.input.messages"]))
    assert sent[1]["parts"][:2] == output["parts"][:2]  # the same message, sent back
    [answer] = json.loads(str(second["gen_ai.output.messages"]))
    assert answer["parts"][0] == {"type": "reasoning", "content": "Read the sum."}


async def test_no_opaque_reasoning_value_is_recorded(traces: Traces) -> None:
    telemetry = traces.telemetry(record_content=True)
    await ReActLoop(thinking_then_done(), tools=[add], telemetry=telemetry).run("hi")
    recorded = [str(value) for span in traces.spans for value in (span.attributes or {}).values()]
    assert any("Add them with the tool." in value for value in recorded)
    assert not any(
        secret in value for value in recorded for secret in (SIGNATURE, REDACTED, ENCRYPTED)
    )


@pytest.mark.parametrize(
    ("provider", "expected"),
    [
        ("google", "gcp.gemini"),
        ("azure", "azure.ai.openai"),
        ("azure-responses", "azure.ai.openai"),
        ("openai-responses", "openai"),
        ("groq", "groq"),
        ("openrouter", "openrouter"),
    ],
)
async def test_a_provider_is_named_as_the_conventions_spell_it(
    traces: Traces, provider: str, expected: str
) -> None:
    model = two_calls_then_done()
    model.provider = provider  # type: ignore[attr-defined]
    model.model = "m"  # type: ignore[attr-defined]
    await ReActLoop(model, tools=[add], telemetry=traces.telemetry()).run("go")
    chat = traces.named("chat m")[0].attributes or {}
    run = traces.one("invoke_agent").attributes or {}
    assert chat["gen_ai.provider.name"] == run["gen_ai.provider.name"] == expected
