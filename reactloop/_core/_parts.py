"""The parts an assistant message is made of, besides tool calls: text and reasoning.

A reasoning part keeps what the provider sent as it came (signatures, redacted data, encrypted
content), since the vendors verify those bytes when the part is sent back (ADR-0026). It also
says which provider and model produced it: only that provider, on a model of the same family,
gets it back as reasoning.
"""

from __future__ import annotations

from attrs import field, frozen


def _tuple_of(value: object) -> object:
    """A list given for a tuple field, as a tuple (anything else unchanged)."""
    return tuple(value) if isinstance(value, list) else value


@frozen
class TextPart:
    """Text the model said, in its place among the message's other parts."""

    text: str


@frozen
class ReasoningPart:
    """What the model thought before the parts that follow it.

    - `text`: the readable reasoning (Anthropic thinking, `reasoning_content`), or "".
    - `summary`: OpenAI Responses reasoning summaries, one string per summary part.
    - `signature`: Anthropic's thinking signature, or a Gemini thought signature.
    - `redacted`: Anthropic's `redacted_thinking` data (encrypted; no readable text).
    - `encrypted`: OpenAI's `encrypted_content`; `id`: the vendor's id of the item.
    - `followed_by`: the vendor's id of the item that followed it (OpenAI Responses pairs a
      reasoning item with that item by its id), so a journaled run sends both back as they came.
    - `provider`, `model`: who produced it (the provider's name and the configured model).
    """

    text: str = ""
    summary: tuple[str, ...] = field(default=(), converter=_tuple_of)
    signature: str | None = None
    redacted: str | None = None
    encrypted: str | None = None
    id: str | None = None
    followed_by: str | None = None
    provider: str | None = None
    model: str | None = None

    @property
    def readable(self) -> str:
        """The reasoning a person can read: the text, else the summaries joined."""
        return self.text or "\n\n".join(self.summary)

    @property
    def is_opaque(self) -> bool:
        """True when the part carries a vendor value that must go back byte-identical."""
        return any(v is not None for v in (self.signature, self.redacted, self.encrypted))
