"""The columnar parser (columnar.py) against the row parser it replaces, and its translation tables."""

from __future__ import annotations

import re

import polars as pl
import pytest

from truffle_assets.parsing import ParseResult, parse_export, parse_text, read_export
from truffle_assets.parsing.columnar import ENTRY_SCHEMA, PY_DIGITS, _times, header_pattern
from truffle_assets.parsing.headers import _TIME, HEADER, parse_time
from truffle_assets.parsing.kinds import (
    _CALL_START, _PHRASES, MESSAGE, PHRASE_SCREEN, PY_SPACE, _rust_escape, short_kind,
)
from truffle_assets.parsing.parser import parse_lines, parse_rows, split_lines
from truffle_assets_tests.parsing.test_fixtures import FIXTURES, export_files, require_fixtures

ALL_CHARS = "".join(map(chr, range(0x110000)))


def same(a: ParseResult, b: ParseResult) -> None:
    assert a.frame.schema == ENTRY_SCHEMA
    assert a.frame.equals(b.frame)  # b's frame is built from the row parser's Entry objects
    assert a.entries == b.entries
    assert [type(e.ts) for e in a.entries] == [type(e.ts) for e in b.entries]
    assert a.quarantined == b.quarantined
    assert list(a.orders.items()) == list(b.orders.items())
    assert (a.lines_total, a.header_lines, a.continuation_lines, a.system_lines, a.counts) == (
        b.lines_total, b.header_lines, b.continuation_lines, b.system_lines, b.counts)


def test_digit_class_is_pythons():
    python = set(re.findall(r"\d", ALL_CHARS))
    rust = pl.Series([c for c in ALL_CHARS if not 0xD800 <= ord(c) <= 0xDFFF])
    assert set(rust.filter(rust.str.contains(f"^{PY_DIGITS}$")).to_list()) == python


def test_space_class_is_str_isspace():
    chars = pl.Series([c for c in ALL_CHARS if not 0xD800 <= ord(c) <= 0xDFFF])
    assert set(chars.filter(chars.str.contains(f"^{PY_SPACE}$")).to_list()) == {c for c in ALL_CHARS if c.isspace()}


LINES = [
    "12/31/20, 10:00 amigo: hi", "12/31/20, 10:00 am: x", "12/31/20, 10:00 AMx - y", "12/31/20, 10:00 a. m. - B: x",
    "10:00 am, 1/2/2020 - A: x", "10:00 amx, 1/2/2020 - A: x", "٣١/١٢/٢٠٢٠, ١٠:٠٠ م - A: x", "[1/2/20, 10:00:00 PM] A: x",
    "\u200e[1/2/20, 10:00:00\u202fPM] A: x", "1.2.20, klo 10.00 - A: x", "2020-01-02 10:00 - A", "𑽐1/2/20, 10:00 - A: x",
]


@pytest.mark.parametrize("line", LINES)
def test_header_translation_matches_the_same_groups(line):
    m = HEADER.match(line)
    got = pl.Series([line]).str.extract_groups(header_pattern()).struct.unnest().row(0)
    assert got == (m.groups() if m else (None,) * HEADER.groups)


@pytest.mark.parametrize("rel", export_files())
def test_fixture_parses_identically_by_rows_and_columns(rel):
    require_fixtures()
    export = read_export(FIXTURES / rel)
    streamed = [line for block in export.line_blocks() for line in block.to_list()]
    assert streamed == split_lines(export.text)  # the lines polars took are the decoded text's
    reference = parse_rows(export.text, export.display_name, export.encoding)
    same(parse_export(export), reference)  # what parse_file and ingestion run
    same(parse_text(export.text, export.display_name, export.encoding), reference)
    # blocks of ~1 KB: entries, open multi-line entries and the preamble cross block ends
    same(parse_lines(export.line_blocks(block_bytes=1 << 10), export.display_name, export.encoding), reference)


TEXTS = {
    "crlf": "1/2/20, 10:00 - A: hi\r\nmore\r\n1/2/20, 10:01 - B: yo\r\n",
    "preamble": "junk\n\nmore junk\n1/2/20, 10:00 - A: hi\n31/02/20, 10:00 - A: not\n13/13/20, 10:00 - B: x\n",
    "rejected": "1/2/20, 10:00 - A: hi\n99/99/99, 10:00 - x\n1/2/20, 25:00 - A: nope\n1/2/20, 10:01 - B: yo",
    "rejected-first": "99/99/99, 10:00 - x\n1/2/20, 10:00 - A: hi\n",
    "empty-body": "[1/2/20, 10:00:00] A:\n[1/2/20, 10:00:01] \u200eA created group\n[1/2/20, 10:00:02] sys line\n",
    "blank-tail": "1/2/20, 10:00 - A: hi\n\n\n",
    "brackets": "[1/2/20, 10:00 - A: x\n1/2/20, 10:00] A: y\n1/2/20, 10:00 - A: z\n",
    "time-first": "10:00, 1/2/2020 - A: hi\n10:01, 1/2/2020 - B: yo\n",
    "kinds": "1/2/20, 10:00 - A: a\u2028b\n1/2/20, 10:00 - A: <Media omitted>\n1/2/20, 10:00 - A: This message was deleted\n"
             "1/2/20, 10:00 - A: POLL:\nq\n1/2/20, 10:00 - A: POLL:\n1/2/20, 10:00 - A: Missed voice call\n"
             "1/2/20, 10:00 - A: hi <This message was edited>\n1/2/20, 10:00 - A: x.pdf (file attached)\n"
             "1/2/20, 10:00 - A: long " + "y" * 400 + "\nhttps://maps.google.com/?q=1\n",
    "names": "1/2/20, 10:00 - " + "N" * 90 + ": hi\n1/2/20, 10:00 - A said \"x\": hi\n1/2/20, 10:00 - A\u00a0B\u200e: hi\n"
             "1/2/20, 10:00 - : x\n1/2/20, 10:00 - " + "n" * 161 + ": x\n1/2/20 10:01 B: ok\n1/2/20 10:02 no colon\n",
    "undecided": "1/2/20, 10:00 - A: x\n2/2/20, 10:00 - A: y\n3/2/20, 09:00 - A: z\n",
}


@pytest.mark.parametrize("text", TEXTS.values(), ids=TEXTS.keys())
def test_edge_texts_parse_identically(text):
    same(parse_text(text), parse_rows(text))



def test_entry_columns_are_chunked_alike_across_blocks():
    # a frame whose columns are chunked differently is copied whole by drop/select/with_columns
    lines = [x for i in range(3000) for x in (f"1/2/20, 10:{i % 60:02d} - A: line {i}", "more")]
    frame = parse_lines(pl.Series(lines[i: i + 1000]) for i in range(0, len(lines), 1000)).frame
    chunks = {name: tuple(frame[name].chunk_lengths()) for name in frame.columns}
    assert len(chunks["ts"]) > 1 and set(chunks.values()) == {chunks["ts"]}, chunks

def test_text_polars_cannot_hold_takes_the_row_parser():
    text = "1/2/20, 10:00 - A: broken \ud800 surrogate\n"
    assert parse_text(text).entries[0].text == "broken \ud800 surrogate"


def test_phrase_screen_never_drops_a_phrase_or_call():
    from truffle_assets.parsing.kinds import _PHRASES, MESSAGE, maybe_phrase, short_kind

    calls = ["Missed voice call", "missed group video call", "Video call", "VOICE CALL.", "Verpasster Sprachanruf",
             "Llamada perdida", "Chiamata vocale persa", "Chamada de voz perdida", "Appel vocal manqué",
             "Zmeškaný hovor", "Пропущенный аудиозвонок", "Пропущений відеодзвінок"]
    firsts = [*_PHRASES, *(p.upper() + ". " for p in _PHRASES), *(f"\t{p.title()}..." for p in _PHRASES), *calls,
              "ok", "see you at 5", "Missed the bus", "video calls are fine", "\x1cnull\x1f", "Image omitted."]
    screened = pl.DataFrame({"first": firsts}).select(maybe_phrase(pl.col("first"))).to_series().to_list()
    for first, keep in zip(firsts, screened):
        for multiline in (False, True):
            assert keep or short_kind(first, multiline) == MESSAGE, first


def test_phrase_screen_passes_every_case_python_lowers_into_a_phrase():
    # short_kind() lowers with Python; the screen folds case with Rust. Lower-casing is per character
    # except Final_Sigma (no sigma in the phrases) and U+0130 (-> "i" + U+0307, in no phrase).
    alphabet = set("".join(_PHRASES)) | {c for c in _CALL_START if c.isalnum() or c == " "} | {"."}
    assert not alphabet & {"\u03c3", "\u03c2", "\u0307"}
    assert [c for c in ALL_CHARS if len(c.lower()) > 1] == ["\u0130"]
    lowers_to: dict[str, list[str]] = {}
    for c in ALL_CHARS:
        if c.lower() in alphabet and not 0xD800 <= ord(c) <= 0xDFFF:
            lowers_to.setdefault(c.lower(), []).append(c)
    for p, chars in lowers_to.items():
        folded = pl.Series(chars).str.contains(f"^(?i:{_rust_escape(p)})$")
        assert folded.all(), (p, [c for c, ok in zip(chars, folded) if not ok])
    # and whole lines, as short_kind() sees them
    lines = [f"{pad}{p.upper()}{dots}{pad}" for p in _PHRASES for pad in ("", " \u00a0") for dots in ("", "..")]
    lines += ["MISSED VOICE CALL from Bob", "\tVideo call", "ПРОПУЩЕННЫЙ АУДИОЗВОНОК"]
    lines = [ln for ln in lines if short_kind(ln, True) != MESSAGE]
    assert len(lines) > 250 and pl.Series(lines).str.contains(PHRASE_SCREEN).all()
    assert not pl.Series(["deleted message x", "missed the bus", "ok", "null pointer", "😀"]).str.contains(
        PHRASE_SCREEN).any()


def test_times_as_columns_equal_parse_time():
    texts = []
    for h in ("0", "1", "9", "00", "09", "11", "12", "13", "23", "24", "99"):
        for m in ("00", "05", "59", "60", "75"):
            for s in ("", ":00", ".07", ":59", ":60"):
                for ampm in ("", "AM", "am", "PM", "p.m.", "a. m.", "P.M", "pM", "\u0645", "\u0635"):
                    for sep in ("", " ", "\u00a0", "\u202f", "_"):
                        for colon in (":", "."):
                            t = f"{h}{colon}{m}{s}{sep if ampm else ''}{ampm}"
                            if re.fullmatch(_TIME, t):
                                texts.append(t)
    texts += ["\u0661\u0660:\u0660\u0660", "\u0662:\u0665\u0666:\u0660\u0660 \u0645", "\uff11\uff10:\uff10\uff10"]
    assert len(texts) > 5000
    got = _times(pl.Series(texts)).to_list()
    assert got == [parse_time(t) for t in texts]
