"""pydantic's refusals in a person's words."""

import pytest
from pydantic import ValidationError

from truffle_assets.feedback.settings import LoggingSettings
from truffle_assets.runtime.config import RuntimeConfig
from truffle_assets.validation_text import in_words


def refusal(model, **values) -> str:
    with pytest.raises(ValidationError) as caught:
        model.model_validate(values)
    return in_words(caught.value)


def test_limits_types_and_unknown_fields_read_as_sentences():
    assert refusal(LoggingSettings, retention_days=0) == "retention days must be at least 1, got 0"
    assert refusal(LoggingSettings, retention_days=99_999) == "retention days must be at most 3650, got 99999"
    assert refusal(LoggingSettings, retention_days="ninety") == "retention days must be a whole number, got 'ninety'"
    assert refusal(LoggingSettings, retention_days=2.5) == "retention days must be a whole number, got 2.5"
    assert refusal(LoggingSettings, transcripts=1.5) == "transcripts must be true or false, got 1.5"
    assert refusal(LoggingSettings, keep_forever=True) == "keep forever is not a setting here"
    assert refusal(RuntimeConfig, max_recalls=7) == "max recalls must be at most 3, got 7"
    nested = refusal(RuntimeConfig, endpoint={"timeout_s": 0})
    assert nested == "endpoint timeout s must be more than 0, got 0"


def test_several_errors_share_one_line_and_no_pydantic_text_leaks():
    text = refusal(LoggingSettings, retention_days=0, content="maybe")
    assert text == "content must be true or false, got 'maybe'; retention days must be at least 1, got 0"
    for leak in ("Input should", "type=", "errors.pydantic.dev", "\n"):
        assert leak not in text
