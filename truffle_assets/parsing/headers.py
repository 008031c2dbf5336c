"""Message-header recognition and the per-file day/month order decision.

A header is `[date, time] ` (iOS) or `date, time - ` (Android), in any locale: date orders
d/m/y, m/d/y, y/m/d with `/ . -`, time first (Vietnamese), 12/24h with every meridiem spelling,
Finnish `klo`, Buddhist and Japanese-era years, bidi marks and Eastern-Arabic digits.
The day/month order is decided per header *style* from the whole file: a value > 12 first,
then which order keeps the timestamps increasing, then day-first.

Speed: one `HEADER.split()` over the whole text (C code) cuts it into header pieces and the text
between headers, so continuation lines cost no Python step. Date and time strings repeat (a chat
has a few thousand distinct days and minutes), so each distinct one is parsed once and cached.
Safety: the pattern is anchored at line starts and every repetition is bounded or separated by
a required character, so no input makes it backtrack catastrophically.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from datetime import date, datetime, time

# Bidi/format marks WhatsApp sprinkles into headers, and the BOM.
MARKS = "\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\ufeff"

# `\d` matches every Unicode decimal digit (Arabic-Indic, Persian, ...) and int() reads them all.
_M = f"[{MARKS}]*"  # marks before the header and, in RTL locales, between its parts
_SP = "[ \u00a0\u202f]"
_DATE = (
    rf"\d{{1,4}}{_M}(?:/{_M}\d{{1,2}}{_M}/|\.{_M}\d{{1,2}}{_M}\.|-{_M}\d{{1,2}}{_M}-){_M}"
    rf"(?:\d{{4}}(?: BE)?|\d{{1,2}}|[MTSHR]\d{{1,2}})"  # year: 4 digits (Buddhist "BE"), 2 digits, Japanese era
)
_AMPM = rf"(?:[AaPp]\.?{_SP}?[Mm]\.?|م|ص)(?![^\W\d_])"  # AM, a.m., a. m., p.m., Arabic ص/م
_TIME = rf"\d{{1,2}}[:.]\d{{2}}(?:[:.]\d{{2}})?(?:[ \u00a0\u202f_]?{_AMPM})?"
_DT_SEP = rf"{_M}(?:,{_SP}?|،{_SP}?|{_SP}(?:klo{_SP})?){_M}"
_END = rf"\](?:{_SP}-)?{_SP}?|{_SP}?[-–]{_SP}|:{_SP}|{_SP}"  # "] ", " - ", ": ", or a bare space

# split() returns, per header: raw, "[", date, time, time, date (time-first locales), end.
HEADER = re.compile(
    rf"^({_M}(?:(\[){_M})?(?:({_DATE}){_DT_SEP}({_TIME})|({_TIME}){_DT_SEP}({_DATE})){_M}({_END}))",
    re.MULTILINE,
)
GROUPS = HEADER.groups

_DATE_PARTS = re.compile(rf"(\d+){_M}([./-]){_M}(\d+){_M}[./-]{_M}(.+)")
_TIME_PARTS = re.compile(r"(\d+)[:.](\d+)(?:[:.](\d+))?(?:[ \u00a0\u202f_]?(.+))?")
_ERAS = {"R": 2018, "H": 1988, "S": 1925, "T": 1911, "M": 1867}
ORDERS = ("dmy", "mdy")

MAX_AUTHOR_LEN = 80
AUTHOR_SCAN = MAX_AUTHOR_LEN * 2 + 2  # how far into its line the ": " after a name may sit
_QUOTES = frozenset('"“”«»')
_NAME_SPACES = str.maketrans({"\u00a0": " ", "\u202f": " ", **{c: None for c in MARKS}})


def author_name(raw: str) -> str | None:
    """The author in the text before a header's ": ", or None if that text is no name (a system line)."""
    name = raw if raw.isascii() else raw.translate(_NAME_SPACES)
    name = name.strip()
    if name and len(name) <= MAX_AUTHOR_LEN and _QUOTES.isdisjoint(name):
        return name
    return None


class HeaderDate:
    """One distinct date string of the file, readable under either day/month order."""

    __slots__ = ("a", "b", "day", "n", "style", "year", "year_first")

    def __init__(self, text: str):
        if text.isascii():  # no marks, Western digits: plain string splitting is enough
            sep = "/" if "/" in text else "." if "." in text else "-"
            a, b, c = text.split(sep, 2)
        else:
            a, sep, b, c = _DATE_PARTS.fullmatch(text).groups()
        self.n = 0  # headers in the file with this date: their votes in decide_orders
        self.a, self.b = int(a), int(b)
        self.year_first = len(a) == 4
        self.style = (sep, self.year_first, len(c) > 2)  # day/month order is decided per style
        self.year = self.a if self.year_first else _year(c)
        self.day = int(c) if self.year_first else 0

    def date(self, order: str) -> date | None:
        """The date under `order`, or None if impossible (31/02, a 13th month)."""
        if self.year_first:
            y, m, d = self.year, self.b, self.day
        elif order == "dmy":
            y, m, d = self.year, self.b, self.a
        else:
            y, m, d = self.year, self.a, self.b
        try:
            return date(y, m, d)
        except ValueError:
            return None

    def date_or_swapped(self, order: str) -> date | None:
        """The date under `order`; if impossible but a part is > 12, the other order (mixed exports)."""
        d = self.date(order)
        if d is None and not self.year_first and (self.a > 12 or self.b > 12):
            d = self.date("mdy" if order == "dmy" else "dmy")
        return d


def _year(c: str) -> int:
    if c[0].isalpha():
        return _ERAS[c[0]] + int(c[1:])
    if c.endswith("BE"):
        return int(c[:-2].strip()) - 543
    y = int(c)
    if y < 100:
        return 2000 + y
    return y - 543 if y > 2400 else y  # Thai locales write Buddhist years without "BE"


def parse_time(text: str) -> time | None:
    """`21:05`, `9.05.07`, `9:05 p. m.`, `2:56:00 م` -> time; None if impossible (13:00 PM, 10:75)."""
    n = len(text)
    if (n == 5 or n == 8 and text[5] in ":.") and text[2] in ":.":  # "21:05" or "21:05:07": the usual
        try:
            return time(int(text[:2]), int(text[3:5]), int(text[6:] or 0))
        except ValueError:
            return None
    h, m, s, ampm = _TIME_PARTS.fullmatch(text).groups()
    hour = int(h)
    if ampm is not None:
        if hour > 12:
            return None
        hour = hour % 12 + (12 if ampm[0] in "Pp" or ampm == "م" else 0)
    try:
        return time(hour, int(m), int(s or 0))
    except ValueError:
        return None


def decide_orders(dates: Iterable[HeaderDate], stamps: Iterable[tuple[HeaderDate, time]]) -> dict[tuple, str]:
    """Pick 'dmy' or 'mdy' for every header style in the file (year-first styles are 'ymd').

    `dates` are the file's distinct header dates, each with `n` headers; `stamps` is every header's
    (date, time) in file order, read only when a style has no date with a value > 12.
    """
    by_style: dict[tuple, list[HeaderDate]] = {}
    for d in dates:
        by_style.setdefault(d.style, []).append(d)
    votes_file = {"dmy": 0, "mdy": 0}
    orders: dict[tuple, str] = {}
    undecided = []
    for style, ds in by_style.items():
        if style[1]:
            orders[style] = "ymd"
            continue
        dmy = sum(d.n for d in ds if d.a > 12 >= d.b)
        mdy = sum(d.n for d in ds if d.b > 12 >= d.a)
        votes_file["dmy"] += dmy
        votes_file["mdy"] += mdy
        if dmy != mdy:
            orders[style] = "dmy" if dmy > mdy else "mdy"
        else:
            undecided.append(style)
    if undecided:
        stamps = list(stamps)
    for style in undecided:
        ss = [st for st in stamps if st[0].style == style]
        inv = {o: _inversions(ss, o) for o in ORDERS}
        if inv["dmy"] != inv["mdy"]:
            orders[style] = min(inv, key=inv.get)
        elif votes_file["dmy"] != votes_file["mdy"]:
            orders[style] = max(votes_file, key=votes_file.get)
        else:
            orders[style] = "dmy"  # most of the world writes day first
    return orders


def _inversions(stamps: list[tuple[HeaderDate, time]], order: str) -> int:
    """How often time goes backwards (or a date is impossible) when read with `order`."""
    bad, prev = 0, None
    for hd, t in stamps:
        d = hd.date(order)
        if d is None:
            bad += 1
            continue
        ts = datetime.combine(d, t)
        if prev is not None and ts < prev:
            bad += 1
        prev = ts
    return bad
