"""A run with a 5 MB screenshot: asked about in the input, returned again by a tool in step 1,
then three text steps and an answer (what the stored-once tests of stores and cassettes play)."""

from __future__ import annotations

import random

from reactloop import ImagePart, ToolCall, UserMessage, tool
from reactloop.testing import ScriptedModel

MB5 = 5_000_000
BIG = b"\x89PNG\r\n\x1a\n" + random.Random(5).randbytes(MB5 - 8)  # 5 MB that do not compress


def question(image: bytes) -> UserMessage:
    """The user's question about `image`."""
    return UserMessage(parts=["What is on this screenshot?", ImagePart(image)])


@tool
def crop(x: int) -> list[object]:
    """The screenshot again, cropped (here: the same bytes, as a tool may well return)."""
    return [f"cropped at {x}", ImagePart(BIG)]


@tool
def zoom(level: int) -> str:
    """Zoom in."""
    return f"zoomed {level}x"


def five_steps() -> ScriptedModel:
    """Step 1 returns the image again from a tool; steps 2-4 call a text tool; step 5 answers."""
    calls = [ToolCall("crop", '{"x": 1}', "c1")]
    calls += [ToolCall("zoom", f'{{"level": {n}}}', f"z{n}") for n in range(2, 5)]
    return ScriptedModel([*calls, "a login form"])
