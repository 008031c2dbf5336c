"""Runs left STARTED by a process that is gone: found, marked failed, their pool slots freed.

A `kill -9`, a closed laptop lid or a crash leaves the run STARTED in the instance, holding its
`duckdb` pool slot, and every later run would wait on that slot forever. Dagster's run
monitoring cannot see it: the default run launcher has no worker health check, and an
in-process run (`truffle ingest`) has no worker at all. So each run records which process
executes it (`OWNER_TAG`: host, pid and that process's start time, so a reused pid is not taken
for the owner), and `truffle ingest`, `truffle up` and the exports sensor reap dead owners first.
Runs launched elsewhere (the UI, the daemon) are judged by the pid their own events carry, on a
single-machine (SQLite) instance only: with a shared PostgreSQL instance another host's pid
means nothing here.
"""

from __future__ import annotations

import os
import socket

import dagster as dg

OWNER_TAG = "truffle/owner"  # "<host>:<pid>:<process start, clock ticks after boot>"
LIVE = [dg.DagsterRunStatus.STARTING, dg.DagsterRunStatus.STARTED, dg.DagsterRunStatus.CANCELING]


def _start_ticks(pid: int) -> int | None:
    """The process's start time in clock ticks after boot (/proc/<pid>/stat field 22), None if gone."""
    try:
        stat = open(f"/proc/{pid}/stat").read()
    except OSError:
        return None
    return int(stat.rsplit(")", 1)[1].split()[19])  # fields after the command name, which may hold spaces


def owner_tags() -> dict[str, str]:
    """Tags naming this process as the one executing a run in-process."""
    return {OWNER_TAG: f"{socket.gethostname()}:{os.getpid()}:{_start_ticks(os.getpid())}"}


def _boot_time() -> float:
    with open("/proc/stat") as f:
        return float(next(line.split()[1] for line in f if line.startswith("btime")))


def owner_gone(run: dg.DagsterRun, instance: dg.DagsterInstance) -> bool | None:
    """True when the process executing `run` no longer exists; None when that cannot be told here."""
    owner = run.tags.get(OWNER_TAG)
    if owner:
        host, pid, ticks = owner.rsplit(":", 2)
        if host != socket.gethostname():
            return None
        return str(_start_ticks(int(pid))) != ticks
    if not _local_only(instance):
        return None
    # the run worker that started the run orchestrates it to the end (step processes come and go)
    starts = instance.all_logs(run.run_id, of_type=dg.DagsterEventType.RUN_START)
    if not starts or not starts[-1].dagster_event.pid:
        return None  # launched, not started: the run monitor's start timeout applies
    ticks = _start_ticks(starts[-1].dagster_event.pid)
    if ticks is None:
        return True
    # a pid reused by a process started after the run did is not the run's process
    return _boot_time() + ticks / os.sysconf("SC_CLK_TCK") > starts[-1].timestamp + 1


def _local_only(instance: dg.DagsterInstance) -> bool:
    """A persistent single-machine instance (SQLite, the default): every run it holds was executed on
    this machine. PostgreSQL is the storage several machines share; an ephemeral instance has no
    runs launched elsewhere to judge."""
    from dagster_postgres import PostgresRunStorage  # here, not at the top: psycopg2 loads with it

    return not instance.is_ephemeral and not isinstance(instance.run_storage, PostgresRunStorage)


def reap_dead_runs(instance: dg.DagsterInstance) -> list[str]:
    """Mark every live-status run whose process is gone as failed and free its concurrency slots;
    returns their run ids."""
    gone = [r.dagster_run for r in instance.get_run_records(dg.RunsFilter(statuses=LIVE))
            if owner_gone(r.dagster_run, instance)]
    return _fail(instance, gone, "the process executing this run is gone (killed or crashed); "
                                 "marked failed so its pool slots are freed")


def fail_own_runs(instance: dg.DagsterInstance, why: str) -> list[str]:
    """Mark the live runs this process executes as failed and free their slots: an interrupted
    `truffle ingest` leaves nothing STARTED behind it."""
    mine = instance.get_run_records(dg.RunsFilter(statuses=LIVE, tags=owner_tags()))
    return _fail(instance, [r.dagster_run for r in mine], why)


def _fail(instance: dg.DagsterInstance, runs: list[dg.DagsterRun], why: str) -> list[str]:
    for run in runs:
        instance.report_run_failed(run, message=why)
        instance.event_log_storage.free_concurrency_slots_for_run(run.run_id)
    return [run.run_id for run in runs]
