"""A peer for `../shared/bench/peer_overhead.py`: reactloop as an earlier commit had it, so that
before and after are measured side by side in one run (each peer runs in its own process).

    git worktree add /tmp/reactloop-before <commit>
    REACTLOOP_BEFORE=/tmp/reactloop-before .venv/bin/python ../shared/bench/peer_overhead.py \\
        --only reactloop,reactloop_before --extra benchmarks/peer_before.py --rounds 5

The peer is the harness's own `reactloop` peer, built after importing reactloop from the
checkout `REACTLOOP_BEFORE` names instead of this one.
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
