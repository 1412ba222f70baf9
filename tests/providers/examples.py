"""Neutral requests covering what a provider must spell: history, tools, choices, settings."""

from __future__ import annotations

from reactloop._core._messages import (
    AssistantMessage,
    ForcedTool,
    ModelRequest,
    SystemMessage,
    ToolCall,
    ToolChoice,
    ToolMessage,
    ToolSpec,
    UserMessage,
)
from reactloop._core._settings import ModelSettings, ResponseFormat, ResponseFormatKind

WEATHER = ToolSpec(
    "get_weather",
    "Weather for a city.",
    {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
)
CLOCK = ToolSpec("get_time", "The time now.", {"type": "object", "properties": {}})
PARIS = ToolCall("get_weather", '{"city": "Paris"}', "call_a")
ROME = ToolCall("get_weather", '{"city": "Rome"}', "call_b")
HISTORY = (
    SystemMessage("Be brief."),
    UserMessage("Weather in Paris and Rome?"),
    AssistantMessage("Checking both.", (PARIS, ROME)),
    ToolMessage("call_a", "get_weather", "18 C"),
    ToolMessage("call_b", "get_weather", "tool failed: timeout", is_error=True),
    AssistantMessage("", (ToolCall("get_time", "{}", "call_c"),)),
    ToolMessage("call_c", "get_time", "12:00"),
    AssistantMessage("Paris 18 C; Rome unknown."),
    UserMessage("Thanks. And tomorrow?"),
)
SCHEMA = {
    "type": "object",
    "properties": {"answer": {"type": "string"}},
    "required": ["answer"],
    "additionalProperties": False,
}

REQUESTS = {
    "plain": ModelRequest((UserMessage("hi"),)),
    "instructions": ModelRequest((UserMessage("hi"),), instructions="You are terse."),
    "tools_auto": ModelRequest(HISTORY, "Use tools.", (WEATHER, CLOCK)),
    "tools_required": ModelRequest(HISTORY, None, (WEATHER,), ToolChoice.REQUIRED),
    "tools_forced": ModelRequest(HISTORY, None, (WEATHER,), ForcedTool("get_weather")),
    "tools_serial": ModelRequest(
        HISTORY, None, (WEATHER, CLOCK), settings=ModelSettings(parallel_tool_calls=False)
    ),
    "final_without_tools": ModelRequest(HISTORY, "Answer now.", (), ToolChoice.NONE),
    "refusal_in_history": ModelRequest(
        (UserMessage("do harm"), AssistantMessage(refusal="I can't."), UserMessage("ok, hi"))
    ),
    "system_mid_history": ModelRequest(
        (
            UserMessage("hi"),
            AssistantMessage("Hello."),
            UserMessage("What now?"),
            SystemMessage("From now on, answer in French."),
        ),
        instructions="Be brief.",
    ),
    "empty_tool_result": ModelRequest(
        (
            UserMessage("Clear the cache."),
            AssistantMessage("", (ToolCall("clear_cache", "{}", "call_x"),)),
            ToolMessage("call_x", "clear_cache", ""),
        )
    ),
    "json_object": ModelRequest(
        (UserMessage("hi"),),
        settings=ModelSettings(response_format=ResponseFormat(ResponseFormatKind.JSON_OBJECT)),
    ),
    "json_schema": ModelRequest(
        (UserMessage("hi"),),
        settings=ModelSettings(
            temperature=0.2,
            max_output_tokens=256,
            response_format=ResponseFormat(ResponseFormatKind.JSON_SCHEMA, "answer", SCHEMA),
        ),
    ),
    "text_format": ModelRequest(
        (UserMessage("hi"),),
        settings=ModelSettings(response_format=ResponseFormat(ResponseFormatKind.TEXT)),
    ),
}
