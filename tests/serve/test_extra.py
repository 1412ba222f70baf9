"""The `serve` extra is needed only to serve: `import reactloop` (and `reactloop.serve`) loads no
Starlette, and a `ChatServer` made without Starlette says how to get it."""

from __future__ import annotations

import subprocess
import sys

import pytest

from reactloop import ReActLoop
from reactloop.errors import ConfigurationError
from reactloop.serve import ChatServer, ServeOptions
from reactloop.testing import ScriptedModel


def test_importing_reactloop_and_its_serve_module_loads_no_starlette() -> None:
    code = (
        "import sys, reactloop, reactloop.errors\n"
        "loaded = [m for m in sys.modules if m.startswith(('starlette', 'hypercorn'))]\n"
        "assert not loaded, loaded\n"
        "import reactloop.serve\n"
        "loaded = [m for m in sys.modules if m.startswith(('starlette', 'hypercorn'))]\n"
        "assert not loaded, loaded\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_a_server_without_starlette_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "starlette", None)  # `import starlette` now fails
    with pytest.raises(ConfigurationError, match=r"pip install 'reactloop\[serve\]'"):
        ChatServer(ReActLoop(ScriptedModel(["hi"])))


def test_a_server_of_something_else_than_a_loop_is_refused() -> None:
    with pytest.raises(ConfigurationError, match="ReActLoop"):
        ChatServer("loop")  # type: ignore[arg-type]
    with pytest.raises(ConfigurationError, match="ServeOptions"):
        ChatServer(ReActLoop(ScriptedModel(["hi"])), {"max_body_bytes": 1})  # type: ignore[arg-type]


def test_a_server_builds_its_apps_without_serving() -> None:
    server = ChatServer(ReActLoop(ScriptedModel(["hi"])), ServeOptions())
    paths = {getattr(route, "path", None) for route in server.asgi().routes}
    assert {
        "/api/chat",
        "/api/chat/{chat_id}/stream",
        "/ag-ui",
        "/ag-ui/runs/{run_id}/events",
    } <= paths
    assert {getattr(route, "path", None) for route in server.ai_sdk().routes} >= {
        "/",
        "/{chat_id}/messages",
    }
    assert {getattr(route, "path", None) for route in server.ag_ui().routes} >= {
        "/runs/{run_id}/cancel"
    }
