"""A peer for the workplace's peer harness (`peer_overhead.py`, outside this repository: see
docs/performance.md for the command): reactloop as an earlier commit had it, so that before and
after are measured side by side in one run (each peer runs in its own process). Give the
harness `--only reactloop,reactloop_before --extra benchmarks/peer_before.py`, with
`REACTLOOP_BEFORE` naming a checkout of the earlier commit (`git worktree add DIR COMMIT`).

The peer is the harness's own `reactloop` peer, built after importing reactloop from that
checkout instead of this one.
"""

from __future__ import annotations

import os
import sys
from typing import Any

from peer_overhead import PEERS, peer  # type: ignore[import-not-found]


def make_reactloop_before(limits: Any) -> Any:
    """The `reactloop` peer, on the code of the checkout `REACTLOOP_BEFORE` names."""
    checkout = os.environ.get("REACTLOOP_BEFORE")
    if not checkout:
        raise SystemExit("set REACTLOOP_BEFORE to a checkout of the earlier commit")
    for name in [m for m in sys.modules if m == "reactloop" or m.startswith("reactloop.")]:
        del sys.modules[name]
    sys.path.insert(0, checkout)
    return PEERS["reactloop"].factory(limits)


peer("reactloop_before", packages=["reactloop"])(make_reactloop_before)
