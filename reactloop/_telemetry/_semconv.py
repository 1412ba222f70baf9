"""The OpenTelemetry GenAI semantic conventions' names reactloop emits, copied from the
published constants (`opentelemetry-semantic-conventions` 0.66b2, semconv schema 1.44, whose GenAI
names the semantic-conventions-genai repository now carries unchanged).

Copied rather than imported: the library depends on `opentelemetry-api` only.
tests/telemetry/test_semconv.py checks every name here against the published constant, so a rename
upstream fails a test."""

from __future__ import annotations

from typing import Final

# Attributes (opentelemetry.semconv._incubating.attributes.gen_ai_attributes).
GEN_AI_OPERATION_NAME: Final = "gen_ai.operation.name"
GEN_AI_PROVIDER_NAME: Final = "gen_ai.provider.name"
GEN_AI_AGENT_NAME: Final = "gen_ai.agent.name"
GEN_AI_CONVERSATION_ID: Final = "gen_ai.conversation.id"
GEN_AI_REQUEST_MODEL: Final = "gen_ai.request.model"
GEN_AI_REQUEST_MAX_TOKENS: Final = "gen_ai.request.max_tokens"
GEN_AI_REQUEST_TEMPERATURE: Final = "gen_ai.request.temperature"
GEN_AI_REQUEST_TOP_P: Final = "gen_ai.request.top_p"
GEN_AI_REQUEST_STREAM: Final = "gen_ai.request.stream"
GEN_AI_RESPONSE_MODEL: Final = "gen_ai.response.model"
REACTLOOP_FALLBACK_MODEL: Final = "reactloop.fallback.model"
GEN_AI_RESPONSE_ID: Final = "gen_ai.response.id"
GEN_AI_RESPONSE_FINISH_REASONS: Final = "gen_ai.response.finish_reasons"
GEN_AI_USAGE_INPUT_TOKENS: Final = "gen_ai.usage.input_tokens"
GEN_AI_USAGE_OUTPUT_TOKENS: Final = "gen_ai.usage.output_tokens"
GEN_AI_USAGE_CACHE_READ_INPUT_TOKENS: Final = "gen_ai.usage.cache_read.input_tokens"
GEN_AI_USAGE_CACHE_CREATION_INPUT_TOKENS: Final = "gen_ai.usage.cache_creation.input_tokens"
GEN_AI_USAGE_REASONING_OUTPUT_TOKENS: Final = "gen_ai.usage.reasoning.output_tokens"
GEN_AI_TOOL_NAME: Final = "gen_ai.tool.name"
GEN_AI_TOOL_CALL_ID: Final = "gen_ai.tool.call.id"
GEN_AI_TOOL_TYPE: Final = "gen_ai.tool.type"
GEN_AI_TOOL_DESCRIPTION: Final = "gen_ai.tool.description"
GEN_AI_TOKEN_TYPE: Final = "gen_ai.token.type"
# Content (opt-in: recorded only with Telemetry(record_content=True)).
GEN_AI_INPUT_MESSAGES: Final = "gen_ai.input.messages"
GEN_AI_OUTPUT_MESSAGES: Final = "gen_ai.output.messages"
GEN_AI_SYSTEM_INSTRUCTIONS: Final = "gen_ai.system_instructions"
GEN_AI_TOOL_CALL_ARGUMENTS: Final = "gen_ai.tool.call.arguments"
GEN_AI_TOOL_CALL_RESULT: Final = "gen_ai.tool.call.result"

# opentelemetry.semconv.attributes.error_attributes (stable).
ERROR_TYPE: Final = "error.type"

# Well-known values (GenAiOperationNameValues, GenAiTokenTypeValues).
OPERATION_CHAT: Final = "chat"
OPERATION_INVOKE_AGENT: Final = "invoke_agent"
OPERATION_EXECUTE_TOOL: Final = "execute_tool"
TOKEN_TYPE_INPUT: Final = "input"
TOKEN_TYPE_OUTPUT: Final = "output"
TOOL_TYPE_FUNCTION: Final = "function"
OTHER: Final = "_OTHER"  # the conventions' fallback value (provider name, error type)
WELL_KNOWN_PROVIDERS: Final = {
    "openai-responses": "openai",
    "google": "gcp.gemini",
    "azure": "azure.ai.openai",
    "azure-responses": "azure.ai.openai",
}
"""reactloop's provider names whose `gen_ai.provider.name` is a well-known value of another
spelling (the Gemini API is `gcp.gemini`, Azure OpenAI `azure.ai.openai`); any other name
(`openai`, `anthropic`, `groq`, `deepseek`, `openrouter`, ...) is sent as it is."""

# Metrics (opentelemetry.semconv._incubating.metrics.gen_ai_metrics), with the conventions'
# explicit bucket boundaries advice (not carried by the Python package: from the spec's text).
GEN_AI_CLIENT_TOKEN_USAGE: Final = "gen_ai.client.token.usage"
GEN_AI_CLIENT_OPERATION_DURATION: Final = "gen_ai.client.operation.duration"
TOKEN_USAGE_UNIT: Final = "{token}"
DURATION_UNIT: Final = "s"
TOKEN_USAGE_BUCKETS: Final = (
    1, 4, 16, 64, 256, 1024, 4096, 16384, 65536, 262144, 1048576, 4194304, 16777216, 67108864,
)  # fmt: skip
DURATION_BUCKETS: Final = (
    0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48, 40.96, 81.92,
)  # fmt: skip
