"""The `temporal` extra is needed only to run loops on Temporal: `import reactloop` (its errors
and `reactloop.temporal` included) loads no Temporal SDK, and the Temporal errors are part of
`reactloop.errors`' one tree."""

from __future__ import annotations

import subprocess
import sys

import reactloop.errors
import reactloop.temporal
from reactloop.errors import ReactLoopError


def test_importing_reactloop_its_errors_and_its_temporal_module_loads_no_temporalio() -> None:
    code = (
        "import sys, reactloop, reactloop.errors, reactloop.temporal, reactloop.stores\n"
        "loaded = [m for m in sys.modules if m.startswith('temporalio')]\n"
        "assert not loaded, loaded\n"
        "reactloop.temporal.TemporalLoop\n"
        "assert 'temporalio' in sys.modules\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_the_temporal_errors_are_reactloop_errors_of_the_same_classes() -> None:
    names = [name for name in reactloop.temporal.__all__ if name.endswith("Error")]
    assert "TemporalRunError" in names and "PayloadTooLargeError" in names
    for name in names:
        found = getattr(reactloop.errors, name)
        assert found is getattr(reactloop.temporal, name)
        assert issubclass(found, ReactLoopError)
