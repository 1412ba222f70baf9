"""The built-in chat page (`chat.html`): one self-contained HTML file that speaks the AI SDK UI
message stream the server mounts at `api/chat`, and the response that serves it (and any other
self-contained page, such as a run's trace) with a Content-Security-Policy that lets it run its
own inline script and reach nothing but its own server."""

from __future__ import annotations

import base64
import hashlib
import importlib.resources
import re
from collections.abc import Awaitable, Callable

from starlette.requests import Request
from starlette.responses import HTMLResponse

TRACE_OFF = '<body data-trace="off">'
TRACE_ON = '<body data-trace="on">'
_SCRIPTS = re.compile(r"<script>(.*?)</script>", re.DOTALL)
_STYLES = re.compile(r"<style>(.*?)</style>", re.DOTALL)
NONE = "'none'"
SELF = "'self'"


def chat_page(*, trace_links: bool) -> str:
    """The chat page; with `trace_links` each answer links to its run's trace page
    (`runs/{run_id}/trace`, which needs the loop's store)."""
    page = importlib.resources.files("reactloop._serve").joinpath("chat.html").read_text("utf-8")
    return page.replace(TRACE_OFF, TRACE_ON) if trace_links else page


def _hashes(pattern: re.Pattern[str], html: str) -> str:
    """The CSP source list allowing exactly the inline blocks `pattern` finds in `html`."""
    digests = (hashlib.sha256(block.encode()).digest() for block in pattern.findall(html))
    return " ".join(f"'sha256-{base64.b64encode(digest).decode()}'" for digest in digests)


def content_policy(html: str, *, connect: bool, style_attributes: bool = False) -> str:
    """A Content-Security-Policy for a self-contained page: its own inline scripts (by hash),
    its styles, images only as data URLs, requests only to its own origin when `connect` (else
    none), no frames, forms or plugins. `style_attributes` allows `style="..."` in the markup."""
    scripts = _hashes(_SCRIPTS, html) or NONE
    styles = "'unsafe-inline'" if style_attributes else _hashes(_STYLES, html) or NONE
    return "; ".join(
        (
            f"default-src {NONE}",
            f"script-src {scripts}",
            f"style-src {styles}",
            "img-src data:",
            f"connect-src {SELF if connect else NONE}",
            f"base-uri {NONE}",
            f"form-action {NONE}",
            f"frame-ancestors {NONE}",
        )
    )


def page_response(html: str, *, connect: bool, style_attributes: bool = False) -> HTMLResponse:
    """`html` served with its `content_policy`, not cached, not sniffed, never framed."""
    headers = {
        "content-security-policy": content_policy(
            html, connect=connect, style_attributes=style_attributes
        ),
        "x-content-type-options": "nosniff",
        "cache-control": "no-store",
        "referrer-policy": "no-referrer",
    }
    return HTMLResponse(html, headers=headers)


def chat_endpoint(*, trace_links: bool) -> Callable[[Request], Awaitable[HTMLResponse]]:
    """A Starlette endpoint serving the chat page (built once)."""
    html = chat_page(trace_links=trace_links)

    async def endpoint(request: Request) -> HTMLResponse:
        return page_response(html, connect=True)

    return endpoint
