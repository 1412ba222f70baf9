"""The exception tree: every error reactloop raises derives from `ReactLoopError`.

Each error carries a stable `code` (an `ErrorCode`), structured fields, and a message that names the
broken rule and the offending value::

    ReactLoopError
    ├── ConfigurationError          configuration   a loop, tool or phase was set up wrongly
    │   └── ToolDefinitionError     configuration   a function cannot become a tool
    ├── ModelError                  (per subclass)  the model call failed
    │   ├── RateLimitedError        rate_limited    (quota_exhausted when waiting cannot help)
    │   ├── ModelTimeoutError       timeout
    │   ├── ContextTooLongError     context_too_long
    │   ├── AuthenticationError     authentication
    │   ├── InvalidRequestError     invalid_request
    │   │   └── ProviderConfigurationError configuration  wrong URL, unknown model, refused setting
    │   │       │ (also a ConfigurationError: the developer must fix it)
    │   │       ├── UnsupportedContentError configuration  a part this provider cannot take
    │   │       └── ContentTooLargeError configuration  a part over the provider's size limit
    │   ├── ProviderUnavailableError provider_unavailable
    │   ├── InvalidResponseError    invalid_response
    │   └── ScriptExhaustedError    invalid_response  a scripted test model ran out of responses
    ├── ToolError                   tool_error      a tool call failed; the model reads it
    │   ├── UnknownToolError        tool_error      the model named a tool that does not exist
    │   ├── ToolArgumentsError      tool_error      arguments did not match the tool's schema
    │   ├── ToolRefusedError        tool_error      not run: over the cap, hook rejected, stopping
    │   ├── ToolTimeoutError        timeout         the tool ran past its timeout
    │   ├── ToolExecutionError      tool_error      the tool raised
    │   ├── AgentDepthError         tool_error      an agent tool would nest runs past max_depth
    │   ├── AgentRunError           tool_error      an agent tool's sub-run failed or gave no answer
    │   └── MCPToolError            tool_error      an MCP tool answered with isError
    ├── ToolsetError                tool_error      a toolset (an MCP server) was used wrongly
    │   └── ToolsetConnectionError  tool_error      it could not be started or reached, or it
    │                                               closed the connection (crashed, exited)
    ├── RunTimeoutError             timeout         the whole run exceeded its timeout
    ├── NoResultError               cancelled       a run was cancelled or aborted: it has no result
    ├── GuardRejectedError          guard_rejected  an input guard refused the input
    ├── PartialJsonError            invalid_response  a streamed structured answer is not JSON
    ├── ContractError               contract        user code broke its run-time contract
    │   └── HookError               hook_rejected   a fail-closed hook raised or broke its contract
    ├── RunLimitError               timeout         no concurrent-run slot became free in time
    ├── RunNotFoundError            configuration   no stored run has this id
    ├── MissingToolError            configuration   resuming a run with a loop that lacks its tools
    ├── SessionBusyError            conflict        another run of this session is in progress
    ├── RunInProgressError          conflict        resuming a run this process still drives
    ├── RunExistsError              conflict        run(run_id=..., if_exists="error"): it exists
    ├── LeaseHeldError              conflict        another worker holds the run's lease
    ├── LeaseLostError              conflict        this worker lost the lease of a run it drove
    ├── DecisionError               configuration   a decision given to resume() cannot apply
    │   (a ConfigurationError)
    ├── StoreError                  store           the run store failed or holds unreadable data
    │   └── UnreadableRunError      store           a stored run's journal cannot be read
    ├── StateTokenError             invalid_state   a paused run's state token was refused
    ├── CassetteError               configuration   a recorded run cannot be read or replayed
    │   ├── CassetteFormatError     configuration   not a cassette file of a known version
    │   ├── CassetteMismatchError   configuration   a replayed request differs from the recording
    │   ├── CassetteExhaustedError  configuration   a request past the end of the recording
    │   ├── UnrecordedCallError     configuration   a served tool call that is not in the recording
    │   └── RecordedToolError       configuration   a recorded tool failure, served again
    └── MovedNameError              configuration   imported from its old place (an ImportError)

Cancellation is never wrapped in any of these: it propagates as the backend's own exception.
"""

from __future__ import annotations

import enum
import reprlib
from collections.abc import Sequence

from reactloop._redact import redacted


class ErrorCode(enum.StrEnum):
    """Stable, machine-readable error codes: safe to switch on, log and show in dashboards."""

    RATE_LIMITED = "rate_limited"
    TIMEOUT = "timeout"
    CONTEXT_TOO_LONG = "context_too_long"
    AUTHENTICATION = "authentication"
    INVALID_REQUEST = "invalid_request"
    CONTENT_FILTERED = "content_filtered"
    QUOTA_EXHAUSTED = "quota_exhausted"
    PROVIDER_UNAVAILABLE = "provider_unavailable"
    TOOL_ERROR = "tool_error"
    GUARD_REJECTED = "guard_rejected"
    HOOK_REJECTED = "hook_rejected"
    INVALID_RESPONSE = "invalid_response"
    CANCELLED = "cancelled"
    CONFIGURATION = "configuration"
    CONTRACT = "contract"
    CONFLICT = "conflict"
    STORE = "store"
    INVALID_STATE = "invalid_state"
    UNKNOWN = "unknown"


class ReactLoopError(Exception):
    """Root of every reactloop error; `code` says which kind it is. Its message never shows a
    credential: passwords and secret query parameters in it are masked (`_redact`), the last
    line of defence for everything that shows or stores an error (results, journal, spans, CLI)."""

    code: ErrorCode = ErrorCode.UNKNOWN

    def __init__(self, message: str) -> None:
        message = redacted(message)
        super().__init__(message)
        self.message = message


_SHOW = reprlib.Repr()
_SHOW.maxstring = _SHOW.maxother = _SHOW.maxlong = 120


def show(value: object) -> str:
    """The value as an error message quotes it: its repr, cut short when long."""
    return _SHOW.repr(value)


class ConfigurationError(ReactLoopError):
    """A loop, phase or tool was configured in a way that cannot work.

    When one option is at fault, `option` names it, `value` is what was given and `rule` what it
    must be (all None otherwise); the message says the same in words.
    """

    code = ErrorCode.CONFIGURATION

    def __init__(
        self,
        message: str,
        *,
        option: str | None = None,
        value: object = None,
        rule: str | None = None,
    ) -> None:
        super().__init__(message)
        self.option = option
        self.value = value
        self.rule = rule

    @classmethod
    def invalid(cls, option: str, value: object, rule: str) -> ConfigurationError:
        """The error for one option whose value breaks `rule` ("an int >= 1", ...)."""
        return cls(
            f"{option} must be {rule}, got {show(value)}", option=option, value=value, rule=rule
        )


class ToolDefinitionError(ConfigurationError):
    """A function cannot be turned into a tool (unsupported annotation, missing hint, ...)."""

    def __init__(self, tool_name: str, problem: str) -> None:
        super().__init__(f"tool {tool_name!r} cannot be defined: {problem}")
        self.tool_name = tool_name
        self.problem = problem


class ModelError(ReactLoopError):
    """The model call failed; subclasses say why and whether a retry can help.

    `retry_after` (seconds) and `should_retry` carry the provider's own hints; `attempts` says how
    many calls were made before this error was raised (more than 1 once retries happened).
    """

    code = ErrorCode.UNKNOWN
    retryable: bool = False
    attempts: int = 1

    def __init__(
        self,
        message: str,
        *,
        status: int | None = None,
        provider: str | None = None,
        retry_after: float | None = None,
        should_retry: bool | None = None,
    ) -> None:
        super().__init__(message)
        self.status = status
        self.provider = provider
        self.retry_after = retry_after
        self.should_retry = should_retry


class RateLimitedError(ModelError):
    """The provider refused the call for rate reasons; retryable unless the quota is exhausted.

    An exhausted quota (or credit) does not clear by waiting: its code is `quota_exhausted`, so
    that the end user is not told to try again in a moment.
    """

    code = ErrorCode.RATE_LIMITED
    retryable = True

    def __init__(
        self,
        message: str,
        *,
        status: int | None = 429,
        provider: str | None = None,
        retry_after: float | None = None,
        should_retry: bool | None = None,
        quota_exhausted: bool = False,
    ) -> None:
        super().__init__(
            message,
            status=status,
            provider=provider,
            retry_after=retry_after,
            should_retry=should_retry,
        )
        self.quota_exhausted = quota_exhausted
        self.retryable = not quota_exhausted
        if quota_exhausted:
            self.code = ErrorCode.QUOTA_EXHAUSTED


class ModelTimeoutError(ModelError):
    """The model call (or a stream going idle) exceeded its timeout."""

    code = ErrorCode.TIMEOUT
    retryable = True


class ContextTooLongError(ModelError):
    """The conversation does not fit the model's context window; retrying cannot help.

    When reactloop's own budgeting raises it (before any request), `budget` is the tokens the
    messages may take and `needed` the tokens of the messages that can never be dropped.
    """

    code = ErrorCode.CONTEXT_TOO_LONG

    def __init__(
        self,
        message: str,
        *,
        status: int | None = None,
        provider: str | None = None,
        retry_after: float | None = None,
        should_retry: bool | None = None,
        budget: int | None = None,
        needed: int | None = None,
    ) -> None:
        super().__init__(
            message,
            status=status,
            provider=provider,
            retry_after=retry_after,
            should_retry=should_retry,
        )
        self.budget = budget
        self.needed = needed


class AuthenticationError(ModelError):
    """The provider rejected the credentials."""

    code = ErrorCode.AUTHENTICATION


class InvalidRequestError(ModelError):
    """The provider rejected the request as malformed."""

    code = ErrorCode.INVALID_REQUEST


class ProviderConfigurationError(InvalidRequestError, ConfigurationError):
    """The provider refused the request as configured: nothing answers at the URL (404, 405, a
    redirect), the model does not exist, or the model rejects a setting the request carries.

    Neither retrying nor rephrasing can help, so its code is `configuration` and it is both a
    `ModelError` (a model call failed) and a `ConfigurationError` (the developer must fix it): the
    end user is told the assistant is not set up correctly. `url` is the URL tried, when the request
    was sent; `option`, `value` and `rule` name the setting at fault, when reactloop knows it.
    """

    code = ErrorCode.CONFIGURATION

    def __init__(
        self,
        message: str,
        *,
        status: int | None = None,
        provider: str | None = None,
        retry_after: float | None = None,
        should_retry: bool | None = None,
        url: str | None = None,
        option: str | None = None,
        value: object = None,
        rule: str | None = None,
    ) -> None:
        super().__init__(
            message,
            status=status,
            provider=provider,
            retry_after=retry_after,
            should_retry=should_retry,
        )
        self.url = url
        self.option = option
        self.value = value
        self.rule = rule


class ProviderUnavailableError(ModelError):
    """The provider is down, overloaded or unreachable; retryable."""

    code = ErrorCode.PROVIDER_UNAVAILABLE
    retryable = True


class InvalidResponseError(ModelError):
    """The provider answered with something that is not a valid response."""

    code = ErrorCode.INVALID_RESPONSE


class ScriptExhaustedError(InvalidResponseError):
    """A scripted test model was asked for more responses than it was given."""

    def __init__(self, given: int) -> None:
        super().__init__(
            f"scripted model has no response left: all {given} scripted responses were used"
        )
        self.given = given


class ToolError(ReactLoopError):
    """A tool call failed; the loop turns it into an error result the model can read."""

    code = ErrorCode.TOOL_ERROR

    def __init__(self, message: str, *, tool_name: str) -> None:
        super().__init__(message)
        self.tool_name = tool_name


class UnknownToolError(ToolError):
    """The model asked for a tool that does not exist (a hallucinated name)."""

    def __init__(self, tool_name: str, available: Sequence[str]) -> None:
        names = ", ".join(available) or "(none)"
        super().__init__(
            f"unknown tool {tool_name!r}: the available tools are {names}", tool_name=tool_name
        )
        self.available = tuple(available)


class ToolArgumentsError(ToolError):
    """The arguments did not match the tool's parameter schema."""

    def __init__(self, tool_name: str, problems: Sequence[str]) -> None:
        super().__init__(
            f"invalid arguments for tool {tool_name!r}: " + "; ".join(problems),
            tool_name=tool_name,
        )
        self.problems = tuple(problems)


class ToolRefusedError(ToolError):
    """The call was not run: over the tool-call cap, rejected by a hook, or the run is stopping."""

    def __init__(self, tool_name: str, why: str) -> None:
        super().__init__(f"tool call {tool_name!r} was not run: {why}", tool_name=tool_name)
        self.why = why


class ToolTimeoutError(ToolError):
    """The tool did not finish within its timeout."""

    code = ErrorCode.TIMEOUT

    def __init__(self, tool_name: str, timeout: float) -> None:
        super().__init__(
            f"tool {tool_name!r} timed out after {timeout:g} s (its timeout)", tool_name=tool_name
        )
        self.timeout = timeout


class ToolExecutionError(ToolError):
    """The tool raised; the original exception is kept as `__cause__`."""

    def __init__(self, tool_name: str, error: BaseException) -> None:
        super().__init__(
            f"tool {tool_name!r} raised {type(error).__name__}: {error}", tool_name=tool_name
        )
        self.error_type = type(error).__name__


class AgentDepthError(ToolError):
    """An agent tool was called from runs nested `depth - 1` deep: its sub-run would be `depth`
    deep, past its `max_depth` (runaway recursion stops here)."""

    def __init__(self, tool_name: str, depth: int, max_depth: int) -> None:
        super().__init__(
            f"agent tool {tool_name!r} was not run: its sub-run would be nested {depth} runs deep, "
            f"over its max_depth of {max_depth}",
            tool_name=tool_name,
        )
        self.depth = depth
        self.max_depth = max_depth


class AgentRunError(ToolError):
    """An agent tool's sub-run failed, or ended without an answer; `why` says how it ended."""

    def __init__(self, tool_name: str, run_id: str, why: str) -> None:
        super().__init__(
            f"agent tool {tool_name!r} (run {run_id}) failed: {why}", tool_name=tool_name
        )
        self.run_id = run_id
        self.why = why


class MCPToolError(ToolError):
    """An MCP tool answered with `isError`: `detail` (its text) is the error the model reads."""

    def __init__(self, tool_name: str, detail: str) -> None:
        super().__init__(f"tool {tool_name!r} reported an error: {detail}", tool_name=tool_name)
        self.detail = detail


class ToolsetError(ReactLoopError):
    """A toolset (an MCP server) was used wrongly (entered twice, called after closing) or failed;
    `toolset` names it and `problem` says what happened."""

    code = ErrorCode.TOOL_ERROR

    def __init__(self, toolset: str, problem: str) -> None:
        super().__init__(f"toolset {toolset!r}: {problem}")
        self.toolset = toolset
        self.problem = problem


class ToolsetConnectionError(ToolsetError):
    """The toolset's server could not be started or reached, or it closed the connection (it
    crashed or exited, mid-call or between calls). A call cut off this way gets an error result;
    a later call starts the server again while its `ServerRestartPolicy` allows."""


class RunTimeoutError(ReactLoopError):
    """The whole run took longer than its `run_timeout`; completed work is kept in the result."""

    code = ErrorCode.TIMEOUT

    def __init__(self, timeout: float) -> None:
        super().__init__(f"run exceeded its run_timeout of {timeout:g} s")
        self.timeout = timeout


class NoResultError(ReactLoopError):
    """A handle's or stream's run was cancelled or aborted before it ended, so it has no result."""

    code = ErrorCode.CANCELLED

    def __init__(self, run_id: str) -> None:
        super().__init__(
            f"run {run_id} has no result: it was cancelled or aborted (by an exception that is "
            "not an Exception, such as KeyboardInterrupt) before it ended"
        )
        self.run_id = run_id


class GuardRejectedError(ReactLoopError):
    """An input guard refused the user input before any model call."""

    code = ErrorCode.GUARD_REJECTED

    def __init__(self, guard: str, reason: str) -> None:
        super().__init__(f"input rejected by guard {guard}: {reason}")
        self.guard = guard
        self.reason = reason


class PartialJsonError(ReactLoopError):
    """A streamed structured answer is not valid JSON, or it ended before its value was complete.

    `offset` is the character offset in the whole answer where the fault lies, `rule` the JSON
    rule it breaks and `got` the text found there (empty when the answer ended early).
    """

    code = ErrorCode.INVALID_RESPONSE

    def __init__(self, offset: int, rule: str, got: str) -> None:
        where = "at its end" if not got else f"at character {offset}"
        shown = f"; got {show(got)}" if got else ""
        super().__init__(f"the answer is not valid JSON {where}: {rule}{shown}")
        self.offset = offset
        self.rule = rule
        self.got = got


def name_of(code: object) -> str:
    """A readable name for a piece of user code: a function's qualified name, else its class's."""
    qualname = getattr(code, "__qualname__", None)
    return qualname if isinstance(qualname, str) else type(code).__name__


def _shown(value: object, limit: int = 200) -> str:
    text = repr(value)
    return text if len(text) <= limit else f"{text[:limit]}... ({type(value).__name__})"


class ContractError(ReactLoopError):
    """User code (a phase, hook, model, prepare_step, stop condition, guard, instructions function)
    broke its run-time contract; the run ends with `stop_reason=error`.

    `culprit` names the piece of code, `rule` the contract it broke, `value` what it gave instead.
    """

    code = ErrorCode.CONTRACT

    def __init__(
        self,
        culprit: str,
        rule: str,
        value: object,
        *,
        got: str | None = None,
        message: str | None = None,
    ) -> None:
        got = _shown(value) if got is None else got
        super().__init__(message or f"{culprit} broke its contract: {rule}; got {got}")
        self.culprit = culprit
        self.rule = rule
        self.value = value


class HookError(ContractError):
    """A fail-closed hook raised (`error`, kept as `__cause__`) or broke its contract (`rule`)."""

    code = ErrorCode.HOOK_REJECTED

    def __init__(
        self,
        hook: str,
        point: str,
        error: BaseException | None = None,
        *,
        rule: str = "a fail-closed hook must not raise",
        value: object = None,
        got: str | None = None,
    ) -> None:
        culprit = f"hook {hook} at {point}"
        if error is None:
            super().__init__(culprit, rule, value, got=got)
        else:
            text = f"hook {hook} failed at {point} (fail-closed): {type(error).__name__}: {error}"
            super().__init__(culprit, rule, error, message=text)
        self.hook = hook
        self.point = point


class RunLimitError(ReactLoopError):
    """Every concurrent-run slot stayed busy for longer than the limiter's maximum wait."""

    code = ErrorCode.TIMEOUT

    def __init__(self, limit: int, max_wait: float) -> None:
        super().__init__(
            f"no run slot became free within max_wait={max_wait:g} s: "
            f"all {limit} slots of the concurrent-run limit (max_runs={limit}) are busy"
        )
        self.limit = limit
        self.max_wait = max_wait


class MovedNameError(ReactLoopError, ImportError):
    """A name imported from where it no longer lives; the message says where it went.

    It is an `ImportError`, so `from reactloop import OldName` fails the way Python's own does,
    with a message that names the new home.
    """

    code = ErrorCode.CONFIGURATION

    def __init__(self, name: str, rule: str) -> None:
        super().__init__(f"reactloop has no {name!r}: {rule}")
        self.name = name
        self.rule = rule


class StrictSchemaError(ConfigurationError):
    """A JSON schema that a provider's strict structured-output mode cannot express (a mapping
    with free-form keys, a value of any type, ...): send it without strict, or use another
    output strategy. `provider`, `location` (a JSON pointer into the schema) and `problem` say
    what and where."""

    def __init__(self, provider: str, location: str, problem: str) -> None:
        super().__init__(
            f"{provider} strict mode cannot express the schema at {location}: {problem}",
            option="output_type",
            rule=f"a schema {provider} strict mode accepts",
        )
        self.provider = provider
        self.location = location
        self.problem = problem
