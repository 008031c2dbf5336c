"""load_chat's message rows, built from the entry columns, against the Entry-based reference:
the row parser's entries through ids.content_hash / ids.message_ids, one record per message
(the former load_chat). Ids must never change: a changed id re-ingests a whole history."""

from __future__ import annotations

import os
import random
from collections import Counter
from pathlib import Path

import numpy as np
import polars as pl
import pytest

from truffle_assets.ingest.exports import _hex, _occurrence, load_chat
from truffle_assets.ids import chat_id_for, content_hash, message_ids
from truffle_assets.parsing import read_export
from truffle_assets.parsing.parser import parse_rows
from truffle_assets.synth import write_corpus
from truffle_assets_tests.parsing.test_fixtures import FIXTURES, export_files, require_fixtures

SCHEMA = {
    "id": pl.String, "chat_id": pl.String, "day": pl.Date, "ts": pl.Datetime("us"), "author": pl.String,
    "kind": pl.String, "raw_text": pl.String, "edited": pl.Boolean, "source_file": pl.String,
    "line_start": pl.Int32, "line_end": pl.Int32, "content_hash": pl.String,
}


def reference(chat_id: str, files: list[Path], user: str | None = None) -> pl.DataFrame:
    files = sorted(files, key=lambda p: p.stat().st_mtime, reverse=True)
    records: dict[str, dict] = {}
    for path in files:
        export = read_export(path)
        entries = parse_rows(export.text, export.display_name, export.encoding).entries
        for mid, e in zip(message_ids(chat_id, entries), entries):
            if mid not in records:
                records[mid] = {
                    "id": mid, "chat_id": chat_id, "day": e.ts.date(), "ts": e.ts, "author": e.author,
                    "kind": e.kind, "raw_text": e.text, "edited": e.edited, "source_file": export.display_name,
                    "line_start": e.line_start, "line_end": e.line_end, "content_hash": content_hash(e),
                }
    rows = pl.DataFrame(list(records.values()), schema=SCHEMA)
    rows = rows.with_columns(is_user=pl.col("author").eq(user).fill_null(False) if user else pl.lit(False))
    return rows.sort("ts", "id")


def same_rows(chat_id: str, files: list[Path], user: str | None = None) -> pl.DataFrame:
    got = load_chat(chat_id, files, user).rows
    want = reference(chat_id, files, user)
    assert got.schema == want.schema
    assert got.equals(want)  # every id, hash, text and line number, in the same order
    return got


@pytest.mark.parametrize("rel", export_files())
def test_fixture_rows_equal_the_reference(rel):
    require_fixtures()
    path = FIXTURES / rel
    same_rows(chat_id_for(path), [path])


@pytest.fixture(scope="module")
def synth(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("synth")
    write_corpus(out, chats=6, tokens=120_000, seed=11)
    return out


def test_synthetic_corpus_rows_equal_the_reference(synth):
    files = sorted(p for p in synth.iterdir() if p.suffix in (".txt", ".zip") and p.name != "README.txt")
    assert len(files) == 6
    for path in files:
        rows = same_rows(chat_id_for(path), [path], user="Priya")
        assert rows.height > 100 and rows["id"].n_unique() == rows.height


def test_overlapping_exports_keep_the_newest_files_rows(tmp_path, synth):
    path = next(p for p in sorted(synth.iterdir()) if p.suffix == ".txt" and p.name != "README.txt")
    lines = read_export(path).text.split("\n")
    old, new = tmp_path / "old" / path.name, tmp_path / "new" / path.name
    old.parent.mkdir(), new.parent.mkdir()
    old.write_text("\n".join(lines[: len(lines) // 2]) + "\n", encoding="utf-8")  # an earlier export: a prefix
    new.write_text("\n".join(lines[len(lines) // 4:]), encoding="utf-8")  # a later one, history trimmed
    os.utime(old, (1_000_000, 1_000_000))
    rows = same_rows(chat_id_for(path), [old, new])
    assert set(rows["source_file"]) == {str(old), str(new)}


TEXTS = {
    "repeats": "1/2/20, 10:00 - A: hi\n1/2/20, 10:00 - A: hi\n1/2/20, 10:00 - B: hi\n1/2/20, 10:00 - A: hi\n",
    "system-and-kinds": "[1/2/20, 10:00:00] \u200eA created group\n[1/2/20, 10:00:01] A: \u200eimage omitted\n"
                        "[1/2/20, 10:00:02] A: hi <This message was edited>\n[1/2/20, 10:00:03] A: two\nlines\u2028x\n",
    "old-year": "1/2/0999, 10:00 - A: before the year 1000\n1/2/0001, 23:59 - A: year one\n",
    "unicode": "1/2/20, 10:00 - Zoë 👩‍👩‍👧: 🎉 héllo\n1/2/20, 10:00 - \u200fأحمد: مرحبا\n",
}


@pytest.mark.parametrize("text", TEXTS.values(), ids=TEXTS.keys())
def test_edge_texts_rows_equal_the_reference(tmp_path, text):
    path = tmp_path / "WhatsApp Chat with Edge.txt"
    path.write_text(text, encoding="utf-8")
    same_rows("edge", [path], user="A")


def test_no_files_give_the_empty_frame():
    assert load_chat("none", []).rows.equals(reference("none", []))


@pytest.mark.parametrize("size", [10, 16])
def test_hex_columns_are_the_hexdigests_in_the_order_asked(size):
    rng = random.Random(size)
    digests = rng.randbytes(size * 1000)
    want = [digests[i * size: (i + 1) * size].hex() for i in range(1000)]
    assert _hex(digests, size).to_list() == want
    order = np.array(rng.sample(range(1000), 600), dtype=np.uint32)  # a shuffled subset, as after dedup
    for buffer_rows in (7, 1000, 1 << 26):  # the hex text split over 143 data buffers, or in one
        col = _hex(digests, size, order, buffer_rows)
        assert col.dtype == pl.String and col.to_list() == [want[i] for i in order]
    assert _hex(b"", size).to_list() == []


def test_occurrence_counts_the_equal_pairs_before_each_row():
    rng = np.random.default_rng(3)
    a, b = rng.integers(0, 5, 5000).astype(np.uint64), rng.integers(0, 3, 5000).astype(np.uint16)
    seen: Counter = Counter()
    want = []
    for pair in zip(a.tolist(), b.tolist()):
        want.append(seen[pair])
        seen[pair] += 1
    assert _occurrence(a, b).tolist() == want
