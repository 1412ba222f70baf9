"""Human in the loop: the approval policy, checking and applying decisions, paused runs and
their signed state tokens. Published by `reactloop.approval`.

What other packages may use is imported here; the rest is private to the package."""

from reactloop._approval._deciding import check_decisions, decisions_mapping, expired
from reactloop._approval._options import ApprovalOptions
from reactloop._approval._paused import journal_store, store_of_token, with_state
from reactloop._approval._policy import DEFAULT_POLICY, ApprovalCheck, ApprovalPolicy
from reactloop._approval._sealing import (
    ENV_VAR,
    MAX_TOKEN_BYTES,
    MIN_TOKEN_BYTES,
    SigningKeys,
    StateKey,
    signing_keys,
)

__all__ = [
    "DEFAULT_POLICY",
    "ENV_VAR",
    "MAX_TOKEN_BYTES",
    "MIN_TOKEN_BYTES",
    "ApprovalCheck",
    "ApprovalOptions",
    "ApprovalPolicy",
    "SigningKeys",
    "StateKey",
    "check_decisions",
    "decisions_mapping",
    "expired",
    "journal_store",
    "signing_keys",
    "store_of_token",
    "with_state",
]
