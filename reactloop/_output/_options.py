"""`OutputOptions`: how a loop asks for and checks its structured output (`output=`)."""

from __future__ import annotations

from collections.abc import Sequence

from attrs import field, frozen

from reactloop._output._spec import OutputStrategy, OutputValidator, output_validator
from reactloop._validate import checked_arguments, integer, member, sequence_of


def _validators(value: Sequence[OutputValidator]) -> tuple[OutputValidator, ...]:
    return sequence_of("OutputOptions.validators", value, output_validator, "functions")


@checked_arguments
@frozen
class OutputOptions:
    """How the model is asked for `output_type` and how its answer is checked:
    `ReActLoop(model, output_type=Invoice, output=OutputOptions(...))`.

    Every field is optional:

    - `strategy` (`OutputStrategy.AUTO`): the provider's native structured outputs, a
      final-answer tool, or the schema in the prompt; its string value is accepted.
    - `retries` (2): more tries after an answer that does not validate (0: none).
    - `validators` (()): functions of the value (and optionally the `RunContext`) that check or
      change it; one raises `OutputRetry` to ask the model again.

    Given without `output_type`, anything but the defaults is refused (it would have no effect).
    """

    strategy: OutputStrategy = OutputStrategy.AUTO
    retries: int = 2
    validators: Sequence[OutputValidator] = field(default=(), converter=_validators)

    def __attrs_post_init__(self) -> None:
        strategy = member("OutputOptions.strategy", self.strategy, OutputStrategy)
        object.__setattr__(self, "strategy", strategy)
        integer("OutputOptions.retries", self.retries, minimum=0)
