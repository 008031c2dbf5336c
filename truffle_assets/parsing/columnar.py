"""The whole-file parse: every line of an export classified at once, as polars columns.

polars' Rust regex engine reads the header of every line in one call (HEADER, translated); the
author split, the header checks and the kind screening are column expressions; dates, times and
names are decided once per *distinct* string. An entry's text is one slice of the file (its body's
start to the end of the line before the next entry), so no per-line Python runs. Only entries
that may be placeholders (kinds.suspect_piece and friends) and distinct short first lines that
may be phrases take a Python step. The result equals, field for field, the row parser's in
parser.py (`parse_rows`), which stays the reference and reads text polars cannot hold (lone
surrogates); test_columnar.py compares the two on every fixture and on edge texts.

Translation notes (HEADER -> Rust regex, same matches):
- Python's `\\d` matches str.isdecimal() digits of Python's Unicode version; Rust's follows its
  own, newer one. `\\d` becomes the explicit class PY_DIGITS.
- HEADER's `(?![^\\W\\d_])` after a meridiem cannot change a match: every continuation of the
  pattern after a time starts with a mark, a separator or a space, never a letter. Rust has no
  look-around, so it is dropped.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
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
    suspect_piece,
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


@dataclass
class Columns:
    """Entries as columns, in file order, and what the row parser reports besides them."""

    ts: list[datetime]
    author: list[str | None]
    text: list[str]
    kind: list[str]
    line_start: list[int]
    line_end: list[int]
    edited: list[bool]
    lines_total: int
    quarantined: list[tuple[int, str, str]]
    orders: dict


def to_series(text: str) -> pl.Series | None:
    """The text as a polars string, or None if polars cannot hold it (lone surrogates: not UTF-8)."""
    try:
        return pl.Series([text], dtype=pl.String)
    except UnicodeEncodeError:
        return None


def parse_columns(text: str, whole: pl.Series) -> Columns | None:
    """Entries of one LF-only text (`whole` is it as a one-string series); None if it has no header."""
    lines = whole.str.split("\n").explode()
    if text.endswith("\n"):
        lines = lines.head(len(lines) - 1)
    g = lines.str.extract_groups(header_pattern()).struct.unnest()
    g.columns = ["raw", "bracket", "d", "t", "t_first", "d_last", "end"]
    line = pl.col("line")
    df = g.with_columns(lines.alias("line")).select(
        pl.int_range(1, len(lines) + 1, dtype=pl.Int64).alias("no"),
        line,
        line_len=line.str.len_chars(),
        bracket="bracket",
        date=pl.coalesce("d", "d_last"),  # date-first headers, else time-first ones
        time=pl.coalesce("t", "t_first"),
        end="end",
        rest=line.str.slice(pl.col("raw").str.len_chars()),  # null unless the line is header-like
    )
    like = df.filter(pl.col("rest").is_not_null())
    if like.is_empty():
        return None

    # Dates, counted as the row parser counts them (date-first column, then time-first), and orders.
    ordered_dates = pl.concat([g["d"].drop_nulls(), g["d_last"].drop_nulls().alias("d")]).to_frame("date")
    dates: dict[str, HeaderDate] = {}
    for date_text, n in ordered_dates.group_by("date", maintain_order=True).len().iter_rows():
        hd = dates[date_text] = HeaderDate(date_text)
        hd.n = n
    stamps = ((dates[d], tm) for d, t in like.select("date", "time").iter_rows() if (tm := parse_time(t)) is not None)
    orders = decide_orders(dates.values(), stamps)  # stamps are read only for a style still undecided

    # Each distinct time, date and name once; the name is what precedes the line's first ": ".
    time_of = {t: parse_time(t) for t in like["time"].unique().to_list()}
    day_of = {d: hd.date_or_swapped(orders[hd.style]) for d, hd in dates.items()}
    split = like["rest"].str.splitn(": ", 2).struct.unnest()
    split.columns = ["name", "body"]
    like = like.hstack(split).with_columns(
        rest_len=pl.col("rest").str.len_chars(),
        bare=pl.col("end").is_in(_BARE_ENDS),
    )
    found = pl.col("body").is_not_null() & (pl.col("name").str.len_chars() <= AUTHOR_SCAN - 2)
    colon_end = (  # "Name:" with an empty body
        ~found & (pl.col("rest_len") > 0) & (pl.col("rest_len") < AUTHOR_SCAN) & pl.col("rest").str.ends_with(":")
    )
    like = like.with_columns(
        raw_name=pl.when(pl.col("rest").str.starts_with("\u200e")).then(None)  # iOS system events: "‎You created group"
        .when(found).then(pl.col("name"))
        .when(colon_end).then(pl.col("rest").str.slice(0, pl.col("rest_len") - 1)),
        body=pl.when(found).then(pl.col("body")).otherwise(pl.lit("")),
    )
    raw_names = like["raw_name"].drop_nulls().unique().to_list()
    name_of = {n: author_name(n) if n else None for n in raw_names}  # no name before ": ": a system line
    like = like.with_columns(
        author=pl.col("raw_name").replace_strict(name_of, default=None, return_dtype=pl.String),
        tm=pl.col("time").replace_strict(time_of, default=None, return_dtype=pl.Time),
        day=pl.col("date").replace_strict(day_of, default=None, return_dtype=pl.Date),
    )
    ent = like.filter(
        pl.col("tm").is_not_null()
        & (pl.col("bracket").is_null() != pl.col("end").str.starts_with("]"))
        & (pl.col("author").is_not_null() | ~pl.col("bare"))
        & pl.col("day").is_not_null()
    ).select(
        "no",
        "author",
        ts=pl.col("day").dt.combine(pl.col("tm")),
        first=pl.when(pl.col("author").is_null()).then(pl.col("rest")).otherwise(pl.col("body")),
    )
    if ent.is_empty():
        return None

    # Every other line (continuations, rejected header-like lines) joins the entry above: an entry's
    # text is one slice of the file, from its body's start to the end of the line before the next entry.
    n_lines = len(lines)
    first_no = ent["no"][0]
    quarantined = [(n, _PREAMBLE, ln[:120]) for n, ln in df.head(first_no - 1).select("no", "line").iter_rows()]
    line_at = df.select(
        "line_len",
        start=(pl.col("line_len") + 1).cum_sum() - pl.col("line_len") - 1,  # character offset in `text`
    )
    ent = ent.with_columns(line_end=pl.col("no").shift(-1, fill_value=n_lines + 1) - 1)
    ends = ent["line_end"] - 1
    ent = ent.with_columns(
        a=line_at["start"].gather(ent["no"] - 1) + line_at["line_len"].gather(ent["no"] - 1) - pl.col("first").str.len_chars(),
        b=line_at["start"].gather(ends) + line_at["line_len"].gather(ends),
    )
    texts = list(map(text.__getitem__, map(slice, ent["a"].to_list(), ent["b"].to_list())))

    kind, edited = _kinds(df, ent, texts)
    return Columns(
        ent["ts"].to_list(), ent["author"].to_list(), texts, kind, ent["no"].to_list(),
        ent["line_end"].to_list(), edited, n_lines, quarantined, orders,
    )


def _kinds(df: pl.DataFrame, ent: pl.DataFrame, texts: list[str]) -> tuple[list[str], list[bool]]:
    """classify() over the entry columns: Python decides only the entries that may be placeholders,
    and each distinct short first line once."""
    n = len(ent)
    kind, edited = [MESSAGE] * n, [False] * n
    # Each line as it appears in its entry's text: a header line from its body on.
    piece = (
        df.select("no", "line")
        .join(ent.select("no", "first"), on="no", how="left", maintain_order="left")
        .select(piece=pl.coalesce("first", "line"))
        .to_series()
    )
    eid = ent["no"].search_sorted(df["no"], side="right") - 1  # each line's entry; -1 before the first
    flagged = piece.to_frame().select(suspect_piece(pl.col("piece"))).to_series()
    suspect_eids = eid.filter(flagged & (eid >= 0)).unique()
    f = ent.select(
        pl.int_range(n).alias("i"),
        "author",
        "first",
        multiline=pl.col("no") != pl.col("line_end"),
        full=(
            piece.gather(ent["line_end"] - 1).str.ends_with(">")
            | ((pl.col("first").str.len_chars() <= PLACEHOLDER_MAX)
               & (suspect_first_line(pl.col("first")) | pl.int_range(n).is_in(suspect_eids.implode())))
        ),
    )
    for (i,) in f.filter(pl.col("author").is_null()).select("i").iter_rows():
        kind[i] = SYSTEM
    authored = f.filter(pl.col("author").is_not_null())
    for i, author in authored.filter("full").select("i", "author").iter_rows():
        kind[i], edited[i] = classify(author, texts[i])
    short = authored.filter(
        ~pl.col("full") & (pl.col("first").str.len_chars() <= PHRASE_MAX) & maybe_phrase(pl.col("first"))
    )
    special = {}
    for first, multiline in short.select("first", "multiline").unique().iter_rows():
        k = short_kind(first, multiline)
        if k != MESSAGE:
            special[first, multiline] = k
    if special:
        firsts = list({first for first, _ in special})
        for i, first, multiline in short.filter(pl.col("first").is_in(firsts)).select("i", "first", "multiline").iter_rows():
            kind[i] = special.get((first, multiline), MESSAGE)
    return kind, edited
