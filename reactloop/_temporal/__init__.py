"""Running a `ReActLoop` on Temporal: the workflow that drives the real loop with model, tool and
toolset calls as activities, the worker helper, and the client-side run handle. Published by
`reactloop.temporal` (the `temporal` extra); ADR-0033 says what runs where.

What other packages may use is imported here; the rest is private to the package."""

__all__: list[str] = []
