"""`ServeOptions` and `CorsOptions` as a user writes them: values the checks normalize (a
policy's string value, lists for tuples) and the one combination of CORS settings browsers
refuse, named at construction. (Wrong types per option: tests/public/test_validate.py.)"""

from __future__ import annotations

import pytest

from reactloop.errors import ConfigurationError
from reactloop.serve import CorsOptions, DisconnectPolicy, ServeOptions


def test_a_disconnect_policys_string_value_is_taken_as_the_policy() -> None:
    options = ServeOptions(on_disconnect="keep_running")  # type: ignore[arg-type]
    assert options.on_disconnect is DisconnectPolicy.KEEP_RUNNING


def test_lists_of_origins_and_headers_are_kept_as_tuples() -> None:
    cors = CorsOptions(allow_origins=["https://app.example.com"], allow_headers=["x-user"])  # type: ignore[arg-type]
    assert cors.allow_origins == ("https://app.example.com",)
    assert cors.allow_headers == ("x-user",)


def test_any_origin_with_credentials_is_refused_naming_the_option() -> None:
    with pytest.raises(ConfigurationError) as raised:
        CorsOptions(allow_origins=("*",), allow_credentials=True)
    assert raised.value.option == "CorsOptions.allow_origins"
    assert "credentials" in str(raised.value)
