"""The strict fake of OpenAI's Responses API (`/responses`); see tests/helpers/strict_vendor.py.

The rule (platform.openai.com, reasoning models, "Keeping reasoning items in context", stateless
use with `store: false` and `include: ["reasoning.encrypted_content"]`): a `function_call` item
(by its call_id) or a `message` sent back with its id, that followed a reasoning item in a
response, must be sent back with that reasoning item (same id, same `encrypted_content`) right
before it (only items of the same response between them);
otherwise the API answers 400 "Item 'fc_...' of type 'function_call' was provided without its
required 'reasoning' item: 'rs_...'.". Encrypted content that was changed does not verify.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import orjson
from attrs import define, field

from tests.helpers.strict_vendor import Step, StrictFake, Violation, seal, sse, unsealed
from tests.providers.wire_server import Reply, json_reply

JsonObject = dict[str, Any]


@define
class StrictResponses(StrictFake):
    """The Responses API with reasoning items; every request must be stateless (`store: false`)."""

    model: str = field(default="gpt-5", kw_only=True)
    reasoning_of: dict[str, JsonObject] = field(factory=dict, kw_only=True)
    """By call_id: the reasoning item (id, encrypted_content) that came before the call."""
    response_of: dict[str, str] = field(factory=dict, kw_only=True)
    """By item id or call_id: the response that issued the item."""

    def check(self, body: JsonObject) -> None:
        if body.get("store") is not False:
            raise Violation(
                "this fake serves stateless requests only: store must be false", "store"
            )
        items = body["input"] if isinstance(body["input"], list) else []
        for position, item in enumerate(items):
            sealed = item.get("encrypted_content")
            if (
                item.get("type") == "reasoning"
                and sealed is not None
                and unsealed(sealed) != item.get("id")
            ):
                raise Violation(
                    f"The encrypted content for item {item.get('id')} could not be verified.",
                    f"input[{position}].encrypted_content",
                    "invalid_encrypted_content",
                )
            if item.get("type") in ("function_call", "message"):
                self._check_paired(items, position)

    def _check_paired(self, items: list[JsonObject], position: int) -> None:
        """A call (by call_id) or a message sent with its id, that followed a reasoning item in
        its response, comes right after that reasoning item."""
        item = items[position]
        wanted = self.reasoning_of.get(_key(item))
        if wanted is None:
            return
        response = self.response_of[_key(item)]
        for before in reversed(items[:position]):
            if before.get("type") == "reasoning" and before.get("id") == wanted["id"]:
                if before.get("encrypted_content") == wanted["encrypted_content"]:
                    return
                break
            if self.response_of.get(_key(before)) != response:
                break
        name = item.get("id") or item.get("call_id")
        raise Violation(
            f"Item '{name}' of type '{item['type']}' was provided without its required"
            f" 'reasoning' item: '{wanted['id']}'.",
            "input",
        )

    def issue(self, step: Step, response: str, encrypted: bool) -> list[JsonObject]:
        """The output items of the next response."""
        output: list[JsonObject] = []
        reasoning: JsonObject | None = None
        if step.reasoning:
            item_id = self.next_id("rs_")
            summary = [{"type": "summary_text", "text": step.reasoning}]
            reasoning = {"type": "reasoning", "id": item_id, "summary": summary}
            reasoning["encrypted_content"] = seal(item_id) if encrypted else None
            output.append(reasoning)
        if step.text:
            text = {"type": "output_text", "text": step.text, "annotations": [], "logprobs": []}
            message_id = self.next_id("msg_")
            if reasoning is not None:
                self.reasoning_of[message_id] = reasoning
            output.append({"type": "message", "id": message_id, "status": "completed",
                           "role": "assistant", "content": [text]})  # fmt: skip
        for name, arguments in step.calls:
            call_id = self.next_id("call_")
            output.append({"type": "function_call", "id": self.next_id("fc_"), "call_id": call_id,
                           "name": name, "arguments": orjson.dumps(arguments).decode(),
                           "status": "completed"})  # fmt: skip
            if reasoning is not None:
                self.reasoning_of[call_id] = reasoning
        for item in output:
            self.response_of[_key(item)] = response
            if item["type"] == "function_call":
                self.response_of[item["id"]] = response
        return output

    def answer(self, body: JsonObject) -> Reply:
        items = body["input"] if isinstance(body["input"], list) else []
        users = [n for n, item in enumerate(items) if item.get("role") == "user"]
        loop = items[users[-1] + 1 :] if users else items
        done = len({self.response_of[k] for k in map(_key, loop) if k in self.response_of})
        response_id = self.next_id("resp_")
        encrypted = "reasoning.encrypted_content" in (body.get("include") or [])
        output = self.issue(self.step(done), response_id, encrypted)
        response = {
            "id": response_id,
            "object": "response",
            "created_at": 1,
            "status": "completed",
            "model": self.model,
            "output": output,
            "parallel_tool_calls": body.get("parallel_tool_calls", True),
            "tool_choice": body.get("tool_choice", "auto"),
            "tools": body.get("tools", []),
            "usage": {
                "input_tokens": 12,
                "input_tokens_details": {"cached_tokens": 0, "cache_write_tokens": 0},
                "output_tokens": 7,
                "output_tokens_details": {"reasoning_tokens": 3},
                "total_tokens": 19,
            },
        }
        if body.get("stream") is True:
            return self.stream(_events(response))
        return json_reply(response)


def _key(item: JsonObject) -> str:
    """How an input item names the output item it came from: a call's call_id, else its id."""
    key = item.get("call_id") if item.get("type") == "function_call" else item.get("id")
    return key if isinstance(key, str) else ""


def _item_events(index: int, item: JsonObject) -> Iterator[tuple[str, JsonObject]]:
    kind = item["type"]
    begun = {**item, "status": "in_progress"}
    if kind == "reasoning":
        begun = {**item, "summary": [], "encrypted_content": None}
    elif kind == "message":
        begun = {**item, "content": []}
    elif kind == "function_call":
        begun = {**item, "arguments": ""}
    yield "response.output_item.added", {"output_index": index, "item": begun}
    if kind == "reasoning":
        for line, part in enumerate(item["summary"]):
            where = {"item_id": item["id"], "output_index": index, "summary_index": line}
            yield "response.reasoning_summary_text.delta", {**where, "delta": part["text"]}
            yield "response.reasoning_summary_text.done", {**where, "text": part["text"]}
    elif kind == "message":
        text = item["content"][0]["text"]
        where = {"item_id": item["id"], "output_index": index, "content_index": 0}
        yield "response.output_text.delta", {**where, "delta": text[:4], "logprobs": []}
        yield "response.output_text.delta", {**where, "delta": text[4:], "logprobs": []}
        yield "response.output_text.done", {**where, "text": text, "logprobs": []}
    elif kind == "function_call":
        where = {"item_id": item["id"], "output_index": index}
        yield "response.function_call_arguments.delta", {**where, "delta": item["arguments"]}
        yield "response.function_call_arguments.done", {**where, "arguments": item["arguments"]}
    yield "response.output_item.done", {"output_index": index, "item": item}


def _events(response: JsonObject) -> Iterator[bytes]:
    begun = {**response, "status": "in_progress", "output": [], "usage": None}
    events = [("response.created", {"response": begun})]
    for index, item in enumerate(response["output"]):
        events += list(_item_events(index, item))
    events.append(("response.completed", {"response": response}))
    for number, (kind, data) in enumerate(events):
        yield sse(kind, {"type": kind, "sequence_number": number, **data})
