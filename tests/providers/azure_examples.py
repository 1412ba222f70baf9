"""Azure OpenAI's answers as Microsoft documents them, for the Azure provider tests.

Where each shape comes from (Microsoft Learn, Azure OpenAI in Azure AI Foundry Models):
- "Content filtering" (concepts/content-filter): the 400 a filtered prompt gets (`error.code`
  `content_filter`, `innererror.code` `ResponsibleAIPolicyViolation`, `innererror.
  content_filter_result` with `{filtered, severity}` per category and `{filtered, detected}` for
  `jailbreak`), a choice's `content_filter_results`, and `finish_reason: "content_filter"`.
- "Content streaming" (concepts/content-streaming): a stream opens with a chunk whose `choices` is
  empty and which holds `prompt_filter_results` (ids and model blank), and with the asynchronous
  filter, annotation chunks carry only `content_filter_results` and `content_filter_offsets`
  (also after the chunk that finishes the answer, before `[DONE]`).
- "REST API reference" / "Azure OpenAI errors": 401 `{"error": {"code": "401", "message":
  "Access denied due to invalid subscription key or wrong API endpoint..."}}`, 404
  `DeploymentNotFound`, 400 `OperationNotSupported`, 429 with `retry-after-ms` and `retry-after`.
The texts below are shortened; the field names and nesting are Microsoft's.
"""

from __future__ import annotations

from typing import Any

from tests.providers.render import sse

JsonObject = dict[str, Any]
SAFE = {"filtered": False, "severity": "safe"}
CATEGORIES = ("hate", "self_harm", "sexual", "violence")


def filter_results(**blocked: str) -> JsonObject:
    """A `content_filter_results` object: every category safe unless named (its severity)."""
    return {
        name: {"filtered": True, "severity": blocked[name]} if name in blocked else SAFE
        for name in CATEGORIES
    }


def prompt_blocked(jailbreak: bool = True, **blocked: str) -> JsonObject:
    """The 400 body of a prompt the content filter refused."""
    result: JsonObject = filter_results(**blocked)
    result["jailbreak"] = {"filtered": jailbreak, "detected": jailbreak}
    return {
        "error": {
            "message": "The response was filtered due to the prompt triggering Azure OpenAI's"
            " content management policy. Please modify your prompt and retry.",
            "type": None,
            "param": "prompt",
            "code": "content_filter",
            "status": 400,
            "innererror": {
                "code": "ResponsibleAIPolicyViolation",
                "content_filter_result": result,
            },
        }
    }


PROMPT_CHUNK = sse(
    {
        "id": "",
        "object": "",
        "created": 0,
        "model": "",
        "choices": [],
        "prompt_filter_results": [{"prompt_index": 0, "content_filter_results": filter_results()}],
    }
)
"""The first chunk of an Azure stream: no choices, the prompt's filter verdicts."""


def chunk(delta: JsonObject | None, finish: str | None = None, **extra: Any) -> bytes:
    """A chunk of choice 0: a delta (None: none, as in annotation chunks) and what Azure adds."""
    choice: JsonObject = {"index": 0, "finish_reason": finish, **extra}
    if delta is not None:
        choice["delta"] = delta
    data = {"id": "chatcmpl-az1", "object": "chat.completion.chunk", "created": 1}
    return sse({**data, "model": "gpt-4o-2024-11-20", "choices": [choice], "usage": None})


def annotation(start: int, end: int, **blocked: str) -> bytes:
    """An asynchronous-filter annotation chunk: only verdicts and the offsets they cover."""
    offsets = {"check_offset": start, "start_offset": start, "end_offset": end}
    finish = "content_filter" if blocked else None
    choice = {
        "index": 0,
        "finish_reason": finish,
        "content_filter_results": filter_results(**blocked),
        "content_filter_offsets": offsets,
    }
    return sse({"id": "", "object": "", "created": 0, "model": "", "choices": [choice]})


DONE = b"data: [DONE]\n\n"


def answer_stream(*words: str, finish: str = "stop", **blocked: str) -> list[bytes]:
    """A default-mode Azure stream: the prompt chunk, the role, each word with its (safe)
    verdicts, then the finish with the verdicts that decided it, then `[DONE]`."""
    chunks = [PROMPT_CHUNK, chunk({"role": "assistant", "content": ""})]
    chunks += [chunk({"content": w}, content_filter_results=filter_results()) for w in words]
    results = filter_results(**blocked)
    return [*chunks, chunk({}, finish, content_filter_results=results), DONE]


def completion(content: str | None, finish: str = "stop", **blocked: str) -> JsonObject:
    """A whole `chat.completion` as Azure sends it: filter verdicts on the prompt and choice."""
    message = {"role": "assistant", "content": content, "refusal": None}
    choice = {
        "index": 0,
        "message": message,
        "finish_reason": finish,
        "content_filter_results": filter_results(**blocked),
    }
    return {
        "id": "chatcmpl-az1",
        "object": "chat.completion",
        "model": "gpt-4o-2024-11-20",
        "prompt_filter_results": [{"prompt_index": 0, "content_filter_results": filter_results()}],
        "choices": [choice],
        "usage": {"prompt_tokens": 9, "completion_tokens": 3, "total_tokens": 12},
    }


UNAUTHORIZED = {
    "error": {
        "code": "401",
        "message": "Access denied due to invalid subscription key or wrong API endpoint. Make sure"
        " to provide a valid key for an active subscription and use a correct regional API"
        " endpoint for your resource.",
    }
}
DEPLOYMENT_NOT_FOUND = {
    "error": {
        "code": "DeploymentNotFound",
        "message": "The API deployment for this resource does not exist. If you created the"
        " deployment within the last 5 minutes, please wait a moment and try again.",
    }
}
OPERATION_NOT_SUPPORTED = {
    "error": {
        "code": "OperationNotSupported",
        "message": "The chatCompletion operation does not work with the specified model,"
        " text-embedding-3-small. Please choose different model and try again.",
    }
}
RATE_LIMITED = {
    "error": {
        "code": "429",
        "message": "Requests to the ChatCompletions_Create Operation under Azure OpenAI API"
        " version 2024-10-21 have exceeded token rate limit of your current OpenAI S0 pricing"
        " tier. Please retry after 7 seconds.",
    }
}
