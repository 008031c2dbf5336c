"""From export files to message rows per (chat, day): the Dagster-free half of ingestion.

Used by the `messages` asset and by the run planner (`planning`, behind the exports sensor and
`truffle ingest`), so they agree on chat ids, message ids and per-day digests.
"""

from __future__ import annotations

import functools
import hashlib
import json
from collections import Counter
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path

import polars as pl
import pyarrow as pa

from truffle_assets.chat_ids import ChatIdMap, ChatScan, by_rule, names_of
from truffle_assets.ids import day_digest
from truffle_assets.parsing import parse_export, read_export
from truffle_assets.parsing.kinds import DELETED, SYSTEM
from truffle_assets.files import sha256_file
from truffle_assets.forget.tombstones import Tombstones

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
    frames = []
    jobs = []
    truncated = []
    for path in files:
        export = read_export(path)
        result = parse_export(export)
        frames.append(message_rows(chat_id, result.frame, export.display_name))
        truncated += [f"{export.display_name}:{a}-{b}" for a, b in result.truncated]
        jobs.append({
            "chat_id": chat_id, "source_file": export.display_name, "file_sha256": export.file_sha256,
            "encoding": export.encoding, "lines_total": result.lines_total, "header_lines": result.header_lines,
            "continuation_lines": result.continuation_lines, "system_lines": result.system_lines,
            "quarantined_lines": len(result.quarantined), "quarantined": [list(q) for q in result.quarantined],
        })
        del result  # its entry frame: the rows hold what they need of it
    rows = pl.concat(frames) if frames else pl.DataFrame(schema=_ROW_SCHEMA)
    del frames
    # The order from two narrow columns, then the wide rows gathered a column at a time: a copy of
    # all of them at once would cost ~150 bytes a row.
    order = rows.select("ts", "id").with_row_index("i")
    if len(files) > 1 or order["id"].is_duplicated().any():
        order = order.unique("id", keep="first", maintain_order=True)  # a message in several exports: the newest cites it
    order = order.sort("ts", "id")["i"]
    columns = []
    for name in rows.columns:
        columns.append(rows[name].gather(order))
        rows = rows.drop(name)  # the old column goes as soon as its copy is made
    return pl.DataFrame(columns), tuple(jobs), tuple(truncated)


def message_rows(chat_id: str, entries: pl.DataFrame, source_file: str) -> pl.DataFrame:
    """One export's entry frame (parsing.ENTRY_SCHEMA) as message rows: ids.content_hash and
    ids.message_ids computed over the columns, byte for byte (test_message_rows.py checks)."""
    ts, sep = pl.col("ts"), "\x1f"
    content = pl.concat_str(  # ts.isoformat(): entries carry whole seconds
        ts.dt.strftime("%Y-%m-%dT%H:%M:%S"), pl.col("author").fill_null(""), "kind", "text", pl.lit(""), separator=sep,
    )
    rows = entries.with_columns(content_hash=_blake2b_hex(entries, content, 16))
    # How many identical messages came before each one in the file, counted among repeats only:
    # a window over every row costs several times more, and most messages are unique.
    nth = pl.repeat(0, rows.height, dtype=pl.Int64, eager=True)
    repeats = rows.select("content_hash").with_row_index("i").filter(pl.col("content_hash").is_duplicated())
    if repeats.height:
        before = pl.int_range(pl.len(), dtype=pl.Int64).over("content_hash")
        nth.scatter(repeats["i"], repeats.select(before).to_series())
    key = pl.concat_str(pl.lit(chat_id), "content_hash", "nth", separator=sep)
    return rows.with_columns(
        id=_blake2b_hex(rows.with_columns(nth=nth), key, 10), chat_id=pl.lit(chat_id), day=ts.dt.date(), raw_text="text",
        source_file=pl.lit(source_file),
    ).select(*_ROW_SCHEMA).cast(_ROW_SCHEMA)


_HASH_ROWS = 1 << 18


def _blake2b_hex(frame: pl.DataFrame, strings: pl.Expr, digest_size: int) -> pl.Series:
    """hashlib.blake2b(s.encode()).hexdigest() of the string `strings` gives on each row, a slice of
    rows at a time. Each row's UTF-8 bytes are a slice of the slice's arrow buffer and the digests
    go to one buffer, so no str or digest object per row outlives its step, and no copy of the
    strings is made for more than a slice."""
    digests = bytearray()
    b2 = hashlib.blake2b
    for start in range(0, frame.height, _HASH_ROWS):
        part = frame.slice(start, _HASH_ROWS).select(strings).to_series()
        arr = part.rechunk().to_arrow(compat_level=pl.CompatLevel.oldest())  # large_string: int64 offsets
        assert arr.type == pa.large_string()
        offsets = memoryview(arr.buffers()[1]).cast("q")[arr.offset: arr.offset + len(arr) + 1].tolist()
        data = memoryview(arr.buffers()[2] or b"")
        for a, b in zip(offsets, offsets[1:]):
            digests += b2(data[a:b], digest_size=digest_size).digest()
    raw = pa.FixedSizeBinaryArray.from_buffers(pa.binary(digest_size), frame.height, [None, pa.py_buffer(digests)])
    return pl.Series(pl.from_arrow(raw)).cast(pl.Binary).bin.encode("hex")


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
