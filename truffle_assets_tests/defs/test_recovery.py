"""Runs left STARTED by a dead process are reaped; a live owner's runs are not."""

from __future__ import annotations

import socket
import subprocess
import sys
import time
import uuid

import dagster as dg
import pytest

from truffle_assets.defs.recovery import (
    OWNER_TAG, _local_only, _start_ticks, fail_own_runs, owner_tags, reap_dead_runs,
)


@pytest.fixture
def instance(tmp_path):
    with dg.instance_for_test(temp_dir=str(tmp_path)) as inst:
        inst.event_log_storage.set_concurrency_slots("duckdb", 3)  # each test run holds one
        yield inst


def _started_run(instance: dg.DagsterInstance, tags: dict) -> str:
    run_id = str(uuid.uuid4())
    instance.add_run(dg.DagsterRun(job_name="__ephemeral_asset_job__", run_id=run_id,
                                   status=dg.DagsterRunStatus.STARTED, tags=tags))
    claim = instance.event_log_storage.claim_concurrency_slot("duckdb", run_id, "messages")
    assert claim.is_claimed
    return run_id


def _dead_owner() -> str:
    """The owner tag of a process that has exited (its pid and start time read while it lived)."""
    proc = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(0.5)"])
    ticks = _start_ticks(proc.pid)
    proc.wait()
    time.sleep(0.1)
    return f"{socket.gethostname()}:{proc.pid}:{ticks}"


def _claimed(instance: dg.DagsterInstance) -> list[str]:
    return [s.run_id for s in instance.event_log_storage.get_concurrency_info("duckdb").claimed_slots]


def test_a_dead_owners_run_is_failed_and_its_slot_freed(instance):
    dead = _started_run(instance, {OWNER_TAG: _dead_owner()})
    mine = _started_run(instance, owner_tags())  # this process is alive: not reaped
    other_host = _started_run(instance, {OWNER_TAG: "elsewhere.example:1:1"})  # cannot be told from here
    assert sorted(_claimed(instance)) == sorted([dead, mine, other_host])

    assert reap_dead_runs(instance) == [dead]
    assert instance.get_run_by_id(dead).status == dg.DagsterRunStatus.FAILURE
    assert instance.get_run_by_id(mine).status == dg.DagsterRunStatus.STARTED
    assert instance.get_run_by_id(other_host).status == dg.DagsterRunStatus.STARTED
    assert dead not in _claimed(instance)
    failure = instance.all_logs(dead, of_type=dg.DagsterEventType.RUN_FAILURE)[0]
    assert "process executing this run is gone" in failure.message
    assert reap_dead_runs(instance) == []  # once


def test_a_reused_pid_is_not_taken_for_the_owner(instance):
    host, pid, ticks = owner_tags()[OWNER_TAG].rsplit(":", 2)
    run = _started_run(instance, {OWNER_TAG: f"{host}:{pid}:{int(ticks) - 1}"})  # same pid, other start time
    assert reap_dead_runs(instance) == [run]


def test_an_interrupted_process_fails_only_its_own_runs(instance):
    mine = _started_run(instance, owner_tags())
    dead = _started_run(instance, {OWNER_TAG: _dead_owner()})
    assert fail_own_runs(instance, "interrupted") == [mine]
    assert instance.get_run_by_id(mine).status == dg.DagsterRunStatus.FAILURE
    assert instance.get_run_by_id(dead).status == dg.DagsterRunStatus.STARTED
    assert mine not in _claimed(instance)


def test_only_a_single_machine_instance_judges_runs_by_their_pid(instance):
    """A SQLite instance holds runs of this machine only; an ephemeral one has none launched elsewhere."""
    assert _local_only(instance)
    with dg.DagsterInstance.ephemeral() as ephemeral:
        assert not _local_only(ephemeral)
