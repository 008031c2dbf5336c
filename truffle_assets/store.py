"""The canonical DuckDB store: schema and the one write path (delete-then-insert per chat-day).

DuckDB allows a single read-write process; Dagster serialises writers through the `duckdb`
concurrency pool, every writer also holds `writer_lock` (so one outside the pool waits its turn
instead of failing on DuckDB's file lock), and readers (the chat runtime, tests) open the file
read-only.
"""

from __future__ import annotations

import fcntl
import json
import os
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from datetime import date
from pathlib import Path

import duckdb
import polars as pl

SCHEMA = """
CREATE TABLE IF NOT EXISTS messages (
    id            VARCHAR PRIMARY KEY,   -- stable: hash of chat, content and occurrence
    chat_id       VARCHAR NOT NULL,
    day           DATE NOT NULL,
    ts            TIMESTAMP NOT NULL,
    author        VARCHAR,
    is_user       BOOLEAN NOT NULL,
    kind          VARCHAR NOT NULL,
    raw_text      VARCHAR NOT NULL,      -- byte-exact after decoding; never leaves DuckDB unredacted
    edited        BOOLEAN NOT NULL,
    source_file   VARCHAR NOT NULL,
    line_start    INTEGER NOT NULL,
    line_end      INTEGER NOT NULL,
    content_hash  VARCHAR NOT NULL
);
CREATE INDEX IF NOT EXISTS messages_chat_day ON messages (chat_id, day);
CREATE TABLE IF NOT EXISTS ingestion_jobs (
    run_id            VARCHAR NOT NULL,
    chat_id           VARCHAR NOT NULL,
    source_file       VARCHAR NOT NULL,
    file_sha256       VARCHAR NOT NULL,
    encoding          VARCHAR NOT NULL,
    first_day         DATE,
    last_day          DATE,
    days_written      INTEGER NOT NULL,
    rows_written      INTEGER NOT NULL,
    lines_total       INTEGER NOT NULL,
    header_lines      INTEGER NOT NULL,
    continuation_lines INTEGER NOT NULL,
    system_lines      INTEGER NOT NULL,
    quarantined_lines INTEGER NOT NULL,
    quarantined       JSON NOT NULL,      -- [[line, reason, preview], ...]
    ingested_at       TIMESTAMP NOT NULL DEFAULT now()
);
CREATE TABLE IF NOT EXISTS stage_days (  -- see truffle_assets.ingest.stage_days
    stage   VARCHAR NOT NULL,
    chat_id VARCHAR NOT NULL,
    day     DATE NOT NULL,
    digest  VARCHAR NOT NULL,
    PRIMARY KEY (stage, chat_id, day)
);
"""

MESSAGE_COLUMNS = (
    "id", "chat_id", "day", "ts", "author", "is_user", "kind", "raw_text", "edited",
    "source_file", "line_start", "line_end", "content_hash",
)


WRITER_WAIT_S = 1800.0  # a writer queues behind another at most this long (one month's LLM-free step is far less)
_held: dict[str, list] = {}  # lock path -> [fd, depth]: re-entrant within a process
_held_guard = threading.Lock()


@contextmanager
def writer_lock(path: str | Path, wait_s: float = WRITER_WAIT_S) -> Iterator[None]:
    """One read-write DuckDB process at a time, machine-wide (an flock on `<file>.lock`).

    The Dagster `duckdb` pool already serialises the steps that sit in it; this also covers
    writers outside it (`summaries` talks to the LLM outside the pool and takes the store only to
    read its inputs and write its rows) and `truffle ingest` next to a running daemon.
    """
    lock = str(Path(path).resolve()) + ".lock"
    with _held_guard:
        if lock in _held:
            _held[lock][1] += 1
            entered = True
        else:
            entered = False
    if not entered:
        Path(lock).parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(lock, os.O_RDWR | os.O_CREAT, 0o600)
        deadline = time.monotonic() + wait_s
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() > deadline:
                    os.close(fd)
                    raise TimeoutError(f"{path}: another process has held the store for {wait_s:.0f}s ({lock})") from None
                time.sleep(0.05)
        with _held_guard:
            _held[lock] = [fd, 1]
    try:
        yield
    finally:
        with _held_guard:
            _held[lock][1] -= 1
            last = _held[lock][1] == 0
            fd = _held.pop(lock)[0] if last else None
        if last:
            fcntl.flock(fd, fcntl.LOCK_UN)
            os.close(fd)


@contextmanager
def connect(path: str | Path, read_only: bool = False) -> Iterator[duckdb.DuckDBPyConnection]:
    path = Path(path)
    if read_only:
        con = duckdb.connect(str(path), read_only=True)
        try:
            yield con
        finally:
            con.close()
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    with writer_lock(path):
        con = duckdb.connect(str(path))
        try:
            con.execute(SCHEMA)
            yield con
        finally:
            con.close()


@contextmanager
def transaction(con: duckdb.DuckDBPyConnection) -> Iterator[duckdb.DuckDBPyConnection]:
    con.execute("BEGIN TRANSACTION")
    try:
        yield con
        con.execute("COMMIT")
    except BaseException:
        con.execute("ROLLBACK")
        raise


def ensure_table(con: duckdb.DuckDBPyConnection, name: str, schema: dict) -> None:
    """Create `name` with the column types of a polars schema, if it is missing."""
    con.register("_empty", pl.DataFrame(schema=schema))
    con.execute(f"CREATE TABLE IF NOT EXISTS {name} AS SELECT * FROM _empty")
    con.unregister("_empty")


def read_frame(con: duckdb.DuckDBPyConnection, sql: str, params: Sequence | None = None) -> pl.DataFrame:
    # a relation, not a DB-API cursor: DuckDB 1.4+ copies the rows once more for a cursor's arrow output
    return pl.from_arrow(con.sql(sql, params=list(params) if params else None).to_arrow_table())


def read_days(con: duckdb.DuckDBPyConnection, table: str, chat_id: str, days: Sequence[date],
              columns: str = "*", order: str = "") -> pl.DataFrame:
    sql = f"SELECT {columns} FROM {table} WHERE chat_id = ? AND list_contains(?::DATE[], day)"
    return read_frame(con, sql + (f" ORDER BY {order}" if order else ""), [chat_id, list(days)])


def insert_frame(con: duckdb.DuckDBPyConnection, table: str, rows: pl.DataFrame) -> None:
    if rows.height:
        con.register("_incoming", rows)
        con.execute(f"INSERT INTO {table} BY NAME SELECT * FROM _incoming")
        con.unregister("_incoming")


def replace_partitions(con: duckdb.DuckDBPyConnection, table: str, chat_id: str, days: Sequence[date],
                       rows: pl.DataFrame) -> None:
    """Make (chat_id, days) of `table` hold exactly `rows`. Call inside `transaction`."""
    con.execute(f"DELETE FROM {table} WHERE chat_id = ? AND list_contains(?::DATE[], day)", [chat_id, list(days)])
    insert_frame(con, table, rows)


def replace_days(
    con: duckdb.DuckDBPyConnection,
    chat_id: str,
    days: Sequence[date],
    rows: pl.DataFrame,
    jobs: Sequence[dict],
) -> None:
    """Make `days` of `chat_id` hold exactly `rows`: re-running gives identical rows. Call inside `transaction`."""
    con.execute("DELETE FROM messages WHERE chat_id = ? AND list_contains(?::DATE[], day)", [chat_id, list(days)])
    if rows.height:
        con.register("incoming", rows.select(MESSAGE_COLUMNS))
        con.execute(f"INSERT INTO messages SELECT {', '.join(MESSAGE_COLUMNS)} FROM incoming ORDER BY ts, id")
        con.unregister("incoming")
    for job in jobs:
        job = {**job, "quarantined": json.dumps(job["quarantined"], ensure_ascii=False)}
        cols = ", ".join(job)
        con.execute(f"INSERT INTO ingestion_jobs ({cols}) VALUES ({', '.join('?' * len(job))})", list(job.values()))


def stored_user(con: duckdb.DuckDBPyConnection) -> str | None:
    """The exporting user as `messages` recorded it (`is_user`): detected at ingest, not again from the exports."""
    rows = con.execute("SELECT author FROM messages WHERE is_user AND author IS NOT NULL"
                       " GROUP BY author ORDER BY count(*) DESC, author LIMIT 1").fetchall()
    return rows[0][0] if rows else None
