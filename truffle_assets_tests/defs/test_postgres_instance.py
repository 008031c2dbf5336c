"""The whole ingest chain on a PostgreSQL-backed Dagster instance (dagster.postgres.yaml).

`scripts/postgres.sh` installs and starts the server (or finds it running) exactly as a user would;
each test session gets its own database, dropped at the end. `ingest_all` — what `truffle ingest`
and the sensor's runs do — materializes three small chats (a few days each: every partition costs
event-log rows, and the point here is the instance) through real runs on that
instance, then two chats' ranges run again at once as jobs on the multiprocess executor, each in
a process of its own as the daemon launches them, their steps in the `duckdb` pool with slots
claimed in Postgres. Runs, materializations and partitions are read back through the instance and
straight from the Postgres tables; the memory must be on disk.
"""

from __future__ import annotations

import glob
import json
import os
import shutil
import subprocess
import sys
import uuid
from datetime import date

import dagster as dg
import duckdb
import pytest

from truffle_assets import paths
from truffle_assets.defs.partitions import chat_months, chat_range_tags, registered_chats
from truffle_assets.defs.pipeline import CHAT_MONTH_KEYS
from truffle_assets.defs.resources import LLMResource
from truffle_assets_tests.conftest import write_export
from truffle_assets_tests.fake_llm import FakeLLM

SCRIPT = paths.PROJECT_ROOT / "scripts" / "postgres.sh"
CONFIG = paths.PROJECT_ROOT / "dagster.postgres.yaml"
# three chats of a few days; Arjun (in every chat) is the user and states where he lives
EXPORTS = {
    "WhatsApp Chat with Priya.txt": [
        "12/03/2024, 09:00 - Priya: Good morning! Are you coming to the meetup on Saturday?",
        "12/03/2024, 09:02 - Arjun: Morning! Yes, I live in Pune now so it is a short ride",
        "12/03/2024, 09:03 - Priya: Great, bring the slides",
        "13/03/2024, 18:30 - Arjun: Slides are done, sending them tonight",
        "13/03/2024, 18:31 - Priya: <Media omitted>",
        "14/03/2024, 21:15 - Priya: See you on Saturday at 10",
        "14/03/2024, 21:16 - Arjun: See you there",
    ],
    "WhatsApp Chat with Rahul.txt": [
        "[02/04/2024, 10:00:00] Rahul: hey, cricket on Sunday?",
        "[02/04/2024, 10:00:05] Arjun: yes! I love playing cricket, count me in",
        "[03/04/2024, 08:10:00] Rahul: ground booked for 7am",
        "[03/04/2024, 08:12:30] Arjun: perfect, I will bring the bat",
    ],
    "WhatsApp Chat with Mom.txt": [
        "20/04/2024, 19:00 - Mom: Did you eat?",
        "20/04/2024, 19:05 - Arjun: Yes, dal and rice. Calling you after work",
        "21/04/2024, 08:00 - Mom: Happy birthday beta!",
        "21/04/2024, 08:30 - Arjun: Thank you Mom, coming home for dinner",
    ],
}
PG_ENV = ("DAGSTER_PG_HOST", "DAGSTER_PG_PORT", "DAGSTER_PG_USERNAME", "DAGSTER_PG_PASSWORD", "DAGSTER_PG_DB")


def chain_job() -> dg.JobDefinition:
    """The project's definitions with an asset job over the chat × month keys, on Dagster's default
    multiprocess executor, as the daemon runs a sensor's or the UI's request. Reconstructable: each
    step process imports this module and rebuilds the job from `truffle_assets.definitions` (the
    implicit asset job cannot be: its reserved name is refused as a repository's job)."""
    from truffle_assets.definitions import defs

    chain = dg.define_asset_job("chat_month_chain", selection=CHAT_MONTH_KEYS)
    return dg.Definitions.merge(defs, dg.Definitions(jobs=[chain])).resolve_job_def("chat_month_chain")


def _installable() -> bool:
    return bool(shutil.which("pg_ctl") or glob.glob("/usr/lib/postgresql/*/bin/pg_ctl") or shutil.which("apt-get"))


pytestmark = [
    pytest.mark.skipif(not _installable(),
                       reason="no PostgreSQL binaries and no apt-get to install them (scripts/postgres.sh needs one)"),
    pytest.mark.postgres,
    pytest.mark.subprocess,  # scripts/postgres.sh, the runs' launching processes and their step processes
]


def _script(*args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(["bash", str(SCRIPT), *args], capture_output=True, text=True, timeout=600,
                          env={**os.environ, **(env or {})})


@pytest.fixture(scope="module")
def pg_env():
    """DAGSTER_PG_* for a fresh database on the project's server, started here if it was not running."""
    was_running = _script("status").returncode == 0
    db = f"truffle_test_{uuid.uuid4().hex[:10]}"
    started = _script("start", env={"DAGSTER_PG_DB": db})
    assert started.returncode == 0, f"scripts/postgres.sh failed:\n{started.stderr}"
    line = started.stdout.strip().splitlines()[-1]
    env = dict(pair.split("=", 1) for pair in line.removeprefix("export ").split())
    assert set(env) == set(PG_ENV) and env["DAGSTER_PG_DB"] == db, line
    yield env
    import psycopg2

    con = psycopg2.connect(host=env["DAGSTER_PG_HOST"], port=env["DAGSTER_PG_PORT"], user=env["DAGSTER_PG_USERNAME"],
                           password=env["DAGSTER_PG_PASSWORD"], dbname="postgres")
    con.autocommit = True
    with con.cursor() as cur:
        cur.execute(f'DROP DATABASE IF EXISTS "{db}" WITH (FORCE)')
    con.close()
    if not was_running:
        _script("stop")


def _sql(env: dict, query: str, params: tuple = ()) -> list[tuple]:
    import psycopg2

    with psycopg2.connect(host=env["DAGSTER_PG_HOST"], port=env["DAGSTER_PG_PORT"], user=env["DAGSTER_PG_USERNAME"],
                          password=env["DAGSTER_PG_PASSWORD"], dbname=env["DAGSTER_PG_DB"]) as con:
        with con.cursor() as cur:
            cur.execute(query, params)
            return cur.fetchall()


@pytest.fixture(scope="module")
def built(pg_env, tmp_path_factory):
    """A Postgres-backed instance in a temp DAGSTER_HOME, and `ingest_all` over the three chats."""
    from truffle_assets.defs.ingest.runner import ingest_all

    root = tmp_path_factory.mktemp("pg_world")
    home = root / "dagster_home"
    home.mkdir()
    shutil.copy(CONFIG, home / "dagster.yaml")
    for name, lines in EXPORTS.items():
        write_export(root / "exports", name, lines)
    with pytest.MonkeyPatch.context() as mp:
        for k, v in pg_env.items():
            mp.setenv(k, v)
        mp.setenv("DAGSTER_HOME", str(home))
        mp.setenv("TRUFFLE_HOME", str(root))  # the step processes of the multiprocess run build paths from it
        for k in ("TRUFFLE_LLM_BASE_URL", "TRUFFLE_LLM_MODEL", "TRUFFLE_LLM_API_KEY", "OPENROUTER_API_KEY"):
            mp.delenv(k, raising=False)
        mp.setenv("HF_HUB_OFFLINE", "1")
        with dg.DagsterInstance.from_config(str(home)) as instance:
            report = ingest_all(exports_dir=root / "exports", db_path=root / "memory.duckdb", instance=instance,
                                llm=LLMResource(cache_dir=str(root / "cache" / "llm")))
            yield root, instance, report


def test_postgres_yaml_settings(pg_env, tmp_path, monkeypatch):
    """The settings dagster.postgres.yaml shares with dagster.yaml, on an instance loaded from it."""
    shutil.copy(CONFIG, tmp_path / "dagster.yaml")
    for k, v in pg_env.items():
        monkeypatch.setenv(k, v)
    with dg.DagsterInstance.from_config(str(tmp_path)) as instance:
        assert not instance.nux_enabled  # no "Join the community" dialog in the UI
        assert not instance.telemetry_enabled


def test_instance_storage_is_postgres(built):
    from dagster_postgres import PostgresEventLogStorage, PostgresRunStorage, PostgresScheduleStorage

    _, instance, _ = built
    assert isinstance(instance.run_storage, PostgresRunStorage)
    assert isinstance(instance.event_log_storage, PostgresEventLogStorage)
    assert isinstance(instance.schedule_storage, PostgresScheduleStorage)
    assert instance.event_log_storage.supports_global_concurrency_limits
    assert instance.get_concurrency_config().pool_config.default_pool_limit == 1


def test_full_ingest_chain_recorded_in_postgres(built, pg_env):
    root, instance, report = built
    assert report["failed"] == 0, report
    assert len(report["chats"]) == len(EXPORTS) and report["user"] == "Arjun" and report["profile"]["success"]
    run_ids = [r["run_id"] for e in report["chats"].values() for r in e["runs"]] + [report["profile"]["run_id"]]
    assert all(r["success"] for e in report["chats"].values() for r in e["runs"])

    # through the instance: runs (one per chat, of the chat_memory job), the chat-month partitions, one
    # materialization per key and asset: none missing
    records = {r.dagster_run.run_id: r for r in instance.get_run_records(dg.RunsFilter(run_ids=run_ids))}
    assert set(records) == set(run_ids)
    assert {r.dagster_run.status for r in records.values()} == {dg.DagsterRunStatus.SUCCESS}
    assert [len(e["runs"]) for e in report["chats"].values()] == [1] * len(EXPORTS)
    assert {records[r["run_id"]].dagster_run.job_name for e in report["chats"].values() for r in e["runs"]} == {
        "chat_memory"}
    keys = instance.get_dynamic_partitions(chat_months.name)
    assert registered_chats(keys) == set(report["chats"])
    expected = set(keys)
    assert sum(r["months"] for e in report["chats"].values() for r in e["runs"]) == len(expected)
    for key in CHAT_MONTH_KEYS:
        assert instance.get_materialized_partitions(key) == expected, key
    assert instance.get_latest_materialization_event(dg.AssetKey("profile")) is not None

    # straight from Postgres: the same runs, partitions and events are rows in its tables
    rows = dict(_sql(pg_env, "SELECT run_id, status FROM runs WHERE run_id = ANY(%s)", (run_ids,)))
    assert rows == {r: "SUCCESS" for r in run_ids}
    assert sorted(p for (p,) in _sql(pg_env, "SELECT partition FROM dynamic_partitions WHERE partitions_def_name = %s",
                                     (chat_months.name,))) == sorted(keys)
    mats = dict(_sql(pg_env, """SELECT asset_key, count(DISTINCT partition) FROM event_logs
                               WHERE dagster_event_type = 'ASSET_MATERIALIZATION' GROUP BY asset_key"""))
    for key in CHAT_MONTH_KEYS:
        assert mats[key.to_string()] == len(expected), key
    assert _sql(pg_env, "SELECT count(*) FROM event_logs WHERE dagster_event_type = 'ASSET_CHECK_EVALUATION'")[0][0] > 0

    # the memory the runs wrote
    with duckdb.connect(str(root / "memory.duckdb"), read_only=True) as con:
        n = {t: con.execute(f"SELECT count(*) FROM {t}").fetchall()[0][0]
             for t in ("messages", "message_streams", "episodes", "summaries", "facts")}
    assert all(v > 0 for v in n.values()), n
    pointer = json.loads((root / "published" / "latest.json").read_text())
    assert pointer["rows"]["raw_episodes_index"] > 0 and set(pointer["watermarks"]) == set(report["chats"])
    assert (root / "published" / "profile.json").is_file()


@pytest.fixture(scope="module")
def launched(built) -> dict:
    """Two chats' ranges at once on the multiprocess executor (the daemon runs two at a time), each
    run from a process of its own, with `summaries` asking a slow LLM for every episode. Returns the
    chats, the launching processes' pids, the run ids and each step's (run, step, start, end)."""
    root, instance, report = built
    picked = sorted(report["chats"].items())[:2]
    run_config = {"ops": {"summaries": {"config": {"tier_b": 0.0, "tier_c": 0.7}}}}  # every episode asks the LLM
    # each step process takes ~6 s to start, so the runs' steps alternate ~6 s apart: an LLM call of
    # 15 s keeps `summaries` running across the other run's next DuckDB step whatever the interleaving
    with FakeLLM(mode="slow", delay_s=15) as fake, pytest.MonkeyPatch.context() as mp:
        mp.setenv("TRUFFLE_LLM_BASE_URL", fake.base_url)
        mp.setenv("TRUFFLE_LLM_MODEL", "fake-model")
        mp.setenv("TRUFFLE_LLM_API_KEY", "x")

        # each run in its own process, as the daemon launches them (two runs from threads of one
        # process once hung before either started, and a multiprocessing pool's daemonic workers
        # cannot start the executor's step processes)
        procs = [_launch_process(chat, entry["runs"][0]["first_month"], entry["runs"][0]["last_month"], run_config)
                 for chat, entry in picked]
        run_ids = [_run_id(proc) for proc in procs]
        assert fake.requests > 0
    spans = []  # (run, step, start, end)
    for run_id in run_ids:
        starts = {}
        for e in instance.all_logs(run_id):
            kind = e.dagster_event.event_type_value if e.dagster_event else None
            if kind == "STEP_START":
                starts[e.step_key] = e.timestamp
            elif kind == "STEP_SUCCESS":
                spans.append((run_id, e.step_key, starts[e.step_key], e.timestamp))
    return {"chats": [c for c, _ in picked], "launchers": {p.pid for p in procs}, "run_ids": run_ids, "spans": spans}


def test_multiprocess_runs_with_duckdb_pool_on_postgres(built, pg_env, launched):
    """The executor launched runs use: one step process per asset, each claiming the `duckdb` pool's
    single slot from Postgres before it opens the store."""
    root, instance, _ = built
    for run_id in launched["run_ids"]:
        events = instance.all_logs(run_id)
        assert instance.get_run_by_id(run_id).status == dg.DagsterRunStatus.SUCCESS
        assert {s for r, s, *_ in launched["spans"] if r == run_id} == {k.to_python_identifier() for k in CHAT_MONTH_KEYS}
        assert any(e.dagster_event and e.dagster_event.event_type_value == "ENGINE_EVENT"
                   and "multiprocess" in e.user_message.lower() for e in events)
        pids = {e.dagster_event.pid for e in events
                if e.dagster_event and e.dagster_event.event_type_value == "STEP_START"}
        # one process per step, none in the process that launched the run (or this one)
        assert len(pids) == len(CHAT_MONTH_KEYS) and not pids & (launched["launchers"] | {os.getpid()})
    # every step went through the pool: Postgres holds the duckdb pool, at limit 1, now free
    info = instance.event_log_storage.get_concurrency_info("duckdb")
    assert info.slot_count == 1 and not info.claimed_slots and not info.pending_steps
    assert _sql(pg_env, "SELECT count(*) FROM concurrency_slots WHERE concurrency_key = 'duckdb'")[0][0] == 1


def test_one_chats_llm_step_overlaps_another_chats_duckdb_steps(built, launched):
    """`summaries` waits on a slow LLM in pool "llm" while the other run's steps take the `duckdb`
    pool; no two DuckDB steps ever run at once, and the store ends up whole."""
    root, _, _ = built
    spans = launched["spans"]
    duck = [s for s in spans if s[1] != "summaries"]
    llm = [s for s in spans if s[1] == "summaries"]
    assert len(duck) == 2 * (len(CHAT_MONTH_KEYS) - 1) and len(llm) == 2

    def overlap(a, b) -> bool:
        return a[2] < b[3] and b[2] < a[3]

    assert not [(a[1], b[1]) for a in duck for b in duck if a[0] < b[0] and overlap(a, b)]  # one writer
    assert any(overlap(s, d) for s in llm for d in duck if s[0] != d[0])  # LLM time is not DuckDB time
    with duckdb.connect(str(root / "memory.duckdb"), read_only=True) as con:
        sources = dict(con.execute("SELECT source, count(*) FROM summaries WHERE chat_id IN (?, ?) AND tier <> 'A' "
                                   "GROUP BY ALL", launched["chats"]).fetchall())
        held = dict(con.execute("SELECT chat_id, count(*) FROM messages WHERE chat_id IN (?, ?) GROUP BY ALL",
                                launched["chats"]).fetchall())
    assert sources.get("llm", 0) > 0, sources
    assert sorted(held) == sorted(launched["chats"]) and all(held.values())  # the recomputed ranges are whole


def _launch_process(chat: str, first_month: str, last_month: str, run_config: dict) -> subprocess.Popen:
    """`_launch` in a process of its own, with this process's environment (instance, data root, LLM)."""
    code = ("import json, sys; from truffle_assets_tests.defs.test_postgres_instance import _launch; "
            "print(_launch(*json.loads(sys.argv[1])))")
    return subprocess.Popen([sys.executable, "-c", code, json.dumps([chat, first_month, last_month, run_config])],
                            cwd=paths.PROJECT_ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _run_id(proc: subprocess.Popen, timeout_s: float = 600) -> str:
    """The run id a `_launch_process` printed; a run that hangs fails the test instead of the suite."""
    try:
        out, err = proc.communicate(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        proc.kill()
        out, err = proc.communicate()
        pytest.fail(f"run did not finish in {timeout_s:.0f} s:\n{err[-3000:]}")
    assert proc.returncode == 0, err[-3000:]
    return out.strip().splitlines()[-1]


def _launch(chat: str, first_month: str, last_month: str, run_config: dict) -> str:
    """One chat's range as a job on the multiprocess executor on the instance $DAGSTER_HOME names;
    returns the run id."""
    first, last = (date.fromisoformat(m + "-01") for m in (first_month, last_month))
    with dg.DagsterInstance.get() as instance:
        with dg.execute_job(dg.reconstructable(chain_job), instance=instance, run_config=run_config,
                            tags=chat_range_tags(chat, first, last, recompute=True)) as result:
            assert result.success, chat
            return result.run_id

