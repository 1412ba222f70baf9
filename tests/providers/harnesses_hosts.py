"""Conformance harnesses of the OpenAI-compatible host presets (`OpenAIModel(MODEL, host=...)`):
each host speaks Chat Completions (rendered by tests/providers/harnesses.py's `ChatHarness`) at
its own path, under the model ids it serves; a host's quirks are the preset's to absorb, so the
same scripted answers must decode the same everywhere. None of these hosts returns an opaque
reasoning value on Chat Completions (their reasoning is readable text), so `reasoning_sent_back`
is skipped for them."""

from __future__ import annotations

from tests.providers.harnesses import NO_REASONING, ChatHarness

HOSTS = {
    "openrouter": ChatHarness("openrouter", "openai/gpt-4o", "/api/v1", NO_REASONING,
                              host="openrouter"),
    "groq": ChatHarness("groq", "llama-3.3-70b-versatile", "/openai/v1", NO_REASONING,
                        host="groq"),
    "deepseek": ChatHarness("deepseek", "deepseek-chat", "", NO_REASONING, host="deepseek"),
    "ollama": ChatHarness("ollama", "llama3.2", "/v1", NO_REASONING, host="ollama"),
    "vllm": ChatHarness("vllm", "Qwen/Qwen3-8B", "/v1", NO_REASONING, host="vllm"),
}  # fmt: skip
"""A harness per preset, by the preset's name."""
