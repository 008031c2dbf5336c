"""An answer as it is generated: the text a reader may see so far, and where the model starts looping.

* `clean_body(raw, shown)`: the answer text finalize keeps — emoji back from shortcodes, citations
  of messages that were not in the context removed. The live stream and `finalize` both use it, so
  what was streamed is a prefix of the final answer.
* `trim_loop(text)`: a small model at temperature 0 can repeat a line or a sentence until
  `max_tokens`; the text is cut where a repeat starts (a line or sentence seen before, or a word
  8-gram seen twice already). The streaming call stops generating there; a finished reply is cut
  the same way.
* `AnswerStream`: fed the model's deltas, it decides whether the reply is prose (a tool-call
  envelope or `<think>` block is never shown) and emits only text that can no longer change:
  cleaned and scrubbed of secret-shaped values, with a tail held back so a half-written citation
  or a number that may yet become a card number is never sent.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from truffle_assets.runtime import privacy
from truffle_assets.runtime.display import emojize

CITE = re.compile(r"\[msg:([^\]\s]{1,64})\]")
_CITE_WITH_SPACE = re.compile(r"[ \t]?" + CITE.pattern)
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")
_WORD = re.compile(r"\S+")
HOLD_CHARS = 48        # tail held back while streaming: longer than any secret shape or citation
MIN_LINE = 12          # shorter repeated lines ("- ok") are not a loop
MIN_SENTENCE = 20
NGRAM = 8


def clean_body(raw: str, shown: set[str]) -> tuple[str, list[str]]:
    """(the answer text as finalize keeps it, invented citation ids removed from it)."""
    invalid: list[str] = []

    def keep(m: re.Match) -> str:
        if m.group(1) in shown:
            return m.group(0)
        invalid.append(m.group(1))
        return ""

    return _CITE_WITH_SPACE.sub(keep, emojize(raw or "")).strip(), invalid


def trim_loop(text: str) -> tuple[str, bool]:
    """`text` cut where it starts repeating itself -> (text, whether it was cut)."""
    cut = len(text)
    seen: set[str] = set()
    pos = 0
    for line in text.split("\n")[:-1]:  # complete lines only
        key = " ".join(line.split()).lower()
        if len(key) >= MIN_LINE and key in seen:
            cut = min(cut, pos)
            break
        seen.add(key)
        pos += len(line) + 1
    seen.clear()
    start = 0
    for m in _SENTENCE_END.finditer(text + " "):  # complete sentences only
        key = " ".join(text[start:m.start()].split()).lower()
        if len(key) >= MIN_SENTENCE and key in seen:
            cut = min(cut, start)
            break
        seen.add(key)
        start = m.end()
    words = [(m.start(), m.group().lower()) for m in _WORD.finditer(text)]
    counts: dict[tuple[str, ...], int] = {}
    for i in range(len(words) - NGRAM + 1):
        gram = tuple(w for _, w in words[i:i + NGRAM])
        counts[gram] = counts.get(gram, 0) + 1
        if counts[gram] == 3:  # third time: cut at the second occurrence's start
            first = next(j for j in range(i) if tuple(w for _, w in words[j:j + NGRAM]) == gram)
            second = next(j for j in range(first + 1, i + 1) if tuple(w for _, w in words[j:j + NGRAM]) == gram)
            cut = min(cut, words[second][0])
            break
    if cut >= len(text):
        return text, False
    return text[:cut].rstrip(), True


class AnswerStream:
    """Emits through `write` the part of a streamed reply that is settled (see the module doc)."""

    def __init__(self, shown: set[str], write: Callable[[str], None]):
        self.shown, self.write = shown, write
        self.raw = ""
        self.sent = ""
        self.mode: str | None = None  # None until the reply's first characters decide: "prose" or "held"
        self.looped = False

    def feed(self, delta: str) -> bool:
        """Add a delta; True when the reply started looping (the caller stops generating)."""
        self.raw += delta
        text, self.looped = trim_loop(self.raw)
        if self.mode is None:
            head = text.lstrip()
            if len(head) < 2 and not self.looped:
                return False
            self.mode = "held" if head[:1] in ("{", "`", "<") or head.startswith("[{") else "prose"
        if self.mode == "prose":
            self._emit(text)
        return self.looped

    def _emit(self, text: str) -> None:
        clean = privacy.scrub(clean_body(text, self.shown)[0])[0]
        cut = len(clean) - HOLD_CHARS
        if cut <= len(self.sent):
            return
        space = max(clean.rfind(" ", 0, cut), clean.rfind("\n", 0, cut))
        cut = space + 1 if space >= len(self.sent) else len(self.sent)
        bracket = clean.rfind("[", 0, cut)
        if bracket >= 0 and "]" not in clean[bracket:cut]:
            cut = bracket  # never half a citation
        for mark in ("{", "```"):  # prose that turns into a tool call: never show the JSON
            at = clean.find(mark, len(self.sent))
            if 0 <= at < cut:
                cut = at
        piece = clean[:cut]
        if cut <= len(self.sent) or not piece.startswith(self.sent):
            return  # nothing settled yet (or an earlier part changed: wait for the final answer)
        self.write(piece[len(self.sent):])
        self.sent = piece
