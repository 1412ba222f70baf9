"""What a served error shows of a credential: nothing. A model's or tool's error message may
quote a key (a provider's "Incorrect API key provided: sk-...", a header echoed back, a
library's `api_key=...`); the library masks the forms it knows (`reactloop._redact`), and an
error text a server sends to a browser is masked further here: values named like a secret,
`Bearer` tokens and the shapes of the common providers' keys."""

from __future__ import annotations

import re

from reactloop._redact import MASK, redacted

_NAMED = re.compile(
    r"(?P<lead>\b[\w-]*(?:api[ _-]?key(?:\s+provided)?|apikey|secret|token|passw(?:or)?d"
    r"|authorization)"
    r"[\"']?\s*[:=]\s*[\"']?(?:bearer\s+|basic\s+)?)(?P<value>[^\s\"',;&]+)",
    re.I,
)
_BEARER = re.compile(r"(?P<lead>\b(?:bearer|basic)\s+)(?P<value>[A-Za-z0-9._~+/=-]{8,})", re.I)
_KEY_SHAPES = re.compile(
    r"\b(?:sk|pk|rk)-[A-Za-z0-9_-]{12,}"  # OpenAI, Anthropic (sk-ant-...), and alike
    r"|\bAIza[0-9A-Za-z_-]{20,}"  # Google
    r"|\b(?:ghp|gho|ghs|github_pat|xox[abpr]|hf)_[A-Za-z0-9_-]{12,}"  # GitHub, Slack, HF
    r"|\bAKIA[0-9A-Z]{16}\b"  # AWS access key ids
)


def _masked_value(match: re.Match[str]) -> str:
    return match[0] if match["value"] == MASK else f"{match['lead']}{MASK}"


def masked(text: str) -> str:
    """`text` as a client may read it: every credential the library knows masked, and values
    named like a secret, bearer tokens and key-shaped words replaced with `***`."""
    text = redacted(text)
    text = _KEY_SHAPES.sub(MASK, text)
    text = _NAMED.sub(_masked_value, text)
    return _BEARER.sub(_masked_value, text)
