"""Turn one decoded export into entries, accounting for every input line.

Each line ends up as exactly one of: a message header, a continuation of the entry above, a
system line (a header without an author), or quarantined with a reason. The counts add up to
the file's line count, and the result carries them so ingestion can report them.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

from truffle_assets.parsing.headers import MARKS, Header, decide_orders, match_header, to_datetime
from truffle_assets.parsing.kinds import SYSTEM, classify
from truffle_assets.parsing.source import ExportError, ExportText, read_export

MAX_AUTHOR_LEN = 80
_QUOTES = frozenset('"“”«»')
_NAME_SPACES = str.maketrans({"\u00a0": " ", "\u202f": " ", **{c: None for c in MARKS}})


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


@dataclass
class ParseResult:
    source: str
    entries: list[Entry]
    lines_total: int
    header_lines: int
    continuation_lines: int
    system_lines: int
    quarantined: list[tuple[int, str, str]] = field(default_factory=list)  # (line, reason, preview)
    encoding: str = "utf-8"
    orders: dict = field(default_factory=dict)

    @property
    def counts(self) -> dict:
        kinds = Counter(e.kind for e in self.entries)
        return {
            "lines_total": self.lines_total,
            "header_lines": self.header_lines,
            "continuation_lines": self.continuation_lines,
            "system_lines": self.system_lines,
            "quarantined_lines": len(self.quarantined),
            "entries": len(self.entries),
            "authored": sum(e.authored for e in self.entries),
            **{f"kind_{k}": v for k, v in sorted(kinds.items())},
        }

    def summary(self) -> str:
        c = self.counts
        return (
            f"{self.source}: {c['entries']} entries ({c['authored']} authored) from {c['lines_total']} lines = "
            f"{c['header_lines']} headers + {c['continuation_lines']} continuations + "
            f"{c['system_lines']} system + {c['quarantined_lines']} quarantined"
        )


def split_lines(text: str) -> list[str]:
    """Split on LF only (U+2028 and friends are message content), dropping one trailing CR."""
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return [ln[:-1] if ln.endswith("\r") else ln for ln in lines]


def _author(h: Header) -> tuple[str | None, str] | None:
    """Split `rest` into (author, body); (None, rest) for a system line; None if not a header."""
    rest = h.rest
    if rest.startswith("\u200e"):  # iOS prefixes system events with LRM: "‎You created group"
        return None if h.bare else (None, rest)
    i = rest.find(": ")
    if i < 0 and rest.endswith(":"):
        i = len(rest) - 1
    if 0 < i <= MAX_AUTHOR_LEN * 2:
        name = rest[:i].translate(_NAME_SPACES).strip()
        if name and len(name) <= MAX_AUTHOR_LEN and not _QUOTES.intersection(name):
            return name, rest[i + 2:]
    return None if h.bare else (None, rest)


def parse_text(text: str, source: str = "<text>", encoding: str = "utf-8") -> ParseResult:
    lines = split_lines(text)
    if not lines or all(not ln.strip() for ln in lines):
        raise ExportError(source, "empty file: no chat lines")
    candidates: list[tuple[int, Header, tuple[str | None, str]]] = []
    for i, line in enumerate(lines):
        h = match_header(line)
        if h is not None:
            split = _author(h)
            if split is not None:
                candidates.append((i, h, split))
    if not candidates:
        first = next(n for n, ln in enumerate(lines, 1) if ln.strip())
        raise ExportError(source, f"no WhatsApp message header found; first line is {lines[first - 1][:80]!r}", first)
    orders = decide_orders([h for _, h, _ in candidates])

    entries: list[Entry] = []
    quarantined: list[tuple[int, str, str]] = []
    n_header = n_system = n_cont = 0
    body: list[str] = []
    cur: tuple | None = None  # (ts, author, line_start)

    def flush(line_end: int) -> None:
        if cur is None:
            return
        ts, author, start = cur
        raw = "\n".join(body)
        kind, edited = classify(author, raw)
        entries.append(Entry(ts, author, raw, kind, start, line_end, edited))

    heads = iter(candidates)
    nxt = next(heads, None)
    for i, line in enumerate(lines):
        if nxt is not None and nxt[0] == i:
            _, h, (author, rest) = nxt
            nxt = next(heads, None)
            ts = to_datetime(h, orders[h.style])
            if ts is None:  # e.g. month 13 when the file is day-first: body text that looks like a date
                other = "mdy" if orders[h.style] == "dmy" else "dmy"
                ts = to_datetime(h, other) if h.a > 12 or h.b > 12 else None
            if ts is not None:
                flush(i)
                cur, body = (ts, author, i + 1), [rest]
                if author is None:
                    n_system += 1
                else:
                    n_header += 1
                continue
        if cur is None:
            quarantined.append((i + 1, "text before the first message header", line[:120]))
        else:
            body.append(line)
            n_cont += 1
    flush(len(lines))
    return ParseResult(source, entries, len(lines), n_header, n_cont, n_system, quarantined, encoding, orders)


def parse_export(export: ExportText) -> ParseResult:
    return parse_text(export.text, export.display_name, export.encoding)


def parse_file(path: str | Path) -> ParseResult:
    return parse_export(read_export(path))
