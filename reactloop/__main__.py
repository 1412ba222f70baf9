"""`python -m reactloop`: print the version and how to run the demo (a real CLI comes later)."""

from __future__ import annotations

from reactloop._version import __version__

USAGE = """\
reactloop {version}: a decomposed ReAct loop for tool-using LLM agents.

Run the demo agent (offline, a scripted model plays the model):
    python -m reactloop.examples.demo

Or on a real model (keys and base URLs come from the environment):
    REACTLOOP_MODEL=openai:gpt-4o-mini OPENAI_API_KEY=sk-... python -m reactloop.examples.demo
"""


def main() -> None:
    """Print the version and the demo's command line."""
    print(USAGE.format(version=__version__), end="")


if __name__ == "__main__":
    main()
