"""What the runtime store keeps: the person's logging choice and its retention window.

Nothing is kept until the person turns it on. Transcripts (per-turn metadata), content (the
redacted prompt and answer text, only alongside transcripts) and feedback (ratings and notes) are
separate choices; `retention_days` is how long any of it stays before the daily Dagster job
(`defs/feedback/jobs.py`) deletes it. Layers, lowest first:

1. built in: keep nothing, 90 days;
2. `$TRUFFLE_LOG` (`all`, `none`, or a comma list of `transcripts,content,feedback`) and
   `$TRUFFLE_RETENTION_DAYS`: an operator's default while the person has saved nothing;
3. the person's saved choice, `<store>/settings.json` (the chat page's settings, `truffle logging`),
   read on every turn so `truffle serve`, `truffle chat` and `truffle ask` on one store agree;
4. a process's own overrides (`--log`, `--no-transcripts`, `RuntimeConfig` fields), for that
   process only.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from truffle_assets.files import write_json_atomic
from truffle_assets.validation_text import in_words

SETTINGS_FILE = "settings.json"
LOG_ENV = "TRUFFLE_LOG"
RETENTION_ENV = "TRUFFLE_RETENTION_DAYS"
KINDS = ("transcripts", "content", "feedback")
FIELDS = (*KINDS, "retention_days")
DEFAULT_RETENTION_DAYS = 90
MAX_RETENTION_DAYS = 3650
_ALL = {"all", "on", "1", "true", "yes"}
_NONE = {"", "none", "off", "0", "false", "no"}


class SettingsError(ValueError):
    """An unreadable saved choice or environment value; the message names the file or variable."""


class LoggingSettings(BaseModel):
    model_config = ConfigDict(extra="forbid")

    transcripts: bool = False   # turn metadata -> store/turns/
    content: bool = False       # redacted prompt + answer -> store/content/ (only with transcripts)
    feedback: bool = False      # ratings and notes -> store/feedback/
    retention_days: int = Field(DEFAULT_RETENTION_DAYS, ge=1, le=MAX_RETENTION_DAYS)

    @property
    def keeps_content(self) -> bool:
        return self.transcripts and self.content

    @property
    def keeps_anything(self) -> bool:
        return self.transcripts or self.feedback

    def describe(self) -> str:
        """One line for the page, `truffle serve` and `truffle chat`: what is kept, for how long."""
        if not self.keeps_anything:
            return "Not keeping transcripts or ratings"
        kept = []
        if self.transcripts:
            kept.append("transcripts " + ("(with the text of questions and answers)" if self.content
                                          else "(without their text)"))
        if self.feedback:
            kept.append("ratings")
        days = f"{self.retention_days} day" + ("s" if self.retention_days != 1 else "")
        line = f"Keeping {' and '.join(kept)} for {days}"
        return line + ("" if self.transcripts else "; not keeping transcripts") + \
            ("" if self.feedback else "; not keeping ratings")


def settings_path(store_dir: str | Path) -> Path:
    return Path(store_dir) / SETTINGS_FILE


def _checked(values: Mapping[str, Any], where: str) -> dict[str, Any]:
    """`values` validated field by field (only the keys given); errors name `where` and the field."""
    unknown = sorted(set(values) - set(FIELDS))
    if unknown:
        raise SettingsError(f"{where}: unknown setting {unknown[0]!r} (expected one of {', '.join(FIELDS)})")
    try:
        full = LoggingSettings.model_validate({**LoggingSettings().model_dump(), **values})
    except ValidationError as exc:
        raise SettingsError(f"{where}: {in_words(exc)}") from None
    return {k: getattr(full, k) for k in values}


def read_saved(store_dir: str | Path) -> dict[str, Any]:
    """The fields the person saved (maybe none); SettingsError naming the file and line if unreadable."""
    path = settings_path(store_dir)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return {}
    except (OSError, UnicodeDecodeError) as exc:
        raise SettingsError(f"{path}: cannot read the saved logging choice: {exc}") from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise SettingsError(f"{path}:{exc.lineno}: not valid JSON: {exc.msg}") from None
    if not isinstance(data, dict):
        raise SettingsError(f"{path}:1: expected a JSON object, got {type(data).__name__}")
    return _checked(data, str(path))


def env_defaults(env: Mapping[str, str] | None = None) -> dict[str, Any]:
    """`$TRUFFLE_LOG` / `$TRUFFLE_RETENTION_DAYS` as settings (only what is set)."""
    env = os.environ if env is None else env
    out: dict[str, Any] = {}
    if LOG_ENV in env:
        raw = env[LOG_ENV].strip().lower()
        if raw in _ALL:
            out.update(dict.fromkeys(KINDS, True))
        elif raw in _NONE:
            out.update(dict.fromkeys(KINDS, False))
        else:
            names = [n.strip() for n in raw.split(",") if n.strip()]
            bad = [n for n in names if n not in KINDS]
            if bad:
                raise SettingsError(f"${LOG_ENV}={env[LOG_ENV]!r}: {bad[0]!r} is not one of all, none, "
                                    f"{', '.join(KINDS)}")
            out.update({k: k in names for k in KINDS})
    if env.get(RETENTION_ENV, "").strip():
        try:
            days = int(env[RETENTION_ENV])
        except ValueError:
            raise SettingsError(f"${RETENTION_ENV}={env[RETENTION_ENV]!r} is not a whole number of days") from None
        out.update(_checked({"retention_days": days}, f"${RETENTION_ENV}"))
    return out


def resolve(store_dir: str | Path, overrides: Mapping[str, Any] | None = None,
            env: Mapping[str, str] | None = None) -> tuple[LoggingSettings, dict[str, str]]:
    """(what applies now, where each field came from: default | env | saved | session).
    `overrides` are this process's own values; None values are ignored."""
    layers = (("env", env_defaults(env)), ("saved", read_saved(store_dir)),
              ("session", {k: v for k, v in (overrides or {}).items() if v is not None}))
    values: dict[str, Any] = {}
    sources = dict.fromkeys(FIELDS, "default")
    for name, layer in layers:
        for k, v in layer.items():
            values[k] = v
            sources[k] = name
    return LoggingSettings.model_validate({**LoggingSettings().model_dump(), **values}), sources


def save(store_dir: str | Path, changes: Mapping[str, Any]) -> dict[str, Any]:
    """Merge `changes` into the saved choice (written atomically); returns everything now saved."""
    checked = _checked(dict(changes), "logging settings")
    saved = {**read_saved(store_dir), **checked}
    write_json_atomic(settings_path(store_dir), {k: saved[k] for k in FIELDS if k in saved})
    return saved
