"""Turn one decoded export into entries, accounting for every input line.

Each line ends up as exactly one of: a message header, a continuation of the entry above, a
system line (a header without an author), or quarantined with a reason. The counts add up to
the file's line count, and the result carries them so ingestion can report them.
"""

from __future__ import annotations

import gc
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import date, datetime, time
from pathlib import Path

import polars as pl

from truffle_assets.parsing.headers import (
    AUTHOR_SCAN,
    GROUPS,
    HEADER,
    HeaderDate,
    author_name,
    decide_orders,
    parse_time,
)
from truffle_assets.parsing.columnar import ENTRY_SCHEMA, lines_of, parse_columns, to_series
from truffle_assets.parsing.kinds import SYSTEM, classify
from truffle_assets.parsing.limits import MAX_MESSAGE_CHARS, TRUNCATION_MARK
from truffle_assets.parsing.source import ExportError, ExportText, read_export
from truffle_assets.plurals import plural


@dataclass(slots=True)
class Entry:
    ts: datetime
    author: str | None
    text: str
    kind: str
    line_start: int  # 1-based, inclusive
    line_end: int
    edited: bool = False

    @property
    def authored(self) -> bool:
        return self.author is not None and self.kind != SYSTEM

    def to_json(self) -> dict:
        return {
            "ts": self.ts.isoformat(timespec="seconds"),
            "author": self.author,
            "text": self.text,
            "kind": self.kind,
            "line_start": self.line_start,
            "line_end": self.line_end,
            "edited": self.edited,
        }

    def to_row(self) -> tuple:
        return self.ts, self.author, self.text, self.kind, self.line_start, self.line_end, self.edited


@dataclass
class ParseResult:
    """One export's entries and line accounting. The entries live as columns (`frame`); Entry
    objects are built only when asked for (`entries`), as the CLI and tests do."""

    source: str
    lines_total: int
    header_lines: int
    continuation_lines: int
    system_lines: int
    quarantined: list[tuple[int, str, str]] = field(default_factory=list)  # (line, reason, preview)
    encoding: str = "utf-8"
    orders: dict = field(default_factory=dict)
    truncated: list[tuple[int, int]] = field(default_factory=list)  # (line_start, line_end): limits.MAX_MESSAGE_CHARS
    _frame: pl.DataFrame | None = field(default=None, repr=False, compare=False)
    _entries: list[Entry] | None = field(default=None, repr=False, compare=False)

    @property
    def frame(self) -> pl.DataFrame:
        """The entries as columns (ENTRY_SCHEMA), in file order."""
        if self._frame is None:  # the row parser's result; raises for text polars cannot hold, as any frame would
            self._frame = pl.DataFrame([e.to_row() for e in self._entries], schema=ENTRY_SCHEMA, orient="row")
        return self._frame

    @property
    def entries(self) -> list[Entry]:
        if self._entries is None:
            self._entries = _entries(self._frame)
        return self._entries

    @property
    def counts(self) -> dict:
        if self._frame is not None:
            f = self._frame
            kinds = dict(f.group_by("kind").len().iter_rows())
            authored = f.select((pl.col("author").is_not_null() & (pl.col("kind") != SYSTEM)).sum()).item()
        else:
            kinds = Counter(e.kind for e in self._entries)
            authored = sum(e.authored for e in self._entries)
        return {
            "lines_total": self.lines_total,
            "header_lines": self.header_lines,
            "continuation_lines": self.continuation_lines,
            "system_lines": self.system_lines,
            "quarantined_lines": len(self.quarantined),
            "truncated_messages": len(self.truncated),
            "entries": self.header_lines + self.system_lines,
            "authored": authored,
            **{f"kind_{k}": v for k, v in sorted(kinds.items())},
        }

    def summary(self) -> str:
        c = self.counts
        return (
            f"{self.source}: {plural(c['entries'], 'entry')} ({c['authored']} authored) from "
            f"{plural(c['lines_total'], 'line')} = {plural(c['header_lines'], 'header')} + "
            f"{plural(c['continuation_lines'], 'continuation')} + "
            f"{c['system_lines']} system + {c['quarantined_lines']} quarantined"
            + "".join(f"; truncated to {MAX_MESSAGE_CHARS:,} characters: lines {a}-{b}" for a, b in self.truncated[:5])
            + (f" and {len(self.truncated) - 5} more" if len(self.truncated) > 5 else "")
        )


def split_lines(text: str) -> list[str]:
    """Split on LF only (U+2028 and friends are message content), dropping one trailing CR."""
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return [ln[:-1] if ln.endswith("\r") else ln for ln in lines]


def _lf_only(text: str) -> str:
    """CRLF -> LF: the same lines split_lines gives, as one string the header regex can scan."""
    if "\r" in text:
        text = text.replace("\r\n", "\n")
        if text.endswith("\r"):
            text = text[:-1]
    return text


STRIDE = GROUPS + 1  # HEADER.split() yields the groups of each header-like line, then the text after it


def _author(chunk: str, bare: bool) -> tuple[str | None, int] | None:
    """(author, where the body starts in `chunk`); (None, 0) for a system line; None if not a header.

    `chunk` is the text after the header up to the next header line: the rest of the header's
    line, then any continuation lines.
    """
    if chunk.startswith("\u200e"):  # iOS prefixes system events with LRM: "‎You created group"
        return None if bare else (None, 0)
    line_len = chunk.find("\n")
    if line_len < 0:
        line_len = len(chunk)
    i = chunk.find(": ", 0, line_len if line_len < AUTHOR_SCAN else AUTHOR_SCAN)  # a 10 MB line is not searched
    if i < 0 and 0 < line_len < AUTHOR_SCAN and chunk[line_len - 1] == ":":
        i = line_len - 1  # "Name:" with an empty body
    if i > 0:
        name = author_name(chunk[:i])
        if name is not None:
            return name, i + 2 if i + 2 <= line_len else line_len
    return None if bare else (None, 0)


def _body(chunk: str, start: int) -> tuple[str, int]:
    """An entry's text from its chunk (header line rest + continuation lines), and its line count."""
    n_lines = chunk.count("\n")
    if chunk.endswith("\n"):
        return chunk[start:-1], n_lines
    return chunk[start:], n_lines + 1  # the file's last line, without a final newline


class _Builder:
    """Entries in file order; header-like lines that turn out not to be headers join the entry above."""

    def __init__(self, preamble: str):
        self.preamble = preamble
        self.entries: list[Entry] = []
        self.quarantined: list[tuple[int, str, str]] = []
        self.extra: list[str] = []  # rejected header lines waiting to join the text above
        self.line = 0  # the next entry's first line, once the preamble is settled
        self.cut: set[int] = set()  # entries whose text was truncated, by index
        self._chunk, self._start = "", 0  # the last entry's raw chunk, to regrow it

    def reject(self, raw: str, chunk: str) -> None:
        self.extra += (raw, chunk)

    def add(self, ts: datetime, author: str | None, start: int, chunk: str) -> None:
        if self.extra or not self.entries:  # rare: rejected lines or the preamble to settle first
            self._settle()
        n_lines = chunk.count("\n")  # _body(), inlined: this runs once per message
        if chunk.endswith("\n"):
            body = chunk[start:-1]
        else:
            body, n_lines = chunk[start:], n_lines + 1
        body = self._limit(body, len(self.entries))
        kind, edited = classify(author, body)
        line = self.line
        self.entries.append(Entry(ts, author, body, kind, line, line + n_lines - 1, edited))
        self.line = line + n_lines
        self._chunk, self._start = chunk, start

    def finish(self) -> None:
        if self.entries and self.extra:
            self._regrow_last()

    def _limit(self, text: str, i: int) -> str:
        if len(text) <= MAX_MESSAGE_CHARS:
            return text
        self.cut.add(i)
        return text[:MAX_MESSAGE_CHARS] + TRUNCATION_MARK

    def _settle(self) -> None:
        if self.entries:
            self._regrow_last()
        else:
            self._settle_preamble()

    def _settle_preamble(self) -> None:
        preamble = self.preamble + "".join(self.extra)
        self.extra = []
        lines = preamble.split("\n")[:-1]  # it ends where the first header's line starts
        self.quarantined = [(n, "text before the first message header", ln[:120]) for n, ln in enumerate(lines, 1)]
        self.line = len(lines) + 1

    def _regrow_last(self) -> None:
        e = self.entries[-1]
        self._chunk += "".join(self.extra)  # joined once: thousands of date-like lines stay linear
        self.extra = []
        e.text, n_lines = _body(self._chunk, self._start)
        e.text = self._limit(e.text, len(self.entries) - 1)
        e.kind, e.edited = classify(e.author, e.text)
        self.line += n_lines - (e.line_end - e.line_start + 1)
        e.line_end = e.line_start + n_lines - 1


def _decide(parts: list) -> tuple[dict[str, HeaderDate], dict]:
    """Every distinct header date and the day/month order of each header style.

    Counted over all header-like lines (in C, from the split result), so a rare body line that
    looks like a header votes too; it is written in the file's own locale anyway.
    """
    counts = Counter(parts[3::STRIDE])  # date-first headers
    counts.update(parts[6::STRIDE])  # time-first headers
    counts.pop(None, None)
    dates = {}
    for text, n in counts.items():
        hd = dates[text] = HeaderDate(text)
        hd.n = n

    def stamps():  # (date, time) of every header in file order, for the rare undecided style
        for d, t, t_first, d_last in zip(parts[3::STRIDE], parts[4::STRIDE], parts[5::STRIDE], parts[6::STRIDE]):
            tm = parse_time(t if d is not None else t_first)
            if tm is not None:
                yield dates[d if d is not None else d_last], tm

    return dates, decide_orders(dates.values(), stamps())


def parse_text(text: str, source: str = "<text>", encoding: str = "utf-8") -> ParseResult:
    """Parse over whole columns (columnar.py); text polars cannot hold takes the row parser."""
    text = _lf_only(text)
    whole = to_series(text)
    if whole is None:
        return parse_rows(text, source, encoding)
    return parse_lines([lines_of(whole)], source, encoding)


def parse_lines(blocks: Iterable[pl.Series], source: str = "<text>", encoding: str = "utf-8") -> ParseResult:
    """Parse a text given as consecutive blocks of its lines (LF-split string series), as parse_text() would."""
    c = parse_columns(blocks)
    if c.rows is None:
        if c.first_line is None:
            raise ExportError(source, "empty file: no chat lines")
        n, line = c.first_line
        raise ExportError(source, f"no WhatsApp message header found; first line is {line[:80]!r}", n)
    n_header = c.rows.height - c.rows["author"].null_count()
    return _result(source, n_header, c.rows.height - n_header, c.lines_total, c.quarantined, encoding, c.orders,
                   c.truncated, frame=c.rows)


def _entries(frame: pl.DataFrame) -> list[Entry]:
    """One Entry per row, built by map() in C. The cyclic garbage collector is paused meanwhile:
    entries hold only strings, numbers and datetimes, so the collections their allocation would
    trigger (each also walking the older heap) cannot free anything."""
    columns = [frame[c].to_list() for c in ENTRY_SCHEMA]
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        return list(map(Entry, *columns))
    finally:
        if was_enabled:
            gc.enable()


def _no_header(text: str, source: str):
    lines = split_lines(text)
    first = next(n for n, ln in enumerate(lines, 1) if ln.strip())
    raise ExportError(source, f"no WhatsApp message header found; first line is {lines[first - 1][:80]!r}", first)


def _result(source, n_header, n_system, lines_total, quarantined, encoding, orders, truncated,
            **parsed) -> ParseResult:
    n_cont = lines_total - n_header - n_system - len(quarantined)
    return ParseResult(source, lines_total, n_header, n_cont, n_system, quarantined, encoding, orders, truncated,
                       _frame=parsed.get("frame"), _entries=parsed.get("entries"))


def parse_rows(text: str, source: str = "<text>", encoding: str = "utf-8") -> ParseResult:
    """The row parser: one header at a time from HEADER.split(). The reference for parse_columns."""
    text = _lf_only(text)
    if not text.strip():
        raise ExportError(source, "empty file: no chat lines")
    parts = HEADER.split(text)  # [before, then per header-like line: its 7 groups and the text up to the next]
    dates, orders = _decide(parts)
    days: dict[HeaderDate, date | bool] = {}
    times: dict[str, time | bool] = {}
    out = _Builder(parts[0])
    it = iter(parts)
    next(it)
    for raw, bracket, d, t, t_first, d_last, end, chunk in zip(*[it] * STRIDE):
        if d is None:  # time-first locales
            d, t = d_last, t_first
        tm = times.get(t)
        if tm is None:
            tm = times[t] = parse_time(t) or False
        split = day = None
        if tm is not False and (bracket is None) != (end[0] == "]"):
            split = _author(chunk, end.isspace())
            if split is not None:
                hd = dates[d]
                day = days.get(hd)
                if day is None:  # once per distinct date: 31/02 or month 13 means a body line, not a header
                    day = days[hd] = hd.date_or_swapped(orders[hd.style]) or False
        if not day:
            out.reject(raw, chunk)
            continue
        out.add(datetime.combine(day, tm), split[0], split[1], chunk)
    out.finish()
    if not out.entries:
        _no_header(text, source)
    n_header = sum(1 for e in out.entries if e.author is not None)
    return _result(source, n_header, len(out.entries) - n_header, out.line - 1, out.quarantined, encoding, orders,
                   [(out.entries[i].line_start, out.entries[i].line_end) for i in sorted(out.cut)], entries=out.entries)


def parse_export(export: ExportText) -> ParseResult:
    return parse_lines(export.line_blocks(), export.display_name, export.encoding)


def parse_file(path: str | Path) -> ParseResult:
    return parse_export(read_export(path))
