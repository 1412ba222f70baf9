"""The real web clients, run in Node: the scripts in tests/serve/js use the packages
tests/serve/js/package-lock.json pins (the AI SDK, AG-UI's client) under the Node 22 that lockfile
brings. `make install` runs `npm ci` there; without it a test skips locally, saying how to
enable it, and fails in CI."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import pytest

from tests.helpers.postgres_server import in_ci

JS = Path(__file__).parent / "js"
NODE = JS / "node_modules" / ".bin" / "node"
ENABLE = "run `npm ci --prefix tests/serve/js` (or `make install`) to install the web clients"


def node_or_skip() -> Path:
    """The Node binary the lockfile installs; a skip saying how to get it (a failure in CI)."""
    if NODE.exists():
        return NODE
    if in_ci():
        pytest.fail(f"the web clients are not installed ({NODE} missing): {ENABLE}")
    pytest.skip(f"the web clients are not installed: {ENABLE}")


async def run_node(script: str, payload: Any, *, hang_guard: float = 60.0) -> Any:
    """Run `tests/serve/js/<script>` with `payload` as JSON on stdin; its stdout's last line is
    JSON, returned. A script that fails raises with its stderr; `hang_guard` (seconds) stops a
    script that hangs."""
    node = node_or_skip()
    with anyio.fail_after(hang_guard):
        done = await anyio.run_process(
            [str(node), str(JS / script)],
            input=json.dumps(payload).encode(),
            check=False,
            cwd=JS,
        )
    if done.returncode != 0:
        raise AssertionError(f"{script} failed ({done.returncode}): {done.stderr.decode()}")
    lines = done.stdout.decode().strip().splitlines()
    return json.loads(lines[-1]) if lines else None
