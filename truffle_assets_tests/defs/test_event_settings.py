"""The Dagster event settings `truffle ingest` and `truffle up` run under keep a failure visible: a
ranged run (one run over several partitions, as every ingest run is) whose step fails still records
the failure event, and the partitions it planned read as failed, not missing, on a real instance
loaded from the project's dagster.yaml (SQLite) or dagster.postgres.yaml (PostgreSQL)."""

from __future__ import annotations

import os
import shutil

import dagster as dg
import pytest

from truffle_assets import paths
from truffle_assets.cli.dagster_local import DAGSTER_EVENT_ENV, local_dagster_home, quiet_runs
from truffle_assets_tests.defs.test_postgres_instance import _installable, pg_env  # noqa: F401 (a fixture)

MONTHS = dg.MonthlyPartitionsDefinition(start_date="2024-01-01", end_date="2024-07-01")
RANGE = ["2024-02-01", "2024-03-01", "2024-04-01"]
SINGLE_RUN = dg.BackfillPolicy.single_run()


@dg.asset(partitions_def=MONTHS, backfill_policy=SINGLE_RUN)
def parsed(context):
    return dg.MaterializeResult(metadata={"months": len(context.partition_keys)})


@dg.asset(partitions_def=MONTHS, backfill_policy=SINGLE_RUN, deps=[parsed])
def broken(context):
    raise RuntimeError("summaries could not be written")


def _statuses(instance: dg.DagsterInstance, asset) -> tuple[set[str], set[str]]:
    """(materialized, failed) partition keys as the UI's partition view reads them."""
    status = instance.get_status_by_partition(asset.key, MONTHS.get_partition_keys(), MONTHS) or {}
    return ({k for k, v in status.items() if v == dg.AssetPartitionStatus.MATERIALIZED},
            {k for k, v in status.items() if v == dg.AssetPartitionStatus.FAILED})


def _failed_ranged_run(instance: dg.DagsterInstance) -> None:
    result = dg.materialize([parsed, broken], instance=instance, raise_on_error=False,
                            tags={"dagster/asset_partition_range_start": RANGE[0],
                                  "dagster/asset_partition_range_end": RANGE[-1]})
    assert not result.success
    failures = instance.all_logs(result.run_id, of_type=dg.DagsterEventType.STEP_FAILURE)
    assert [f.step_key for f in failures] == ["broken"]
    assert "summaries could not be written" in failures[0].dagster_event.step_failure_data.error.to_string()
    assert instance.get_run_by_id(result.run_id).status == dg.DagsterRunStatus.FAILURE
    assert len(instance.all_logs(result.run_id, of_type=dg.DagsterEventType.ASSET_MATERIALIZATION)) == 3
    assert _statuses(instance, parsed) == (set(RANGE), set())
    assert _statuses(instance, broken) == (set(), set(RANGE))


@pytest.fixture
def truffle_env(tmp_path, monkeypatch):
    """The environment `truffle ingest` and `truffle up` give their runs, in a temporary DAGSTER_HOME."""
    for name in DAGSTER_EVENT_ENV:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("DAGSTER_HOME", str(tmp_path / "dagster_home"))
    home = local_dagster_home()  # what `truffle up` does first
    with quiet_runs(tmp_path / "data"):  # what every command's runs run inside
        assert {name: os.environ[name] for name in DAGSTER_EVENT_ENV} == DAGSTER_EVENT_ENV
        yield home


def test_a_failed_ranged_run_reads_as_failed(truffle_env):
    with dg.DagsterInstance.get() as instance:
        _failed_ranged_run(instance)


@pytest.mark.skipif(not _installable(), reason="no PostgreSQL binaries and no apt-get to install them")
def test_a_failed_ranged_run_reads_as_failed_on_postgres(truffle_env, pg_env, monkeypatch):  # noqa: F811
    for name, value in pg_env.items():
        monkeypatch.setenv(name, value)
    shutil.copy(paths.PROJECT_ROOT / "dagster.postgres.yaml", truffle_env / "dagster.yaml")
    with dg.DagsterInstance.get() as instance:
        _failed_ranged_run(instance)
