"""`truffle ingest` crashed at every stage boundary, then run again plainly: the memory converges.

A crash point (truffle_assets.faults) sits right after each stage wrote its rows and before Dagster
recorded it, and inside `memory_index` between its LanceDB write, its publish and the planner's
record. Every point is proven in this process: the armed point raises inside a real run of the
CLI's `ingest` on a real DuckDB store, LanceDB index and SQLite Dagster instance, the ingest stops
there, and the next plain `truffle ingest` (no `--full`) must end with exactly what a clean ingest
builds: the same DuckDB table hashes, LanceDB rows at the published versions, pointer, profile and
facts (truffle_assets.memory_digest). A few points are also proven with a real `kill -9` of a real
`truffle ingest` process: only a dead process leaves its run STARTED holding the `duckdb` pool
slot and its DuckDB file unclosed, and the next ingest must find that run, free the slot instead of
waiting on it forever, and converge the same way. Every data root has a fresh SQLite $DAGSTER_HOME
with the project's dagster.yaml, as a newcomer has.
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import dagster as dg
import pytest

from truffle_assets import faults
from truffle_assets.memory_digest import memory_digest
from truffle_assets_tests.conftest import TWO_CHATS, newcomer_env, run_truffle, write_export

TRUFFLE = str(Path(sys.executable).with_name("truffle"))
EXPORTS = TWO_CHATS
# after each stage's rows are written (before Dagster records it), inside memory_index, the
# profile, and the second chat's run (after one whole run is through)
CRASH_POINTS = ["messages", "message_pii", "message_streams", "episodes", "summaries", "facts",
                "memory_index:lance_written", "memory_index:published", "memory_index", "memory_index#2", "profile"]
# killed for real: the first run of all, a kill inside the open store connection with LanceDB
# written and not recorded, and one after every chat's runs are through
KILLED = ["messages", "memory_index:lance_written", "profile"]

# where the planner's record and the published memory could disagree after the re-run
NOTHING_LEFT_CHECKED = {"messages", "memory_index:published", "memory_index#2", "profile"}


def _world(root: Path) -> dict:
    """A data root with the exports and a fresh local instance; the env `truffle ingest` runs in."""
    for name, lines in EXPORTS.items():
        write_export(root / "exports", name, lines)
    return newcomer_env(root)


def _ingest_process(env: dict, crash_at: str | None = None, timeout: float = 300) -> subprocess.CompletedProcess:
    env = {**env, "TRUFFLE_CRASH_AT": crash_at} if crash_at else env
    try:
        return subprocess.run([TRUFFLE, "ingest"], env=env, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired as exc:  # the hang this guards against: a dead run's pool slot
        pytest.fail(f"truffle ingest hung for {timeout:.0f} s:\n{(exc.stderr or b'')[-3000:]!r}")


def _digest(root: Path) -> dict:
    return memory_digest(root / "memory.duckdb", root / "published")


def _live_runs(env: dict) -> list[str]:
    with dg.DagsterInstance.from_config(env["DAGSTER_HOME"]) as instance:
        live = instance.get_run_records(dg.RunsFilter(statuses=[dg.DagsterRunStatus.STARTED,
                                                                 dg.DagsterRunStatus.STARTING]))
        return [r.dagster_run.run_id for r in live]


def _converges(env: dict, root: Path, clean: dict, point: str) -> subprocess.CompletedProcess:
    """A plain re-run ends with a clean ingest's memory and no run left live; returns the re-run."""
    again = run_truffle(env, "ingest")
    assert again.returncode == 0, again.stderr[-3000:]
    assert _live_runs(env) == []
    got = _digest(root)
    assert {k: v for k, v in got["store"].items() if clean["store"].get(k) != v} == {}
    assert got == clean
    if point in NOTHING_LEFT_CHECKED:  # and the planner's record is whole: one more ingest has nothing to do
        third = json.loads(run_truffle(env, "ingest", "--json").stdout)
        assert {c["status"] for c in third["chats"].values()} == {"up to date"} and "profile" not in third
    return again


@pytest.fixture(scope="module")
def clean(tmp_path_factory) -> dict:
    """What one uninterrupted ingest builds."""
    root = tmp_path_factory.mktemp("clean")
    proc = run_truffle(_world(root), "ingest", "--json")
    assert proc.returncode == 0, proc.stderr[-3000:]
    report = json.loads(proc.stdout)
    # one run per chat, though the first chat has a silent month between its months
    assert [len(report["chats"][c]["runs"]) for c in sorted(report["chats"])] == [1, 1]
    digest = _digest(root)
    assert digest["store"]["facts"].split(":")[0] != "0" and digest["index"]["raw_episodes_index"].startswith("11:")
    return digest


@pytest.mark.slow  # two or three whole ingests per point
@pytest.mark.parametrize("point", CRASH_POINTS)
def test_a_plain_rerun_after_a_crash_converges_to_a_clean_ingest(point, clean, tmp_path):
    env = _world(tmp_path)
    with faults.armed(point), pytest.raises(faults.Crash, match=point):  # the ingest stops at the point
        run_truffle(env, "ingest")
    _converges(env, tmp_path, clean, point)


@pytest.mark.subprocess
@pytest.mark.parametrize("point", KILLED)
def test_a_plain_rerun_after_a_kill_converges_to_a_clean_ingest(point, clean, tmp_path):
    env = _world(tmp_path)
    killed = _ingest_process(env, crash_at=point)
    assert killed.returncode == -signal.SIGKILL, f"never reached {point}: {killed.stderr[-2000:]}"
    assert _live_runs(env), "the kill should leave a run STARTED, as a real crash does"
    again = _converges(env, tmp_path, clean, point)
    assert "marked failed" in again.stderr  # the dead run was found, not waited on


@pytest.mark.subprocess
@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_ctrl_c_or_sigterm_stops_an_ingest_within_seconds(sig, clean, tmp_path):
    env = _world(tmp_path)
    log = open(tmp_path / "ingest.log", "w")  # a file, not a pipe: nobody reads a pipe until the end
    proc = subprocess.Popen([TRUFFLE, "ingest"], env=env, stdout=log, stderr=log, text=True)
    try:
        deadline = time.monotonic() + 120
        while not (tmp_path / "memory.duckdb").exists():  # the first run is in its `messages` step
            assert proc.poll() is None and time.monotonic() < deadline, "ingest ended before it could be interrupted"
            time.sleep(0.05)
        sent = time.monotonic()
        proc.send_signal(sig)
        proc.wait(timeout=60)
        stopped_s = time.monotonic() - sent
    finally:
        proc.kill()
        log.close()
    assert proc.returncode == 130 and stopped_s < 10, (proc.returncode, stopped_s,
                                                       (tmp_path / "ingest.log").read_text()[-2000:])
    assert _live_runs(env) == []  # the interrupted run is not left STARTED
    _converges(env, tmp_path, clean, "interrupted")
