"""The command line's view of a run as lines: each event becomes zero or more `Line`s, the same
for the plain and the live view (the live one only styles them and adds a status line)."""

from __future__ import annotations

import enum
from collections.abc import Callable, Sequence
from decimal import Decimal

import orjson
from attrs import define, evolve, field, frozen

from reactloop._core import (
    AssistantMessage,
    ContentPart,
    Event,
    HookFailed,
    Message,
    ModelRetrying,
    ModelSwitched,
    NestedEvent,
    PendingCall,
    PhaseFinished,
    ReasoningPart,
    ReasoningStreamed,
    RunFailed,
    RunFinished,
    RunPaused,
    RunResult,
    RunStarted,
    Step,
    StepFinished,
    StepStarted,
    StopReason,
    TextPart,
    TextStreamed,
    ToolCall,
    ToolCallFinished,
    ToolCallStarted,
    ToolResult,
    Usage,
    describe,
)

SHOWN_CHARS = 160
"""Longest argument list or tool result a line shows (the rest is cut with an ellipsis)."""
THOUGHT_CHARS = 80
"""How much of the model's reasoning a `thinking:` line shows."""


class Kind(enum.StrEnum):
    """What a line reports; the live view styles each kind its own way."""

    RUN = "run"
    STEP = "step"
    MODEL = "model"
    CALL = "call"
    OK = "ok"
    ERROR = "error"
    NOTE = "note"
    THINKING = "thinking"
    ANSWER = "answer"
    USAGE = "usage"


@frozen
class Line:
    """One line of the view: its kind and text (no styling, no colour codes). The views make the
    text inert (`inert`) as they write it; a `multiline` one (an answer, an error) keeps its
    newlines, any other is shown on one line."""

    kind: Kind
    text: str
    multiline: bool = False


def shorten(text: str, limit: int = SHOWN_CHARS) -> str:
    """`text` on one line, cut to `limit` characters."""
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def shown_arguments(arguments: str | dict[str, object]) -> str:
    """Arguments as `name=value, ...` (JSON values), or the raw text when it is not an object."""
    try:
        value = orjson.loads(arguments) if isinstance(arguments, str) else arguments
    except orjson.JSONDecodeError:
        return shorten(str(arguments))
    if not isinstance(value, dict):
        return shorten(str(arguments))
    parts = [f"{key}={orjson.dumps(item).decode()}" for key, item in value.items()]
    return shorten(", ".join(parts))


def parts_text(parts: Sequence[ContentPart]) -> str:
    """Parts as one text: the text parts as they are, each other part as its one-line
    description in brackets (`[image image/png, 5,120 bytes]`); never their bytes."""
    return " ".join(
        part.text if isinstance(part, TextPart) else f"[{describe(part)}]" for part in parts
    )


def result_text(result: ToolResult) -> str:
    """A tool result as a line shows it: its content, or its parts described."""
    return parts_text(result.parts) if result.parts else result.content


def call_text(call: ToolCall) -> str:
    """`name(arguments)` for a tool call."""
    return f"{call.name}({shown_arguments(call.arguments)})"


def hidden_kind(part: ReasoningPart) -> str:
    """What a reasoning part without readable text holds, named (never shown): "redacted",
    "encrypted", "signature only" or "empty"."""
    if part.redacted is not None:
        return "redacted"
    if part.encrypted is not None:
        return "encrypted"
    return "empty" if part.signature is None else "signature only"


def reasoning_text(parts: Sequence[ReasoningPart]) -> str:
    """A message's reasoning on one line: `thinking: ` and the start of the text a person can
    read, with what the other parts hold (`(+redacted)`); without readable text, only that:
    `thinking (redacted)`, `reasoning (encrypted)`. Signatures, redacted data and encrypted
    content are never shown."""
    readable = " ".join(part.readable for part in parts if part.readable.strip())
    hidden = ", ".join(sorted({hidden_kind(part) for part in parts if not part.readable.strip()}))
    if readable:
        more = f" (+{hidden})" if hidden else ""
        return f"thinking: {shorten(readable, THOUGHT_CHARS)}{more}"
    return "reasoning (encrypted)" if hidden == "encrypted" else f"thinking ({hidden})"


def usage_text(usage: Usage) -> str:
    """Tokens in, out and in total, with the cache reads and writes (part of "in") and the
    reasoning (part of "out") when there are any."""
    cache = [f"{n} {what}" for n, what in ((usage.cache_read_tokens, "cache read"),
             (usage.cache_write_tokens, "cache write")) if n]  # fmt: skip
    given = f"{usage.input_tokens} in" + (f" ({', '.join(cache)})" if cache else "")
    made = f"{usage.output_tokens} out" + (
        f" ({usage.reasoning_tokens} reasoning)" if usage.reasoning_tokens else ""
    )
    return f"{given} + {made} = {usage.total_tokens} tokens"


def cost_text(cost: Decimal | None) -> str:
    """A run's cost in dollars (at least cents, up to millionths: `$0.0045`, `$4.50`), or
    `cost unknown` (no price table, or a call it could not price)."""
    if cost is None:
        return "cost unknown"
    whole, _, cents = f"{cost:,.6f}".rstrip("0").partition(".")
    return f"${whole}.{cents.ljust(2, '0')}"


def steps_text(count: int) -> str:
    """`1 step`, `2 steps`."""
    return f"{count} step" if count == 1 else f"{count} steps"


def pending_lines(pending: tuple[PendingCall, ...]) -> list[Line]:
    """One line per held call: what waits, why, and its call id."""
    return [
        Line(
            Kind.NOTE,
            f"held: {held.tool}({shown_arguments(held.arguments)}) — {held.reason}"
            f" [{held.kind.value}, call {held.call_id}]",
        )
        for held in pending
    ]


def last_text(messages: tuple[Message, ...]) -> str:
    """The text the model last wrote in `messages` ("" when it wrote none)."""
    for message in reversed(messages):
        if isinstance(message, AssistantMessage) and message.text.strip():
            return message.text.strip()
    return ""


def answer_line(reason: StopReason, output: object, messages: tuple[Message, ...]) -> Line:
    """The answer a run ended with; without one (an interrupt, a pause, a failure) the text the
    model last wrote, marked partial, or that the run kept none (never `None`)."""
    if output is not None:
        return Line(Kind.ANSWER, f"answer ({reason.value}): {output}", multiline=True)
    said = last_text(messages)
    if said:
        return Line(Kind.ANSWER, f"answer ({reason.value}), partial: {said}", multiline=True)
    return Line(Kind.ANSWER, f"answer ({reason.value}): none (the run kept no text)")


def error_line(text: str) -> Line:
    """An error's line; its message may span lines."""
    return Line(Kind.ERROR, text, multiline=True)


def result_lines(result: RunResult, seconds: float) -> list[Line]:
    """The end of a run: its answer (or error), then steps, tokens, cost and time."""
    lines = [answer_line(result.stop_reason, result.output, result.messages)]
    if result.error is not None:
        lines.append(error_line(f"error [{result.error.code.value}]: {result.error.message}"))
    if result.stop_reason is StopReason.AWAITING_APPROVAL:
        lines.append(
            Line(Kind.NOTE, f"paused: reactloop runs resume {result.run_id} (same --store)")
        )
    lines.append(
        Line(
            Kind.USAGE,
            f"{steps_text(len(result.steps))}, {usage_text(result.usage)},"
            f" {cost_text(result.usage.cost)}, {seconds:.2f} s",
        )
    )
    return lines


@define
class Narrator:
    """Turns a run's events into lines; collects streamed text into one `model:` line and
    streamed reasoning into one `thinking:` line (each ends when the other starts)."""

    clock: Callable[[], float]
    started: float = 0.0
    text: list[str] = field(factory=list)
    thought: list[str] = field(factory=list)
    thought_streamed: bool = False  # in this step: else its response's reasoning ends it
    activity: str = "starting"
    subruns: dict[tuple[str, ...], Narrator] = field(factory=dict)  # by agent call path
    note: str = ""  # said before the activity in the status line ("interrupting", ...)

    @property
    def status(self) -> str:
        """The live view's status line: the note, then what the run is doing."""
        return f"{self.note}{self.activity}"

    def watch(self, event: Event) -> list[Line]:
        """`lines(event)`, keeping `activity` (what the run is doing now) up to date."""
        if isinstance(event, NestedEvent):
            return self._nested(event)
        so_far = self.thought if isinstance(event, ReasoningStreamed) else self.text
        self.activity = _activity(event, self.activity, "".join(so_far))
        return self.lines(event)

    def _nested(self, nested: NestedEvent) -> list[Line]:
        """A sub-run's event (an agent tool's run): its own narrator's lines, indented and
        named by the agent tools on its path; the status says which agent works."""
        key = tuple(link.call_id for link in nested.path)
        inner = self.subruns.setdefault(key, Narrator(self.clock))
        lines = inner.watch(nested.event)
        names = " > ".join(link.tool for link in nested.path)
        self.activity = f"agent {names}: {inner.activity}"
        indent = "  " * nested.depth
        return [evolve(line, text=f"{indent}[{names}] {line.text}") for line in lines]

    def lines(self, event: Event) -> list[Line]:
        """The lines `event` adds (streamed text and reasoning wait for the next event that is
        not more of the same)."""
        if isinstance(event, TextStreamed):
            lines = self._flush_thought()
            self.text.append(event.text)
            return lines
        if isinstance(event, ReasoningStreamed):
            lines = self._flush_text()
            self.thought.append(event.text)
            self.thought_streamed = True
            return lines
        return self.flush() + self._describe(event)

    def flush(self) -> list[Line]:
        """The reasoning and text streamed so far, one line each (none when there is none)."""
        return self._flush_thought() + self._flush_text()

    def _flush_text(self) -> list[Line]:
        said = "".join(self.text).strip()
        self.text.clear()
        return [Line(Kind.MODEL, f"model: {shorten(said)}")] if said else []

    def _flush_thought(self) -> list[Line]:
        thought = "".join(self.thought).strip()
        self.thought.clear()
        shown = f"thinking: {shorten(thought, THOUGHT_CHARS)}"
        return [Line(Kind.THINKING, shown)] if thought else []

    def _unstreamed(self, step: Step) -> list[Line]:
        """The reasoning of a step's response when none streamed (redacted or encrypted parts
        stream nothing; a model that does not stream reasoning), as one line."""
        streamed, self.thought_streamed = self.thought_streamed, False
        parts = () if step.response is None else step.response.message.reasoning
        return [] if streamed or not parts else [Line(Kind.THINKING, reasoning_text(parts))]

    def _describe(self, event: Event) -> list[Line]:
        match event:
            case RunStarted(run_id=run_id, input=text):
                self.started = self.clock()
                return [Line(Kind.RUN, f"run {run_id}: {shorten(text)}")]
            case StepStarted(index=index):
                self.thought_streamed = False
                return [Line(Kind.STEP, f"step {index}")]
            case ToolCallStarted(call=call):
                return [Line(Kind.CALL, f"call {call_text(call)}")]
            case ToolCallFinished(result=result):
                kind, mark = (Kind.ERROR, "failed") if result.is_error else (Kind.OK, "done")
                took = f"{result.duration * 1e3:.0f} ms"
                shown = shorten(result_text(result))
                return [Line(kind, f"{mark} {result.name} ({took}) -> {shown}")]
            case StepFinished(step=step):
                took = f"step {step.index} took {step.duration:.2f} s, {usage_text(step.usage)}"
                return [*self._unstreamed(step), Line(Kind.USAGE, took)]
            case _:
                return self._other(event)

    def _other(self, event: Event) -> list[Line]:
        match event:
            case ModelRetrying(attempt=attempt, code=code, delay=delay):
                retry = f"model call {attempt} failed ({code.value}), retry in {delay:.1f} s"
                return [Line(Kind.NOTE, retry)]
            case ModelSwitched(from_model=failed, to_model=next_model, error=error):
                switch = f"model {failed} failed ({error.code.value}), switching to {next_model}"
                return [Line(Kind.NOTE, switch)]
            case HookFailed(hook=hook, point=point, error=error):
                return [error_line(f"hook {hook} failed at {point}: {error}")]
            case RunPaused(pending=pending):
                return pending_lines(pending)
            case RunFailed(error=error):
                return [error_line(f"run failed [{error.code.value}]: {error.message}")]
            case RunFinished(result=result):
                return result_lines(result, self.clock() - self.started)
            case PhaseFinished():
                return []
            case _:
                return []


def _activity(event: Event, before: str, said: str) -> str:
    """What the run is doing once `event` happened (the live view's status line)."""
    match event:
        case StepStarted(index=index):
            return f"step {index}: waiting for the model"
        case TextStreamed(text=text):
            return f"model writing: {shorten(said + text, 60)}"
        case ReasoningStreamed(text=text):
            return f"model thinking: {shorten(said + text, 60)}"
        case ToolCallStarted(call=call):
            return f"running {call.name}"
        case ToolCallFinished() | StepFinished():
            return "between steps"
        case RunPaused() | RunFinished() | RunFailed():
            return "ended"
        case _:
            return before
