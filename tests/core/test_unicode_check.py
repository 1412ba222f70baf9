"""The repair's fast check (adr/0022): it says a record is clean exactly when the full walk of
its fields would replace nothing, so skipping the walk never keeps a lone surrogate."""

from __future__ import annotations

from hypothesis import given

from reactloop._unicode import repaired_record, walked_record
from tests.helpers.strategies import rough_records


@given(rough_records)
def test_the_fast_check_agrees_with_the_full_walk(record: object) -> None:
    fixed, count = repaired_record(record)  # type: ignore[type-var]
    walked, walked_count = walked_record(record)  # type: ignore[type-var]
    assert (fixed, count) == (walked, walked_count)
    assert (fixed is record) == (count == 0)
