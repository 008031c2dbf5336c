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

from dataclasses import dataclass
from functools import cache

import polars as pl

from truffle_assets.parsing.headers import AUTHOR_SCAN, HEADER, HeaderDate, author_name, decide_orders, parse_time
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

    rows: pl.DataFrame
    lines_total: int
    quarantined: list[tuple[int, str, str]]
    orders: dict


def to_series(text: str) -> pl.Series | None:
    """The text as a polars string, or None if polars cannot hold it (lone surrogates: not UTF-8)."""
    try:
        return pl.Series([text], dtype=pl.String)
    except UnicodeEncodeError:
        return None


def parse_columns(whole: pl.Series) -> Columns | None:
    """Entries of one LF-only text, held as a one-string series; None if it has no entry."""
    lines = whole.str.split("\n").explode()
    if lines[-1] == "":  # the text ends with a newline, not with an empty line
        lines = lines.head(len(lines) - 1)
    n_lines = len(lines)
    g = lines.str.extract_groups(header_pattern()).struct.unnest()
    g.columns = ["raw", "bracket", "d", "t", "t_first", "d_last", "end"]
    line = pl.col("line")
    df = g.with_columns(lines.alias("line")).select(
        pl.int_range(1, n_lines + 1, dtype=pl.Int64).alias("no"),
        line,
        bracket="bracket",
        date=pl.coalesce("d", "d_last"),  # date-first headers, else time-first ones
        time=pl.coalesce("t", "t_first"),
        end="end",
        rest=line.str.slice(pl.col("raw").str.len_chars()),  # null unless the line is header-like
    )
    if df["rest"].null_count() == n_lines:
        return None

    # Dates, counted as the row parser counts them (date-first column, then time-first), and orders.
    ordered_dates = pl.concat([g["d"].drop_nulls(), g["d_last"].drop_nulls().alias("d")]).to_frame("date")
    dates: dict[str, HeaderDate] = {}
    for date_text, n in ordered_dates.group_by("date", maintain_order=True).len().iter_rows():
        hd = dates[date_text] = HeaderDate(date_text)
        hd.n = n

    def stamps():  # read only for a style still undecided
        for d, t in df.filter(pl.col("rest").is_not_null()).select("date", "time").iter_rows():
            if (tm := parse_time(t)) is not None:
                yield dates[d], tm

    orders = decide_orders(dates.values(), stamps())

    # Each distinct date and name once in Python, distinct times as columns. The name is what
    # precedes the line's first ": ".
    day_of = {d: hd.date_or_swapped(orders[hd.style]) for d, hd in dates.items()}
    times = df["time"].drop_nulls().unique()
    tm = pl.col("time").replace_strict(times, _times(times), default=None, return_dtype=pl.Time)
    split = df["rest"].str.splitn(": ", 2).struct.unnest()
    split.columns = ["name", "body"]
    rest_len = pl.col("rest").str.len_chars()
    found = pl.col("body").is_not_null() & (pl.col("name").str.len_chars() <= AUTHOR_SCAN - 2)
    colon_end = ~found & (rest_len > 0) & (rest_len < AUTHOR_SCAN) & pl.col("rest").str.ends_with(":")  # "Name:"
    df = df.hstack(split).with_columns(
        tm=tm,
        day=pl.col("date").replace_strict(day_of, default=None, return_dtype=pl.Date),
        raw_name=pl.when(pl.col("rest").str.starts_with("\u200e")).then(None)  # iOS system events: "‎You created group"
        .when(found).then(pl.col("name"))
        .when(colon_end).then(pl.col("rest").str.slice(0, rest_len - 1)),
        body=pl.when(found).then(pl.col("body")).otherwise(pl.lit("")),
    )
    raw_names = df["raw_name"].drop_nulls().unique().to_list()
    name_of = {n: author_name(n) if n else None for n in raw_names}  # no name before ": ": a system line
    author = pl.col("raw_name").replace_strict(name_of, default=None, return_dtype=pl.String)
    is_entry = (
        pl.col("tm").is_not_null()
        & (pl.col("bracket").is_null() != pl.col("end").str.starts_with("]"))
        & (pl.col("author").is_not_null() | ~pl.col("end").is_in(_BARE_ENDS))  # a bare space needs an author
        & pl.col("day").is_not_null()
    ).fill_null(False)
    df = df.with_columns(author=author).with_columns(is_entry=is_entry)
    starts = df["is_entry"].arg_true()
    if starts.is_empty():
        return None
    quarantined = [(n, _PREAMBLE, ln[:120]) for n, ln in df.head(starts[0]).select("no", "line").iter_rows()]

    # Every other line (continuations, rejected header-like lines) joins the entry above. Each line
    # as it appears in its entry's text ("piece"): a header line from its body on, others whole.
    first = pl.when(pl.col("author").is_null()).then(pl.col("rest")).otherwise(pl.col("body"))
    entry = pl.col("is_entry")
    df = df.select(
        "no", "author", "is_entry",
        ts=pl.col("day").dt.combine(pl.col("tm")),
        first=pl.when(entry).then(first),
        piece=pl.when(entry).then(first).otherwise(pl.col("line")),
        eid=entry.cum_sum(),  # 0 in the preamble
        multiline=entry & ~entry.shift(-1, fill_value=True),
    )
    joined = (  # multi-line texts, in entry order; a single line's text is its first piece
        df.filter(pl.when(entry).then(pl.col("multiline")).forward_fill().fill_null(False))
        .group_by("eid", maintain_order=True)
        .agg(pl.col("piece").str.join("\n"))["piece"]
    )
    ent = df.filter(entry).select(
        "ts", "author", "first", "multiline",
        line_start="no",
        line_end=pl.col("no").shift(-1, fill_value=n_lines + 1) - 1,
    )
    text = ent["first"].clone()
    text.scatter(ent["multiline"].arg_true(), joined)
    ent = ent.with_columns(text=text)
    kind, edited = _kinds(ent)
    rows = ent.with_columns(kind=kind, edited=edited).select(*ENTRY_SCHEMA).cast(ENTRY_SCHEMA)
    return Columns(rows, n_lines, quarantined, orders)


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
