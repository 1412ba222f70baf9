"""`ContentFilteredError`: a vendor's content filter blocked the prompt or the answer (Azure
OpenAI's `content_filter`, Gemini's `promptFeedback.blockReason` and `SAFETY` finishes), with the
verdict per category as the vendor gave it."""

from __future__ import annotations

from collections.abc import Iterable

from attrs import frozen

from reactloop._errors import ErrorCode, InvalidRequestError
from reactloop._validate import (
    boolean,
    checked_arguments,
    fail,
    instance,
    optional_text,
    sequence_of,
    text,
)

PLACES = ("prompt", "answer")


@checked_arguments
@frozen
class FilterVerdict:
    """One category's verdict: its vendor name (`hate`, `jailbreak`,
    `HARM_CATEGORY_DANGEROUS_CONTENT`), whether it blocked, and the vendor's severity or
    probability (`medium`, `HIGH`) when given."""

    category: str
    filtered: bool
    severity: str | None = None

    def __attrs_post_init__(self) -> None:
        text("FilterVerdict.category", self.category, blank=True)  # as the vendor named it
        boolean("FilterVerdict.filtered", self.filtered)
        optional_text("FilterVerdict.severity", self.severity, blank=True)


def _verdict(option: str, value: object) -> FilterVerdict:
    return instance(option, value, FilterVerdict, "a FilterVerdict")


class ContentFilteredError(InvalidRequestError):
    """The provider's content filter blocked the prompt (`where="prompt"`) or the answer
    (`where="answer"`): retrying the same request cannot help, rephrasing may.

    `verdicts` holds the categories the vendor reported (those that blocked first); `reason` the
    vendor's own word for the block when it gave one (`SAFETY`, `content_filter`)."""

    code = ErrorCode.CONTENT_FILTERED

    def __init__(
        self,
        message: str,
        *,
        provider: str | None = None,
        where: str = "prompt",
        verdicts: Iterable[FilterVerdict] = (),
        reason: str | None = None,
        status: int | None = None,
    ) -> None:
        super().__init__(message, status=status, provider=provider)
        if where not in PLACES:  # a provider's own code builds it: a typo fails where it is made
            fail("ContentFilteredError.where", where, f"one of {list(PLACES)}")
        given = sequence_of("ContentFilteredError.verdicts", verdicts, _verdict, "FilterVerdicts")
        self.where = where
        self.verdicts = tuple(sorted(given, key=lambda verdict: not verdict.filtered))
        self.reason = reason

    @property
    def blocked(self) -> tuple[str, ...]:
        """The categories that blocked."""
        return tuple(verdict.category for verdict in self.verdicts if verdict.filtered)
