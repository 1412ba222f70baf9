"""Model strings of the OpenAI-compatible host presets, and where their URL and key come from: a
host's key only from its own variable (an OpenAI key never goes to another host)."""

from __future__ import annotations

import pytest

from reactloop._core._messages import ModelRequest, UserMessage
from reactloop._errors import ConfigurationError
from reactloop._providers import OpenAIModel, model_from_string
from reactloop._providers._hosts import MaxTokensField, OpenAICompatibleHost
from tests.providers.render import openai_json
from tests.providers.wire_server import WireServer, json_reply

OPENAI_KEY = "sk-openai-NEVER-ELSEWHERE-0123"
HOST_ENV = ("OPENROUTER_API_KEY", "GROQ_API_KEY", "DEEPSEEK_API_KEY", "CEREBRAS_API_KEY",
            "OLLAMA_API_KEY",
            "VLLM_API_KEY", "OLLAMA_BASE_URL", "OLLAMA_HOST", "OPENAI_BASE_URL")  # fmt: skip


@pytest.fixture(autouse=True)
def environment(monkeypatch: pytest.MonkeyPatch) -> None:
    """No host variable set, and an OpenAI key and URL that must not be used."""
    for name in HOST_ENV:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("OPENAI_API_KEY", OPENAI_KEY)
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/not-this")


@pytest.mark.parametrize(
    ("spec", "env", "url"),
    [
        ("openrouter:anthropic/claude-sonnet-4.5", "OPENROUTER_API_KEY",
         "https://openrouter.ai/api/v1"),
        ("groq:llama-3.3-70b-versatile", "GROQ_API_KEY", "https://api.groq.com/openai/v1"),
        ("deepseek:deepseek-chat", "DEEPSEEK_API_KEY", "https://api.deepseek.com"),
        ("cerebras:gpt-oss-120b", "CEREBRAS_API_KEY", "https://api.cerebras.ai/v1"),
    ],
)  # fmt: skip
def test_a_hosted_string_takes_the_hosts_url_and_key_variable(
    monkeypatch: pytest.MonkeyPatch, spec: str, env: str, url: str
) -> None:
    with pytest.raises(ConfigurationError, match=env):
        model_from_string(spec)  # OPENAI_API_KEY is set, and not taken
    monkeypatch.setenv(env, "host-key")
    model = model_from_string(spec)
    assert isinstance(model, OpenAIModel)
    prefix, _, name = spec.partition(":")
    assert model.base_url == url and model.provider == prefix and model.model == name


def test_ollama_defaults_to_the_local_server() -> None:
    model = model_from_string("ollama:qwen3:8b")
    assert isinstance(model, OpenAIModel)
    assert model.base_url == "http://127.0.0.1:11434/v1" and model.model == "qwen3:8b"


def test_ollama_host_names_the_server(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OLLAMA_HOST", "10.0.0.5:11434")
    model = model_from_string("ollama:llama3.2")
    assert isinstance(model, OpenAIModel) and model.base_url == "http://10.0.0.5:11434/v1"
    monkeypatch.setenv("OLLAMA_BASE_URL", "https://gpu.example/ollama/v1")
    model = model_from_string("ollama:llama3.2")
    assert isinstance(model, OpenAIModel) and model.base_url == "https://gpu.example/ollama/v1"


def test_vllm_needs_its_url() -> None:
    with pytest.raises(ConfigurationError, match="vllm:MODEL@URL"):
        model_from_string("vllm:Qwen/Qwen3-8B")
    with pytest.raises(ConfigurationError, match="needs base_url"):
        OpenAIModel("Qwen/Qwen3-8B", host="vllm")


@pytest.mark.anyio
@pytest.mark.parametrize("spec", ["ollama:qwen3:8b", "vllm:Qwen/Qwen3-8B@{url}/vllm/v1"])
async def test_a_local_host_gets_no_openai_key(
    server: WireServer, monkeypatch: pytest.MonkeyPatch, spec: str
) -> None:
    monkeypatch.setenv("OLLAMA_BASE_URL", f"{server.url}/ollama/v1")
    server.reply_with(json_reply(openai_json("Hi.")))
    model = model_from_string(spec.format(url=server.url))
    assert isinstance(model, OpenAIModel)
    async with model:
        answer = await model.request(ModelRequest((UserMessage("Hello"),)))
    assert answer.message.text == "Hi."
    assert "authorization" not in server.requests[-1].headers


@pytest.mark.anyio
async def test_a_local_hosts_own_key_is_sent(
    server: WireServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("VLLM_API_KEY", "vllm-key")
    server.reply_with(json_reply(openai_json("Hi.")))
    async with OpenAIModel("m", host="vllm", base_url=f"{server.url}/vllm/v1") as model:
        await model.request(ModelRequest((UserMessage("Hello"),)))
    assert server.requests[-1].headers["authorization"] == "Bearer vllm-key"


def test_a_host_of_ones_own_is_validated() -> None:
    custom = OpenAICompatibleHost(
        "together", base_url="https://api.together.xyz/v1", key_env="TOGETHER_API_KEY",
        max_tokens_field=MaxTokensField.MAX_TOKENS,
    )  # fmt: skip
    assert OpenAIModel("m", host=custom, api_key="k").provider == "together"
    with pytest.raises(ConfigurationError, match=r"OpenAICompatibleHost\.reasoning_back"):
        OpenAICompatibleHost("x", reasoning_back="thoughts")
    with pytest.raises(ConfigurationError, match=r"OpenAIModel\.host"):
        OpenAIModel("m", host="nowhere")
