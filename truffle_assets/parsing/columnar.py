"""The whole-file parse: every line of an export classified at once, entries out as one frame.

polars' Rust regex engine reads the header of every line in one call (HEADER, translated); the
author split, the header checks, the times and the kind screening are column expressions; dates
and names are decided once per *distinct* string. An entry's text is its first line's body, or
for the few multi-line entries its lines joined by a group-by, so neither lines nor entries ever
become Python objects: the result is a frame (ENTRY_SCHEMA) that ingestion reads as it is. Only
distinct texts that may be placeholders (kinds.suspect_head and friends) and distinct short first
lines that may be phrases (kinds.PHRASE_SCREEN) take a Python step. The result equals, field for
field, the row parser's in parser.py (`parse_rows`), which stays the reference and reads text
polars cannot hold (lone surrogates); test_columnar.py compares the two on every fixture and on
edge texts.

Translation notes (HEADER -> Rust regex, same matches):
- Python's `\\d` matches str.isdecimal() digits of Python's Unicode version; Rust's follows its
  own, newer one. `\\d` becomes the explicit class PY_DIGITS.
- HEADER's `(?![^\\W\\d_])` after a meridiem cannot change a match: every continuation of the
  pattern after a time starts with a mark, a separator or a space, never a letter. Rust has no
  look-around, so it is dropped.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import date
from functools import cache

import polars as pl

from truffle_assets.parsing.headers import AUTHOR_SCAN, HEADER, HeaderDate, author_name, decide_orders, parse_time
from truffle_assets.parsing.limits import MAX_MESSAGE_CHARS, TRUNCATION_MARK
from truffle_assets.parsing.kinds import (
    MESSAGE,
    PHRASE_MAX,
    PLACEHOLDER_MAX,
    SYSTEM,
    classify,
    maybe_phrase,
    short_kind,
    suspect_first_line,
    suspect_head,
)
from truffle_assets.parsing.source import LINE_KEEP

# Start and end of every run of characters Python's `\d` matches (str.isdecimal), Python 3.11.
# test_columnar.py checks this table against `re` itself over all code points.
_DIGIT_RUNS = (
    (0x30, 0x39), (0x660, 0x669), (0x6F0, 0x6F9), (0x7C0, 0x7C9), (0x966, 0x96F), (0x9E6, 0x9EF),
    (0xA66, 0xA6F), (0xAE6, 0xAEF), (0xB66, 0xB6F), (0xBE6, 0xBEF), (0xC66, 0xC6F), (0xCE6, 0xCEF),
    (0xD66, 0xD6F), (0xDE6, 0xDEF), (0xE50, 0xE59), (0xED0, 0xED9), (0xF20, 0xF29), (0x1040, 0x1049),
    (0x1090, 0x1099), (0x17E0, 0x17E9), (0x1810, 0x1819), (0x1946, 0x194F), (0x19D0, 0x19D9),
    (0x1A80, 0x1A89), (0x1A90, 0x1A99), (0x1B50, 0x1B59), (0x1BB0, 0x1BB9), (0x1C40, 0x1C49),
    (0x1C50, 0x1C59), (0xA620, 0xA629), (0xA8D0, 0xA8D9), (0xA900, 0xA909), (0xA9D0, 0xA9D9),
    (0xA9F0, 0xA9F9), (0xAA50, 0xAA59), (0xABF0, 0xABF9), (0xFF10, 0xFF19), (0x104A0, 0x104A9),
    (0x10D30, 0x10D39), (0x11066, 0x1106F), (0x110F0, 0x110F9), (0x11136, 0x1113F), (0x111D0, 0x111D9),
    (0x112F0, 0x112F9), (0x11450, 0x11459), (0x114D0, 0x114D9), (0x11650, 0x11659), (0x116C0, 0x116C9),
    (0x11730, 0x11739), (0x118E0, 0x118E9), (0x11950, 0x11959), (0x11C50, 0x11C59), (0x11D50, 0x11D59),
    (0x11DA0, 0x11DA9), (0x16A60, 0x16A69), (0x16AC0, 0x16AC9), (0x16B50, 0x16B59), (0x1D7CE, 0x1D7FF),
    (0x1E140, 0x1E149), (0x1E2F0, 0x1E2F9), (0x1E950, 0x1E959), (0x1FBF0, 0x1FBF9),
)
PY_DIGITS = "[" + "".join(f"\\x{{{a:x}}}-\\x{{{b:x}}}" for a, b in _DIGIT_RUNS) + "]"
_LOOKAHEAD = r"(?![^\W\d_])"
_BARE_ENDS = [" ", "\u00a0", "\u202f"]  # the END alternatives str.isspace() accepts: "no separator" headers
_PREAMBLE = "text before the first message header"


@cache
def header_pattern() -> str:
    """HEADER for polars' regex engine."""
    pattern = HEADER.pattern.replace(_LOOKAHEAD, "")
    assert "(?" not in pattern.replace("(?:", ""), "HEADER gained a construct the translation does not cover"
    return pattern.replace(r"\d", PY_DIGITS)


# One row per entry, in file order: the fields of parser.Entry.
ENTRY_SCHEMA = {
    "ts": pl.Datetime("us"), "author": pl.String, "text": pl.String, "kind": pl.String,
    "line_start": pl.Int64, "line_end": pl.Int64, "edited": pl.Boolean,
}
# The header times of ASCII digits: "21:05", "9.05.07", "9:05 p. m.", "10:00\u202fPM".
_ASCII_TIME = "^[0-9]{1,2}[:.][0-9]{2}(?:[:.][0-9]{2})?(?:[ \u00a0\u202f_]?[AaPp]\\.?[ \u00a0\u202f]?[Mm]\\.?)?$"


@dataclass
class Columns:
    """Entries as one frame (ENTRY_SCHEMA), and what the row parser reports besides them."""

    rows: pl.DataFrame | None  # None: no entry at all
    lines_total: int
    quarantined: list[tuple[int, str, str]]
    orders: dict
    truncated: list[tuple[int, int]]  # (line_start, line_end) of entries cut at MAX_MESSAGE_CHARS
    first_line: tuple[int, str] | None  # the first non-blank line, for the no-header error


def to_series(text: str) -> pl.Series | None:
    """The text as a polars string, or None if polars cannot hold it (lone surrogates: not UTF-8)."""
    try:
        return pl.Series([text], dtype=pl.String)
    except UnicodeEncodeError:
        return None


def lines_of(whole: pl.Series) -> pl.Series:
    """An LF-only text held as a one-string series, as its lines (a final newline ends the last line)."""
    lines = whole.str.split("\n").explode()
    return lines.head(len(lines) - 1) if lines[-1] == "" else lines


def parse_columns(blocks: Iterable[pl.Series]) -> Columns:
    """Entries of a text given as consecutive blocks of its lines (any split gives the same result).

    Two passes keep memory near the text's own size. The first reads each block as it comes and
    keeps per line only its role's makings (_Scan): the text it adds to an entry, author, date,
    time. The day/month order needs every date of the file, so days, entries and kinds come in the
    second pass (_Assembly), one block at a time, each block's columns freed once assembled.
    """
    scan = _Scan()
    scanned = [scan.block(lines) for lines in blocks]
    if not scan.dates:
        return Columns(None, scan.lines, [], {}, [], scan.first_line)
    orders = decide_orders(scan.dates.values(), scan.stamps(scanned))
    out = _Assembly({d: hd.date_or_swapped(orders[hd.style]) for d, hd in scan.dates.items()})
    scanned.reverse()
    base = 0
    while scanned:
        block = scanned.pop()
        out.add(block, base)
        base += block[0].height
    rows = out.finish()
    return Columns(rows, scan.lines, out.quarantined, orders, out.truncated, scan.first_line)


_PIECE = ["piece", "author", "date", "tm", "ok"]  # what _Scan keeps of a line


class _Scan:
    """First pass: per line, the text it adds to its entry ("piece": from its body on for a header
    line, whole otherwise), author, date and time, and whether it is a header but for its day."""

    def __init__(self):
        self.lines = 0
        self.dates: dict[str, HeaderDate] = {}  # counted as the row parser counts them
        self.unsure: set[str] = set()  # dates impossible under some order: their lines may be body text
        self.names: dict[str, str | None] = {}
        self.first_line: tuple[int, str] | None = None

    def block(self, lines: pl.Series) -> tuple[pl.DataFrame, pl.DataFrame | None]:
        """(one row per line, _PIECE; the whole line of headers whose date is unsure, by row)."""
        base, n = self.lines, len(lines)
        self.lines += n
        if self.first_line is None:
            self._first_line(lines, base)
        lines = _cut(lines)
        g = lines.str.extract_groups(header_pattern()).struct.unnest()
        g.columns = ["raw", "bracket", "d", "t", "t_first", "d_last", "end"]
        if g["raw"].null_count() == n:  # no header-like line: all continuations
            return pl.DataFrame({"piece": lines}).with_columns(
                author=pl.lit(None, pl.String), date=pl.lit(None, pl.String), tm=pl.lit(None, pl.Time),
                ok=pl.lit(False)), None

        for d, k in pl.concat([g["d"].drop_nulls(), g["d_last"].drop_nulls().alias("d")]).to_frame().group_by(
                "d", maintain_order=True).len().iter_rows():
            hd = self.dates.get(d)
            if hd is None:
                hd = self.dates[d] = HeaderDate(d)
                # day <= 28 and month <= 12 either way round is a date under any order: no need to ask
                plain = not hd.year_first and 1 <= min(hd.a, hd.b) <= 12 and max(hd.a, hd.b) <= 28 and 1 <= hd.year <= 9999
                if not plain and (hd.date_or_swapped("dmy") is None or hd.date_or_swapped("mdy") is None):
                    self.unsure.add(d)
            hd.n += k

        line, rest = pl.col("line"), pl.col("rest")
        df = g.with_columns(lines.alias("line")).select(
            line, "bracket", "end",
            date=pl.coalesce("d", "d_last"),  # date-first headers, else time-first ones
            time=pl.coalesce("t", "t_first"),
            raw_len=pl.col("raw").str.len_chars(),
        ).with_columns(rest=line.str.slice(pl.col("raw_len")))  # null unless the line is header-like
        times = df["time"].drop_nulls().unique()
        # The name is what precedes the line's first ": ", if within AUTHOR_SCAN.
        split = df["rest"].str.splitn(": ", 2).struct.unnest()
        found = (split["field_1"].is_not_null() & (split["field_0"].str.len_chars() <= AUTHOR_SCAN - 2)).alias("found")
        rest_len = rest.str.len_chars()
        colon_end = ~pl.col("found") & (rest_len > 0) & (rest_len < AUTHOR_SCAN) & rest.str.ends_with(":")  # "Name:"
        df = df.with_columns(found).with_columns(
            tm=pl.col("time").replace_strict(times, _times(times), default=None, return_dtype=pl.Time),
            raw_name=pl.when(rest.str.starts_with("\u200e")).then(None)  # iOS system events: "‎You created group"
            .when("found").then(split["field_0"])
            .when(colon_end).then(rest.str.slice(0, rest_len - 1)),
        )
        new = [x for x in df["raw_name"].drop_nulls().unique().to_list() if x not in self.names]
        self.names.update((x, author_name(x) if x else None) for x in new)  # no name before ": ": a system line
        author = pl.col("raw_name").replace_strict(self.names, default=None, return_dtype=pl.String)
        ok = (pl.col("tm").is_not_null()
              & (pl.col("bracket").is_null() != pl.col("end").str.starts_with("]"))
              & (author.is_not_null() | ~pl.col("end").is_in(_BARE_ENDS))  # a bare space needs an author
              ).fill_null(False)
        # A header's piece starts after the header (system lines) or after "name: " (a bare "Name:"
        # has none); every other line is its own piece.
        start = (pl.when(~ok).then(0)
                 .when(author.is_null()).then(pl.col("raw_len"))
                 .when("found").then(pl.col("raw_len") + pl.col("raw_name").str.len_chars() + 2)
                 .otherwise(2**31))
        kept = df.select(
            piece=line.str.slice(start), author=author,
            date=pl.when(pl.col("tm").is_not_null()).then("date"), tm="tm", ok=ok,
        )
        unsure = None
        if self.unsure:
            unsure = df.select("line").with_row_index("i").filter(
                kept["ok"] & kept["date"].is_in(list(self.unsure))).select("i", "line")
        return kept, unsure if unsure is not None and unsure.height else None

    def stamps(self, scanned):
        """(date, time) of every header-like line in file order, read only for a style still undecided."""
        for kept, _ in scanned:
            for d, t in kept.filter(pl.col("date").is_not_null()).select("date", "tm").iter_rows():
                yield self.dates[d], t

    def _first_line(self, lines: pl.Series, base: int) -> None:
        head = lines.head(64).to_list()  # almost always the very first line
        candidates = range(len(head))
        if not any(x.strip() for x in head):
            # polars strips a subset of what str.strip() does (not U+001C-U+001F): it only narrows the search
            candidates = lines.str.strip_chars().str.len_bytes().gt(0).arg_true().to_list()
        for i in candidates:
            if lines[i].strip():
                self.first_line = base + i + 1, lines[i][:120]
                return


def _cut(lines: pl.Series) -> pl.Series:
    """Lines longer than LINE_KEEP characters cut there: their entries are truncated anyway."""
    long = (lines.str.len_bytes() > LINE_KEEP).arg_true()
    if long.is_empty():
        return lines
    cut = lines.gather(long)
    over = cut.str.len_chars() > LINE_KEEP
    lines = lines.clone()
    lines.scatter(long.filter(over), cut.filter(over).str.slice(0, LINE_KEEP))
    return lines


class _Assembly:
    """Second pass: days decide which header lines start entries; each entry's text is its first
    piece, or its pieces joined for the few multi-line ones. The last entry of a block stays open
    (`open`) until the next block shows whether continuation lines follow it."""

    def __init__(self, day_of: dict[str, date | None]):
        self.day_of = day_of
        self.open: pl.DataFrame | None = None
        self.done: list[pl.DataFrame] = []
        self.quarantined: list[tuple[int, str, str]] = []
        self.truncated: list[tuple[int, int]] = []

    def add(self, block: tuple[pl.DataFrame, pl.DataFrame | None], base: int) -> None:
        kept, unsure = block
        n = kept.height
        day = kept["date"].replace_strict(self.day_of, default=None, return_dtype=pl.Date)
        entry = (kept["ok"] & day.is_not_null()).alias("is_entry")
        piece = kept["piece"]
        if unsure is not None:  # headers whose date proved impossible are body text, whole
            rejected = unsure.filter(~entry.gather(unsure["i"]))
            if rejected.height:
                piece = piece.clone()
                piece.scatter(rejected["i"], rejected["line"])
        first = entry.arg_max() if entry.any() else n
        if first:
            self._lead(piece.head(first), base)
        if first == n:
            return
        e = pl.col("is_entry")
        df = pl.DataFrame([entry, piece, day.alias("day"), kept["tm"], kept["author"]]).select(
            "piece", "is_entry", "author",
            no=pl.int_range(base + 1, base + n + 1, dtype=pl.Int64),
            ts=pl.col("day").dt.combine(pl.col("tm")),
            eid=e.cum_sum(),
            multiline=e & ~e.shift(-1, fill_value=True),
        )
        joined = (  # multi-line texts, in entry order; a single line's text is its first piece
            df.filter(pl.when(e).then(pl.col("multiline")).forward_fill().fill_null(False))
            .group_by("eid", maintain_order=True)
            .agg(pl.col("piece").str.join("\n"))["piece"]
        )
        ent = df.filter(e).select(
            "ts", "author", "multiline",
            first="piece",
            line_start="no",
            line_end=pl.col("no").shift(-1, fill_value=base + n + 1) - 1,
        )
        text = ent["first"].clone()
        text.scatter(ent["multiline"].arg_true(), joined)
        if self.open is not None:
            self.done.append(self._close(self.open))
        self.open = ent.with_columns(text=text)

    def _lead(self, pieces: pl.Series, base: int) -> None:
        """Lines before a block's first entry: they continue the open entry, or are the preamble."""
        if self.open is None:
            self.quarantined += [(base + i, _PREAMBLE, p[:120]) for i, p in enumerate(pieces.to_list(), 1)]
            return
        last = self.open.height - 1
        text = self.open["text"][last]
        if len(text) <= MAX_MESSAGE_CHARS:  # past the limit, more text is never kept
            text = f"{text}\n{pieces.str.join(chr(10)).item()}"[: MAX_MESSAGE_CHARS + 1]
        at = pl.int_range(pl.len()) == last
        self.open = self.open.with_columns(
            text=pl.when(at).then(pl.lit(text)).otherwise("text"),
            multiline=at | pl.col("multiline"),
            line_end=pl.col("line_end") + pl.when(at).then(len(pieces)).otherwise(0),
        )

    def _close(self, ent: pl.DataFrame) -> pl.DataFrame:
        """Entries final: over-long texts truncated (kinds are decided on the kept text)."""
        long = (ent["text"].str.len_bytes() > MAX_MESSAGE_CHARS).arg_true()
        if not long.is_empty():
            long = long.filter(ent["text"].gather(long).str.len_chars() > MAX_MESSAGE_CHARS)
        if not long.is_empty():
            text = ent["text"].clone()
            text.scatter(long, text.gather(long).str.slice(0, MAX_MESSAGE_CHARS) + TRUNCATION_MARK)
            ent = ent.with_columns(text=text)
            self.truncated += zip(ent["line_start"].gather(long).to_list(), ent["line_end"].gather(long).to_list())
        kind, edited = _kinds(ent)
        # One chunk per column per block (a shift leaves line_end in two): in a frame whose columns
        # are chunked alike, drop/select/with_columns share the columns; misaligned, they copy all of them.
        return ent.with_columns(kind=kind, edited=edited).select(*ENTRY_SCHEMA).cast(ENTRY_SCHEMA).rechunk()

    def finish(self) -> pl.DataFrame | None:
        if self.open is not None:
            self.done.append(self._close(self.open))
            self.open = None
        return pl.concat(self.done) if self.done else None


def _times(times: pl.Series) -> pl.Series:
    """parse_time() over distinct time strings: those of ASCII digits as columns, others in Python."""
    f = times.to_frame("t").with_columns(
        ascii=pl.col("t").str.contains(_ASCII_TIME),
        ampm=pl.col("t").str.contains("[AaPp]"),
        pm=pl.col("t").str.contains("[Pp]"),
        hms=pl.col("t").str.replace_all("[^0-9]+", ":").str.split_exact(":", 2),
    ).unnest("hms").with_columns(pl.col("field_0", "field_1", "field_2").cast(pl.Int64, strict=False))
    h, m, s = pl.col("field_0"), pl.col("field_1"), pl.col("field_2").fill_null(0)  # no seconds: 0
    hour = pl.when("ampm").then(h % 12 + pl.when("pm").then(12).otherwise(0)).otherwise(h)
    ok = (~pl.col("ampm") | (h <= 12)) & (hour < 24) & (m < 60) & (s < 60)  # else time() refuses: a body line
    tm = f.select(pl.when(ok).then(((hour * 3600 + m * 60 + s) * 1_000_000_000).cast(pl.Time))).to_series()
    others = (~f["ascii"]).arg_true()
    if len(others):
        tm.scatter(others, pl.Series([parse_time(x) for x in times.gather(others).to_list()], dtype=pl.Time))
    return tm


def _kinds(ent: pl.DataFrame) -> tuple[pl.Series, pl.Series]:
    """classify() over the entry columns: Python decides each distinct text that may be a
    placeholder, and each distinct short first line that may be a phrase, once."""
    n = len(ent)
    first, text = pl.col("first"), pl.col("text")
    f = ent.select(
        pl.int_range(n, dtype=pl.UInt32).alias("i"),
        "text",
        "first",
        "multiline",
        authored=pl.col("author").is_not_null(),
        full=(  # _suspect() passes, or the edited marker needs stripping: the full decision
            text.str.ends_with(">")
            | ((first.str.len_chars() <= PLACEHOLDER_MAX)
               & (suspect_first_line(first) | suspect_head(text.str.slice(0, PLACEHOLDER_MAX))))
        ),
    )
    kind = f.select(pl.when("authored").then(pl.lit(MESSAGE)).otherwise(pl.lit(SYSTEM))).to_series()
    edited = pl.repeat(False, n, eager=True)
    authored = f.filter("authored")
    full = authored.filter("full").select("i", "text")
    if full.height:
        texts = full["text"].unique().to_list()
        decided = [classify(MESSAGE, t) for t in texts]  # any author: only whether there is one matters
        by_text = pl.DataFrame(
            {"text": texts, "k": [k for k, _ in decided], "e": [e for _, e in decided]},
            schema={"text": pl.String, "k": pl.String, "e": pl.Boolean},
        )
        full = full.join(by_text, on="text", how="left", maintain_order="left")
        kind.scatter(full["i"], full["k"])
        edited.scatter(full["i"], full["e"])
    short = authored.filter(
        ~pl.col("full") & (first.str.len_chars() <= PHRASE_MAX) & maybe_phrase(first)
    ).select("i", "first", "multiline")
    special = [(a, b, k) for a, b in short.select("first", "multiline").unique().iter_rows()
               if (k := short_kind(a, b)) != MESSAGE]
    if special:
        spec = pl.DataFrame(special, schema={"first": pl.String, "multiline": pl.Boolean, "k": pl.String}, orient="row")
        short = short.join(spec, on=["first", "multiline"], how="inner")
        kind.scatter(short["i"], short["k"])
    return kind, edited
