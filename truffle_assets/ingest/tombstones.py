"""What the user took back: tombstones that keep forgotten messages and facts out of every build.

A forget never edits the store behind the pipeline's back. It records a tombstone, and the export
loader drops what the tombstone covers before day digests are taken (`exports.load_chat`), so the
days holding it change, the planner schedules them, and every stage rebuilds them the way it
rebuilds a day the person edited in WhatsApp: messages, PII and streams rows go, episodes are
re-chunked, summaries and facts rebuilt, LanceDB rows replaced. A later re-ingest of the same
export drops them again, until `unforget`. Fact tombstones are applied where facts are
consolidated (`defs.memory.assets.facts`).

The file lives under `<data root>/forget/`, outside the cache and the store, so neither a cache
wipe nor `truffle ingest --full` brings anything back. It holds ids, dates, and for `contains`
the text the user asked to forget: the one place that text must stay, to keep filtering it.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from datetime import date, datetime, UTC
from pathlib import Path

import polars as pl

from truffle_assets.files import write_json_atomic

KINDS = ("chat", "message", "fact", "before", "contains")
MESSAGE_KINDS = ("chat", "message", "before", "contains")  # applied to export rows; "fact" to facts


class TombstoneError(ValueError):
    """A forget request that names nothing forgettable (bad kind, empty text, unparsable date)."""


@dataclass(frozen=True)
class Tombstone:
    id: str
    kind: str
    value: str  # chat id, message id, fact id, ISO date, or the text
    chat: str | None  # scope: the chat a message lives in, or limits `before`/`contains` to one chat
    added_at: str
    done: bool = False  # every store purged and the audit line written; False = a re-run finishes it

    def covers_chat(self, chat_id: str) -> bool:
        if self.kind == "chat":
            return self.value == chat_id
        return self.chat is None or self.chat == chat_id

    def describe(self) -> str:
        """What it covers, for people, logs and the audit: never the text of a `contains` tombstone."""
        what = {"before": f"messages before {self.value}",
                "contains": f"messages containing the text given ({len(self.value)} characters)",
                }.get(self.kind, f"{self.kind} {self.value}")
        return what + (f" in chat {self.chat}" if self.chat and self.kind != "chat" else "")

    def listing(self) -> dict:
        """What `truffle forget --list` and `GET /api/forget` show: ids and kinds, never a `contains` text."""
        return {"tombstone": self.id, "kind": self.kind, "what": self.describe(), "added_at": self.added_at,
                "done": self.done}


def tombstone_id(kind: str, value: str, chat: str | None) -> str:
    return hashlib.blake2b(f"{kind}\x1f{value}\x1f{chat or ''}".encode(), digest_size=8).hexdigest()


def validate(kind: str, value: str, chat: str | None = None) -> tuple[str, str, str | None]:
    if kind not in KINDS:
        raise TombstoneError(f"unknown forget kind {kind!r}; one of {', '.join(KINDS)}")
    value = value.strip() if kind != "contains" else value
    if kind == "contains" and len(value.strip()) < 3:
        raise TombstoneError("--contains needs at least 3 characters (shorter text would match almost everything)")
    if not value.strip():
        raise TombstoneError(f"forget {kind}: empty value")
    if kind == "before":
        try:
            value = date.fromisoformat(value).isoformat()
        except ValueError as exc:
            raise TombstoneError(f"--before wants a date as YYYY-MM-DD, got {value!r}") from exc
    return kind, value, (chat if kind != "chat" else None)


class Tombstones:
    """`<dir>/tombstones.json`, rewritten atomically under an flock (CLI and API may both forget)."""

    def __init__(self, path: str | Path):
        self.path = Path(path)

    @classmethod
    def in_dir(cls, forget_dir: str | Path) -> Tombstones:
        return cls(Path(forget_dir) / "tombstones.json")

    @contextmanager
    def _locked(self) -> Iterator[None]:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with open(str(self.path) + ".lock", "a") as f:
            fcntl.flock(f, fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(f, fcntl.LOCK_UN)

    def load(self) -> list[Tombstone]:
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return []
        except ValueError as exc:  # never silently forget the forgets: that would resurrect data
            raise TombstoneError(f"{self.path}: unreadable tombstones ({exc}); fix or restore the file") from exc
        return [Tombstone(**t) for t in data.get("tombstones", [])]

    def _save(self, items: list[Tombstone]) -> None:
        write_json_atomic(self.path, {"tombstones": [asdict(t) for t in items]})

    def add(self, kind: str, value: str, chat: str | None = None) -> Tombstone:
        """Idempotent: the same request returns the tombstone already there (done or not)."""
        kind, value, chat = validate(kind, value, chat)
        tid = tombstone_id(kind, value, chat)
        with self._locked():
            items = self.load()
            for t in items:
                if t.id == tid:
                    return t
            t = Tombstone(tid, kind, value, chat, datetime.now(UTC).isoformat(timespec="seconds"))
            self._save([*items, t])
            return t

    def mark_done(self, tid: str) -> None:
        with self._locked():
            self._save([Tombstone(**{**asdict(t), "done": True}) if t.id == tid else t for t in self.load()])

    def remove(self, tid: str) -> Tombstone | None:
        """Un-forget: the next ingest of an export that still holds it brings it back."""
        with self._locked():
            items = self.load()
            gone = next((t for t in items if t.id == tid), None)
            if gone is not None:
                self._save([t for t in items if t.id != tid])
            return gone

    def pending(self) -> list[Tombstone]:
        return [t for t in self.load() if not t.done]

    def fact_ids(self) -> set[str]:
        return {t.value for t in self.load() if t.kind == "fact"}

    def apply(self, chat_id: str, rows: pl.DataFrame) -> tuple[pl.DataFrame, int]:
        """`rows` (message rows of `chat_id`) without what the tombstones cover, and how many went."""
        found = [t for t in self.load() if t.kind in MESSAGE_KINDS and t.covers_chat(chat_id)]
        if not found or rows.height == 0:
            return rows, 0
        kept = rows.filter(~pl.any_horizontal([covers(t) for t in found]))
        return kept, rows.height - kept.height


def covers(t: Tombstone) -> pl.Expr:
    """The test `Tombstones.apply` makes, for one tombstone, as a filter over stored message rows."""
    if t.kind == "chat":
        return pl.col("chat_id") == t.value
    scope = pl.lit(True) if t.chat is None else pl.col("chat_id") == t.chat
    if t.kind == "message":
        return scope & (pl.col("id") == t.value)
    if t.kind == "before":
        return scope & (pl.col("day") < date.fromisoformat(t.value))
    if t.kind == "contains":
        return scope & pl.col("raw_text").str.to_lowercase().str.contains(t.value.lower(), literal=True)
    return pl.lit(False)


def drop_facts(facts: pl.DataFrame, forgotten: set[str]) -> pl.DataFrame:
    """Consolidated facts without the forgotten ones. A fact they superseded keeps its `valid_to`
    (it did end then) but no longer points at a fact that is gone."""
    if not forgotten or facts.height == 0:
        return facts
    kept = facts.filter(~pl.col("id").is_in(sorted(forgotten)))
    return kept.with_columns(
        superseded_by=pl.when(pl.col("superseded_by").is_in(sorted(forgotten))).then(None)
        .otherwise(pl.col("superseded_by")))
