"""Caller-chosen run ids: `run(..., run_id=...)` names the run, and with a store a run id that
exists already gives that run back (resumed, or its stored result) instead of a second run, so a
client retrying a request never starts two runs; `if_exists="error"` refuses it instead."""

from __future__ import annotations

import enum
from collections.abc import Mapping
from typing import Any

from reactloop._loop._resume import Resumed, resume_run
from reactloop._loop._run import LoopConfig
from reactloop._stored_errors import RunExistsError, RunNotFoundError
from reactloop._unicode import optional_identifier
from reactloop._validate import member

RUN_ID_KEYWORDS = ("run_id", "if_exists")
"""What `run()`, `start()` and `stream()` accept to name a run."""


class IfExists(enum.StrEnum):
    """What starting a run whose id is stored already does: give that run back, or refuse."""

    RESUME = "resume"
    ERROR = "error"


def chosen_run_id(context: Mapping[str, Any]) -> str | None:
    """The caller's `run_id` (an id keeping `ID_RULE`) if given; `if_exists` is checked too."""
    member("if_exists", context.get("if_exists", IfExists.RESUME), IfExists)
    return optional_identifier("run_id", context.get("run_id"))


async def existing_run(config: LoopConfig, context: Mapping[str, Any]) -> Resumed | None:
    """The stored run a caller-chosen `run_id` names, resumed like `resume(run_id)` (a finished
    one with its stored result); None when no id was chosen, there is no store, or no run has
    the id yet. With `if_exists="error"`, a stored run is a `RunExistsError`."""
    if not context:
        return None
    run_id = chosen_run_id(context)
    store = config.store
    if run_id is None or store is None:
        return None
    try:
        await store.load(run_id)
    except RunNotFoundError:
        return None
    if member("if_exists", context.get("if_exists", IfExists.RESUME), IfExists) is IfExists.ERROR:
        raise RunExistsError(run_id)
    return await resume_run(config, run_id, {"deps": context.get("deps")})
