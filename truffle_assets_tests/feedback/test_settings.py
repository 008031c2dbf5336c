"""What the store keeps: off until turned on, the layers (env < saved < session), clear errors."""

from __future__ import annotations

import json

import pytest

from truffle_assets.feedback.settings import (
    LOG_ENV, RETENTION_ENV, LoggingSettings, SettingsError, env_defaults, read_saved, resolve, save, settings_path,
)


def test_nothing_is_kept_until_turned_on(tmp_path):
    keep, sources = resolve(tmp_path / "runtime", env={})
    assert (keep.transcripts, keep.content, keep.feedback, keep.keeps_anything) == (False, False, False, False)
    assert keep.retention_days == 90 and set(sources.values()) == {"default"}
    assert keep.describe() == "Not keeping transcripts or ratings"
    assert not (tmp_path / "runtime").exists()  # resolving never creates the store


def test_layers_env_then_saved_then_session(tmp_path):
    store = tmp_path / "runtime"
    env = {LOG_ENV: "transcripts,feedback", RETENTION_ENV: "30"}
    keep, sources = resolve(store, env=env)
    assert (keep.transcripts, keep.content, keep.feedback, keep.retention_days) == (True, False, True, 30)
    assert sources == {"transcripts": "env", "content": "env", "feedback": "env", "retention_days": "env"}

    # the person's saved choice beats the operator's default, field by field
    assert save(store, {"feedback": False, "retention_days": 7}) == {"feedback": False, "retention_days": 7}
    keep, sources = resolve(store, env=env)
    assert (keep.transcripts, keep.feedback, keep.retention_days) == (True, False, 7)
    assert sources["feedback"] == sources["retention_days"] == "saved" and sources["transcripts"] == "env"
    assert json.loads(settings_path(store).read_text()) == {"feedback": False, "retention_days": 7}

    # a session override wins for that process only; None means "not set here"
    keep, sources = resolve(store, {"transcripts": False, "content": None, "feedback": True}, env=env)
    assert (keep.transcripts, keep.feedback) == (False, True) and sources["content"] == "env"
    assert read_saved(store) == {"feedback": False, "retention_days": 7}


@pytest.mark.parametrize("keep,line", [
    (LoggingSettings(transcripts=True, content=True, feedback=True),
     "Keeping transcripts (with the text of questions and answers) and ratings for 90 days"),
    (LoggingSettings(transcripts=True, retention_days=1),
     "Keeping transcripts (without their text) for 1 day; not keeping ratings"),
    (LoggingSettings(feedback=True, content=True, retention_days=30),
     "Keeping ratings for 30 days; not keeping transcripts"),
])
def test_describe_says_what_is_kept(keep, line):
    assert keep.describe() == line
    assert keep.keeps_content is (keep.transcripts and keep.content)


def test_env_values(tmp_path):
    assert env_defaults({LOG_ENV: "all"}) == dict.fromkeys(("transcripts", "content", "feedback"), True)
    assert env_defaults({LOG_ENV: " Off "}) == dict.fromkeys(("transcripts", "content", "feedback"), False)
    assert env_defaults({LOG_ENV: "content"}) == {"transcripts": False, "content": True, "feedback": False}
    with pytest.raises(SettingsError, match=r"\$TRUFFLE_LOG='transcript': 'transcript' is not one of"):
        env_defaults({LOG_ENV: "transcript"})
    with pytest.raises(SettingsError, match=r"\$TRUFFLE_RETENTION_DAYS='ninety' is not a whole number"):
        env_defaults({RETENTION_ENV: "ninety"})
    with pytest.raises(SettingsError, match=r"^\$TRUFFLE_RETENTION_DAYS: retention days must be at least 1, got 0$"):
        env_defaults({RETENTION_ENV: "0"})


def test_bad_saved_file_names_file_and_line(tmp_path):
    path = settings_path(tmp_path)
    path.write_text('{\n  "transcripts": true,\n  "feedback": tru\n}\n')
    with pytest.raises(SettingsError, match=rf"^{path}:3: not valid JSON"):
        resolve(tmp_path, env={})
    path.write_text('{"transcripts": "maybe"}')
    with pytest.raises(SettingsError, match=rf"^{path}: transcripts must be true or false, got 'maybe'$"):
        read_saved(tmp_path)
    path.write_text('{"keep_forever": true}')
    with pytest.raises(SettingsError, match=rf"^{path}: unknown setting 'keep_forever'"):
        read_saved(tmp_path)
    path.write_text("[]")
    with pytest.raises(SettingsError, match=rf"^{path}:1: expected a JSON object"):
        read_saved(tmp_path)
    # a bad change is refused before anything is written
    path.unlink()
    with pytest.raises(SettingsError, match="retention days must be at most 3650, got 100000"):
        save(tmp_path, {"retention_days": 100_000})
    assert not path.exists()
