"""Public names report the public module that publishes them, as trio's do: `reactloop.ReActLoop`
in reprs, tracebacks and the docs, never the private module it is written in."""

from __future__ import annotations

import inspect
from collections.abc import Mapping
from typing import Any

import attrs


def publish(module: str, namespace: Mapping[str, Any], *, first: bool = False) -> None:
    """Give the classes and functions in `namespace['__all__']` the public `module` as theirs.

    A name published twice (the top level and a themed module) takes the top level's
    (`first=True`); a themed module names only what is still private. An attrs class has its
    annotations resolved first, where they were written, so cattrs and attrs keep reading them.
    """
    for name in namespace["__all__"]:
        if name not in namespace:
            continue  # loaded on first use (a module `__getattr__`), published then
        found = namespace[name]
        if not (inspect.isclass(found) or inspect.isfunction(found)):
            continue
        current = getattr(found, "__module__", "") or ""
        if not current.startswith("reactloop._") and not (first and current != module):
            continue
        if not current.startswith("reactloop"):
            continue  # a name of another library, re-exported
        if inspect.isclass(found) and attrs.has(found) and not _resolved(found):
            continue
        found.__module__ = module


def _resolved(cls: type) -> bool:
    """Resolve an attrs class's string annotations in its own module; False if they cannot be
    (an annotation-only name), and then the class keeps its module."""
    try:
        attrs.resolve_types(cls)
    except NameError:
        return False
    return True
