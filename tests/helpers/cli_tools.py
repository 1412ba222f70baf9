"""Tools the command line's tests import with `--tools tests.helpers.cli_tools:NAME`."""

from __future__ import annotations

import anyio

from reactloop import ReActLoop, tool
from reactloop.testing import FakeToolset, ScriptedModel, call


@tool
def add(a: int, b: int) -> int:
    """Add two numbers.

    Args:
        a: The first.
        b: The second.
    """
    return a + b


@tool
async def wait() -> str:
    """Runs until it is cancelled (a tool still running when Ctrl-C is pressed)."""
    await anyio.sleep_forever()
    return "never"


@tool(requires_approval=True)
def transfer(amount: int) -> str:
    """Move money (a person approves each call).

    Args:
        amount: How much.
    """
    return f"moved {amount}"


@tool
def double(n: int) -> int:
    """Twice a number.

    Args:
        n: The number.
    """
    return 2 * n


@tool
def triple(n: int) -> int:
    """Three times a number.

    Args:
        n: The number.
    """
    return 3 * n


def shout(text: str) -> str:
    """Say it louder (a plain function: the loop makes it a tool).

    Args:
        text: What to say.
    """
    return text.upper()


ALL = [add, double]
NOT_A_TOOL = 42
TOOLSET = FakeToolset("calc", [triple])  # as an MCP server would serve its tools
RESEARCHER = ReActLoop(
    ScriptedModel([call("double", n=21), "The answer is 42."]), tools=[double]
).as_tool(name="researcher", description="Looks things up (an agent: a loop of its own).")
