"""The built-in providers pass the provider conformance kit (`reactloop.testing`), every check,
on asyncio and trio, driven by the harnesses in tests/providers/harnesses*.py: OpenAI Chat
Completions (and Gemini's compatible endpoint), Anthropic, OpenAI Responses, native Gemini,
Azure OpenAI (Chat Completions on the v1 API, a dated version and with an Entra ID token;
Responses) and every OpenAI-compatible host preset."""

from __future__ import annotations

import pytest

from reactloop.testing import CONFORMANCE_CHECKS, ConformanceCheck, ProviderHarness
from tests.providers.harnesses import SIGNED, AnthropicHarness, ChatHarness, ResponsesHarness
from tests.providers.harnesses_azure import AzureChatHarness, AzureResponsesHarness
from tests.providers.harnesses_gemini import GeminiHarness
from tests.providers.harnesses_hosts import HOSTS

pytestmark = pytest.mark.anyio

HARNESSES: dict[str, ProviderHarness] = {
    "openai": ChatHarness(),
    "gemini-openai-compatible": ChatHarness(
        "gemini", "gemini-3-pro-preview", "/v1beta/openai", SIGNED
    ),
    "anthropic": AnthropicHarness(),
    "openai-responses": ResponsesHarness(),
    "google": GeminiHarness(),
    "azure": AzureChatHarness(),
    "azure-dated": AzureChatHarness(api_version="2024-10-21"),
    "azure-entra": AzureChatHarness(entra=True),
    "azure-responses": AzureResponsesHarness(),
    **{f"host-{name}": harness for name, harness in HOSTS.items()},
}


CASES = [
    pytest.param(name, check, id=f"{name}-{check}")
    for name in sorted(HARNESSES)
    for check in CONFORMANCE_CHECKS
    if check.applies_to(HARNESSES[name])
]
"""Every check that applies to each provider (a check of a feature its harness declares absent,
such as opaque reasoning on plain Chat Completions, is left out rather than skipped)."""


@pytest.mark.parametrize(("provider", "check"), CASES)
async def test_the_provider_passes(provider: str, check: ConformanceCheck) -> None:
    await check(HARNESSES[provider])


def test_every_check_runs_against_some_provider() -> None:
    assert {str(check) for _, check in (case.values for case in CASES)} == {
        str(check) for check in CONFORMANCE_CHECKS
    }
