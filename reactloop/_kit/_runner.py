"""`check_provider`: every conformance check against one provider, with one error listing every
failure (a check that does not apply is listed as skipped, not failed)."""

from __future__ import annotations

from collections.abc import Sequence

from attrs import frozen

from reactloop._kit._answers import ANSWER_CHECKS
from reactloop._kit._check import (
    CheckSkipped,
    ConformanceCheck,
    ConformanceError,
    ConformanceFailure,
)
from reactloop._kit._failures import FAILURE_CHECKS
from reactloop._kit._harness import ProviderHarness, check_harness

CONFORMANCE_CHECKS: tuple[ConformanceCheck, ...] = (*ANSWER_CHECKS, *FAILURE_CHECKS)
"""Every check, in the order `check_provider` runs them."""


@frozen
class ConformanceReport:
    """What `check_provider` found for a provider that passed: the checks passed and the checks
    skipped (with why)."""

    provider: str
    passed: tuple[str, ...]
    skipped: tuple[str, ...]


async def check_provider(
    harness: ProviderHarness, checks: Sequence[ConformanceCheck] = CONFORMANCE_CHECKS
) -> ConformanceReport:
    """Run `checks` (every check by default) against the provider `harness` drives: the report
    when all pass (or are skipped), else one `ConformanceError` listing every failure. A check
    that raises anything else fails with what it raised."""
    check_harness(harness)
    passed: list[str] = []
    skipped: list[str] = []
    failures: list[ConformanceFailure] = []
    for check in checks:
        try:
            await check(harness)
        except CheckSkipped as skip:
            skipped.append(str(skip))
        except ConformanceError as error:
            failures.extend(error.failures)
        except Exception as error:
            got = f"{type(error).__name__}: {error}"
            failures.append(ConformanceFailure(check.name, harness.name, "the check to run", got))
        else:
            passed.append(check.name)
    if failures:
        raise ConformanceError(failures)
    return ConformanceReport(harness.name, tuple(passed), tuple(skipped))
