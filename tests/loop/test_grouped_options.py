"""Grouped loop options (ADR-0024): each moved flat key still works in 0.2, warns naming its new
home, gives the same configuration as its group, and is refused beside its group."""

from __future__ import annotations

from typing import Any

import pytest

from reactloop import ApprovalPolicy, CapPolicy, ConfigurationError, Limits, ReActLoop
from reactloop._loop._config import MOVED
from reactloop.approval import ApprovalOptions
from reactloop.output import OutputOptions, OutputStrategy
from reactloop.testing import ScriptedModel, make_run
from reactloop.tools import RelevanceSelector, ToolSelection

KEY = "k" * 32
SELECTOR = RelevanceSelector()
FLAT_AND_GROUPED: dict[str, tuple[object, dict[str, Any]]] = {
    "max_tool_calls": (3, {"limits": Limits(max_tool_calls=3)}),
    "on_cap": (CapPolicy.STOP_NOW, {"limits": Limits(on_cap=CapPolicy.STOP_NOW)}),
    "tool_timeout": (2.0, {"limits": Limits(tool_timeout=2.0)}),
    "model_timeout": (2.0, {"limits": Limits(model_timeout=2.0)}),
    "run_timeout": (2.0, {"limits": Limits(run_timeout=2.0)}),
    "max_concurrency": (2, {"limits": Limits(max_concurrency=2)}),
    "max_result_chars": (99, {"limits": Limits(max_result_chars=99)}),
    "max_concurrent_runs": (2, {"limits": Limits(max_concurrent_runs=2)}),
    "run_limiter": (None, {"limits": Limits(run_limiter=None)}),
    "repetition": (None, {"limits": Limits(repetition=None)}),
    "tool_selector": (SELECTOR, {"tool_selection": ToolSelection(selector=SELECTOR)}),
    "max_tools_per_request": (2, {"tool_selection": ToolSelection(max_tools=2)}),  # ranks anew
    "state_key": (KEY, {"approval": ApprovalOptions(state_key=KEY)}),
    "max_state_token_bytes": (2048, {"approval": ApprovalOptions(max_state_token_bytes=2048)}),
    "output_strategy": (OutputStrategy.TOOL, {"output": OutputOptions(strategy="tool")}),  # type: ignore[arg-type]
    "output_retries": (0, {"output": OutputOptions(retries=0)}),
    "output_validators": ((), {"output": OutputOptions(validators=())}),
}
COMPARED = (
    "stop_when", "on_cap", "tool_timeout", "model_timeout", "run_timeout", "max_concurrency",
    "max_result_chars", "repetition", "selection", "state_keys", "max_state_token_bytes",
)  # fmt: skip


def test_every_moved_key_is_covered() -> None:
    assert set(FLAT_AND_GROUPED) == set(MOVED)


def _loop(**options: Any) -> ReActLoop[Any]:
    output_type = dict if any(name.startswith("output") for name in options) else None
    return ReActLoop(ScriptedModel([]), output_type=output_type, **options)


@pytest.mark.parametrize("flat", list(FLAT_AND_GROUPED))
def test_a_moved_key_warns_with_its_new_home_and_acts_as_its_group(flat: str) -> None:
    value, grouped = FLAT_AND_GROUPED[flat]
    home = MOVED[flat]
    expected = (
        f"ReActLoop({flat}=...) is deprecated: use {home.group}={home.kind}({home.field}=...);"
        " the flat key goes in 0.3"
    )
    with pytest.warns(
        DeprecationWarning, match=expected.replace("(", r"\(").replace(")", r"\)")
    ) as seen:
        old = _loop(**{flat: value})
    assert [w.filename for w in seen] == [__file__]  # the caller's line, not the library's
    new = _loop(**grouped)
    for name in COMPARED:
        mine, theirs = getattr(old.config, name), getattr(new.config, name)
        if name == "selection" and flat == "max_tools_per_request":
            mine, theirs = mine.limit, theirs.limit  # each makes its own RelevanceSelector
        assert repr(mine) == repr(theirs), name
    if old.config.output is not None and new.config.output is not None:
        assert old.config.output.retries == new.config.output.retries
        assert old.config.output.strategy == new.config.output.strategy


@pytest.mark.parametrize("flat", list(FLAT_AND_GROUPED))
def test_a_moved_key_beside_its_group_is_refused(flat: str) -> None:
    value, grouped = FLAT_AND_GROUPED[flat]
    with pytest.raises(ConfigurationError, match=f"both {flat}= and") as caught:
        _loop(**{flat: value}, **grouped)
    assert caught.value.option == flat


def test_a_bare_approval_policy_is_short_for_the_group_and_takes_a_flat_key() -> None:
    policy = ApprovalPolicy(needs_approval=lambda check: True)
    loop = ReActLoop(ScriptedModel([]), approval=policy, store="memory://")
    assert loop.config.approval is policy
    with pytest.warns(DeprecationWarning, match="ApprovalOptions"):
        flat = ReActLoop(ScriptedModel([]), approval=policy, state_key=KEY)
    assert flat.config.approval is policy and flat.config.state_keys is not None


def test_make_run_and_with_output_warn_once_and_take_the_groups() -> None:
    with pytest.warns(DeprecationWarning, match="max_tool_calls") as seen:
        make_run(max_tool_calls=1)
    assert len(seen) == 1
    assert make_run(limits=Limits(max_result_chars=5)).config.max_result_chars == 5
    loop = ReActLoop(ScriptedModel([]))
    with pytest.warns(DeprecationWarning, match=r"output=OutputOptions\(retries=\.\.\.\)"):
        loop.with_output(dict, output_retries=0)
    typed = loop.with_output(dict, output=OutputOptions(retries=0))
    assert typed.config.output is not None and typed.config.output.retries == 0


@pytest.mark.parametrize(
    ("make", "meant"),
    [
        (lambda: Limits(max_tool_call=1), "max_tool_calls"),  # type: ignore[call-arg]
        (lambda: OutputOptions(retry=1), "retries"),  # type: ignore[call-arg]
        (lambda: ApprovalOptions(polcy=None), "policy"),  # type: ignore[call-arg]
        (lambda: ToolSelection(max_tool=1), "max_tools"),  # type: ignore[call-arg]
    ],
)
def test_a_misspelled_field_of_a_group_gets_a_suggestion(make: Any, meant: str) -> None:
    with pytest.raises(ConfigurationError, match=f"did you mean {meant!r}"):
        make()


def test_a_near_miss_of_a_moved_key_suggests_its_new_home() -> None:
    with pytest.raises(ConfigurationError, match=r"did you mean output=OutputOptions\(retries"):
        ReActLoop(ScriptedModel([]), output_retry=1)  # type: ignore[call-overload]


def test_a_state_key_never_shows_in_a_repr() -> None:
    assert KEY not in repr(ApprovalOptions(state_key=KEY))
