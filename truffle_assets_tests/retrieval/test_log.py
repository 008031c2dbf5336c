"""Retrieval traces from concurrent processes: DuckDB lets one process open the file at a time,
and no trace may be lost to that lock (the probe lost one with two concurrent `truffle recall`s),
nor to DuckDB dropping a committed row when processes open and close the file in turn."""

from __future__ import annotations

import subprocess
import sys
import time

import duckdb

from truffle_assets.retrieval import RetrievalLog

# each writer imports, says ready, waits for the go (all at once), then writes as fast as it can
WRITER = """
import sys
from truffle_assets.retrieval import RetrievalLog
path, n, wait = sys.argv[1], int(sys.argv[2]), float(sys.argv[3])
log = RetrievalLog(path, lock_wait_s=wait)
print("ready", flush=True)
sys.stdin.readline()
ok = sum(log.write(query=f"q{i} from {sys.argv[4]}", params={"k": 3}, item_ids=["a", "b"], scores=[0.5, 0.25],
                   uncertain=[False, True], latency_ms=1.0, timing={"total": 1.0}, index_versions={"messages": 1})
         for i in range(n))
print(ok, log.spooled, log.failures)
"""


def _writers(path, procs: int, n: int, wait: float) -> list[tuple[int, int, int]]:
    running = [subprocess.Popen([sys.executable, "-c", WRITER, str(path), str(n), str(wait), f"w{i}"],
                                stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
                for i in range(procs)]
    for p in running:
        assert p.stdout.readline().strip() == "ready", p.stderr.read()[-2000:]
    for p in running:
        p.stdin.write("go\n")
        p.stdin.flush()
    out = []
    for p in running:
        stdout, stderr = p.communicate(timeout=120)
        assert p.returncode == 0, stderr[-2000:]
        out.append(tuple(int(x) for x in stdout.split()))
    return out


def _rows(path) -> list[tuple]:
    with duckdb.connect(str(path), read_only=True) as con:
        return con.execute("SELECT query, item_ids, scores, uncertain FROM retrieval_logs ORDER BY query").fetchall()


def test_concurrent_writer_processes_lose_no_trace(tmp_path):
    path = tmp_path / "runtime.duckdb"
    results = _writers(path, procs=4, n=12, wait=2.0)
    assert [r[0] for r in results] == [12] * 4 and all(r[2] == 0 for r in results)
    RetrievalLog(path).flush()  # whatever was spooled under contention
    rows = _rows(path)
    assert sorted(q for q, *_ in rows) == sorted(f"q{i} from w{w}" for w in range(4) for i in range(12))
    assert rows[0][1:] == (["a", "b"], [0.5, 0.25], [False, True])


def test_writers_that_never_get_the_lock_spool_and_the_next_write_merges(tmp_path):
    path = tmp_path / "runtime.duckdb"
    # zero lock wait: every write that meets a concurrent one spools at once
    results = _writers(path, procs=3, n=10, wait=0.0)
    assert [r[0] for r in results] == [10] * 3 and all(r[2] == 0 for r in results)
    holder = subprocess.Popen([sys.executable, "-c", "import duckdb, sys, time; c = duckdb.connect(sys.argv[1]); "
                               "print('ready', flush=True); time.sleep(60)", str(path)],
                              stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "ready"
        busy = RetrievalLog(path, lock_wait_s=0.3)
        t = time.perf_counter()
        assert busy.write(query="while locked", params={}, item_ids=[], scores=[], uncertain=[], latency_ms=0.0,
                          timing={}, index_versions={})
        assert busy.spooled == 1 and busy.failures == 0 and time.perf_counter() - t < 5
        assert busy.flush() == 0  # still locked: nothing moves, nothing is lost
    finally:
        holder.kill()
        holder.wait()
    after = RetrievalLog(path)
    assert after.write(query="after", params={}, item_ids=[], scores=[], uncertain=[], latency_ms=0.0, timing={},
                       index_versions={})
    queries = [q for q, *_ in _rows(path)]
    assert len(queries) == 32 and len(set(queries)) == 32 and "while locked" in queries and "after" in queries
    assert not list(after.spool_dir.glob("*.json"))
