"""From export files to message rows per (chat, day): the Dagster-free half of ingestion.

Used by the `messages` asset and by the run planner (`planning`, behind the exports sensor and
`truffle ingest`), so they agree on chat ids, message ids and per-day digests.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path

import polars as pl

from truffle_assets.ids import chat_id_for, content_hash, day_digest, message_ids
from truffle_assets.parsing import parse_export, read_export
from truffle_assets.parsing.kinds import DELETED
from truffle_assets.files import sha256_file

EXPORT_SUFFIXES = (".txt", ".zip")


def scan_exports(exports_dir: str | Path) -> dict[str, list[Path]]:
    """Chat id -> its export files (a re-export may sit beside the old one: both feed the chat)."""
    root = Path(exports_dir)
    chats: dict[str, list[Path]] = {}
    if not root.is_dir():
        return chats
    for p in sorted(root.rglob("*")):
        if p.is_file() and p.suffix.lower() in EXPORT_SUFFIXES and not p.name.startswith(".") and p.name != "README.txt":
            chats.setdefault(chat_id_for(p), []).append(p)
    return chats


@dataclass
class ChatLoad:
    chat_id: str
    rows: pl.DataFrame  # one row per message (MESSAGE_COLUMNS), every day of the chat
    jobs: list[dict] = field(default_factory=list)  # per-file accounting for `ingestion_jobs`

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


def load_chat(chat_id: str, files: list[Path], user: str | None = None) -> ChatLoad:
    """Parse every export of a chat; newest file first so overlapping messages cite it."""
    files = sorted(files, key=lambda p: p.stat().st_mtime, reverse=True)
    records: dict[str, dict] = {}
    jobs = []
    for path in files:
        export = read_export(path)
        result = parse_export(export)
        ids = message_ids(chat_id, result.entries)
        for mid, e in zip(ids, result.entries):
            if mid in records:
                continue
            records[mid] = {
                "id": mid, "chat_id": chat_id, "day": e.ts.date(), "ts": e.ts, "author": e.author,
                "kind": e.kind, "raw_text": e.text, "edited": e.edited, "source_file": export.display_name,
                "line_start": e.line_start, "line_end": e.line_end, "content_hash": content_hash(e),
            }
        jobs.append({
            "chat_id": chat_id, "source_file": export.display_name, "file_sha256": export.file_sha256,
            "encoding": export.encoding, "lines_total": result.lines_total, "header_lines": result.header_lines,
            "continuation_lines": result.continuation_lines, "system_lines": result.system_lines,
            "quarantined_lines": len(result.quarantined), "quarantined": [list(q) for q in result.quarantined],
        })
    schema = {
        "id": pl.String, "chat_id": pl.String, "day": pl.Date, "ts": pl.Datetime("us"), "author": pl.String,
        "kind": pl.String, "raw_text": pl.String, "edited": pl.Boolean, "source_file": pl.String,
        "line_start": pl.Int32, "line_end": pl.Int32, "content_hash": pl.String,
    }
    rows = pl.DataFrame(list(records.values()), schema=schema)
    rows = rows.with_columns(is_user=pl.col("author").eq(user).fill_null(False) if user else pl.lit(False))
    return ChatLoad(chat_id, rows.sort("ts", "id"), jobs)


def author_profile(path: Path, cache_dir: Path | None = None) -> dict:
    """Authors of one export (message counts, and who 'You deleted' marks as the exporter), cached by file hash."""
    cache = cache_dir / f"{sha256_file(path)}.json" if cache_dir else None
    if cache is not None and cache.exists():  # a hit costs a hash, not a decode and parse
        return json.loads(cache.read_text())
    entries = parse_export(read_export(path)).entries
    prof = {
        "authors": dict(Counter(e.author for e in entries if e.authored)),
        # iOS attributes "You deleted this message" to the exporter: a direct hint at the user
        "you": dict(Counter(e.author for e in entries if e.kind == DELETED and "you" in e.text.lower())),
    }
    if cache is not None:
        cache.parent.mkdir(parents=True, exist_ok=True)
        cache.write_text(json.dumps(prof, ensure_ascii=False))
    return prof


def detect_user(profiles: dict[str, list[dict]]) -> str | None:
    """The exporting user: the author present in every chat; ties broken by 'You' hints, then volume."""
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
    """Per-chat digests of the days now in the store, published after each commit.

    The planner compares an export's day digests against these, so runs go to exactly the days
    whose stored content differs, whoever ingested them (UI, sensor or `truffle ingest`).
    """

    def __init__(self, root: str | Path):
        self.root = Path(root)

    def _path(self, chat_id: str) -> Path:
        return self.root / f"{chat_id}.json"

    def load(self, chat_id: str) -> dict[str, str]:
        p = self._path(chat_id)
        return json.loads(p.read_text()) if p.exists() else {}

    def update(self, chat_id: str, days: set[date], rows: pl.DataFrame) -> None:
        state = self.load(chat_id)
        for d in days:
            state.pop(d.isoformat(), None)
        state.update(day_digests(rows))
        self.root.mkdir(parents=True, exist_ok=True)
        tmp = self._path(chat_id).with_suffix(".tmp")
        tmp.write_text(json.dumps(dict(sorted(state.items())), separators=(",", ":")))
        tmp.replace(self._path(chat_id))  # atomic: the sensor never reads half a file
