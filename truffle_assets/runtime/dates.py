"""A date an answer gives without its year takes the year from the message it cites.

The evidence lines carry their day in full ("(21 January 2024): Finished my first half marathon
today!"), and a small model copies the day and month and drops the year: "You finished your first
half marathon on 21 January [msg:…]". In a memory that spans years that answer is not one. The
cited message fixes the year when it is the date itself (sent that day or in that month) or when its
text names that day or month ("Goa, 27–30 December!" sent in November 2019): the year puts the date
nearest the message. A date whose cited messages disagree on the year, or name neither, is left as
the model wrote it: a year is added only where a cited source gives it. A yearly date ("Your
birthday is on 24 October") has no year to add.
"""

from __future__ import annotations

import re
from datetime import date

from truffle_assets.memory.facts.rules import MONTH_RE
from truffle_assets.memory.facts.values import MONTHS
from truffle_assets.runtime.attribution import SENTENCE
from truffle_assets.runtime.streaming import CITE

_DAY = r"\d{1,2}(?:st|nd|rd|th)?"
# "21 January", "27–30 December", "January 21st", or a bare month
_ANY = (rf"\b(?:(?P<d1>{_DAY})(?:\s*(?:-|–|to)\s*{_DAY})?\s+(?:of\s+)?(?P<m1>{MONTH_RE})"
        rf"|(?P<m2>{MONTH_RE})\s+(?P<d2>{_DAY})(?!\d)|<bare>(?P<m3>{MONTH_RE}))\b")
_MENTION = re.compile("(?i)" + _ANY.replace("<bare>", ""))
# in an answer: a bare month only after "in" ("in March"), and no year may follow
_YEARLESS = re.compile("(?i)" + _ANY.replace("<bare>", r"(?<=\bin )") + r"(?!,?\s*(?:'\d\d|\d{4}))(?!\s*\d)")
_YEARLY = re.compile(r"(?i)\b(?:birthdays?|b'?day|anniversar(?:y|ies)|every|each year|annual(?:ly)?|yearly)\b")
_VERBS = {"may", "march"}  # "I may come", "we march on": a bare lower-case one in a message is no month


def _parsed(m: re.Match) -> tuple[int | None, int]:
    """(day or None, month) of a date match."""
    day = m.group("d1") or m.group("d2")
    return (int(re.match(r"\d+", day).group()) if day else None,
            MONTHS[(m.group("m1") or m.group("m2") or m.group("m3"))[:3].lower()])


def _mentions(text: str) -> list[tuple[int | None, int]]:
    """(day or None, month) of every date a text names, with or without its year."""
    return [_parsed(m) for m in _MENTION.finditer(text or "") if m.group("m3") not in _VERBS]


def _nearest_year(day: int | None, month: int, sent: date) -> int:
    """The year that puts (day, month) nearest the day a message was sent."""
    def gap(y: int) -> int:
        try:
            return abs((date(y, month, day or 15) - sent).days)
        except ValueError:  # 29 February of a common year is no candidate
            return 10**6
    return min((sent.year - 1, sent.year, sent.year + 1), key=gap)


def year_from(day: int | None, month: int, sent: date | None, text: str) -> int | None:
    """The year a cited message gives the date (day, month): it was sent then, or its text names it."""
    if sent is not None and month == sent.month and day in (None, sent.day):
        return sent.year
    if sent is not None and any(mo == month and (day is None or d in (None, day)) for d, mo in _mentions(text)):
        return _nearest_year(day, month, sent)
    return None


def day_of(ts) -> date | None:
    """The day of a timestamp, a date or an ISO string (None when it is none of them)."""
    try:
        return date.fromisoformat(str(ts)[:10]) if ts else None
    except ValueError:
        return None


QUOTED_WORDS = 5  # words copied around the date that make a sentence a quote of its source


def _quoted(sentence: str, m: re.Match, sources: list[tuple]) -> bool:
    """The date sits in a stretch copied from a cited message, five words or more around it: the
    user's words are not rewritten. ("…moved to Bengaluru on 24 August" shares three with "moving
    to Bengaluru on 24 August": the model's own sentence.)"""
    bare = CITE.sub(lambda c: "\0" * len(c.group(0)), sentence)  # a citation ends a copied stretch
    a, b = m.span()
    for _, text in sources:
        if bare[a:b] not in text:
            continue
        i, j = a, b
        while i > 0 and bare[i - 1:b] in text:
            i -= 1
        while j < len(bare) and bare[a:j + 1] in text:
            j += 1
        if len(re.findall(r"\w+", bare[i:a] + " " + bare[b:j])) >= QUOTED_WORDS:
            return True
    return False


def with_years(body: str, cited: dict[str, tuple], question: str = "") -> tuple[str, list[dict]]:
    """(body with years added, what was added). `cited`: message id -> (sent timestamp, text shown).
    Each sentence's yearless dates are read against the messages that sentence cites."""
    if _YEARLY.search(question):
        return body, []
    out, added = [], []
    for sentence in SENTENCE.split(body):
        sources = [] if _YEARLY.search(sentence) else [cited[c] for c in dict.fromkeys(CITE.findall(sentence)) if c in cited]
        parts, last = [], 0
        for m in _YEARLESS.finditer(sentence) if sources else ():
            d, mo = _parsed(m)
            years = {y for ts, text in sources if (y := year_from(d, mo, day_of(ts), text)) is not None}
            if len(years) != 1:
                continue
            if _quoted(sentence, m, sources):
                continue
            year = years.pop()
            parts += [sentence[last:m.end()], f", {year}" if m.group("m2") else f" {year}"]  # "January 21st, 2024"
            last = m.end()
            added.append({"date": m.group(0), "year": year})
        out.append("".join(parts) + sentence[last:] if parts else sentence)
    return " ".join(out), added
