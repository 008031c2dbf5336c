"""The runtime side of a forget: chat turns and retrieval traces that cited or quoted what the
person took back, and the training rows made from those turns.

A turn goes whole (its `turns/`, `content/` and `feedback/` records, whichever day file each is
in) when any of its records holds a forgotten message or fact id (the context block shows
`[msg:<id>]` and `fact <id>`; `retrieval_ids` lists the evidence) or quotes a forgotten text.
Quotes are matched case-insensitively with line breaks read the way the prompt renders them
(`context.one_line`: " / "); texts under `MIN_QUOTE_CHARS` are ignored, they would hit unrelated
turns. A retrieval trace goes when its `item_ids` hold a forgotten id or its query quotes a text.

The turn ids removed go to a ledger, `<runtime dir>/forgotten.json` (ids, days and counts, never
content), written before any file is touched: an interrupted purge is finished by running it
again, the dataset export leaves those turns out even if a restored backup brings them back, and
`purge_datasets` takes them out of datasets already on disk.

The runtime appends to its day files without a lock, so a file is rewritten to a temporary file
and renamed over the old one, then whatever a turn appended to the old file meanwhile is carried
over (filtered the same way). Retrieval logs are rewritten into a fresh DuckDB file under the
log's own flock: DuckDB's DELETE leaves the deleted strings in the file (measured: all of them,
even after CHECKPOINT and VACUUM).
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import re
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from datetime import date, datetime, UTC
from pathlib import Path
from typing import Any

from truffle_assets.feedback.turns import STREAMS, StoreError
from truffle_assets.files import atomic_write, write_json_atomic
from truffle_assets.ids import shown_fact_id

MIN_QUOTE_CHARS = 12
LEDGER = "forgotten.json"
LOCK_WAIT_S = 60.0  # a trace write holds the log lock for milliseconds; a forget can wait for it
_SCAN_ABOVE = 64  # more needles than this: one pass over the text instead of one search per needle
_WORD = re.compile(r"\w+")
_BREAKS = re.compile(r"\s*[\r\n]+\s*")
_SPACES = re.compile(r"\s{2,}|[^\S ]")  # a run, or one tab/NBSP/...: single spaces stay as they are (fast)


class LedgerError(ValueError):
    """An unreadable forgotten.json: never treated as empty, that would let forgotten turns back."""


@dataclass
class Forgotten:
    message_ids: set[str]
    texts: list[str]  # raw and redacted message texts
    fact_ids: set[str] = field(default_factory=set)
    fact_texts: list[str] = field(default_factory=list)  # fact_text / value strings


# ---- matching ----------------------------------------------------------------------------------

def _norm(s: str) -> str:
    s = s.casefold()
    if "\n" in s or "\r" in s:
        s = _BREAKS.sub(" / ", s)
    return _SPACES.sub(" ", s).strip()


def _strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for v in value.values():
            yield from _strings(v)
    elif isinstance(value, list | tuple):
        for v in value:
            yield from _strings(v)


class _Matcher:
    """Does a record name a forgotten id (as a whole word) or quote a forgotten text?"""

    def __init__(self, ids: Iterable[str], texts: Iterable[str]) -> None:
        ids = {str(i) for i in ids if i}
        self.words = {i for i in ids if _WORD.fullmatch(i)}
        self.other_ids = ids - self.words
        self.needles = sorted({n for t in texts if t and len(n := _norm(t)) >= MIN_QUOTE_CHARS})
        self.by_prefix: dict[str, list[str]] = {}
        for n in self.needles:
            self.by_prefix.setdefault(n[:MIN_QUOTE_CHARS], []).append(n)

    @classmethod
    def of(cls, f: Forgotten, extra_ids: Iterable[str] = ()) -> _Matcher:
        # a prompt shows a fact by its id's first digits ("(work, fact 2004de, since …)"): match that too
        shown = [f"fact {shown_fact_id(i)}" for i in f.fact_ids if i]
        return cls([*f.message_ids, *f.fact_ids, *shown, *extra_ids], [*f.texts, *f.fact_texts])

    def __bool__(self) -> bool:
        return bool(self.words or self.other_ids or self.needles)

    def hits(self, value: Any) -> bool:
        text = "\x00".join(_strings(value))  # \x00: neither a word character nor a space, so no id
        if self.words and not self.words.isdisjoint(_WORD.findall(text)):  # or quote spans two fields
            return True
        if any(i in text for i in self.other_ids):
            return True
        if not self.needles:
            return False
        hay = _norm(text)
        if len(self.needles) <= _SCAN_ABOVE:
            return any(n in hay for n in self.needles)
        k = MIN_QUOTE_CHARS
        for i in range(len(hay) - k + 1):
            cands = self.by_prefix.get(hay[i:i + k])
            if cands and any(hay.startswith(n, i) for n in cands):
                return True
        return False


# ---- the ledger --------------------------------------------------------------------------------

@contextlib.contextmanager
def _flock(lock_path: Path, create: bool = True, wait_s: float = LOCK_WAIT_S) -> Iterator[None]:
    """An exclusive flock on `lock_path`; `create=False` (a dry run) takes it only if the file exists."""
    if not create and not lock_path.exists():
        yield
        return
    fd = os.open(lock_path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        deadline = time.monotonic() + wait_s
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() > deadline:
                    raise TimeoutError(f"{lock_path} still held after {wait_s:.0f} s") from None
                time.sleep(0.01)
        yield
    finally:
        os.close(fd)  # releases the flock


def _load_ledger(runtime_dir: Path) -> dict[str, Any]:
    path = runtime_dir / LEDGER
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {"version": 1, "turns": {}, "purges": []}
    except ValueError as exc:
        raise LedgerError(f"{path}: unreadable forget ledger ({exc}); fix or restore the file") from exc
    if not isinstance(data, dict) or not isinstance(data.get("turns"), dict):
        raise LedgerError(f"{path}: not a forget ledger (no 'turns' object)")
    data.setdefault("purges", [])
    return data


def forgotten_turns(runtime_dir: str | Path, since: date | str | None = None,
                    until: date | str | None = None) -> set[str]:
    """Ids of the turns purges removed whose day is in [since, until] (the dataset export's window)."""
    turns = _load_ledger(Path(runtime_dir))["turns"]
    lo, hi = (str(d)[:10] if d else None for d in (since, until))
    return {t for t, day in turns.items() if (lo is None or day >= lo) and (hi is None or day <= hi)}


# ---- day files ---------------------------------------------------------------------------------

@dataclass
class _Line:
    raw: bytes  # as stored, with its newline (a torn final line has none)
    rec: dict[str, Any] | None  # None: blank, or a torn final line


def _parse(path: Path, data: bytes, lenient: bool = False) -> list[_Line]:
    """The lines of a day file, read as `feedback.turns.read_jsonl` reads them: a torn final line is
    kept aside, any other malformed line is damage and raises naming the file and line (`lenient`,
    for lines that arrived during a rewrite: kept as they are)."""
    out = []
    parts = data.split(b"\n")
    for i, chunk in enumerate(parts, start=1):
        last = i == len(parts)
        if last and not chunk:
            break
        raw = chunk if last else chunk + b"\n"
        if not chunk.strip():
            out.append(_Line(raw, None))
            continue
        try:
            rec = json.loads(chunk)
            if not isinstance(rec, dict) or not isinstance(rec.get("turn_id"), str) or not rec["turn_id"]:
                raise ValueError("not a record with a turn_id")
        except ValueError as exc:
            if last or lenient:  # unterminated: the writer died mid-append, the reader skips it
                out.append(_Line(raw, None))
                continue
            raise StoreError(f"{path}:{i}: malformed line: {exc}") from exc
        out.append(_Line(raw, rec))
    return out


def _day_files(runtime_dir: Path) -> list[tuple[str, str, Path]]:
    """(stream, day, path) for every day file of the store."""
    out = []
    for stream in STREAMS:
        folder = runtime_dir / stream
        for p in sorted(folder.glob("*.jsonl")) if folder.is_dir() else ():
            try:
                date.fromisoformat(p.stem)
            except ValueError:
                continue  # not a day file: not ours, as for the reader
            out.append((stream, p.stem, p))
    return out


@dataclass
class _Plan:
    kept: bytes
    removed: int  # records of dropped turns
    torn: int  # torn final lines dropped (the reader skips them anyway)


def _plan(lines: list[_Line], drop: set[str], matcher: _Matcher) -> _Plan:
    removed = sum(ln.rec is not None and ln.rec["turn_id"] in drop for ln in lines)
    kept, torn = [], 0
    for ln in lines:
        if ln.rec is not None:
            if ln.rec["turn_id"] not in drop:
                kept.append(ln.raw)
        elif not ln.raw.strip() or ln.raw.endswith(b"\n") and not _names(ln.raw, drop, matcher):
            kept.append(ln.raw)  # blank, or a complete line only `lenient` lets through, naming nothing
        elif removed or _names(ln.raw, drop, matcher):
            torn += 1  # dropped with the file's other lines when it is rewritten anyway, or for what it names
        else:
            kept.append(ln.raw)
    return _Plan(b"".join(kept), removed, torn)


def _names(raw: bytes, drop: set[str], matcher: _Matcher) -> bool:
    text = raw.decode("utf-8", "replace")
    return matcher.hits(text) or not drop.isdisjoint(_WORD.findall(text))


def _append(path: Path, data: bytes) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)  # as turns.append_line writes
    try:
        os.write(fd, data)
    finally:
        os.close(fd)


def _rewrite(path: Path, drop: set[str], matcher: _Matcher, dry_run: bool) -> _Plan:
    with open(path, "rb") as old:
        data = old.read()
        plan = _plan(_parse(path, data), drop, matcher)
        if dry_run or not (plan.removed or plan.torn):
            return plan
        atomic_write(path, plan.kept)  # a rewritten file never keeps its torn tail: _plan dropped it
        # lines the runtime appended to the old file since it was read (it never locks) are carried
        # over, filtered the same way, now and once more a moment later. An append that opened the
        # old file before the rename and writes after the last look is lost: a window one
        # open()+write() long.
        rest = data[data.rfind(b"\n") + 1:]
        for wait in (0.0, 0.05):
            time.sleep(wait)
            late = old.read()
            if not late:
                continue
            region = _plan(_parse(path, rest + late, lenient=True), drop, matcher)
            if region.kept:
                _append(path, region.kept)
            plan.removed += region.removed
            plan.torn += region.torn
            rest = b""
        return plan


# ---- retrieval logs ----------------------------------------------------------------------------

def retrieval_log_paths(runtime_dir: str | Path) -> list[Path]:
    """Where retrieval traces are written: the chat runtime's `<runtime dir>/retrieval.duckdb`
    (`RuntimeConfig.retrieval_log`) and `truffle recall`'s `<data root>/runtime.duckdb` (beside
    `published/`, which is beside the default runtime dir)."""
    root = Path(runtime_dir)
    return [root / "retrieval.duckdb", root.parent / "runtime.duckdb"]


def _is_duckdb_lock_error(exc: Exception) -> bool:
    return "could not set lock" in str(exc).lower()


def _purge_log(path: Path, matcher: _Matcher, dry_run: bool) -> int:
    """Traces in one retrieval log (table and spool) that name a forgotten id or quote a text."""
    # named as `retrieval.log.RetrievalLog` names them (importing that package costs seconds: the index)
    lock_path, spool_dir = path.with_name(path.name + ".lock"), path.with_name(path.name + ".spool")
    spooled = sorted([*spool_dir.glob("*.json"), *spool_dir.glob("*.bad")]) if spool_dir.is_dir() else []
    if not path.is_file() and not spooled:
        return 0
    import duckdb

    n = 0
    with _flock(lock_path, create=not dry_run):  # the writers' protocol: flock first, then DuckDB's own lock
        for p in spooled:
            try:
                text = p.read_text(encoding="utf-8", errors="replace")
            except OSError:
                continue
            try:
                row = json.loads(text)
            except ValueError:
                row = None
            # a spooled trace is the row `RetrievalLog.write` built: [.., .., query, .., item_ids, ..]
            fields = [row[2], row[4]] if isinstance(row, list) and len(row) > 4 else text
            if matcher.hits(fields):
                n += 1
                if not dry_run:
                    p.unlink(missing_ok=True)
        if not path.is_file():
            return n
        deadline = time.monotonic() + LOCK_WAIT_S
        while True:  # a process outside the flock protocol (a reader) may hold DuckDB's lock
            try:
                con = duckdb.connect(str(path), read_only=dry_run)
                break
            except duckdb.IOException as exc:
                if not _is_duckdb_lock_error(exc) or time.monotonic() > deadline:
                    raise
                time.sleep(0.05)
        fresh = path.with_name(path.name + ".purge")
        with con:
            tables = [t for (t,) in con.execute("SELECT table_name FROM duckdb_tables() WHERE database_name = "
                                                "current_database() AND schema_name = 'main'").fetchall()]
            if "retrieval_logs" not in tables:
                return n
            rows = con.execute("SELECT rowid, query, item_ids FROM retrieval_logs").fetchall()
            drop = [rid for rid, query, items in rows if matcher.hits([query or "", *(items or [])])]
            n += len(drop)
            if dry_run or not drop:
                return n
            for p in (fresh, fresh.with_name(fresh.name + ".wal")):
                p.unlink(missing_ok=True)
            con.execute(f"ATTACH '{str(fresh).replace(chr(39), chr(39) * 2)}' AS fresh")
            for t in tables:  # the whole file moves over: any other table there too, unfiltered
                keep = " WHERE rowid NOT IN (SELECT unnest(?::BIGINT[]))" if t == "retrieval_logs" else ""
                con.execute(f'CREATE TABLE fresh."{t}" AS SELECT * FROM main."{t}"{keep}', [drop] if keep else [])
            con.execute("DETACH fresh")
        os.replace(fresh, path)  # still under the flock: no writer has the file open
        Path(str(path) + ".wal").unlink(missing_ok=True)  # the old file's, if a crash left one (already replayed)
    return n


# ---- the purge ---------------------------------------------------------------------------------

KEYS = ("runtime_turns", "runtime_content", "runtime_feedback", "runtime_torn_lines", "retrieval_logs")


def purge_runtime(runtime_dir: str | Path, forgotten: Forgotten, dry_run: bool = False,
                  retrieval_logs: Iterable[str | Path] | None = None) -> dict[str, int]:
    """Remove every turn that cites or quotes a forgotten item, and the retrieval traces that do.

    Returns what went (or, with `dry_run`, what would go; nothing is written then), per store:
    `runtime_turns`, `runtime_content`, `runtime_feedback` (records), `runtime_torn_lines` (torn
    final lines dropped from files that were rewritten), `retrieval_logs` (traces). Turns a
    previous purge recorded in the ledger go too (a rating given later to a forgotten turn).
    Idempotent: a second call removes 0. Logs nothing about content.
    """
    root = Path(runtime_dir)
    counts = dict.fromkeys(KEYS, 0)
    matcher = _Matcher.of(forgotten)
    logs = [Path(p) for p in (retrieval_logs if retrieval_logs is not None else retrieval_log_paths(root))]
    with _flock(root / (LEDGER + ".lock"), create=not dry_run and root.is_dir()):
        ledger = _load_ledger(root)
        drop = _find_turns(root, matcher, set(ledger["turns"]))
        new = {t: d for t, d in drop.items() if t not in ledger["turns"]}
        if new and not dry_run:  # first: a crash from here on is finished by the next run
            ledger["turns"].update(new)
            write_json_atomic(root / LEDGER, ledger)
        ids = set(drop)
        for stream, _, path in _day_files(root):
            plan = _rewrite(path, ids, matcher, dry_run)
            counts[f"runtime_{stream}"] += plan.removed
            counts["runtime_torn_lines"] += plan.torn
        if matcher:
            counts["retrieval_logs"] = sum(_purge_log(p, matcher, dry_run) for p in logs)
        if not dry_run and any(counts.values()):
            ledger["purges"].append({"at": datetime.now(UTC).isoformat(timespec="seconds"),
                                     "turns": len(new), "counts": counts})
            write_json_atomic(root / LEDGER, ledger)
    return counts


def find_turns(runtime_dir: str | Path, forgotten: Forgotten) -> set[str]:
    """The turn ids `purge_runtime` would remove now (read only; with the ledger's earlier ones)."""
    root = Path(runtime_dir)
    ledger = _load_ledger(root)
    return set(_find_turns(root, _Matcher.of(forgotten), set(ledger["turns"])))


def _find_turns(root: Path, matcher: _Matcher, known: set[str]) -> dict[str, str]:
    """{turn id: its day} for every turn with a record that matches, plus `known` ids still present."""
    hit: set[str] = set()
    day_of: dict[str, str] = {}
    for stream, day, path in _day_files(root):
        for ln in _parse(path, path.read_bytes()):
            if ln.rec is None:
                continue
            tid = ln.rec["turn_id"]
            if stream == "turns":
                day_of[tid] = day
            else:
                day_of.setdefault(tid, day)  # an orphan record: its own file's day
            if tid in known or (matcher and matcher.hits(ln.rec)):
                hit.add(tid)
    return {t: day_of[t] for t in hit}


# ---- training datasets -------------------------------------------------------------------------

def _row_turns(row: dict[str, Any]) -> list[str]:
    """The runtime turns a transcript row was made from (a DPO pair: `chosen>rejected`)."""
    if row.get("source") != "transcript":
        return []
    return str(row.get("source_id") or "").split(">")


def purge_datasets(training_dir: str | Path, turns: Iterable[str] | os.PathLike,
                   dry_run: bool = False, forgotten: Forgotten | None = None) -> dict[str, int]:
    """Take forgotten turns' rows out of the datasets on disk (`<training_dir>/{sft,dpo}`).

    `turns`: turn ids, or a runtime dir whose ledger lists them. With `forgotten`, transcript rows
    that cite or quote it go too (what a dry run needs: its purge recorded nothing yet). An intact
    dataset is rewritten with `training.datasets.write_dataset`, so `check_manifest` passes and the
    manifest's `dropped["forgotten_rows"]` says how many rows went; one that already fails
    `check_manifest` loses the rows but keeps its manifest, and keeps failing. Returns rows
    removed per dataset: {"dataset_sft": n, "dataset_dpo": n}.
    """
    from truffle_assets.training import datasets as ds

    if isinstance(turns, str):
        raise TypeError("turns: a collection of turn ids, or the runtime dir as a Path")
    ids = forgotten_turns(turns) if isinstance(turns, os.PathLike) else {str(t) for t in turns}
    matcher = _Matcher.of(forgotten) if forgotten else _Matcher((), ())
    out = {}
    for kind in ds.ROW_MODELS:
        out[f"dataset_{kind}"] = _purge_dataset(Path(training_dir) / kind, kind, ids, matcher, dry_run)
    return out


def _purge_dataset(folder: Path, kind: str, ids: set[str], matcher: _Matcher, dry_run: bool) -> int:
    from truffle_assets.training import datasets as ds

    names = [f"{s}.jsonl" for s in ds.SPLITS]
    if not any((folder / n).is_file() for n in names):
        return 0
    try:
        manifest: ds.Manifest | None = ds.check_manifest(folder)
    except ds.ManifestError:
        manifest = None
    kept: dict[str, list[bytes]] = {}
    rows: list[dict[str, Any]] = []
    removed = 0
    for name in names:
        p = folder / name
        kept[name] = []
        for line in p.read_bytes().splitlines(keepends=True) if p.is_file() else ():
            try:
                row = json.loads(line)
            except ValueError:
                row = None
            if isinstance(row, dict):
                gone = bool(set(_row_turns(row)) & ids) or (bool(_row_turns(row)) and matcher.hits(row))
            else:  # only in a damaged dataset: judged by its text
                text = line.decode("utf-8", "replace")
                gone = matcher.hits(text) or not ids.isdisjoint(_WORD.findall(text))
            if gone:
                removed += 1
                continue
            kept[name].append(line)
            if isinstance(row, dict):
                rows.append(row)
    if dry_run or not removed:
        return removed
    if manifest is None:
        for name in names:
            if (folder / name).is_file():
                atomic_write(folder / name, b"".join(kept[name]))
        return removed
    dropped = {**manifest.dropped, "forgotten_rows": manifest.dropped.get("forgotten_rows", 0) + removed}
    meta = {**manifest.extra, "pack_version": manifest.pack_version,
            "source_date_range": manifest.source_date_range, "dropped": dropped}
    ds.write_dataset(rows, folder, kind, meta)
    return removed
