"""Strict loopback fakes of the model APIs: they script model turns that carry reasoning with
opaque values (as the vendors issue them) and refuse, with the vendor's own error shape and status,
a request that does not send them back as the vendor documents. A regression in replaying
reasoning then fails a test the way it fails in production.

Each fake answers a `WireServer` (`server.handler = fake.handle`), plain JSON or an SSE stream in
the vendor's format (`stream: true`), and keeps `rejections` (what it refused, as the vendor's
message). The rules, as the vendors document them:

- Anthropic (`StrictAnthropic`; platform.claude.com, extended thinking, "Preserving thinking
  blocks"): with thinking enabled, the assistant turn that holds a `tool_use` of the current tool
  loop must send back that response's `thinking` / `redacted_thinking` blocks first, unchanged, in
  their order (a thinking block's `signature` must verify against its text: here an HMAC); the last
  assistant turn of a tool loop must start with a thinking block. Any thinking block sent must
  verify, wherever it is. With thinking on, `tool_choice` may not force a tool (`any`, `tool`).
- DeepSeek (`StrictChat("deepseek")`; api-docs.deepseek.com, thinking mode, tool calls): "for turns
  that do perform tool calls, the reasoning_content must be fully passed back to the API in all
  subsequent requests", else a 400.
- Gemini over its OpenAI-compatible endpoint (`StrictChat("gemini")`; ai.google.dev, thought
  signatures): every function call of the current turn issued with a thought signature carries it
  back verbatim (`tool_calls[i].extra_content.google.thought_signature`), else a 400.
- OpenAI Responses (`StrictResponses`, in tests/helpers/strict_responses.py).
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import itertools
from collections.abc import Iterable, Iterator, Sequence
from typing import Any, Literal

import orjson
from attrs import define, field, frozen

from tests.providers.wire_server import Reply, Request, json_reply, sse_reply

JsonObject = dict[str, Any]
SECRET = b"strict-vendor-fake"
THINKING_DOCS = "https://docs.claude.com/en/docs/build-with-claude/extended-thinking"


@frozen
class Step:
    """One scripted model turn: its reasoning (thinking text, reasoning_content, or a reasoning
    summary), whether Anthropic adds a redacted thinking block, its text, its tool calls."""

    reasoning: str = ""
    text: str = ""
    calls: tuple[tuple[str, JsonObject], ...] = ()
    redacted: bool = False


def sign(*parts: str) -> str:
    """An opaque signature over `parts` that only this fake can make (HMAC-SHA256, base64)."""
    digest = hmac.new(SECRET, "\x00".join(parts).encode(), hashlib.sha256).digest()
    return base64.b64encode(digest).decode()


def seal(payload: str) -> str:
    """Opaque data carrying `payload` and its HMAC (redacted thinking, encrypted content)."""
    return base64.b64encode(f"{payload}\x00{sign(payload)}".encode()).decode()


def unsealed(data: object) -> str | None:
    """The payload of data made by `seal`, or None when it was not made here or was changed."""
    if not isinstance(data, str):
        return None
    try:
        payload, _, tag = base64.b64decode(data, validate=True).decode().partition("\x00")
    except ValueError:
        return None
    return payload if hmac.compare_digest(tag, sign(payload)) else None


def sse(event: str | None, data: object) -> bytes:
    """One SSE event (`event:` line when named), data as compact JSON (or raw text)."""
    raw = data if isinstance(data, str) else orjson.dumps(data).decode()
    head = f"event: {event}\n" if event else ""
    return f"{head}data: {raw}\n\n".encode()


class Violation(Exception):
    """A documented rule the request broke: the vendor's message, and its `param` (OpenAI)."""

    def __init__(self, message: str, param: str | None = None, code: str | None = None) -> None:
        super().__init__(message)
        self.message, self.param, self.code = message, param, code


@define
class StrictFake:
    """What the three fakes share: the script, the counter of ids, what was refused."""

    steps: Sequence[Step]
    model: str = field(default="model", kw_only=True)
    rejections: list[str] = field(factory=list, kw_only=True)
    answered: int = field(default=0, kw_only=True)
    _ids: Iterator[int] = field(factory=lambda: itertools.count(1), kw_only=True)
    piece: int | None = field(default=None, kw_only=True)
    """Cut a stream into pieces of this many bytes (an event, a line, a UTF-8 character cut
    anywhere), else one piece per event."""

    def next_id(self, prefix: str) -> str:
        return f"{prefix}{next(self._ids):04d}"

    def step(self, index: int) -> Step:
        """The scripted turn after `index` answers of the current tool loop (the script starts
        over at each user message; its last turn repeats)."""
        return self.steps[min(index, len(self.steps) - 1)]

    def handle(self, request: Request) -> Reply:
        """Check the request against the rules; answer the vendor's error, or the next turn."""
        body = request.json()
        try:
            self.check(body)
        except Violation as violation:
            self.rejections.append(violation.message)
            return self.error(violation)
        self.answered += 1
        return self.answer(body)

    def stream(self, events: Iterable[bytes]) -> Reply:
        """A 200 SSE reply of these events, in pieces as `piece` says."""
        chunks = list(events)
        if self.piece is not None:
            data = b"".join(chunks)
            chunks = [data[at : at + self.piece] for at in range(0, len(data), self.piece)]
        return sse_reply(chunks)

    def check(self, body: JsonObject) -> None:
        raise NotImplementedError

    def answer(self, body: JsonObject) -> Reply:
        raise NotImplementedError

    def error(self, violation: Violation) -> Reply:
        """OpenAI's shape (Anthropic and Gemini override it)."""
        detail = {
            "message": violation.message,
            "type": "invalid_request_error",
            "param": violation.param,
            "code": violation.code,
        }
        return json_reply({"error": detail}, 400)


# --- Anthropic -------------------------------------------------------------------------------


def _thinking_on(body: JsonObject) -> bool:
    thinking = body.get("thinking")
    return isinstance(thinking, dict) and thinking.get("type") in ("enabled", "adaptive")


def _loop_start(messages: list[JsonObject]) -> int:
    """The index after the last user turn that is not only tool results: the current tool loop
    (the turn the model is still working on) is what follows it."""
    for index in range(len(messages) - 1, -1, -1):
        turn = messages[index]
        content = turn["content"]
        blocks = content if isinstance(content, list) else [{"type": "text"}]
        if turn["role"] == "user" and any(b.get("type") != "tool_result" for b in blocks):
            return index + 1
    return 0


def _blocks(turn: JsonObject) -> list[JsonObject]:
    content = turn["content"]
    return content if isinstance(content, list) else [{"type": "text", "text": content}]


@define
class StrictAnthropic(StrictFake):
    """The Messages API (`/v1/messages`) with extended thinking; see the module doc."""

    model: str = field(default="claude-sonnet-4-5", kw_only=True)
    issued: dict[str, list[JsonObject]] = field(factory=dict, kw_only=True)
    """By tool_use id: the thinking / redacted_thinking blocks of the response that issued it."""

    def error(self, violation: Violation) -> Reply:
        detail = {"type": "invalid_request_error", "message": violation.message}
        return json_reply({"type": "error", "error": detail}, 400)

    def check(self, body: JsonObject) -> None:
        messages = body["messages"]
        for number, turn in enumerate(messages):
            if turn["role"] == "assistant":
                _check_signatures(number, _blocks(turn))
        if not _thinking_on(body):
            return
        if (body.get("tool_choice") or {}).get("type") in ("any", "tool"):
            raise Violation("Thinking may not be enabled when tool_choice forces tool use.")
        start = _loop_start(messages)
        for number in range(start, len(messages)):
            if messages[number]["role"] == "assistant":
                self._check_replayed(number, _blocks(messages[number]))
        assistants = [n for n in range(start, len(messages)) if messages[n]["role"] == "assistant"]
        if assistants and messages[-1]["role"] == "user":
            last = assistants[-1]
            first = _blocks(messages[last])[0].get("type")
            if first not in ("thinking", "redacted_thinking"):
                raise Violation(
                    f"messages.{last}.content.0.type: Expected `thinking` or `redacted_thinking`,"
                    f" but found `{first}`. When `thinking` is enabled, a final `assistant` message"
                    " must start with a thinking block (preceeding the lastmost set of `tool_use`"
                    " and `tool_result` blocks). We recommend you include thinking blocks from"
                    " previous turns. To avoid this requirement, disable `thinking`. Please consult"
                    f" our documentation at {THINKING_DOCS}"
                )

    def _check_replayed(self, number: int, blocks: list[JsonObject]) -> None:
        """The turn that holds a tool_use issued with thinking starts with those blocks."""
        for block in blocks:
            wanted = (
                self.issued.get(block.get("id", "")) if block.get("type") == "tool_use" else None
            )
            if wanted and blocks[: len(wanted)] != wanted:
                kinds = [b.get("type") for b in blocks]
                raise Violation(
                    f"messages.{number}.content: the assistant turn holding tool_use"
                    f" `{block['id']}` must begin with the {len(wanted)} thinking block(s) of the"
                    f" response that issued it, unmodified and in order; got {kinds}. Thinking"
                    f" blocks must be passed back unmodified ({THINKING_DOCS})"
                )

    def issue(self, step: Step, thinking: bool) -> tuple[list[JsonObject], str]:
        """The content blocks of the next response, and its stop reason."""
        reasoning: list[JsonObject] = []
        if thinking and step.reasoning:
            reasoning.append(
                {"type": "thinking", "thinking": step.reasoning, "signature": sign(step.reasoning)}
            )
        if thinking and step.redacted:
            reasoning.append({"type": "redacted_thinking", "data": seal(self.next_id("redacted-"))})
        blocks = [*reasoning]
        if step.text:
            blocks.append({"type": "text", "text": step.text})
        for name, arguments in step.calls:
            call_id = self.next_id("toolu_")
            self.issued[call_id] = reasoning
            blocks.append({"type": "tool_use", "id": call_id, "name": name, "input": arguments})
        return blocks, "tool_use" if step.calls else "end_turn"

    def answer(self, body: JsonObject) -> Reply:
        loop = body["messages"][_loop_start(body["messages"]) :]
        done = sum(turn["role"] == "assistant" for turn in loop)
        blocks, stop = self.issue(self.step(done), _thinking_on(body))
        message = {
            "id": self.next_id("msg_"),
            "type": "message",
            "role": "assistant",
            "model": self.model,
            "content": blocks,
            "stop_reason": stop,
            "stop_sequence": None,
            "usage": {"input_tokens": 12, "output_tokens": 7},
        }
        if body.get("stream") is True:
            return self.stream(_anthropic_events(message))
        return json_reply(message)


def _check_signatures(number: int, blocks: list[JsonObject]) -> None:
    for index, block in enumerate(blocks):
        kind = block.get("type")
        if kind == "thinking" and block.get("signature") != sign(str(block.get("thinking"))):
            raise Violation(
                f"messages.{number}.content.{index}: Invalid `signature` in `thinking` block"
            )
        if kind == "redacted_thinking" and unsealed(block.get("data")) is None:
            raise Violation(
                f"messages.{number}.content.{index}: Invalid `data` in `redacted_thinking` block"
            )


def _block_events(index: int, block: JsonObject) -> Iterator[bytes]:
    kind = block["type"]
    start = {
        "thinking": {"type": "thinking", "thinking": "", "signature": ""},
        "text": {"type": "text", "text": ""},
        "tool_use": {**block, "input": {}},
        "redacted_thinking": block,
    }[kind]
    yield sse(
        "content_block_start",
        {"type": "content_block_start", "index": index, "content_block": start},
    )
    deltas: list[JsonObject] = []
    if kind == "thinking":
        half = len(block["thinking"]) // 2
        deltas += [{"type": "thinking_delta", "thinking": block["thinking"][:half]}]
        deltas += [{"type": "thinking_delta", "thinking": block["thinking"][half:]}]
        deltas += [{"type": "signature_delta", "signature": block["signature"]}]
    elif kind == "text":
        deltas += [{"type": "text_delta", "text": block["text"]}]
    elif kind == "tool_use":
        raw = orjson.dumps(block["input"]).decode()
        deltas += [{"type": "input_json_delta", "partial_json": raw[:3]}]
        deltas += [{"type": "input_json_delta", "partial_json": raw[3:]}]
    for delta in deltas:
        yield sse(
            "content_block_delta", {"type": "content_block_delta", "index": index, "delta": delta}
        )
    yield sse("content_block_stop", {"type": "content_block_stop", "index": index})


def _anthropic_events(message: JsonObject) -> Iterator[bytes]:
    start = {
        **message,
        "content": [],
        "stop_reason": None,
        "usage": {"input_tokens": 12, "output_tokens": 1},
    }
    yield sse("message_start", {"type": "message_start", "message": start})
    for index, block in enumerate(message["content"]):
        yield from _block_events(index, block)
    delta = {"stop_reason": message["stop_reason"], "stop_sequence": None}
    yield sse(
        "message_delta", {"type": "message_delta", "delta": delta, "usage": {"output_tokens": 7}}
    )
    yield sse("message_stop", {"type": "message_stop"})


# --- Chat Completions: DeepSeek and Gemini ---------------------------------------------------

ChatVendor = Literal["deepseek", "gemini"]


@define
class StrictChat(StrictFake):
    """A Chat Completions server (`/chat/completions`) of DeepSeek or Gemini; see the module doc."""

    vendor: ChatVendor = field(default="deepseek", kw_only=True)
    reasoning: dict[str, str] = field(factory=dict, kw_only=True)
    """DeepSeek: by tool call id, the reasoning_content of the message that issued it."""
    signatures: dict[str, str] = field(factory=dict, kw_only=True)
    """Gemini: by tool call id, the thought signature it was issued with."""

    def error(self, violation: Violation) -> Reply:
        if self.vendor == "deepseek":
            return super().error(violation)
        detail = {"code": 400, "message": violation.message, "status": "INVALID_ARGUMENT"}
        return json_reply([{"error": detail}], 400)

    def check(self, body: JsonObject) -> None:
        messages = body["messages"]
        last_user = max((n for n, m in enumerate(messages) if m["role"] == "user"), default=-1)
        for number, message in enumerate(messages):
            if message["role"] != "assistant":
                continue
            for position, call in enumerate(message.get("tool_calls") or []):
                if self.vendor == "deepseek":
                    self._check_reasoning(number, message, call)
                elif number > last_user:
                    self._check_signature(number, position, call)

    def _check_reasoning(self, number: int, message: JsonObject, call: JsonObject) -> None:
        wanted = self.reasoning.get(call.get("id", ""))
        if wanted is not None and message.get("reasoning_content") != wanted:
            raise Violation(
                "The reasoning_content in the thinking mode must be passed back to the API.",
                f"messages[{number}].reasoning_content",
                "invalid_request_error",
            )

    def _check_signature(self, number: int, position: int, call: JsonObject) -> None:
        """A call of the current turn: the signature it was issued with, verbatim; a signature
        this server never issued for it is corrupted."""
        wanted = self.signatures.get(call.get("id", ""))
        extra = call.get("extra_content")
        google = extra.get("google") if isinstance(extra, dict) else None
        sent = google.get("thought_signature") if isinstance(google, dict) else None
        if wanted is None and sent is None:
            return
        name = call.get("function", {}).get("name")
        if sent is None:
            raise Violation(
                f"Unable to submit request because function call `default_api:{name}` in the"
                f" {number + 1}. content block is missing a thought_signature. Learn more:"
                " https://ai.google.dev/gemini-api/docs/thought-signatures"
            )
        if sent != wanted:
            raise Violation(
                f"Corrupted thought signature (messages[{number}].tool_calls[{position}])."
            )

    def issue(self, step: Step) -> JsonObject:
        """The assistant message of the next response."""
        message: JsonObject = {"role": "assistant", "content": step.text or None}
        if self.vendor == "deepseek" and step.reasoning:
            message["reasoning_content"] = step.reasoning
        calls = []
        for position, (name, arguments) in enumerate(step.calls):
            call_id = self.next_id("call_")
            function = {"name": name, "arguments": orjson.dumps(arguments).decode()}
            call: JsonObject = {"id": call_id, "type": "function", "function": function}
            if self.vendor == "deepseek" and step.reasoning:
                self.reasoning[call_id] = step.reasoning
            if self.vendor == "gemini" and position == 0:  # Gemini signs a step's first call
                signature = sign(call_id, name, function["arguments"])
                self.signatures[call_id] = signature
                call["extra_content"] = {"google": {"thought_signature": signature}}
            calls.append(call)
        if calls:
            message["tool_calls"] = calls
        return message

    def answer(self, body: JsonObject) -> Reply:
        messages = body["messages"]
        start = max((n for n, m in enumerate(messages) if m["role"] == "user"), default=-1)
        done = sum(message["role"] == "assistant" for message in messages[start + 1 :])
        message = self.issue(self.step(done))
        finish = "tool_calls" if message.get("tool_calls") else "stop"
        usage = {"prompt_tokens": 12, "completion_tokens": 7, "total_tokens": 19}
        head = {"id": self.next_id("chatcmpl-"), "created": 1, "model": self.model}
        if body.get("stream") is True:
            return self.stream(_chat_events(head, message, finish, usage))
        choice = {"index": 0, "message": message, "finish_reason": finish}
        return json_reply(
            {**head, "object": "chat.completion", "choices": [choice], "usage": usage}
        )


def _chat_deltas(message: JsonObject) -> Iterator[JsonObject]:
    reasoning = message.get("reasoning_content")
    if reasoning:
        half = len(reasoning) // 2
        yield {"role": "assistant", "content": None, "reasoning_content": reasoning[:half]}
        yield {"reasoning_content": reasoning[half:]}
    if message.get("content"):
        yield {"role": "assistant", "content": message["content"]}
    for index, call in enumerate(message.get("tool_calls", [])):
        first = {**call, "index": index, "function": {**call["function"], "arguments": ""}}
        yield {"tool_calls": [first]}
        yield {
            "tool_calls": [
                {"index": index, "function": {"arguments": call["function"]["arguments"]}}
            ]
        }


def _chat_events(
    head: JsonObject, message: JsonObject, finish: str, usage: JsonObject
) -> Iterator[bytes]:
    chunk = {**head, "object": "chat.completion.chunk"}
    for delta in _chat_deltas(message):
        yield sse(None, {**chunk, "choices": [{"index": 0, "delta": delta, "finish_reason": None}]})
    yield sse(None, {**chunk, "choices": [{"index": 0, "delta": {}, "finish_reason": finish}]})
    yield sse(None, {**chunk, "choices": [], "usage": usage})
    yield sse(None, "[DONE]")
