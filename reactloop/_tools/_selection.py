"""`RelevanceSelector`: ranks a loop's tools by how relevant they are to the conversation, with no
model call (BM25 over each tool's name, description and parameters).

The index over a tool list is built once per distinct list (cached by identity: a tool list
changes rarely), so ranking a step costs a few dictionary look-ups per query term.
"""

from __future__ import annotations

import functools
import math
import re
from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from typing import TYPE_CHECKING

from attrs import frozen

from reactloop._core import AssistantMessage, Message, Tool, ToolMessage, UserMessage
from reactloop._validate import boolean, checked_arguments, fail, integer, items, text

if TYPE_CHECKING:
    from reactloop._loop import Run

_WORD = re.compile(r"[^\W_]+")
_ASCII_PART = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|\d+")
_OTHER_PART = re.compile(r"\d+|[^\W\d_]+")
_STOP_WORDS = frozenset((
    "a", "an", "and", "are", "as", "at", "be", "by", "can", "do", "does", "for", "from", "get",
    "give", "has", "have", "how", "i", "if", "in", "is", "it", "its", "me", "my", "of", "on", "or",
    "please", "should", "so", "than", "that", "the", "their", "them", "then", "there", "these",
    "this", "those", "to", "was", "we", "what", "when", "where", "which", "who", "why", "will",
    "with", "would", "you", "your",
))  # fmt: skip
NAME_WEIGHT = 3
"""How much more a term of the tool's name counts than one of its description or parameters."""
RECENT_WEIGHT = 0.5
"""How much a recent message's term counts next to one of the last user message (1)."""
MAX_CHARS = 2_000
"""Characters of each message read for the query (the start: long tool results stay cheap)."""
_K1, _B = 1.2, 0.75  # BM25's usual term-saturation and length-normalization constants
_CACHED_INDEXES = 8
_CACHED_MESSAGES = 512


def _stem(term: str) -> str:
    """A light plural stemmer: 'files' and 'file', 'queries' and 'query' meet."""
    if len(term) > 4 and term.endswith("ies"):
        return term[:-3] + "y"
    if len(term) > 3 and term.endswith("s") and not term.endswith(("ss", "us", "is")):
        return term[:-1]
    return term


@functools.lru_cache(maxsize=65_536)
def _word_terms(word: str) -> tuple[str, ...]:
    """The terms of one word: snake_case, camelCase and digit runs split, lower-cased, stemmed."""
    parts = _ASCII_PART.findall(word) if word.isascii() else _OTHER_PART.findall(word)
    stemmed = (_stem(part.lower()) for part in parts)
    return tuple(term for term in stemmed if term not in _STOP_WORDS)


def terms(value: str) -> list[str]:
    """The search terms of a text (`getWeather_v2` gives get, weather, v, 2; stop words go)."""
    found: list[str] = []
    for word in _WORD.findall(value):
        found.extend(_word_terms(word))
    return found


def _schema_texts(schema: object, depth: int = 0) -> Iterator[str]:
    """Parameter names, descriptions and string enum values found in a JSON schema."""
    if depth > 16:
        return
    if isinstance(schema, Mapping):
        properties = schema.get("properties")
        if isinstance(properties, Mapping):
            yield from (name for name in properties if isinstance(name, str))
        description = schema.get("description")
        if isinstance(description, str):
            yield description
        choices = schema.get("enum")
        if isinstance(choices, list):
            yield from (choice for choice in choices if isinstance(choice, str))
        for value in schema.values():
            if isinstance(value, Mapping | list):
                yield from _schema_texts(value, depth + 1)
    elif isinstance(schema, list):
        for item in schema:
            yield from _schema_texts(item, depth + 1)


def tool_terms(tool: Tool) -> Counter[str]:
    """A tool's weighted term counts: its name's terms count `NAME_WEIGHT` times."""
    spec = tool.spec
    counts: Counter[str] = Counter()
    for term in terms(spec.name):
        counts[term] += NAME_WEIGHT
    counts.update(terms(spec.description))
    for piece in _schema_texts(spec.parameters):
        counts.update(terms(piece))
    return counts


@frozen(eq=False)
class _Index:
    """BM25 weights of one tool list: term -> (tool position, weight) pairs."""

    source: Sequence[Tool]  # kept so that its id is not reused while cached
    tools: tuple[Tool, ...]
    postings: dict[str, list[tuple[int, float]]]
    first: tuple[int, ...]  # positions of the `always` tools, in order
    default: tuple[Tool, ...]  # the order when nothing is relevant: `always` first, then the rest

    @classmethod
    def build(cls, source: Sequence[Tool], always: frozenset[str]) -> _Index:
        """Index `source`; tools named in `always` are placed first."""
        tools = tuple(source)
        documents = [tool_terms(tool) for tool in tools]
        lengths = [sum(counts.values()) for counts in documents]
        average = max(sum(lengths) / len(lengths), 1.0) if lengths else 1.0
        frequency: Counter[str] = Counter()
        for counts in documents:
            frequency.update(counts.keys())
        postings: dict[str, list[tuple[int, float]]] = {}
        for position, counts in enumerate(documents):
            norm = _K1 * (1 - _B + _B * lengths[position] / average)
            for term, count in counts.items():
                seen = frequency[term]
                idf = math.log(1 + (len(tools) - seen + 0.5) / (seen + 0.5))
                weight = idf * count * (_K1 + 1) / (count + norm)
                postings.setdefault(term, []).append((position, weight))
        first = tuple(i for i, tool in enumerate(tools) if tool.name in always)
        rest = tuple(tool for i, tool in enumerate(tools) if i not in first)
        return cls(source, tools, postings, first, tuple(tools[i] for i in first) + rest)

    def rank(self, query: Mapping[str, float]) -> tuple[Tool, ...]:
        """All the tools, `always` ones first, then by score (ties and zeros in list order)."""
        scores: dict[int, float] = {}
        postings = self.postings
        for term, weight in query.items():
            for position, score in postings.get(term, ()):
                scores[position] = scores.get(position, 0.0) + weight * score
        for position in self.first:
            scores.pop(position, None)
        if not scores:
            return self.default
        best = sorted(sorted(scores), key=scores.__getitem__, reverse=True)  # stable: ties keep
        tools = self.tools
        skip = scores.keys() | set(self.first)
        rest = [tool for i, tool in enumerate(tools) if i not in skip]
        return (*(tools[i] for i in self.first), *(tools[i] for i in best), *rest)


def _always(value: object) -> frozenset[str]:
    names = items("RelevanceSelector.always", value, "tool names")
    for i, name in enumerate(names):
        text(f"RelevanceSelector.always[{i}]", name)
    if len(set(names)) != len(names):
        fail("RelevanceSelector.always", value, "tool names without repeats")
    return frozenset(str(name) for name in names)


@checked_arguments
class RelevanceSelector:
    """A `ToolSelector` that offers the tools most relevant to the conversation first.

    Each tool is scored (BM25) on its name (snake_case and camelCase split), description and
    parameter names, descriptions and enum values against the last user message (weight 1) and
    the `recent_messages` latest other messages (weight `RECENT_WEIGHT`: text, tool-call names,
    and tool results unless `tool_results=False`). All tools come back, best first: those named
    in `always` first, ties and tools with no relevance in their original order, so that
    `max_tools_per_request` cuts the least relevant. Names in `always` that the list lacks are
    ignored (a toolset's tools come and go).
    """

    def __init__(
        self,
        *,
        always: Sequence[str] = (),
        recent_messages: int = 4,
        tool_results: bool = True,
    ) -> None:
        self.always = _always(always)
        self.recent_messages = integer(
            "RelevanceSelector.recent_messages", recent_messages, minimum=0
        )
        self.tool_results = boolean("RelevanceSelector.tool_results", tool_results)
        self._indexes: dict[int, _Index] = {}
        self._messages: dict[int, tuple[Message, tuple[str, ...]]] = {}

    def __call__(self, run: Run, tools: Sequence[Tool]) -> tuple[Tool, ...]:
        """The run's tools, most relevant to its conversation first."""
        return self.rank(tools, run.state.messages)

    def rank(self, tools: Sequence[Tool], messages: Sequence[Message]) -> tuple[Tool, ...]:
        """`tools`, most relevant to `messages` first (what a step of a run gets)."""
        return self._index(tools).rank(self.query(messages))

    def _index(self, tools: Sequence[Tool]) -> _Index:
        index = self._indexes.get(id(tools))
        if index is None or index.source is not tools:
            if len(self._indexes) >= _CACHED_INDEXES:
                del self._indexes[next(iter(self._indexes))]
            index = self._indexes[id(tools)] = _Index.build(tools, self.always)
        return index

    def query(self, messages: Sequence[Message]) -> dict[str, float]:
        """Term weights of the conversation: the last user message's, then recent messages'."""
        weights: dict[str, float] = {}
        last_user = _last_user(messages)
        if last_user is not None:
            for term in self._terms(messages[last_user]):
                weights[term] = 1.0
        start = max(len(messages) - self.recent_messages, 0)
        for position in range(len(messages) - 1, start - 1, -1):
            message = messages[position]
            if position == last_user or (
                isinstance(message, ToolMessage) and not self.tool_results
            ):
                continue
            for term in self._terms(message):
                weights[term] = weights.get(term, 0.0) + RECENT_WEIGHT
        return weights

    def _terms(self, message: Message) -> tuple[str, ...]:
        """The distinct terms of one message (cached by identity: a transcript only grows)."""
        cached = self._messages.get(id(message))
        if cached is not None and cached[0] is message:
            return cached[1]
        found = tuple(dict.fromkeys(terms(_message_text(message)[:MAX_CHARS])))
        if len(self._messages) >= _CACHED_MESSAGES:
            self._messages.clear()
        self._messages[id(message)] = (message, found)
        return found


def _last_user(messages: Sequence[Message]) -> int | None:
    for position in range(len(messages) - 1, -1, -1):
        if isinstance(messages[position], UserMessage):
            return position
    return None


def _message_text(message: Message) -> str:
    """What a message says, for the query: an assistant's text and the names it called."""
    if isinstance(message, AssistantMessage):
        return " ".join((message.text, *(call.name for call in message.tool_calls)))
    return message.text
