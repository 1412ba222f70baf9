"""Model strings pick and configure a provider."""

from __future__ import annotations

import pytest

from reactloop._errors import ConfigurationError
from reactloop._loop._loop import ReActLoop
from reactloop._providers import (
    AnthropicModel,
    MaxTokensField,
    OpenAIModel,
    OpenAIResponsesModel,
    model_from_string,
)

pytestmark = pytest.mark.anyio


@pytest.fixture(autouse=True)
def keys(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-env")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-env")
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    monkeypatch.delenv("ANTHROPIC_BASE_URL", raising=False)
    monkeypatch.delenv("OPENAI_COMPATIBLE_API_KEY", raising=False)


async def test_openai() -> None:
    model = model_from_string("openai:gpt-4o-mini")
    assert isinstance(model, OpenAIModel)
    assert (model.model, model.base_url, model.provider) == (
        "gpt-4o-mini",
        "https://api.openai.com/v1",
        "openai",
    )
    await model.aclose()


async def test_openai_responses() -> None:
    model = model_from_string("openai-responses:gpt-5")
    assert isinstance(model, OpenAIResponsesModel)
    assert (model.model, model.base_url, model.provider, model.conversation) == (
        "gpt-5",
        "https://api.openai.com/v1",
        "openai-responses",
        "stateless",
    )
    await model.aclose()


async def test_anthropic() -> None:
    model = model_from_string("anthropic:claude-sonnet-4-5")
    assert isinstance(model, AnthropicModel)
    assert (model.model, model.base_url) == ("claude-sonnet-4-5", "https://api.anthropic.com")
    await model.aclose()


async def test_openai_compatible_keeps_colons_in_the_model_name(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY")
    model = model_from_string("openai-compatible:qwen2.5:7b@http://127.0.0.1:11434/v1")
    assert isinstance(model, OpenAIModel)
    assert (model.model, model.base_url) == ("qwen2.5:7b", "http://127.0.0.1:11434/v1")
    assert (model.provider, model.options.max_tokens_field) == (
        "openai-compatible",
        MaxTokensField.MAX_TOKENS,
    )
    await model.aclose()


async def test_openai_compatible_takes_only_its_own_key(monkeypatch: pytest.MonkeyPatch) -> None:
    spec = "openai-compatible:llama@http://127.0.0.1:8000/v1"
    without = model_from_string(spec)
    monkeypatch.setenv("OPENAI_COMPATIBLE_API_KEY", "sk-local")
    with_key = model_from_string(spec)
    assert isinstance(without, OpenAIModel)
    assert isinstance(with_key, OpenAIModel)
    assert without._channel._secret is None
    assert with_key._channel._secret is not None
    await without.aclose()
    await with_key.aclose()


@pytest.mark.parametrize(
    "spec",
    [
        "gpt-4o",
        "openai:",
        "mistral:large",
        "openai-compatible:llama",
        "openai-compatible:m@ftp://x",
    ],
)
def test_bad_strings_say_which_forms_exist(spec: str) -> None:
    with pytest.raises(ConfigurationError, match="openai"):
        model_from_string(spec)


def test_a_missing_key_is_a_configuration_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY")
    with pytest.raises(ConfigurationError, match="ANTHROPIC_API_KEY"):
        model_from_string("anthropic:claude-sonnet-4-5")


def test_the_openai_key_is_needed_only_for_openai_itself(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY")
    with pytest.raises(ConfigurationError, match="OPENAI_API_KEY"):
        OpenAIModel("gpt-4o")
    assert OpenAIModel("llama", base_url="http://127.0.0.1:8000/v1").base_url.endswith("/v1")


async def test_the_loop_accepts_a_model_string() -> None:
    loop = ReActLoop(model="openai:gpt-4o-mini")
    assert isinstance(loop.config.model, OpenAIModel)
    await loop.config.model.aclose()
