"""What a served error text shows of a credential (`reactloop._serve._masks.masked`): the forms
keys are quoted in are masked, and ordinary words about tokens and keys are left alone."""

from __future__ import annotations

import pytest

from reactloop._serve._masks import masked


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        ("Incorrect API key provided: abc123def456.", "Incorrect API key provided: ***"),
        ("bad key sk-ant-api03-AbCdEf0123456789", "bad key ***"),
        ("key AIzaSyA1234567890abcdefghijklmno was refused", "key *** was refused"),
        ("sent Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.x.y", "sent Authorization: Bearer ***"),
        ('{"x-api-key": "zzzz-zzzz-zzzz"}', '{"x-api-key": "***"}'),
        ("failed with api_key=hunter2xyz here", "failed with api_key=*** here"),
        ("https://h.example/v1?key=s3cr3t-value", "https://h.example/v1?key=***"),
    ],
)
def test_a_quoted_credential_is_masked(text: str, shown: str) -> None:
    assert masked(text) == shown


@pytest.mark.parametrize(
    "text",
    [
        "the token limit was exceeded (max_tokens: 4096)",
        "API key is invalid",
        "the model's context holds 128000 tokens",
        "tool 'search' raised ValueError: no such city",
    ],
)
def test_ordinary_words_about_keys_and_tokens_are_left_alone(text: str) -> None:
    assert masked(text) == text
