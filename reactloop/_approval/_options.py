"""`ApprovalOptions`: which calls wait for a person, how paused runs are sealed (`approval=`)."""

from __future__ import annotations

from attrs import field, frozen

from reactloop._approval._policy import ApprovalPolicy
from reactloop._approval._sealing import MAX_TOKEN_BYTES, MIN_TOKEN_BYTES, StateKey, signing_keys
from reactloop._validate import checked_arguments, integer, optional_instance


@checked_arguments
@frozen
class ApprovalOptions:
    """Human in the loop, in one options object: `approval=ApprovalOptions(...)` (a bare
    `approval=ApprovalPolicy(...)` is short for `ApprovalOptions(policy=...)`).

    Every field is optional:

    - `policy` (None): an `ApprovalPolicy` deciding which calls wait for a person, and for how
      long (None: only tools marked `requires_approval` or `external` wait).
    - `state_key` (None: the `REACTLOOP_STATE_KEY` environment variable): signs paused runs'
      state tokens; one key of at least 32 bytes, or a list whose first key signs and whose
      others still verify. Never shown in a repr.
    - `max_state_token_bytes` (1 MiB): longer state tokens are refused unread (at least 1 KiB).
    """

    policy: ApprovalPolicy | None = None
    state_key: StateKey = field(default=None, repr=False)
    max_state_token_bytes: int = MAX_TOKEN_BYTES

    def __attrs_post_init__(self) -> None:
        optional_instance(
            "ApprovalOptions.policy", self.policy, ApprovalPolicy, "an ApprovalPolicy"
        )
        if self.state_key is not None:  # kept as the checked keys, so a wrong one fails here
            object.__setattr__(self, "state_key", signing_keys(self.state_key))
        integer(
            "ApprovalOptions.max_state_token_bytes",
            self.max_state_token_bytes,
            minimum=MIN_TOKEN_BYTES,
        )
