"""Every convention name reactloop emits equals the published constant (a rename upstream fails)."""

from __future__ import annotations

import warnings

import pytest
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.semconv._incubating.attributes import gen_ai_attributes as published
from opentelemetry.semconv._incubating.metrics import gen_ai_metrics
from opentelemetry.semconv.attributes import error_attributes

from reactloop._telemetry import _semconv

ATTRIBUTES = [
    name
    for name in dir(_semconv)
    if name.startswith("GEN_AI_") and not name.startswith("GEN_AI_CLIENT_")
]


@pytest.mark.parametrize("name", ATTRIBUTES)
def test_attribute_name_is_the_published_constant(name: str) -> None:
    assert getattr(_semconv, name) == getattr(published, name)


@pytest.mark.parametrize("name", ["GEN_AI_CLIENT_TOKEN_USAGE", "GEN_AI_CLIENT_OPERATION_DURATION"])
def test_metric_name_is_the_published_constant(name: str) -> None:
    assert getattr(_semconv, name) == getattr(gen_ai_metrics, name)


def test_error_type_is_the_published_constant() -> None:
    assert _semconv.ERROR_TYPE == error_attributes.ERROR_TYPE


def test_well_known_values_are_the_published_ones() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # GenAI moved to its own repository
        operations = published.GenAiOperationNameValues
        tokens = published.GenAiTokenTypeValues
        tool_types = {"function", "extension", "datastore"}
        assert operations.CHAT.value == _semconv.OPERATION_CHAT
        assert operations.INVOKE_AGENT.value == _semconv.OPERATION_INVOKE_AGENT
        assert operations.EXECUTE_TOOL.value == _semconv.OPERATION_EXECUTE_TOOL
        assert tokens.INPUT.value == _semconv.TOKEN_TYPE_INPUT
        assert tokens.OUTPUT.value == _semconv.TOKEN_TYPE_OUTPUT
    assert _semconv.TOOL_TYPE_FUNCTION in tool_types


def test_metric_units_are_the_published_ones() -> None:
    reader = InMemoryMetricReader()
    meter = MeterProvider(metric_readers=[reader]).get_meter("check")
    gen_ai_metrics.create_gen_ai_client_token_usage(meter).record(1)
    gen_ai_metrics.create_gen_ai_client_operation_duration(meter).record(1.0)
    data = reader.get_metrics_data()
    assert data is not None
    units = {
        m.name: m.unit for r in data.resource_metrics for s in r.scope_metrics for m in s.metrics
    }
    assert units == {
        _semconv.GEN_AI_CLIENT_TOKEN_USAGE: _semconv.TOKEN_USAGE_UNIT,
        _semconv.GEN_AI_CLIENT_OPERATION_DURATION: _semconv.DURATION_UNIT,
    }


def test_every_renamed_provider_is_a_published_well_known_value() -> None:
    published_values = {value.value for value in published.GenAiProviderNameValues}
    assert set(_semconv.WELL_KNOWN_PROVIDERS.values()) <= published_values
