"""What the command line builds from its arguments: tools imported by `module:attr`, MCP servers
started by `--mcp`, the store a URL names (or `REACTLOOP_STORE`), files given by `--attach`, each
failure a `ConfigurationError` naming the bad value."""

from __future__ import annotations

import importlib
import os
import shlex
import sys
from collections.abc import Sequence
from typing import Any, Literal

from reactloop._core import AudioPart, BinaryPart, DocumentPart, ImagePart
from reactloop._durable import SqliteStore, Store, from_url
from reactloop._errors import ConfigurationError
from reactloop._tools import MCPServerStdio

STORE_ENV = "REACTLOOP_STORE"
"""The environment variable a store URL is read from when `--store` is not given."""

MCP_RULE = "a command line that starts an MCP server over stdio, e.g. 'uvx mcp-server-time'"
TOOLS_RULE = "'module:attr' naming an importable tool, list of tools, or function"
IMAGE_SUFFIXES = (".png", ".jpg", ".jpeg", ".gif", ".webp")
DOCUMENT_SUFFIXES = (".pdf", ".txt", ".md", ".csv", ".json", ".html", ".xml")
AUDIO_SUFFIXES = (".wav", ".mp3", ".flac", ".ogg", ".m4a", ".webm", ".aac")


def attachments(paths: Sequence[str]) -> list[BinaryPart]:
    """The files `--attach` names, as parts by their extension: images, documents (a PDF as
    bytes, the others as text) and audio."""
    return [_attachment(path) for path in paths]


def _attachment(path: str) -> BinaryPart:
    suffix = os.path.splitext(path)[1].lower()
    rule = f"a readable file ending in one of {', '.join(IMAGE_SUFFIXES + DOCUMENT_SUFFIXES)}, "
    rule += ", ".join(AUDIO_SUFFIXES)
    try:
        if suffix in IMAGE_SUFFIXES:
            return ImagePart.from_file(path)
        if suffix in DOCUMENT_SUFFIXES:
            return DocumentPart.from_file(path)
        if suffix in AUDIO_SUFFIXES:
            return AudioPart.from_file(path)
    except (OSError, UnicodeDecodeError) as error:
        raise ConfigurationError.invalid("--attach", path, f"{rule} ({error})") from error
    raise ConfigurationError.invalid("--attach", path, rule)


def import_tools(specs: Sequence[str]) -> list[Any]:
    """The tools each `module:attr` names, in order; a list or tuple adds each of its items.

    The working directory is importable, as for `python -m`: a user's own tools module is found.
    """
    if specs and os.getcwd() not in sys.path:
        sys.path.insert(0, os.getcwd())
    tools: list[Any] = []
    for spec in specs:
        found = _imported(spec)
        tools += list(found) if isinstance(found, list | tuple) else [found]
    return tools


def _imported(spec: str, option: str = "--tools", rule: str = TOOLS_RULE) -> Any:
    """The object `module:attr` names (attr may be dotted); `option` and `rule` name what the
    spec was given as in the error."""
    module_name, colon, attr = spec.partition(":")
    if not colon or not module_name or not attr:
        raise ConfigurationError.invalid(option, spec, rule)
    try:
        found: Any = importlib.import_module(module_name)
    except ImportError as exc:
        raise ConfigurationError(
            f"{option} {spec!r}: module {module_name!r} cannot be imported ({exc})",
            option=option,
            value=spec,
            rule=rule,
        ) from exc
    for part in attr.split("."):
        if not hasattr(found, part):
            raise ConfigurationError(
                f"{option} {spec!r}: {module_name!r} has no attribute {attr!r}",
                option=option,
                value=spec,
                rule=rule,
            )
        found = getattr(found, part)
    return found


def imported(spec: str, option: str, rule: str) -> Any:
    """The object `module:attr` names, the working directory importable (as for `python -m`);
    a spec that names nothing is a `ConfigurationError` naming `option` and `rule`."""
    if os.getcwd() not in sys.path:
        sys.path.insert(0, os.getcwd())
    return _imported(spec, option, rule)


def mcp_servers(specs: Sequence[str], *, show_stderr: bool = False) -> list[Any]:
    """An `MCPServerStdio` toolset per `--mcp "COMMAND ARGS"` (split as a shell would); its log
    lines (stderr) go to the `reactloop.mcp` logger, or with `show_stderr` to the terminal."""
    servers = []
    for spec in specs:
        try:
            words = shlex.split(spec)
        except ValueError as exc:
            raise ConfigurationError.invalid("--mcp", spec, f"{MCP_RULE} ({exc})") from exc
        if not words:
            raise ConfigurationError.invalid("--mcp", spec, MCP_RULE)
        stderr: Literal["log", "inherit"] = "inherit" if show_stderr else "log"
        servers.append(MCPServerStdio(words[0], words[1:], stderr=stderr))
    return servers


def store_url(given: str | None) -> str:
    """The store URL: `--store`, else `REACTLOOP_STORE`; neither is a `ConfigurationError`."""
    url = given or os.environ.get(STORE_ENV)
    if not url:
        rule = f"a store URL from --store or {STORE_ENV}, e.g. 'sqlite:///runs.db'"
        raise ConfigurationError.invalid("--store", None, rule)
    return url


def open_store(given: str | None) -> Store:
    """The store `--store` (or `REACTLOOP_STORE`) names, to read: a SQLite file that does not
    exist is a `ConfigurationError` naming it (a typo must not read as an empty store, and a
    command that only reads never creates a file)."""
    url = store_url(given)
    store = from_url("--store", url)
    path = store.path if isinstance(store, SqliteStore) else ":memory:"
    if path != ":memory:" and not os.path.exists(path):
        raise ConfigurationError(
            f"--store {url!r}: there is no run store at {os.path.abspath(path)!r}"
            " (no such file; reading a store never creates one)",
            option="--store",
            value=url,
            rule="the URL of an existing store to read",
        )
    return store
