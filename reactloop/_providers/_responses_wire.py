"""OpenAI Responses requests: neutral requests as `POST /responses` bodies (input items, tools,
settings); the answers are read by `_responses_decode`.

Stateless by default: `store: false` and `include: ["reasoning.encrypted_content"]`, so each
reasoning item comes back with its encrypted content and goes out again, byte-identical, right
before the item that followed it. The API pairs a reasoning item with that following item by the
item's id, so a reasoning item is sent only when the item after it goes out with its id (known
from `ItemMemory`), and an item goes with its id only after a reasoning item of its answer went;
otherwise the reasoning is dropped and the items go without ids (text as a plain input message).
User messages and tool results holding images or files go as lists of items
(`_responses_content`).
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Hashable, Iterator
from typing import TypeVar, assert_never

from attrs import evolve, frozen

from reactloop._core import (
    AssistantMessage,
    ForcedTool,
    JsonObject,
    Message,
    ModelRequest,
    ModelSettings,
    ReasoningPart,
    ResponseFormat,
    ResponseFormatKind,
    SystemMessage,
    TextPart,
    ToolCall,
    ToolChoice,
    ToolMessage,
    ToolSpec,
    UserMessage,
    is_blank,
)
from reactloop._errors import (
    ConfigurationError,
    ProviderConfigurationError,
    StrictSchemaError,
)
from reactloop._providers._openai_cache import openai_cache, takes_breakpoints
from reactloop._providers._profiles import (
    OPENAI_DEFAULTS,
    ModelProfile,
    check_sampling,
)
from reactloop._providers._reasoning import check_effort, refuse
from reactloop._providers._responses_content import FileBudget, tool_output, user_item
from reactloop._providers._responses_decode import Decoded, item_key
from reactloop._providers._wire import (
    check_history,
    replays,
    tool_result_text,
    wire_ids,
)
from reactloop._schema import strict_schema_openai

INCLUDE = ["reasoning.encrypted_content"]
SUMMARIES = ("auto", "concise", "detailed")
K = TypeVar("K", bound=Hashable)
MEMORY_LIMIT = 4096
"""How many item ids and response ids one model instance remembers (the oldest are forgotten)."""

OWNED = frozenset(
    {"model", "input", "instructions", "tools", "tool_choice", "parallel_tool_calls", "text",
     "reasoning", "include", "store", "stream", "previous_response_id", "max_output_tokens",
     "temperature", "top_p", "service_tier"}
)  # fmt: skip
"""The body fields reactloop sets: an `extra_body` may not name them."""


class ItemMemory:
    """The vendor ids a model instance has seen in its answers, which the Responses API wants
    back: the id of each output item (a message by its text, a function call by its call id) and
    the id of the response that produced each assistant message (`previous_response_id` mode).

    It lives in the model instance only: a run resumed in another process (from its journal)
    sends its history without these ids, so its reasoning items are dropped and, in
    `previous_response_id` mode, the whole history is sent again.
    """

    def __init__(self, limit: int = MEMORY_LIMIT) -> None:
        self.limit = limit
        self._items: OrderedDict[tuple[str, str], str] = OrderedDict()
        self._responses: OrderedDict[AssistantMessage, str] = OrderedDict()

    def _put(self, table: OrderedDict[K, str], key: K, value: str) -> None:
        table[key] = value
        table.move_to_end(key)
        while len(table) > self.limit:
            table.popitem(last=False)

    def learn(self, decoded: Decoded, response_id: str | None, message: AssistantMessage) -> None:
        """Remember the item ids of one answer and the id of the response that gave it."""
        for key, item_id in decoded.item_ids:
            self._put(self._items, key, item_id)
        if response_id is not None:
            self._put(self._responses, message, response_id)

    def item_id(self, kind: str, key: str) -> str | None:
        """The id of the output item of this kind (`message`, `call`) and key (`item_key`), if
        seen."""
        return self._items.get((kind, key))

    def response_id(self, message: AssistantMessage) -> str | None:
        """The id of the response that produced this assistant message, if seen."""
        return self._responses.get(message)


@frozen
class Encoding:
    """How one request is spelled: who produced reasoning that may go back, and whether the
    vendor stores responses (then a reasoning item may go back by its id alone)."""

    provider: str
    model: str
    memory: ItemMemory
    store: bool = False
    breakpoints: bool = False  # cache points go as explicit cache breakpoints


def _reasoning_item(part: ReasoningPart) -> JsonObject:
    item: JsonObject = {"type": "reasoning", "id": part.id}
    item["summary"] = [{"type": "summary_text", "text": line} for line in part.summary]
    if part.text:
        item["content"] = [{"type": "reasoning_text", "text": part.text}]
    if part.encrypted is not None:
        item["encrypted_content"] = part.encrypted
    return item


def _text_item(said: str, item_id: str | None) -> JsonObject:
    if item_id is None:
        return {"role": "assistant", "content": said}
    content = [{"type": "output_text", "text": said, "annotations": []}]
    return {
        "type": "message",
        "role": "assistant",
        "id": item_id,
        "status": "completed",
        "content": content,
    }


def _call_item(call: ToolCall, item_id: str | None) -> JsonObject:
    item: JsonObject = {"type": "function_call", "call_id": call.id, "name": call.name}
    item["arguments"] = call.arguments
    if item_id is not None:
        item["id"] = item_id
    return item


def _replayable(part: ReasoningPart, how: Encoding) -> bool:
    if part.id is None or not replays(part, how.provider, how.model):
        return False
    return part.encrypted is not None or how.store


class _Turn:
    """One assistant message being spelled as items. The API pairs reasoning with the items
    after it by their ids: an item goes with its id only after a reasoning item of its response
    went, and a reasoning item goes only when the item after it goes with its id (an item with
    an id whose reasoning is missing is refused, and so is reasoning without its item)."""

    def __init__(self, how: Encoding) -> None:
        self.how = how
        self.pending: list[ReasoningPart] = []
        self.reasoning_id: str | None = None  # the last reasoning part's, sent or not
        self.anchored = False  # a reasoning item of this message went

    def reasoning(self, part: ReasoningPart) -> None:
        self.reasoning_id = part.id
        if _replayable(part, self.how):
            self.pending.append(part)

    def item(self, part: TextPart | ToolCall) -> Iterator[JsonObject]:
        item_id = self.how.memory.item_id(*item_key(part, self.reasoning_id))
        if item_id is None and self.pending:  # an answer this instance did not decode
            item_id = self.pending[-1].followed_by
        if self.pending and item_id is not None:
            yield from (_reasoning_item(reasoning) for reasoning in self.pending)
            self.anchored = True
        elif not self.anchored:
            item_id = None
        self.pending = []
        if isinstance(part, TextPart):
            yield _text_item(part.text, item_id)
        else:
            yield _call_item(part, item_id)


def assistant_items(message: AssistantMessage, how: Encoding) -> Iterator[JsonObject]:
    """One assistant message as output items, in its parts' order; each reasoning part that may
    go back comes right before the item that followed it (see `_Turn` for when it may)."""
    turn = _Turn(how)
    for part in message.parts:
        if isinstance(part, ReasoningPart):
            turn.reasoning(part)
        elif not (isinstance(part, TextPart) and is_blank(part.text)):
            yield from turn.item(part)
    if is_blank(message.text) and not is_blank(message.refusal):
        yield {"role": "assistant", "content": message.refusal}


def _tool_item(message: ToolMessage, budget: FileBudget) -> JsonObject:
    """A tool result: its text as `output`, or a list of items when it holds images or files."""
    parts = tool_output(message, budget)
    output = tool_result_text(message) if parts is None else parts
    return {"type": "function_call_output", "call_id": message.call_id, "output": output}


def input_items(messages: tuple[Message, ...], how: Encoding) -> list[JsonObject]:
    """The `input` items of the messages a request sends; their files count against one
    per-request budget (`FILES_LIMIT`), so parts are refused before anything is sent."""
    out: list[JsonObject] = []
    budget = FileBudget(how.provider, how.breakpoints)
    for message in messages:
        match message:
            case SystemMessage():
                out.append({"role": "system", "content": message.text})
            case UserMessage():
                out.append(user_item(message, budget))
            case AssistantMessage():
                out.extend(assistant_items(message, how))
            case ToolMessage():
                out.append(_tool_item(message, budget))
            case _:
                assert_never(message)
    return out


def _is_strict(parameters: JsonObject) -> bool:
    """True when the schema is already what OpenAI's strict mode takes (then it is enforced)."""
    try:
        return strict_schema_openai(parameters) == parameters
    except StrictSchemaError:
        return False


def _tool(spec: ToolSpec) -> JsonObject:
    return {
        "type": "function",
        "name": spec.name,
        "description": spec.description,
        "parameters": spec.parameters,
        "strict": _is_strict(spec.parameters),
    }


def _tool_choice(choice: ToolChoice | ForcedTool) -> str | JsonObject:
    match choice:
        case ForcedTool():
            return {"type": "function", "name": choice.name}
        case ToolChoice.AUTO | ToolChoice.NONE | ToolChoice.REQUIRED:
            return choice.value
        case _:
            assert_never(choice)


def text_format(response_format: ResponseFormat) -> JsonObject:
    """The `text.format` body field."""
    match response_format.kind:
        case ResponseFormatKind.TEXT:
            return {"type": "text"}
        case ResponseFormatKind.JSON_OBJECT:
            return {"type": "json_object"}
        case ResponseFormatKind.JSON_SCHEMA:
            if response_format.schema is None:
                raise ConfigurationError("ResponseFormat JSON_SCHEMA needs a schema, got None")
            return {
                "type": "json_schema",
                "name": response_format.name,
                "schema": response_format.schema,
                "strict": response_format.strict,
            }
        case _:
            assert_never(response_format.kind)


def _refuse(provider: str, model: str, option: str, value: object, why: str) -> None:
    rule = f"unset for {provider} model {model!r}"
    raise ProviderConfigurationError(
        f"{option} must be {rule}, got {value!r}: {why}",
        provider=provider,
        option=option,
        value=value,
        rule=rule,
    )


def _reasoning(
    provider: str, model: str, settings: ModelSettings, profile: ModelProfile
) -> JsonObject | None:
    """`reasoning: {effort, summary}`; an effort the profile does not list, a token budget (the
    Responses API takes none) and an unknown summary mode are refused."""
    wanted = settings.reasoning
    if wanted is None:
        return None
    if wanted.budget_tokens is not None:
        rule = "None (the Responses API takes no thinking budget: set ReasoningSettings.effort)"
        raise refuse(provider, model, "budget_tokens", wanted.budget_tokens, rule)
    body: JsonObject = {}
    if wanted.effort is not None:
        check_effort(provider, model, wanted.effort, profile)
        body["effort"] = wanted.effort.value
    if wanted.summary is not None:
        if wanted.summary not in SUMMARIES:
            rule = "one of 'auto', 'concise', 'detailed' (what the Responses API takes)"
            raise refuse(provider, model, "summary", wanted.summary, rule)
        body["summary"] = wanted.summary
    return body


def _settings(
    provider: str, model: str, settings: ModelSettings, profile: ModelProfile, has_tools: bool
) -> JsonObject:
    if settings.stop_sequences:
        why = "the Responses API has no stop sequences"
        _refuse(provider, model, "ModelSettings.stop_sequences", settings.stop_sequences, why)
    if settings.seed is not None:
        _refuse(provider, model, "ModelSettings.seed", settings.seed, "the Responses API has none")
    body: JsonObject = {}
    if settings.temperature is not None:
        body["temperature"] = settings.temperature
    if settings.top_p is not None:
        body["top_p"] = settings.top_p
    if settings.max_output_tokens is not None:
        body["max_output_tokens"] = settings.max_output_tokens
    if has_tools and settings.parallel_tool_calls is not None:
        body["parallel_tool_calls"] = settings.parallel_tool_calls
    if settings.response_format is not None:
        body["text"] = {"format": text_format(settings.response_format)}
    reasoning = _reasoning(provider, model, settings, profile)
    if reasoning is not None:
        body["reasoning"] = reasoning
    if settings.service_tier is not None:
        body["service_tier"] = settings.service_tier
    return body


def _chained(messages: tuple[Message, ...], memory: ItemMemory) -> tuple[int, str | None]:
    """Where the history continues a response the vendor stored: the position after the last
    assistant message and that response's id, or (0, None) when it is not known."""
    for index in range(len(messages) - 1, -1, -1):
        message = messages[index]
        if isinstance(message, AssistantMessage):
            response_id = memory.response_id(message)
            return (index + 1, response_id) if response_id is not None else (0, None)
    return 0, None


def encode_request(
    request: ModelRequest,
    how: Encoding,
    *,
    stream: bool,
    profile: ModelProfile,
) -> JsonObject:
    """The `/responses` body for a neutral request. With `how.store` (previous_response_id
    mode), only the messages after the last answer go, chained to the response that gave it."""
    provider, model = how.provider, how.model
    check_history(provider, request.messages)
    check_sampling(provider, model, request.settings, profile, OPENAI_DEFAULTS)
    messages = wire_ids(request.messages)  # the answers with the call ids they were decoded with
    if takes_breakpoints(profile, request.settings.cache):
        how = evolve(how, breakpoints=True)
    start, previous = _chained(messages, how.memory) if how.store else (0, None)
    body: JsonObject = {"model": model}
    if request.instructions:
        body["instructions"] = request.instructions
    body["input"] = input_items(messages[start:], how)
    if request.tools:
        body["tools"] = [_tool(spec) for spec in request.tools]
        body["tool_choice"] = _tool_choice(request.tool_choice)
    body.update(_settings(provider, model, request.settings, profile, bool(request.tools)))
    if request.settings.cache is not None:
        body.update(openai_cache(request, profile))
    body["include"] = list(INCLUDE)
    body["store"] = how.store
    if previous is not None:
        body["previous_response_id"] = previous
    if stream:
        body["stream"] = True
    return body
