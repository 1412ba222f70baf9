"""The conformance checks catch what they check: a provider that breaks one rule fails that
check, by name, with what was expected and what came; `check_provider` lists every failure and
every skip. The provider under test is the real `OpenAIModel` over loopback, wrapped to break
one rule at a time."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import attrs
import pytest

from reactloop._core import AssistantMessage, DeltaSink, ModelRequest, ModelResponse, Usage
from reactloop.errors import ModelError, ProviderUnavailableError, RateLimitedError
from reactloop.testing import (
    CONFORMANCE_CHECKS,
    CheckSkipped,
    ConformanceCheck,
    ConformanceError,
    SentRequest,
    WireRequest,
    check_provider,
)
from tests.providers.harnesses import ChatHarness

pytestmark = pytest.mark.anyio

CHECKS = {check.name: check for check in CONFORMANCE_CHECKS}
Tamper = Callable[[ModelResponse], ModelResponse]


class Tampered:
    """A real model whose answers (or errors) are changed on the way out."""

    def __init__(self, model: Any, tamper: Tamper, errors: Callable[[ModelError], Any]) -> None:
        self.model, self.tamper, self.errors = model, tamper, errors

    async def request(self, request: ModelRequest) -> ModelResponse:
        try:
            return self.tamper(await self.model.request(request))
        except ModelError as error:
            return self.errors(error)  # type: ignore[no-any-return]

    async def stream(self, request: ModelRequest, on_delta: DeltaSink) -> ModelResponse:
        try:
            return self.tamper(await self.model.stream(request, on_delta))
        except ModelError as error:
            return self.errors(error)  # type: ignore[no-any-return]

    async def aclose(self) -> None:
        await self.model.aclose()


def reraise(error: ModelError) -> Any:
    raise error


class Broken(ChatHarness):
    """OpenAI over Chat Completions, its model tampered with."""

    def __init__(self, tamper: Tamper = lambda r: r, errors: Callable[[ModelError], Any] = reraise):
        super().__init__()
        self.tamper, self.errors = tamper, errors

    def build(self, base_url: str, *, idle_timeout: float) -> Any:
        return Tampered(
            super().build(base_url, idle_timeout=idle_timeout), self.tamper, self.errors
        )


def reversed_calls(response: ModelResponse) -> ModelResponse:
    calls = response.message.tool_calls[::-1]
    return attrs.evolve(response, message=response.message.with_tool_calls(calls))


async def failure_of(check: ConformanceCheck, harness: Any) -> str:
    with pytest.raises(ConformanceError) as caught:
        await check(harness)
    assert len(caught.value.failures) == 1
    return str(caught.value.failures[0])


async def test_reordered_parallel_calls_fail_their_check() -> None:
    said = await failure_of(CHECKS["parallel_tool_calls"], Broken(reversed_calls))
    assert said.startswith("parallel_tool_calls (openai): expected request: the calls, in order,")
    assert "call_kit_1" in said and "; got (CallView(id='call_kit_3'" in said


async def test_an_untyped_rate_limit_fails_its_check() -> None:
    def unavailable(error: ModelError) -> Any:
        raise ProviderUnavailableError("busy", status=error.status)

    said = await failure_of(CHECKS["rate_limited"], Broken(errors=unavailable))
    assert (
        "expected RateLimitedError from a request call; got ProviderUnavailableError: busy" in said
    )


async def test_a_rate_limit_without_its_wait_fails_its_check() -> None:
    def no_wait(error: ModelError) -> Any:
        raise RateLimitedError(str(error), retry_after=None)

    said = await failure_of(CHECKS["rate_limited"], Broken(errors=no_wait))
    assert "expected request: retry_after (from the header) 7.0; got None" in said


async def test_a_cut_stream_answered_as_a_success_fails_its_check() -> None:
    def swallowed(error: ModelError) -> Any:
        return ModelResponse(AssistantMessage("Paris"))

    said = await failure_of(CHECKS["cut_stream"], Broken(errors=swallowed))
    assert "expected ModelError from a stream call; got a response" in said


async def test_results_that_do_not_reach_the_body_fail_the_tool_loop() -> None:
    class Forgetful(ChatHarness):
        def read_request(self, request: WireRequest) -> SentRequest:
            return attrs.evolve(super().read_request(request), tool_results=())

    said = await failure_of(CHECKS["tool_results_paired"], Forgetful())
    assert "stream then request: tool results (('call_kit_1', '18 °C and sunny')" in said
    assert said.endswith("got ()")


async def test_a_check_of_an_undeclared_feature_is_skipped() -> None:
    with pytest.raises(CheckSkipped, match=r"Features\.reasoning is False"):
        await CHECKS["reasoning_sent_back"](ChatHarness())


async def test_check_provider_lists_every_failure_and_every_skip() -> None:
    def no_usage(response: ModelResponse) -> ModelResponse:
        return attrs.evolve(response, usage=Usage())

    with pytest.raises(ConformanceError) as caught:
        await check_provider(Broken(no_usage))
    assert [failure.check for failure in caught.value.failures] == ["usage_decoded"]
    assert "1 conformance failure:\n- usage_decoded (openai): expected request: the usage" in str(
        caught.value
    )
    report = await check_provider(ChatHarness())
    assert report.skipped == (
        "reasoning_sent_back skipped: openai does not declare it (Features.reasoning is False)",
    )
    assert len(report.passed) == len(CONFORMANCE_CHECKS) - 1


def test_checks_are_named_for_pytest_ids() -> None:
    names = [str(check) for check in CONFORMANCE_CHECKS]
    assert len(set(names)) == len(names) == 15
    assert all(check.description for check in CONFORMANCE_CHECKS)
