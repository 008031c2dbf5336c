"""A pydantic `ValidationError` in a person's words: "retention days must be at least 1, got 0".

Commands print these instead of pydantic's own text (type tags, input types, documentation links).
Field names become words (`retention_days` -> "retention days"); `names` renames a field where the
product calls it something else (the `feedback` setting is "ratings" to a person).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import ValidationError

_WHOLE = ("int_parsing", "int_type", "int_from_float", "int_parsing_size")
_NUMBER = ("float_parsing", "float_type", "decimal_parsing", "decimal_type")
_YES_NO = ("bool_parsing", "bool_type")
_TEXT = ("string_type", "string_unicode")


def field_label(loc: tuple[Any, ...] | list[Any], names: Mapping[str, str] | None = None) -> str:
    """`("endpoint", "timeout_s")` -> "endpoint timeout s"; a list index reads "item 2"."""
    names = names or {}
    words = []
    for part in loc:
        if isinstance(part, int):
            words.append(f"item {part + 1}")
        else:
            words.append(names.get(str(part), str(part).replace("_", " ")))
    return " ".join(words) or "value"


def _shown(value: Any) -> str:
    if isinstance(value, str):
        return repr(value)
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "nothing"
    if isinstance(value, (int, float)):
        return f"{value:g}" if isinstance(value, float) else str(value)
    return type(value).__name__


def error_in_words(err: Mapping[str, Any], names: Mapping[str, str] | None = None) -> str:
    """One entry of `ValidationError.errors()` as a sentence fragment."""
    label = field_label(err.get("loc", ()), names)
    kind, ctx, got = err.get("type", ""), err.get("ctx") or {}, err.get("input")
    limits = {"greater_than_equal": ("at least", "ge"), "less_than_equal": ("at most", "le"),
              "greater_than": ("more than", "gt"), "less_than": ("less than", "lt")}
    if kind in limits:
        words, key = limits[kind]
        return f"{label} must be {words} {_shown(ctx.get(key))}, got {_shown(got)}"
    if kind in _WHOLE:
        return f"{label} must be a whole number, got {_shown(got)}"
    if kind in _NUMBER:
        return f"{label} must be a number, got {_shown(got)}"
    if kind in _YES_NO:
        return f"{label} must be true or false, got {_shown(got)}"
    if kind in _TEXT:
        return f"{label} must be text, got {_shown(got)}"
    if kind == "missing":
        return f"{label} is required"
    if kind == "extra_forbidden":
        return f"{label} is not a setting here"
    if kind in ("literal_error", "enum"):
        return f"{label} must be {ctx.get('expected', 'one of the allowed values')}, got {_shown(got)}"
    if kind in ("too_short", "string_too_short"):
        unit = "characters" if kind.startswith("string") else "items"
        return f"{label} needs at least {ctx.get('min_length')} {unit}"
    if kind in ("too_long", "string_too_long"):
        unit = "characters" if kind.startswith("string") else "items"
        return f"{label} allows at most {ctx.get('max_length')} {unit}"
    msg = str(err.get("msg", "is not valid"))
    msg = msg.replace("Input should be", "must be").replace("Value error, ", "")
    return f"{label}: {msg[:1].lower() + msg[1:]}" + (f", got {_shown(got)}" if "input" in err else "")


def in_words(exc: ValidationError, names: Mapping[str, str] | None = None) -> str:
    """Every error of `exc`, joined with "; " (one line)."""
    return "; ".join(error_in_words(e, names) for e in exc.errors(include_url=False)) or "not valid"
