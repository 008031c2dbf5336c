"""From export files to message rows per (chat, day): the Dagster-free half of ingestion.

Used by the `messages` asset and by the run planner (`planning`, behind the exports sensor and
`truffle ingest`), so they agree on chat ids, message ids and per-day digests.
"""

from __future__ import annotations

import binascii
import functools
import hashlib
import json
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path
from typing import NamedTuple

import numpy as np
import polars as pl
import pyarrow as pa

from truffle_assets.ingest.chat_ids import ChatIdMap, ChatScan, by_rule, names_of
from truffle_assets.ids import day_digest
from truffle_assets.parsing import parse_export, read_export
from truffle_assets.parsing.kinds import DELETED, SYSTEM
from truffle_assets.files import sha256_file
from truffle_assets.ingest.tombstones import Tombstones

EXPORT_SUFFIXES = (".txt", ".zip")


def scan_exports(exports_dir: str | Path, ids: ChatIdMap | None = None) -> dict[str, list[Path]]:
    """Chat id -> its export files (a re-export may sit beside the old one: both feed the chat)."""
    return scan_chats(exports_dir, ids).chats


def scan_chats(exports_dir: str | Path, ids: ChatIdMap | None = None) -> ChatScan:
    """The exports grouped by chat: files with one display name (`ids.export_name`) are one chat,
    under the id `ids` (the store's persistent map) gives it, or without a map the rule's; names
    that would meet on one id are kept apart and listed as collisions (`chat_ids`)."""
    root = Path(exports_dir)
    files = [
        p for p in sorted(root.rglob("*")) if p.is_file() and p.suffix.lower() in EXPORT_SUFFIXES
        and not p.name.startswith(".") and p.name != "README.txt"
    ] if root.is_dir() else []
    by_name = names_of(files)
    return ids.scan(by_name) if ids is not None else by_rule(by_name)


@dataclass
class ChatLoad:
    chat_id: str
    rows: pl.DataFrame  # one row per message (MESSAGE_COLUMNS), every day of the chat
    jobs: list[dict] = field(default_factory=list)  # per-file accounting for `ingestion_jobs`
    truncated: list[str] = field(default_factory=list)  # "file:first-last line" of messages cut at limits.MAX_MESSAGE_CHARS
    forgotten: int = 0  # messages left out because the user forgot them (`forget.tombstones`)

    @property
    def days(self) -> list[date]:
        return sorted(set(self.rows["day"].to_list())) if self.rows.height else []

    def rows_for(self, days: set[date]) -> pl.DataFrame:
        return self.rows.filter(pl.col("day").is_in(sorted(days)))

    def day_digests(self) -> dict[str, str]:
        return day_digests(self.rows)


def day_digests(rows: pl.DataFrame) -> dict[str, str]:
    """ISO day -> digest of that day's message content hashes."""
    return {day.isoformat(): day_digest(grp["content_hash"].to_list()) for (day,), grp in rows.group_by("day")}


_ROW_SCHEMA = {
    "id": pl.String, "chat_id": pl.String, "day": pl.Date, "ts": pl.Datetime("us"), "author": pl.String,
    "kind": pl.String, "raw_text": pl.String, "edited": pl.Boolean, "source_file": pl.String,
    "line_start": pl.Int32, "line_end": pl.Int32, "content_hash": pl.String,
}


def load_chat(chat_id: str, files: list[Path], user: str | None = None,
              forget: Tombstones | None = None) -> ChatLoad:
    """Parse every export of a chat; newest file first so overlapping messages cite it. What
    `forget` covers is dropped before anything sees the rows, so the days that held it change."""
    stamps = tuple((str(p), st.st_mtime_ns, st.st_size) for p in files for st in [p.stat()])
    rows, jobs, truncated = _parse_chat(chat_id, stamps)
    forgotten = 0
    if forget is not None:
        rows, forgotten = forget.apply(chat_id, rows)
        if forgotten and rows.height == 0:  # a forgotten chat: its files' accounting quotes lines too
            jobs, truncated = (), ()
    rows = rows.with_columns(is_user=pl.col("author").eq(user).fill_null(False) if user else pl.lit(False))
    return ChatLoad(chat_id, rows, [dict(j) for j in jobs], list(truncated), forgotten)


@functools.lru_cache(maxsize=2)
def _parse_chat(chat_id: str, stamps: tuple[tuple[str, int, int], ...]) -> tuple[pl.DataFrame, tuple[dict, ...], tuple[str, ...]]:
    """The parse behind `load_chat`, kept for the last two chats seen: `truffle ingest` runs a
    chat's stretches of months one after another in one process, and the planner has just read it.
    Keyed by path, mtime and size, so a changed file is parsed again."""
    files = [Path(p) for p, _, _ in sorted(stamps, key=lambda s: s[1], reverse=True)]
    parsed = []
    jobs = []
    truncated = []
    for path in files:
        export = read_export(path)
        result = parse_export(export)
        truncated += [f"{export.display_name}:{a}-{b}" for a, b in result.truncated]
        jobs.append({
            "chat_id": chat_id, "source_file": export.display_name, "file_sha256": export.file_sha256,
            "encoding": export.encoding, "lines_total": result.lines_total, "header_lines": result.header_lines,
            "continuation_lines": result.continuation_lines, "system_lines": result.system_lines,
            "quarantined_lines": len(result.quarantined), "quarantined": [list(q) for q in result.quarantined],
        })
        # One chunk a column (a gather from many chunks of strings copies the strings, from one only
        # their views), made while little else is held; and held here alone, so message_rows can
        # free each column as soon as its sorted copy is made.
        entries = result.frame.rechunk()
        del result
        parsed.append(Parsed(entries, export.display_name, *message_hashes(chat_id, entries)))
        del entries
    return message_rows(chat_id, parsed), tuple(jobs), tuple(truncated)


class Parsed(NamedTuple):
    """One export on its way to message rows: its entries (parsing.ENTRY_SCHEMA, file order) and
    the raw digests `message_hashes` made of them."""

    entries: pl.DataFrame
    source_file: str
    hashes: bytes  # ids.content_hash of each entry, 16 bytes a row
    ids: bytes  # ids.message_ids, 10 bytes a row


_SEP = "\x1f"
_HASH_ROWS = 1 << 18


def message_hashes(chat_id: str, entries: pl.DataFrame) -> tuple[bytearray, bytearray]:
    """ids.content_hash and ids.message_ids of one export's entries, computed over the columns
    byte for byte (test_message_rows.py checks), as raw digests: 16 and 10 bytes a row, file order."""
    ts = pl.col("ts")
    content = pl.concat_str(  # ts.isoformat(): entries carry whole seconds
        ts.dt.strftime("%Y-%m-%dT%H:%M:%S"), pl.col("author").fill_null(""), "kind", "text", pl.lit(""), separator=_SEP,
    )
    steps = range(0, entries.height, _HASH_ROWS)
    hashes = _blake2b((entries.slice(i, _HASH_ROWS).select(content).to_series() for i in steps), 16)
    halves = np.frombuffer(hashes, dtype=np.uint64).reshape(-1, 2)
    nth = pl.Series("nth", _occurrence(halves[:, 0], halves[:, 1]))  # identical messages before it in the file
    del halves
    key = pl.concat_str(pl.lit(chat_id), "content_hash", "nth", separator=_SEP)
    ids = _blake2b((
        pl.DataFrame([_hex(memoryview(hashes)[16 * i: 16 * (i + _HASH_ROWS)], 16).alias("content_hash"),
                      nth.slice(i, _HASH_ROWS)]).select(key).to_series()
        for i in steps
    ), 10)
    return hashes, ids


def message_rows(chat_id: str, parsed: list[Parsed]) -> pl.DataFrame:
    """A chat's exports (newest first) as its message rows, in (ts, id) order; a message in several
    exports is cited by the newest. Takes the entry frames over (`parsed` is emptied): each column
    goes as soon as its sorted copy is made, and the hex ids and hashes are written in sorted order
    from the digests, so the rows are never held twice."""
    if not parsed:
        return pl.DataFrame(schema=_ROW_SCHEMA)
    sources = [p.source_file for p in parsed]
    heights = [p.entries.height for p in parsed]
    if len(parsed) == 1:
        entries, hashes, ids = parsed[0].entries, parsed[0].hashes, parsed[0].ids
    else:
        entries = pl.concat([p.entries for p in parsed])
        hashes, ids = b"".join(p.hashes for p in parsed), b"".join(p.ids for p in parsed)
    parsed.clear()
    order = _order(entries["ts"], ids)
    columns = {}
    for name in entries.columns:
        col = entries.drop_in_place(name)  # out of the frame: freed once its copy is made
        if col.n_chunks() > 1:  # several exports
            col = col.rechunk()
        columns[name] = (col.cast(pl.Int32) if name.startswith("line_") else col).gather(order)
        del col
    order = order.to_numpy()
    columns["content_hash"] = _hex(hashes, 16, order)
    del hashes
    columns["id"] = _hex(ids, 10, order)
    del ids
    if len(sources) == 1:
        source = pl.lit(sources[0])  # one value, not a column of copies
    else:
        source = pl.Series(sources).gather(np.repeat(np.arange(len(sources), dtype=np.uint32), heights)[order])
    rows = pl.DataFrame(columns).rename({"text": "raw_text"})
    return rows.with_columns(chat_id=pl.lit(chat_id), day=pl.col("ts").dt.date(), source_file=source).select(*_ROW_SCHEMA)


def _order(ts: pl.Series, ids: bytes) -> pl.Series:
    """Row numbers in (ts, id) order, an id seen before left out (its first row, the newest
    export's, stays). Ids are compared as their 10 bytes, first 8 and last 2 read big-endian:
    the order of their hex text, without sorting strings."""
    key = np.frombuffer(ids, dtype=np.dtype([("hi", ">u8"), ("lo", ">u2")]))
    hi, lo = key["hi"].astype(np.uint64), key["lo"].astype(np.uint16)
    del key
    keys = pl.DataFrame({"ts": ts, "hi": hi, "lo": lo}).with_row_index("i")
    first = _occurrence(hi, lo) == 0
    del hi, lo
    if not first.all():
        keys = keys.filter(pl.Series(first))
    return keys.select(pl.col("i").sort_by("ts", "hi", "lo")).to_series()


def _occurrence(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """For each row, how many rows before it hold the same (a, b). From one stable sort: hashing
    millions of distinct keys into groups costs several times the memory and time."""
    n = len(a)
    s = pl.DataFrame({"a": a, "b": b}).select(pl.arg_sort_by("a", "b", maintain_order=True)).to_series().to_numpy()
    a, b = a[s], b[s]
    starts = np.ones(n, dtype=bool)  # the first row of each run of equal pairs
    starts[1:] = (a[1:] != a[:-1]) | (b[1:] != b[:-1])
    del a, b
    i = np.arange(n, dtype=np.int64)
    nth = np.empty(n, dtype=np.int64)
    nth[s] = i - np.maximum.accumulate(np.where(starts, i, 0))
    return nth


def _blake2b(strings: Iterable[pl.Series], digest_size: int) -> bytearray:
    """hashlib.blake2b(s.encode()).digest() of every string, concatenated, given a slice of rows
    at a time. Each row's UTF-8 bytes are a slice of the slice's arrow buffer and the digests go to
    one buffer, so no str or digest object per row outlives its step."""
    digests = bytearray()
    b2 = hashlib.blake2b
    for part in strings:
        arr = part.rechunk().to_arrow(compat_level=pl.CompatLevel.oldest())  # large_string: int64 offsets
        assert arr.type == pa.large_string()
        offsets = memoryview(arr.buffers()[1]).cast("q")[arr.offset: arr.offset + len(arr) + 1].tolist()
        data = memoryview(arr.buffers()[2] or b"")
        for a, b in zip(offsets, offsets[1:]):
            digests += b2(data[a:b], digest_size=digest_size).digest()
    return digests


# An Arrow string view: a string longer than 12 bytes is its length, first 4 bytes, data buffer and offset.
_VIEW = np.dtype([("len", "u4"), ("prefix", "V4"), ("buffer", "u4"), ("offset", "u4")])
_HEX_ROWS = 1 << 20
_BUFFER_ROWS = 1 << 26  # rows of hex text in one data buffer: view offsets are 32-bit


def _hex(digests, size: int, order: np.ndarray | None = None, buffer_rows: int = _BUFFER_ROWS) -> pl.Series:
    """hexdigest() of each `size`-byte digest, or of those `order` picks in its order, as a String
    column built where it will live: the hex text in digest order, and Arrow string views into it
    in the order asked, taken over by polars without a copy. The buffers are Arrow's own on the
    system allocator, so they go back the moment polars lets go (no Python object to release)."""
    width = 2 * size
    assert width > 12, "views of strings up to 12 bytes hold them inline"
    d = np.frombuffer(digests, dtype=np.uint8).reshape(-1, size)
    n = len(d)
    pool = pa.system_memory_pool()
    data = []
    for start in range(0, n, buffer_rows):
        part = d[start: start + buffer_rows]
        buf = pa.allocate_buffer(len(part) * width, memory_pool=pool)
        text = np.frombuffer(buf, dtype=np.uint8)
        for i in range(0, len(part), _HEX_ROWS):
            text[i * width: (i + _HEX_ROWS) * width] = np.frombuffer(binascii.hexlify(part[i: i + _HEX_ROWS]), np.uint8)
        data.append(buf)
    m = n if order is None else len(order)
    views_buf = pa.allocate_buffer(m * _VIEW.itemsize, memory_pool=pool)
    views = np.frombuffer(views_buf, dtype=_VIEW)
    for i in range(0, m, _HEX_ROWS):
        rows = np.arange(i, min(i + _HEX_ROWS, m)) if order is None else order[i: i + _HEX_ROWS].astype(np.int64)
        v = views[i: i + _HEX_ROWS]
        v["len"] = width
        v["prefix"] = np.frombuffer(binascii.hexlify(d[rows, :2]), dtype="V4")
        v["buffer"] = rows // buffer_rows
        v["offset"] = rows % buffer_rows * width
    return pl.Series(pl.from_arrow(pa.Array.from_buffers(pa.string_view(), m, [None, views_buf, *data])))


def author_profile(path: Path, cache_dir: Path | None = None) -> dict:
    """Authors of one export (message counts, and who 'You deleted' marks as the exporter), cached by file hash."""
    cache = cache_dir / f"{sha256_file(path)}.json" if cache_dir else None
    if cache is not None and cache.exists():  # a hit costs a hash, not a decode and parse
        return json.loads(cache.read_text())
    entries = parse_export(read_export(path)).frame
    authored = entries.filter(pl.col("author").is_not_null() & (pl.col("kind") != SYSTEM))
    deleted = entries.filter(pl.col("kind") == DELETED).select("author", "text").iter_rows()
    prof = {
        "authors": dict(authored.group_by("author", maintain_order=True).len().iter_rows()),
        # iOS attributes "You deleted this message" to the exporter: a direct hint at the user
        "you": dict(Counter(author for author, text in deleted if "you" in text.lower())),
    }
    if cache is not None:
        cache.parent.mkdir(parents=True, exist_ok=True)
        cache.write_text(json.dumps(prof, ensure_ascii=False))
    return prof


def detect_user(profiles: dict[str, list[dict]]) -> str | None:
    """The exporting user: the author present in every chat; ties broken by 'You' hints, then volume."""
    # a chat with no authored message (an empty or foreign file) says nothing about who the user is
    profiles = {chat: profs for chat, profs in profiles.items() if any(p["authors"] for p in profs)}
    if not profiles:
        return None
    presence: Counter[str] = Counter()
    volume: Counter[str] = Counter()
    hints: Counter[str] = Counter()
    for profs in profiles.values():
        authors = set()
        for prof in profs:
            authors.update(prof["authors"])
            volume.update(prof["authors"])
            hints.update(prof["you"])
        presence.update(authors)
    if not presence:
        return None
    candidates = [a for a, n in presence.items() if n == len(profiles)]
    if len(profiles) == 1:
        candidates = [a for a in candidates if hints[a]]  # alone, every author is "in every chat"
    if not candidates:
        return None  # refuse to guess; the user can set exports.user_name
    return max(candidates, key=lambda a: (hints[a], volume[a], a))


class IngestedDays:
    """Per-chat export day digests of the days the whole chain has published, written by the last
    stage (`memory_index`) once its run's months are in the published index.

    The planner compares an export's day digests against these, so runs go to exactly the days
    whose content differs, whoever ingested them (UI, sensor or `truffle ingest`). Written last, so
    a run that crashed half-way leaves its months planned again: the re-run converges, redoing only
    what the stages' own per-day digests (`stage_days`) say is missing.
    """

    def __init__(self, root: str | Path):
        self.root = Path(root)

    def _path(self, chat_id: str) -> Path:
        return self.root / f"{chat_id}.json"

    def load(self, chat_id: str) -> dict[str, str]:
        p = self._path(chat_id)
        return json.loads(p.read_text()) if p.exists() else {}

    def publish_months(self, chat_id: str, months: list[date], digests: dict[date, str]) -> None:
        """Replace the chat's entries for `months` (first days) with `digests` (day -> export digest)."""
        keys = {m.strftime("%Y-%m") for m in months}
        state = {d: h for d, h in self.load(chat_id).items() if d[:7] not in keys}
        state.update({d.isoformat(): h for d, h in digests.items()})
        self.root.mkdir(parents=True, exist_ok=True)
        tmp = self._path(chat_id).with_suffix(".tmp")
        tmp.write_text(json.dumps(dict(sorted(state.items())), separators=(",", ":")))
        tmp.replace(self._path(chat_id))  # atomic: the sensor never reads half a file
