"""Counts and durations in words a person reads: "1 entry", "2 entries", "1,204 messages", "3 min 05 s"."""

from __future__ import annotations

_IRREGULAR = {"person": "people", "child": "children"}


def plural_of(word: str) -> str:
    """The English plural of a lower-case noun, by the common rules (enough for what the CLI counts)."""
    if word in _IRREGULAR:
        return _IRREGULAR[word]
    if word.endswith("y") and word[-2:-1] not in ("a", "e", "i", "o", "u", ""):
        return word[:-1] + "ies"
    if word.endswith(("s", "x", "z", "ch", "sh")):
        return word + "es"
    return word + "s"


def plural(n: int, word: str, many: str | None = None) -> str:
    """`n` and the noun in the form `n` takes: plural(1, "entry") == "1 entry", plural(3, "entry") == "3 entries".
    `many`: the plural when the rules get it wrong."""
    return f"{n:,} {word if n == 1 else many or plural_of(word)}"


def duration(seconds: float) -> str:
    """Seconds as a person reads them: "42 s", "3 min 05 s", "1 h 18 min"."""
    seconds = max(0, round(seconds))
    if seconds < 60:
        return f"{seconds} s"
    minutes, s = divmod(seconds, 60)
    return f"{minutes} min {s:02d} s" if minutes < 60 else f"{minutes // 60} h {minutes % 60:02d} min"
