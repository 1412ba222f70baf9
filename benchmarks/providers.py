"""`python -m benchmarks.providers`: what each provider's codec costs per model call.

For every provider, the request body of one step of a tool loop (instructions, `--messages`
messages of which every other one a tool call and its result, five tools) is encoded, and an answer
of that provider's wire format (some text and one tool call, with usage) is decoded. No socket: the
figures are the codec's own cost, what a provider adds to each step beside the network. Each figure
is the median of `--repeats` samples (each the mean of `--inner` calls), in microseconds, with the
first and third quartiles.

A host preset on `OpenAIModel` (`openai+groq`) and the Azure classes share the Chat Completions
codec: their rows show that a preset costs nothing per request.
"""

from __future__ import annotations

import argparse
import importlib
import statistics
import time
from collections.abc import Callable, Sequence
from typing import Any

import orjson

from reactloop import AssistantMessage, ToolCall, UserMessage, providers
from reactloop._providers import _anthropic_stream, _openai, _responses
from reactloop.messages import Message, ToolMessage
from reactloop.models import ModelRequest, ToolSpec

KEY = "bench-key"
URL = "http://127.0.0.1:9"
Codec = Callable[[], object]


def history(messages: int) -> tuple[Message, ...]:
    """A user turn, then tool calls and their results, alternating."""
    made: list[Message] = [UserMessage("Look up the five numbers and add them.")]
    for step in range((messages - 1) // 2):
        call = ToolCall("look", f'{{"n": {step}}}', f"call_{step}")
        made += [AssistantMessage("", (call,)), ToolMessage(call.id, "look", f"item {step}: 42")]
    return tuple(made)


def tools() -> tuple[ToolSpec, ...]:
    """Five tools with small object schemas."""
    schema = {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}
    return tuple(ToolSpec(f"tool_{i}", f"Tool number {i}.", schema) for i in range(5))


def request(messages: int) -> ModelRequest:
    """One step's request."""
    return ModelRequest(history(messages), "Be brief.", tools())


def _chat_answer() -> dict[str, Any]:
    call = {"id": "call_x", "type": "function", "function": {"name": "look", "arguments": "{}"}}
    message = {"role": "assistant", "content": "Looking.", "tool_calls": [call]}
    usage = {"prompt_tokens": 900, "completion_tokens": 20, "total_tokens": 920}
    choice = {"index": 0, "message": message, "finish_reason": "tool_calls"}
    return {
        "id": "c1",
        "object": "chat.completion",
        "model": "m",
        "choices": [choice],
        "usage": usage,
    }


def _anthropic_answer() -> dict[str, Any]:
    content = [
        {"type": "text", "text": "Looking."},
        {"type": "tool_use", "id": "toolu_1", "name": "look", "input": {}},
    ]
    usage = {"input_tokens": 900, "output_tokens": 20}
    return {"id": "msg_1", "type": "message", "role": "assistant", "model": "m",
            "content": content, "stop_reason": "tool_use", "usage": usage}  # fmt: skip


def _responses_answer() -> dict[str, Any]:
    text = {"type": "output_text", "text": "Looking.", "annotations": []}
    output = [
        {"type": "message", "id": "msg_1", "role": "assistant", "content": [text]},
        {"type": "function_call", "id": "fc_1", "call_id": "call_x", "name": "look",
         "arguments": "{}"},
    ]  # fmt: skip
    usage = {"input_tokens": 900, "output_tokens": 20, "total_tokens": 920}
    return {"id": "resp_1", "object": "response", "status": "completed", "model": "m",
            "output": output, "usage": usage}  # fmt: skip


def _gemini_answer() -> dict[str, Any]:
    parts = [{"text": "Looking."}, {"functionCall": {"name": "look", "args": {}}}]
    usage = {"promptTokenCount": 900, "candidatesTokenCount": 20, "totalTokenCount": 920}
    candidate = {"content": {"role": "model", "parts": parts}, "finishReason": "STOP", "index": 0}
    return {"candidates": [candidate], "usageMetadata": usage, "modelVersion": "m"}


def contenders(messages: int) -> dict[str, tuple[Codec, Codec]]:
    """Each provider's (encode, decode) of one step, for the providers this checkout has."""
    made: dict[str, tuple[Codec, Codec]] = {}
    step = request(messages)
    chat, anthropic, responses = _chat_answer(), _anthropic_answer(), _responses_answer()
    openai = providers.OpenAIModel("gpt-4.1", api_key=KEY, base_url=URL)
    made["openai"] = (
        lambda: openai._body(step, stream=False),
        lambda: _openai.decode_completion("openai", chat, "gpt-4.1"),
    )
    claude = providers.AnthropicModel("claude-sonnet-4-5", api_key=KEY, base_url=URL)
    made["anthropic"] = (
        lambda: claude._body(step, stream=False),
        lambda: _anthropic_stream.decode_message("anthropic", anthropic, "claude-sonnet-4-5"),
    )
    gpt5 = providers.OpenAIResponsesModel("gpt-5", api_key=KEY, base_url=URL)
    made["openai-responses"] = (
        lambda: gpt5._body(step, stream=False),
        lambda: _responses.decode_response("openai", "gpt-5", responses),
    )
    made.update(_newer(step, chat))
    return made


def _newer(step: ModelRequest, chat: dict[str, Any]) -> dict[str, tuple[Codec, Codec]]:
    """The providers of issue 27, where this checkout has them."""
    made: dict[str, tuple[Codec, Codec]] = {}
    if hasattr(providers, "GeminiModel"):
        decoder = importlib.import_module("reactloop._providers._gemini_decode")
        gemini = providers.GeminiModel("gemini-2.5-flash", api_key=KEY, base_url=URL)
        answer = _gemini_answer()
        made["gemini"] = (
            lambda: gemini._body(step, stream=False),
            lambda: decoder.decode_response("google", answer, "gemini-2.5-flash"),
        )
    for name, model in _chat_hosts().items():
        made[name] = (_encoder(model, step), lambda: _openai.decode_completion("openai", chat, "m"))
    return made


def _encoder(model: Any, step: ModelRequest) -> Codec:
    """A model's encoding of the step."""
    return lambda: model._body(step, stream=False)


def _chat_hosts() -> dict[str, Any]:
    """Chat Completions models aimed elsewhere: Azure and a host preset, where present."""
    found: dict[str, Any] = {}
    azure = getattr(providers, "AzureOpenAIModel", None)
    if azure is not None:
        found["azure"] = azure("gpt-4.1", endpoint="https://bench.openai.azure.com", api_key=KEY)
    if hasattr(providers, "OpenAICompatibleHost"):
        found["openai+groq"] = providers.OpenAIModel("gpt-4.1", api_key=KEY, host="groq")
    return found


def sample(codec: Codec, inner: int) -> float:
    """The mean seconds of `inner` calls."""
    started = time.perf_counter()
    for _ in range(inner):
        codec()
    return (time.perf_counter() - started) / inner


def measure(messages: int, repeats: int, inner: int) -> dict[str, dict[str, list[float]]]:
    """Quartiles of microseconds per encode and per decode, by provider."""
    figures: dict[str, dict[str, list[float]]] = {}
    for name, (encode, decode) in contenders(messages).items():
        encode(), decode()  # warm-up, and a failure shows before anything is timed
        figures[name] = {
            "encode": _quartiles([sample(encode, inner) * 1e6 for _ in range(repeats)]),
            "decode": _quartiles([sample(decode, inner) * 1e6 for _ in range(repeats)]),
        }
    return figures


def _quartiles(values: Sequence[float]) -> list[float]:
    first, median, third = statistics.quantiles(values, n=4, method="inclusive")
    return [first, median, third]


def parse(argv: Sequence[str] | None) -> argparse.Namespace:
    """The command line."""
    parser = argparse.ArgumentParser(prog="python -m benchmarks.providers", description=__doc__)
    parser.add_argument("--messages", type=int, default=21)
    parser.add_argument("--repeats", type=int, default=21)
    parser.add_argument("--inner", type=int, default=200)
    parser.add_argument("--json", action="store_true", help="one JSON object on one line")
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    """Measure and print a table (or JSON)."""
    args = parse(argv)
    figures = measure(args.messages, args.repeats, args.inner)
    if args.json:
        print(orjson.dumps({"messages": args.messages, "figures": figures}).decode())
        return 0
    print(f"per model call, {args.messages} messages, 5 tools (us: median [q1, q3])")
    for name, row in figures.items():
        cells = "  ".join(f"{kind} {q[1]:7.1f} [{q[0]:.1f}, {q[2]:.1f}]" for kind, q in row.items())
        print(f"  {name:<18} {cells}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
