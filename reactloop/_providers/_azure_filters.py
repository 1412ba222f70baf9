"""Azure OpenAI's own error shapes: its content filter's verdicts (a prompt refused with HTTP 400
`content_filter`, an answer cut with `finish_reason: "content_filter"`), a deployment that does
not run a model able to do the operation, and the channel and Chat stream that read them.

Microsoft documents the shapes in "Content filtering" (Azure OpenAI in Foundry Models): a 400
`{"error": {"code": "content_filter", "innererror": {"code": "ResponsibleAIPolicyViolation",
"content_filter_result": {CATEGORY: {"filtered", "severity"}, "jailbreak": {"filtered",
"detected"}}}}}`, and `content_filter_results` of the same form on a choice."""

from __future__ import annotations

from collections.abc import Mapping

import httpx

from reactloop._core import FinishReason, JsonObject, ModelResponse, is_blank
from reactloop._errors import ModelError, ProviderConfigurationError
from reactloop._providers._auth import Masks
from reactloop._providers._chat_decode import ChatStream
from reactloop._providers._http import HttpChannel, parse_json
from reactloop._providers._http_errors import detail_of
from reactloop._providers._safety import ContentFilteredError, FilterVerdict
from reactloop._providers._wire import obj, text

FILTER_CODE = "content_filter"
UNSUPPORTED_CODE = "OperationNotSupported"
DEPLOYMENT_CODE = "DeploymentNotFound"
_HINTS = {
    UNSUPPORTED_CODE: "the deployment's model cannot do this operation: deploy a chat model, or"
    " name another deployment",
    DEPLOYMENT_CODE: "no deployment of this name on this resource: check the deployment name and"
    " the endpoint (a deployment created a moment ago may take minutes to answer)",
}


def verdicts(results: object) -> tuple[FilterVerdict, ...]:
    """The verdict of each category of a `content_filter_result(s)` object: `filtered` and a
    `severity` (`safe` ... `high`), or for `jailbreak` and the other detectors `detected`
    (reported as the severity `detected`). Entries without a `filtered` flag are skipped."""
    if not isinstance(results, Mapping):
        return ()
    found = []
    for category, verdict in results.items():
        if not isinstance(verdict, Mapping) or not isinstance(verdict.get("filtered"), bool):
            continue
        severity = text(verdict, "severity")
        if severity is None and verdict.get("detected") is True:
            severity = "detected"
        found.append(FilterVerdict(str(category), verdict["filtered"], severity))
    return tuple(found)


def _blocked(found: tuple[FilterVerdict, ...]) -> str:
    names = [verdict.category for verdict in found if verdict.filtered]
    return f" (blocked: {', '.join(names)})" if names else ""


def prompt_filtered(
    provider: str, response: httpx.Response, masks: Masks
) -> ContentFilteredError | None:
    """The typed error of a request Azure's content filter refused, else None."""
    body = _json(response.content)
    error = obj(body, "error")
    if response.status_code != 400 or text(error, "code") != FILTER_CODE:
        return None
    inner = obj(error, "innererror")
    found = verdicts(inner.get("content_filter_result") or inner.get("content_filter_results"))
    said = text(error, "message") or "(no message)"
    message = masks.redact(
        f"{provider} content filter blocked the prompt{_blocked(found)}: HTTP 400"
        f" {FILTER_CODE}: {said}"
    )
    return ContentFilteredError(
        message, provider=provider, where="prompt", verdicts=found, reason=FILTER_CODE, status=400
    )


def _json(content: bytes) -> JsonObject:
    try:
        return parse_json("azure", content)
    except ModelError:
        return {}


def misconfigured(
    provider: str, response: httpx.Response, masks: Masks, url: str
) -> ProviderConfigurationError | None:
    """The typed error of an operation the deployment's model does not do (400
    `OperationNotSupported`) or of a deployment that does not exist (404 `DeploymentNotFound`),
    with what to check, else None."""
    detail = detail_of(response.content)
    hint = _HINTS.get(detail.code or "")
    if hint is None:
        return None
    message = masks.redact(
        f"{provider} answered HTTP {response.status_code} for POST {url} {detail.code}:"
        f" {detail.message or '(no message)'} ({hint})"
    )
    return ProviderConfigurationError(
        message, status=response.status_code, provider=provider, url=url
    )


class AzureChannel(HttpChannel):
    """An `HttpChannel` that reads Azure's content-filter and deployment errors first."""

    def _failure(self, response: httpx.Response, masks: Masks) -> ModelError:
        filtered = prompt_filtered(self.provider, response, masks)
        if filtered is not None:
            return filtered
        wrong = misconfigured(self.provider, response, masks, self._url(response.request))
        return wrong if wrong is not None else super()._failure(response, masks)


def answered(
    provider: str,
    response: ModelResponse,
    found: tuple[FilterVerdict, ...],
    said: str = "finish_reason content_filter",
) -> ModelResponse:
    """`response`, unless the content filter cut the answer before anything was said: then a
    `ContentFilteredError(where="answer")`. A partial answer stays a response whose finish reason
    is `CONTENT_FILTER`: what was streamed was shown and is kept; an empty one would reach the
    loop as a blank final answer, silently."""
    if response.finish_reason is not FinishReason.CONTENT_FILTER:
        return response
    message = response.message
    if message.tool_calls or not is_blank(message.text):
        return response
    raise ContentFilteredError(
        f"{provider} content filter blocked the answer before any of it was sent"
        f"{_blocked(found)}: {said}",
        provider=provider,
        where="answer",
        verdicts=found,
        reason=FILTER_CODE,
    )


def choice_verdicts(body: JsonObject) -> tuple[FilterVerdict, ...]:
    """The filter verdicts on choice 0 of a whole `chat.completion`."""
    choices = [c for c in body.get("choices") or () if isinstance(c, Mapping)]
    first = next((c for c in choices if c.get("index", 0) == 0), None)
    return () if first is None else verdicts(first.get("content_filter_results"))


class AzureChatStream(ChatStream):
    """A `ChatStream` that also keeps choice 0's filter verdicts: those of the chunk that
    blocked, else the last given. Azure's other chunks (a first one with no choices and the
    prompt's `prompt_filter_results`, and chunks with only `content_filter_results`) are read
    as the plain stream reads them: nothing to add."""

    verdicts: tuple[FilterVerdict, ...] = ()

    async def _choice(self, choice: JsonObject) -> None:
        found = verdicts(choice.get("content_filter_results"))
        if found and not any(verdict.filtered for verdict in self.verdicts):
            self.verdicts = found
        await super()._choice(choice)
