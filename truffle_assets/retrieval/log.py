"""Retrieval traces in their own DuckDB file.

Not the pipeline's DuckDB: a running materialization holds that one's write lock, and the chat
runtime must keep answering. Every write opens, appends and closes (no lock held between
queries). Concurrent writers (two `truffle recall`s, a server and a CLI) take turns under an
advisory `flock` on `<log>.lock`, held from before DuckDB opens the file until after it has closed
it: DuckDB's own file lock alone is not enough — processes that open, insert and close in turn
lose committed rows now and then (duckdb 2.0, reproduced here: 1-2 of 240 inserts from 6
processes; duckdb/duckdb#24739 is a lost write of the same kind). A write that finds either lock
taken retries with jittered backoff for up to `lock_wait_s`, then spools the trace as one file in
`<log>.spool/` instead of dropping it; the next write that gets the locks (or `flush()`) moves the
spooled traces into the table — at least once: a crash between insert and unlink can repeat one.
Any other failure (missing directory, corrupt file) is logged and swallowed: a trace is never worth
a failed retrieval, and `write` never waits much longer than `lock_wait_s`.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import logging
import os
import random
import time
import uuid
from datetime import datetime, UTC
from pathlib import Path
from collections.abc import Iterator
from typing import Any

from truffle_assets.files import json_default

log = logging.getLogger(__name__)

LOCK_WAIT_S = 1.0  # a write holds the lock for milliseconds; past this the trace is spooled
_DDL = """
CREATE TABLE IF NOT EXISTS retrieval_logs (
    logged_at TIMESTAMP, query_hash VARCHAR, query VARCHAR, params JSON,
    item_ids VARCHAR[], scores DOUBLE[], uncertain BOOLEAN[], latency_ms DOUBLE,
    timing JSON, index_versions JSON
)"""
_INSERT = "INSERT INTO retrieval_logs VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"


def query_hash(query: str) -> str:
    return hashlib.sha256(query.strip().encode()).hexdigest()[:16]


def _is_lock_error(exc: Exception) -> bool:
    return isinstance(exc, TimeoutError) or "could not set lock" in str(exc).lower()


def _backoff(delay: float, deadline: float, what: str) -> float:
    """Sleep `delay` (jittered: concurrent writers do not retry in step); the next delay."""
    if time.monotonic() + delay > deadline:
        raise TimeoutError(f"{what} still held after the lock wait")
    time.sleep(delay * random.uniform(0.5, 1.5))
    return min(delay * 2, 0.1)


class RetrievalLog:
    """`write(...)` returns True when the trace landed in the table or the spool, False otherwise
    (never raises). `failures` counts lost traces, `spooled` the ones waiting in the spool."""

    def __init__(self, path: str | Path, store_query_text: bool = True, lock_wait_s: float = LOCK_WAIT_S) -> None:
        self.path = Path(path)
        self.spool_dir = self.path.with_name(self.path.name + ".spool")
        self.lock_path = self.path.with_name(self.path.name + ".lock")
        self.store_query_text = store_query_text  # off = only the hash leaves the process memory
        self.lock_wait_s = lock_wait_s
        self.failures = 0
        self.spooled = 0

    def write(self, *, query: str, params: dict[str, Any], item_ids: list[str], scores: list[float],
              uncertain: list[bool], latency_ms: float, timing: dict[str, float],
              index_versions: dict[str, int]) -> bool:
        row = [datetime.now(UTC).replace(tzinfo=None).isoformat(), query_hash(query),
               query if self.store_query_text else None, json.dumps(params, default=json_default),
               list(item_ids), [float(s) for s in scores], [bool(u) for u in uncertain], float(latency_ms),
               json.dumps(timing), json.dumps(index_versions)]
        try:
            self._insert([row])
            return True
        except Exception as exc:  # noqa: BLE001 - logging must never fail retrieval
            if _is_lock_error(exc):
                try:
                    self._spool(row)
                    self.spooled += 1
                    return True
                except OSError as spool_exc:
                    exc = spool_exc
            self.failures += 1
            log.warning("retrieval log write to %s failed: %s", self.path, exc)
            return False

    def flush(self) -> int:
        """Move spooled traces into the table now; how many moved (0 also when the lock is busy)."""
        try:
            return self._insert([])
        except Exception as exc:  # noqa: BLE001
            log.warning("retrieval log flush of %s failed: %s", self.spool_dir, exc)
            return 0

    def delete_before(self, cutoff: datetime) -> int:
        """Delete the traces logged before `cutoff` (UTC; spooled ones included); how many went.

        The kept rows are copied into a fresh file that replaces the log, so deleted query text
        does not linger in freed DuckDB blocks. Unlike `write`, this raises when the locks stay
        taken past `lock_wait_s`: retention must fail visibly, not skip."""
        if cutoff.tzinfo is not None:
            cutoff = cutoff.astimezone(UTC).replace(tzinfo=None)
        self._insert([])  # spooled traces join the table first, so they are pruned too
        deadline = time.monotonic() + self.lock_wait_s
        with self._flock(deadline):
            con = self._open(deadline)
            fresh = self.path.with_name(f".{self.path.name}.{uuid.uuid4().hex[:8]}.tmp")
            try:
                with con:
                    con.execute(_DDL)
                    gone = con.execute("SELECT count(*) FROM retrieval_logs WHERE logged_at < ?", [cutoff]).fetchone()[0]
                    if gone:
                        con.execute(f"ATTACH '{str(fresh).replace(chr(39), chr(39) * 2)}' AS fresh")
                        con.execute(_DDL.replace("retrieval_logs", "fresh.retrieval_logs"))
                        con.execute("INSERT INTO fresh.retrieval_logs SELECT * FROM retrieval_logs WHERE logged_at >= ?",
                                    [cutoff])
                        con.execute("DETACH fresh")
                if gone:
                    os.replace(fresh, self.path)  # still under the flock: no writer sees the swap half-done
            finally:
                fresh.unlink(missing_ok=True)
        return int(gone)

    # ---- internals ----------------------------------------------------------------------------------
    @contextlib.contextmanager
    def _flock(self, deadline: float) -> Iterator[None]:
        """The advisory `<log>.lock` (threads of one process exclude each other too: each opens its
        own lock file description)."""
        fd = os.open(self.lock_path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            delay = 0.005
            while True:
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    break
                except BlockingIOError:
                    delay = _backoff(delay, deadline, f"{self.lock_path}")
            yield
        finally:
            os.close(fd)  # releases the flock

    def _open(self, deadline: float) -> Any:
        import duckdb

        delay = 0.005
        while True:  # a process that does not use the flock (a reader, an old version) may hold the file
            try:
                return duckdb.connect(str(self.path))
            except duckdb.IOException as exc:
                if not _is_lock_error(exc):
                    raise
                delay = _backoff(delay, deadline, f"the DuckDB lock on {self.path}")

    @contextlib.contextmanager
    def _connect(self) -> Iterator[Any]:
        """The DuckDB connection, opened and closed inside the `<log>.lock` flock."""
        deadline = time.monotonic() + self.lock_wait_s
        with self._flock(deadline), self._open(deadline) as con:
            yield con

    def _insert(self, rows: list[list]) -> int:
        """Append `rows` plus whatever is spooled, under the locks; how many spooled traces moved."""
        with self._connect() as con:
            con.execute(_DDL)
            spooled = sorted(self.spool_dir.glob("*.json")) if self.spool_dir.is_dir() else []
            batch = list(rows)
            for p in spooled:
                try:
                    batch.append(json.loads(p.read_text()))
                except (OSError, ValueError) as exc:  # unreadable: set aside, never block the log
                    log.warning("skipping spooled retrieval trace %s: %s", p.name, exc)
                    p.replace(p.with_suffix(".bad"))
            if batch:
                con.executemany(_INSERT, [[datetime.fromisoformat(r[0]), *r[1:]] for r in batch])
            for p in spooled:
                p.unlink(missing_ok=True)
            return len(batch) - len(rows)

    def _spool(self, row: list) -> None:
        self.spool_dir.mkdir(exist_ok=True)  # beside the log file: a missing directory stays a failure
        name = f"{time.time_ns()}-{os.getpid()}-{uuid.uuid4().hex[:8]}"
        tmp = self.spool_dir / f".{name}.tmp"
        tmp.write_text(json.dumps(row))
        os.replace(tmp, self.spool_dir / f"{name}.json")  # a merger never sees a half-written trace
