"""Checks that a request body follows its protocol.

OpenAI: validated against `CreateChatCompletionRequest` of the published OpenAPI description (the
subset kept in tests/fixtures/openai), with every top-level key a known property (the schema itself
allows unknown ones), plus the rule the schema states only in prose: an assistant message needs
content unless it has tool calls.
Anthropic: no machine-readable schema is at hand, so the Messages rules are asserted by hand
(including the documented ones of newer models: mid-conversation system turns, no sampling).
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any

import orjson
from jsonschema import Draft202012Validator
from referencing import Registry, Resource
from referencing.jsonschema import DRAFT202012

JsonObject = dict[str, Any]
ROOT = "urn:openai-openapi"


@functools.cache
def _document(path: Path) -> JsonObject:
    loaded = orjson.loads(path.read_bytes())
    assert isinstance(loaded, dict)
    return loaded


def _properties(schemas: JsonObject, schema: JsonObject) -> set[str]:
    names = set(schema.get("properties", {}))
    for part in schema.get("allOf", []):
        target = schemas[part["$ref"].rsplit("/", 1)[-1]] if "$ref" in part else part
        names |= _properties(schemas, target)
    return names


class OpenAIRequestSchema:
    """`CreateChatCompletionRequest`, refs resolved through a registry over the subset document."""

    def __init__(self, path: Path) -> None:
        document = _document(path)
        resource = Resource.from_contents(document, default_specification=DRAFT202012)
        registry: Registry[Any] = Registry().with_resource(ROOT, resource)
        schema = {"$ref": f"{ROOT}#/components/schemas/CreateChatCompletionRequest"}
        self.validator = Draft202012Validator(schema, registry=registry)
        schemas = document["components"]["schemas"]
        self.known = _properties(schemas, schemas["CreateChatCompletionRequest"])

    def check(self, body: JsonObject) -> None:
        """Raise `jsonschema.ValidationError` (or AssertionError) when the body is off-protocol."""
        self.validator.validate(body)
        unknown = set(body) - self.known
        assert not unknown, f"keys unknown to CreateChatCompletionRequest: {unknown}"
        for number, message in enumerate(body["messages"]):
            if message["role"] == "assistant" and not message.get("tool_calls"):
                content = message.get("content")
                assert content, f"assistant message {number} has neither content nor tool calls"


BLOCK_FIELDS = {
    "text": {"type", "text"},
    "tool_use": {"type", "id", "name", "input"},
    "tool_result": {"type", "tool_use_id", "content", "is_error"},
}
TOP_LEVEL = {"model", "max_tokens", "messages", "system", "tools", "tool_choice", "temperature",
             "top_p", "stop_sequences", "service_tier",
             "stream", "output_config"}  # fmt: skip
SAMPLING = {"temperature", "top_p", "top_k"}
SYSTEM_TURN_MODELS = ("claude-opus-4-8",)  # Anthropic: mid-conversation system messages
NO_SAMPLING_MODELS = ("claude-opus-4-7", "claude-opus-4-8")  # Anthropic: sampling removed


def _check_block(block: JsonObject) -> None:
    kind = block["type"]
    assert kind in BLOCK_FIELDS, f"unknown block type {kind!r}"
    assert set(block) <= BLOCK_FIELDS[kind], f"unexpected fields in {block}"
    if kind == "text":
        assert isinstance(block["text"], str)
        assert block["text"].strip(), "empty text block"
    elif kind == "tool_use":
        assert isinstance(block["input"], dict), "tool_use input must be an object"
        assert block["id"]
        assert block["name"]
    elif kind == "tool_result":
        assert isinstance(block["content"], str)
        assert block["content"].strip(), "empty tool_result content"


def _check_system_turn(messages: list[JsonObject], number: int, model: str) -> None:
    """Mid-conversation system turns: on models that take them, placed as Anthropic requires."""
    assert model.startswith(SYSTEM_TURN_MODELS), f"{model} takes no system turn in messages"
    assert number > 0, "a system turn cannot come first"
    assert messages[number - 1]["role"] == "user", "a system turn must follow a user turn"
    following = messages[number + 1]["role"] if number + 1 < len(messages) else "assistant"
    assert following == "assistant", "a system turn must be last or before an assistant turn"
    assert all(block["type"] == "text" for block in messages[number]["content"])


def _check_turns(messages: list[JsonObject], model: str) -> set[str]:
    """Roles alternate from `user` (system turns aside); each tool_result answers the previous
    turn's tool_use."""
    assert messages, "messages must not be empty"
    assert messages[0]["role"] == "user", "the first turn must be the user's"
    used: set[str] = set()
    previous: set[str] = set()
    number = 0
    for index, turn in enumerate(messages):
        blocks = turn["content"]
        assert isinstance(blocks, list)
        assert blocks, "a turn needs at least one block"
        for block in blocks:
            _check_block(block)
        if turn["role"] == "system":
            _check_system_turn(messages, index, model)
            continue
        assert turn["role"] == ("user" if number % 2 == 0 else "assistant"), "roles must alternate"
        number += 1
        results = [b["tool_use_id"] for b in blocks if b["type"] == "tool_result"]
        assert set(results) <= previous, "a tool_result must answer the previous turn's tool_use"
        kinds = [b["type"] for b in blocks]
        assert kinds == sorted(kinds, key=lambda k: k != "tool_result"), "tool_results go first"
        previous = {b["id"] for b in blocks if b["type"] == "tool_use"}
        used |= {b["name"] for b in blocks if b["type"] == "tool_use"}
    return used


def _check_tools(body: JsonObject, used: set[str]) -> None:
    tools = body.get("tools", [])
    for tool in tools:
        assert set(tool) == {"name", "description", "input_schema"}
        assert tool["input_schema"].get("type") == "object"
    if used:
        assert tools, "tool blocks in the history need tool definitions"
    choice = body.get("tool_choice")
    if choice is not None:
        assert tools, "tool_choice needs tools"
        assert choice["type"] in ("auto", "any", "tool", "none")
        assert (choice["type"] == "tool") == ("name" in choice)


def check_anthropic_request(body: JsonObject) -> None:
    """Assert the Messages request rules this library relies on."""
    assert set(body) <= TOP_LEVEL, f"unexpected keys {set(body) - TOP_LEVEL}"
    assert isinstance(body["model"], str)
    assert body["model"]
    assert isinstance(body["max_tokens"], int)
    assert body["max_tokens"] > 0
    assert isinstance(body.get("system", ""), str)
    if body["model"].startswith(NO_SAMPLING_MODELS):
        assert not SAMPLING & set(body), f"{body['model']} rejects sampling parameters"
    used = _check_turns(body["messages"], body["model"])
    _check_tools(body, used)


def check_anthropic_headers(headers: dict[str, str]) -> None:
    """The version header and the key header travel with every request."""
    assert headers["anthropic-version"] == "2023-06-01"
    assert headers["x-api-key"]
    assert headers["content-type"] == "application/json"
    assert "authorization" not in headers
