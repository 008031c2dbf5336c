"""The person's own words: a message as written, and emoji back from `:shortcode:` words.

The published index holds each message twice, both redacted: `text`, the *normalized* search
stream (`memory.rosetta`: emoji as `:shortcode:` words, which is what BM25 and the embedder need),
and `shown_text`, the message as the person wrote it (their spelling, emoji and line breaks,
secrets as typed placeholders). `as_written` picks what a message shows — the prompt's evidence,
the evidence panel, cited sources — and falls back to the emojized search text in an index built
before `shown_text`. Text that exists only in search form (summaries, profile facts) and the answer
(a model that read shortcodes echoes them) get every shortcode rosetta can produce turned back
into its emoji. Secret placeholders (`[PASSWORD]`, `[OTP]`, …) are ASCII words and pass through
untouched, so this never un-redacts anything: its input is already-redacted text and its only
output changes are emoji.

The inverse is exact for single code points, flags and keycaps; a ZWJ sequence comes back from its
joined part names ("👩‍💻" from `:woman_personal_computer:`); a skin tone rosetta dropped stays dropped.
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache

from truffle_assets.memory.rosetta import _EMOJI_BASE, _emoji_name

_NAME = r":[a-z0-9]+(?:_[a-z0-9]+)*:"
# a run of shortcodes: rosetta spaced out emoji typed back to back ("😂😂" -> ":a: :a:")
_RUN = re.compile(f"{_NAME}(?: {_NAME})*")
_ZWJ, _VS16 = "\u200d", "\ufe0f"
_RANGE = re.compile(r"(.)-(.)|(.)", re.S)


def _base_chars() -> list[str]:
    """Every single code point rosetta treats as an emoji base (its `_EMOJI_BASE` class)."""
    out = []
    for m in _RANGE.finditer(_EMOJI_BASE):
        lo, hi = (m.group(1), m.group(2)) if m.group(1) else (m.group(3), m.group(3))
        out += [chr(c) for c in range(ord(lo), ord(hi) + 1)]
    return out


@lru_cache(maxsize=1)
def _names() -> dict[str, str]:
    """shortcode name -> emoji, for every named code point rosetta can meet (first one wins)."""
    table: dict[str, str] = {}
    for ch in _base_chars():
        if not unicodedata.name(ch, ""):
            continue
        name = _emoji_name(ch)
        if name and name not in table:
            # text-default symbols (☺, ❤, ✈ …) need VS16 to render as emoji
            table[name] = ch + (_VS16 if ord(ch) < 0x1F000 else "")
    return table


@lru_cache(maxsize=4096)
def emoji_for(name: str) -> str | None:
    """The emoji a rosetta shortcode name stands for, or None if it is not one."""
    if name.startswith("flag_") and len(name) == 7 and name[5:].isalpha():
        return "".join(chr(0x1F1E6 + ord(c) - 97) for c in name[5:])
    if name.startswith("keycap_"):
        key = {"hash": "#", "asterisk": "*"}.get(name[7:], name[7:])
        return key + _VS16 + "\u20e3" if len(key) == 1 and key in "0123456789#*" else None
    table = _names()
    if name in table:
        return table[name]
    # a ZWJ sequence: the shortest split of its words into known names, joined by ZWJ
    words = name.split("_")
    best: list[list[str] | None] = [None] * (len(words) + 1)
    best[0] = []
    for end in range(1, len(words) + 1):
        for start in range(end):
            part = "_".join(words[start:end])
            if best[start] is not None and part in table:
                cand = best[start] + [table[part].rstrip(_VS16)]
                if best[end] is None or len(cand) < len(best[end]):
                    best[end] = cand
    parts = best[-1]
    return _ZWJ.join(parts) if parts and len(parts) > 1 else None


def as_written(shown: str | None, text: str | None) -> str:
    """A message as the person wrote it: its redacted raw text (`shown_text`) when the index has it,
    else its search text with the emoji back."""
    return shown if shown else emojize(text)


def emojize(text: str | None) -> str:
    """`text` with every rosetta shortcode turned back into its emoji (anything else unchanged)."""
    if not text or ":" not in text:
        return text or ""

    def repl(m: re.Match[str]) -> str:
        codes = m.group(0).split(" ")
        found = [emoji_for(c[1:-1]) for c in codes]
        if all(found):
            return "".join(found)
        return " ".join(e or c for e, c in zip(found, codes))

    return _RUN.sub(repl, text)
