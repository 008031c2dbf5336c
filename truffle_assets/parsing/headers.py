"""Message-header recognition and the per-file day/month order decision.

A header is `[date, time] ` (iOS) or `date, time - ` (Android), in any locale: date orders
d/m/y, m/d/y, y/m/d with `/ . -`, time first (Vietnamese), 12/24h with every meridiem spelling,
Finnish `klo`, Buddhist and Japanese-era years, bidi marks and Eastern-Arabic digits.
The day/month order is decided per header *style* from the whole file: a value > 12 first,
then which order keeps the timestamps increasing, then day-first.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime

# Bidi/format marks WhatsApp sprinkles into headers, and the BOM.
MARKS = "\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\ufeff"
_CLEAN = str.maketrans(
    {**{c: None for c in MARKS}, **{chr(0x660 + i): str(i) for i in range(10)}, **{chr(0x6F0 + i): str(i) for i in range(10)}}
)
_SPECIAL = re.compile("[" + MARKS + "\u0660-\u0669\u06f0-\u06f9]")

_SP = "[ \u00a0\u202f]"
_DATE = r"(?P<a>\d{1,4})(?P<sep>[./\-])(?P<b>\d{1,2})(?P=sep)(?P<c>\d{4}(?: BE)?|\d{1,2}|[MTSHR]\d{1,2})"
_TIME = (
    r"(?P<H>\d{1,2})[:.](?P<M>\d{2})(?:[:.](?P<S>\d{2}))?"
    rf"(?:[ \u00a0\u202f_]?(?P<ap>[AaPp]\.?{_SP}?[Mm]\.?|م|ص)(?![^\W\d_]))?"
)
_DT_SEP = rf"(?:,{_SP}?|،{_SP}?|{_SP}(?:klo{_SP})?)"
_END = rf"(?(br)\](?:{_SP}-)?{_SP}?|(?P<end>{_SP}?[-–]{_SP}|:{_SP}|{_SP}))"
DATE_FIRST = re.compile(rf"(?P<br>\[)?{_DATE}{_DT_SEP}{_TIME}{_END}")
TIME_FIRST = re.compile(rf"(?P<br>\[)?{_TIME}{_DT_SEP}{_DATE}{_END}")

_ERAS = {"R": 2018, "H": 1988, "S": 1925, "T": 1911, "M": 1867}
_HEADER_START = frozenset("[0123456789" + MARKS + "".join(chr(0x660 + i) for i in range(10)))


@dataclass(slots=True)
class Header:
    """A candidate header: the raw pieces, before the date order is known."""

    a: int
    b: int
    c: str
    sep: str
    hour: int
    minute: int
    second: int
    ampm: str | None
    bare: bool  # unbracketed header ended by a plain space: only valid with an author
    rest: str  # the raw line after the header (author + body, or system text)
    year_first: bool

    @property
    def style(self) -> tuple:
        return (self.sep, self.year_first, len(self.c) > 2)


def match_header(line: str) -> Header | None:
    """Return the header at the start of `line`, or None. `rest` is cut from the raw line."""
    if not line or line[0] not in _HEADER_START:
        return None
    m = DATE_FIRST.match(line) or TIME_FIRST.match(line)
    if m is not None:
        return _header(m, line[m.end():])
    if _SPECIAL.search(line, 0, 80) is None:
        return None
    # Marks or Arabic digits inside the header: match on a cleaned copy, cut `rest` from the raw line.
    head = line[:120]
    cleaned = head.translate(_CLEAN)
    m = DATE_FIRST.match(cleaned) or TIME_FIRST.match(cleaned)
    if m is None:
        return None
    return _header(m, line[_raw_offset(head, m.end()):])


def _raw_offset(raw: str, cleaned_end: int) -> int:
    kept = 0
    for i, ch in enumerate(raw):
        if kept == cleaned_end:
            return i
        if ch not in MARKS:
            kept += 1
    return len(raw)


def _header(m: re.Match, rest: str) -> Header:
    a, c = m["a"], m["c"]
    return Header(
        a=int(a), b=int(m["b"]), c=c, sep=m["sep"],
        hour=int(m["H"]), minute=int(m["M"]), second=int(m["S"] or 0),
        ampm=m["ap"], bare=m["end"] is not None and m["end"].strip() == "",
        rest=rest, year_first=len(a) == 4,
    )


def _year(c: str) -> int:
    if c[0].isalpha():
        return _ERAS[c[0]] + int(c[1:])
    if c.endswith("BE"):
        return int(c[:-2].strip()) - 543
    y = int(c)
    if y < 100:
        return 2000 + y
    return y - 543 if y > 2400 else y  # Thai locales write Buddhist years without "BE"


def _hour(h: Header) -> int:
    if h.ampm is None:
        return h.hour
    pm = h.ampm[0] in "Pp" or h.ampm == "م"
    return (h.hour % 12) + (12 if pm else 0)


def to_datetime(h: Header, order: str) -> datetime | None:
    """The header's timestamp under `order` ('dmy', 'mdy', 'ymd'), or None if impossible."""
    try:
        if h.year_first:
            year, month, day = int(h.a), h.b, int(h.c)
        else:
            year = _year(h.c)
            day, month = (h.a, h.b) if order == "dmy" else (h.b, h.a)
        if h.ampm is not None and h.hour > 12:
            return None
        return datetime(year, month, day, _hour(h), h.minute, h.second)
    except ValueError:
        return None


def decide_orders(headers: list[Header]) -> dict[tuple, str]:
    """Pick 'dmy' or 'mdy' for every header style in the file (year-first styles are 'ymd')."""
    by_style: dict[tuple, list[Header]] = {}
    for h in headers:
        by_style.setdefault(h.style, []).append(h)
    votes_file = {"dmy": 0, "mdy": 0}
    orders: dict[tuple, str] = {}
    undecided = []
    for style, hs in by_style.items():
        if style[1]:
            orders[style] = "ymd"
            continue
        dmy = sum(1 for h in hs if h.a > 12 >= h.b)
        mdy = sum(1 for h in hs if h.b > 12 >= h.a)
        votes_file["dmy"] += dmy
        votes_file["mdy"] += mdy
        if dmy != mdy:
            orders[style] = "dmy" if dmy > mdy else "mdy"
        else:
            undecided.append((style, hs))
    for style, hs in undecided:
        inv = {o: _inversions(hs, o) for o in ("dmy", "mdy")}
        if inv["dmy"] != inv["mdy"]:
            orders[style] = min(inv, key=inv.get)
        elif votes_file["dmy"] != votes_file["mdy"]:
            orders[style] = max(votes_file, key=votes_file.get)
        else:
            orders[style] = "dmy"  # most of the world writes day first
    return orders


def _inversions(hs: list[Header], order: str) -> int:
    """How often time goes backwards (or a date is impossible) when read with `order`."""
    bad, prev = 0, None
    for h in hs:
        ts = to_datetime(h, order)
        if ts is None:
            bad += 1
            continue
        if prev is not None and ts < prev:
            bad += 1
        prev = ts
    return bad


def clean(text: str) -> str:
    """Remove bidi marks and map Eastern-Arabic digits: for matching, never for storage."""
    return text.translate(_CLEAN)
