"""User-facing error messages: a short, friendly sentence per error code, replaceable by the user.

Error messages written for developers name rules and values, and may quote a provider's reply;
none of that belongs in front of an end user. A resolver turns an error into a safe sentence.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Protocol, runtime_checkable

from attrs import field, frozen

from reactloop._errors import ConfigurationError, ErrorCode, ReactLoopError
from reactloop._validate import checked_arguments

DEFAULT_MESSAGES: Mapping[ErrorCode, str] = MappingProxyType(
    {
        ErrorCode.RATE_LIMITED: "The AI service is busy right now. Please try again in a moment.",
        ErrorCode.TIMEOUT: "This is taking longer than expected. Please try again.",
        ErrorCode.CONTEXT_TOO_LONG: (
            "This conversation has become too long. Please start a new one or shorten your message."
        ),
        ErrorCode.AUTHENTICATION: (
            "The assistant cannot reach the AI service right now. Please contact support."
        ),
        ErrorCode.INVALID_REQUEST: (
            "Your request could not be processed. Please rephrase it and try again."
        ),
        ErrorCode.CONTENT_FILTERED: (
            "Your request was blocked by the AI service's content policy. Please rephrase it."
        ),
        ErrorCode.QUOTA_EXHAUSTED: (
            "The assistant has used up its AI service allowance for now. Please contact support."
        ),
        ErrorCode.PROVIDER_UNAVAILABLE: (
            "The AI service is temporarily unavailable. Please try again shortly."
        ),
        ErrorCode.TOOL_ERROR: "One of the assistant's tools ran into a problem. Please try again.",
        ErrorCode.GUARD_REJECTED: "Your message could not be accepted. Please change it and retry.",
        ErrorCode.HOOK_REJECTED: "Your request could not be completed. Please try again.",
        ErrorCode.INVALID_RESPONSE: (
            "The AI service sent an answer that could not be read. Please try again."
        ),
        ErrorCode.CANCELLED: "The request was cancelled.",
        ErrorCode.CONFIGURATION: "The assistant is not set up correctly. Please contact support.",
        ErrorCode.CONTRACT: "The assistant ran into an internal problem. Please contact support.",
        ErrorCode.CONFLICT: (
            "Your previous message is still being answered. Please wait for it, then try again."
        ),
        ErrorCode.STORE: "The assistant could not save this conversation. Please try again later.",
        ErrorCode.INVALID_STATE: (
            "This conversation's saved state could not be accepted. Please start again."
        ),
        ErrorCode.UNKNOWN: "Something went wrong. Please try again.",
    }
)


@runtime_checkable
class ErrorMessageResolver(Protocol):
    """Turns an error into the sentence an end user sees; replace it to change wording."""

    def __call__(self, error: ReactLoopError) -> str:
        """A short, safe sentence: never the error's own message, keys or internals."""
        ...


_OVERRIDES_RULE = "a mapping of ErrorCode to a non-empty sentence"


def _frozen_messages(overrides: Mapping[ErrorCode, str]) -> Mapping[ErrorCode, str]:
    option = "DefaultErrorMessages.overrides"
    if not isinstance(overrides, Mapping):
        raise ConfigurationError.invalid(option, overrides, _OVERRIDES_RULE)
    for code, text in overrides.items():
        if not isinstance(code, ErrorCode) or not isinstance(text, str) or not text.strip():
            raise ConfigurationError.invalid(option, {code: text}, _OVERRIDES_RULE)
    return MappingProxyType(dict(overrides))


@checked_arguments
@frozen
class DefaultErrorMessages:
    """The default resolver: one fixed sentence per `ErrorCode`, optionally overridden per code.

    It never looks at the error's message, so nothing a provider or tool said can leak through.
    """

    overrides: Mapping[ErrorCode, str] = field(factory=dict, converter=_frozen_messages, hash=False)

    def __call__(self, error: ReactLoopError) -> str:
        """The sentence for the error's code."""
        return self.for_code(error.code)

    def for_code(self, code: ErrorCode) -> str:
        """The sentence for a code (also usable where no exception exists, e.g. cancelled)."""
        return self.overrides.get(code) or DEFAULT_MESSAGES[code]


DEFAULT_RESOLVER = DefaultErrorMessages()


def user_message(error: ReactLoopError, resolver: ErrorMessageResolver = DEFAULT_RESOLVER) -> str:
    """The resolver's sentence; the default one when a custom resolver fails or returns no text.

    A broken resolver must not turn one error into another on the way to the user.
    """
    try:
        text = resolver(error)
    except Exception:
        return DEFAULT_RESOLVER(error)
    return text if isinstance(text, str) and text.strip() else DEFAULT_RESOLVER(error)
