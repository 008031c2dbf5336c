"""The chat runtime's append-only store: `<data root>/runtime/{turns,content,feedback}/<YYYY-MM-DD>.jsonl`.

The runtime appends one JSON line per event and never takes a lock, so a chat turn never waits
on a dataset build. The cost is on the reader: a crash mid-append can leave a torn last line,
which is skipped and counted; anything malformed before the end of a file is real damage and
raises with the file and line number. Metadata, content and feedback live in separate files
because each can be switched off on its own (a turn whose content was not kept is still
counted, it just cannot become a training row).
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta, UTC
from pathlib import Path
from typing import Any

STREAMS = ("turns", "content", "feedback")
RATINGS = (-1, 0, 1)


class StoreError(ValueError):
    """A line in the runtime store that is neither valid nor a torn final write."""


@dataclass(frozen=True)
class Feedback:
    turn_id: str
    ts: str
    rating: int
    note: str = ""


@dataclass
class Turn:
    turn_id: str
    conversation_id: str | None
    ts: str | None
    day: str
    meta: dict[str, Any]
    messages: list[dict[str, str]] | None = None  # redacted prompt messages; None when content was off
    answer: str | None = None
    feedback: list[Feedback] = field(default_factory=list)  # every rating, in append order

    @property
    def reroll_of(self) -> str | None:
        return self.meta.get("reroll_of")

    @property
    def principals(self) -> list[str]:
        p = self.meta.get("principals") or []
        return [p] if isinstance(p, str) else [str(x) for x in p]

    @property
    def has_content(self) -> bool:
        return bool(self.messages) and self.answer is not None

    @property
    def rating(self) -> int | None:
        """The last rating appended (day files in order, lines in order): a change of mind wins."""
        return self.feedback[-1].rating if self.feedback else None


@dataclass
class StoreRead:
    turns: list[Turn]
    torn_lines: list[str]  # "file:line" of skipped partial writes
    files_read: int

    @property
    def missing_content(self) -> int:
        return sum(not t.has_content for t in self.turns)


def _as_date(d: date | str | None) -> date | None:
    if d is None or isinstance(d, date):
        return d
    return date.fromisoformat(d)


def _shift(d: date | None, days: int) -> date | None:
    return d + timedelta(days=days) if d else None


def _day_files(folder: Path, since: date | None, until: date | None) -> list[tuple[date, Path]]:
    out = []
    for p in folder.glob("*.jsonl") if folder.is_dir() else ():
        try:
            d = date.fromisoformat(p.stem)
        except ValueError:
            continue  # not a day file (editor backup, notes): not ours to read
        if (since is None or d >= since) and (until is None or d <= until):
            out.append((d, p))
    return sorted(out)


def read_jsonl(path: Path, torn: list[str]) -> Iterator[tuple[int, dict[str, Any]]]:
    """(line number, record) pairs; a torn final line is appended to `torn` instead of raising."""
    data = path.read_bytes()
    lines = data.split(b"\n")
    complete_end = data.endswith(b"\n")
    for i, raw in enumerate(lines, start=1):
        if not raw.strip():
            continue
        last_unterminated = i == len(lines) and not complete_end
        try:
            rec = json.loads(raw)
            if not isinstance(rec, dict):
                raise ValueError(f"expected a JSON object, got {type(rec).__name__}")
        except ValueError as exc:
            if last_unterminated:  # the writer died mid-append; the line never existed
                torn.append(f"{path}:{i}")
                continue
            raise StoreError(f"{path}:{i}: malformed line: {exc}") from exc
        if not isinstance(rec.get("turn_id"), str) or not rec["turn_id"]:
            raise StoreError(f"{path}:{i}: record has no turn_id")
        yield i, rec


def read_store(runtime_dir: str | Path, since: date | str | None = None,
               until: date | str | None = None) -> StoreRead:
    """Turns recorded on days in [since, until], joined with their content and every rating."""
    root = Path(runtime_dir)
    since, until = _as_date(since), _as_date(until)
    torn: list[str] = []
    files = 0

    turns: dict[str, Turn] = {}
    for d, path in _day_files(root / "turns", since, until):
        files += 1
        for _, rec in read_jsonl(path, torn):
            turns[rec["turn_id"]] = Turn(turn_id=rec["turn_id"], conversation_id=rec.get("conversation_id"),
                                         ts=rec.get("ts"), day=d.isoformat(), meta=rec)

    # content is written right after its turn but can cross midnight into the next day's file;
    # a rating often comes days later, so feedback has no upper bound. Records for turns outside
    # the range are expected there and ignored.
    for _, path in _day_files(root / "content", _shift(since, -1), _shift(until, 1)):
        files += 1
        for _, rec in read_jsonl(path, torn):
            if (t := turns.get(rec["turn_id"])) is not None:
                t.messages, t.answer = rec.get("messages"), rec.get("answer")

    for _, path in _day_files(root / "feedback", _shift(since, -1), None):
        files += 1
        for i, rec in read_jsonl(path, torn):
            if (t := turns.get(rec["turn_id"])) is None:
                continue
            if rec.get("rating") not in RATINGS:
                raise StoreError(f"{path}:{i}: rating must be one of {RATINGS}, got {rec.get('rating')!r}")
            t.feedback.append(Feedback(turn_id=t.turn_id, ts=str(rec.get("ts", "")), rating=rec["rating"],
                                       note=rec.get("note") or ""))

    ordered = sorted(turns.values(), key=lambda t: (t.day, t.ts or "", t.turn_id))
    return StoreRead(turns=ordered, torn_lines=torn, files_read=files)


def load_turns(runtime_dir: str | Path, since: date | str | None = None,
               until: date | str | None = None) -> list[Turn]:
    return read_store(runtime_dir, since, until).turns


# --- writers (the runtime's side) -------------------------------------------------------------

def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="microseconds")


def _line(rec: dict[str, Any]) -> bytes:
    # json.dumps escapes newlines inside strings, so one record is always exactly one line
    return (json.dumps(rec, ensure_ascii=False, separators=(",", ":"), sort_keys=True) + "\n").encode()


def append_line(path: Path, rec: dict[str, Any]) -> None:
    """One `write` on an O_APPEND descriptor: concurrent writers never interleave inside a line.

    os.write is unbuffered, so the line is handed to the kernel before this returns (the flush);
    a short write (disk full) raises rather than being retried, since a second write could land
    after another writer's line.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    data = _line(rec)
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    try:
        n = os.write(fd, data)
        if n != len(data):
            raise OSError(f"short write to {path}: {n} of {len(data)} bytes")
    finally:
        os.close(fd)


def prompt_hash(messages: Iterable[dict[str, str]]) -> str:
    canon = json.dumps(list(messages), ensure_ascii=False, separators=(",", ":"), sort_keys=True)
    return hashlib.sha256(canon.encode()).hexdigest()


def write_turn(runtime_dir: str | Path, turn_id: str, conversation_id: str, *,
               messages: list[dict[str, str]] | None = None, answer: str | None = None,
               ts: str | None = None, model: str | None = None, template_version: str | None = None,
               retrieval_ids: Iterable[str] = (), tool_calls: Iterable[dict[str, Any]] = (),
               tokens: dict[str, int] | None = None, latency_ms: float | None = None,
               reroll_of: str | None = None, principals: Iterable[str] = (),
               keep_content: bool = True) -> str:
    """Record a turn; `keep_content=False` (or no messages) writes metadata only. Returns the day."""
    ts = ts or _now()
    day = ts[:10]
    root = Path(runtime_dir)
    append_line(root / "turns" / f"{day}.jsonl", {
        "turn_id": turn_id, "conversation_id": conversation_id, "ts": ts, "model": model,
        "template_version": template_version,
        "prompt_hash": prompt_hash(messages) if messages is not None else None,
        "retrieval_ids": list(retrieval_ids), "tool_calls": list(tool_calls), "tokens": tokens or {},
        "latency_ms": latency_ms, "reroll_of": reroll_of, "principals": list(principals)})
    if keep_content and messages is not None:
        append_line(root / "content" / f"{day}.jsonl", {"turn_id": turn_id, "messages": messages, "answer": answer})
    return day


def append_feedback(runtime_dir: str | Path, turn_id: str, rating: int, note: str = "",
                    ts: str | None = None) -> None:
    if rating not in RATINGS:
        raise ValueError(f"rating must be one of {RATINGS}, got {rating!r}")
    ts = ts or _now()
    append_line(Path(runtime_dir) / "feedback" / f"{ts[:10]}.jsonl",
                {"turn_id": turn_id, "ts": ts, "rating": rating, "note": note})
