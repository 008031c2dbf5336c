"""What a person launches from the `chat_memory` job's Materialize dialog, the way the dialog launches it.

For a dynamic partitions definition the dialog offers a partition list with a "Filter partitions"
box (a case-insensitive substring match over the keys in definition order) and "Select all (N)"
for what the filter shows; it sends the picked keys, the job's partition set and the person's tags
to the webserver's `launchPartitionBackfill` mutation. The backfill daemon then cuts the runs.
Both run here for real: the mutation through the webserver's GraphQL schema on a code server that
loads `truffle_assets.definitions`, the daemon's backfill iteration on a real SQLite instance whose
queued runs are never started.
"""

from __future__ import annotations

import logging
import shutil
from datetime import date

import dagster as dg
import pytest

from truffle_assets import paths
from truffle_assets.defs.partitions import CHAT_TAG, add_chat_months, chat_months
from truffle_assets.defs.pipeline import CHAT_MONTH_KEYS

pytestmark = pytest.mark.subprocess  # a code server loads the definitions

MONTHS = {
    "mummy": [date(2022, 3, 1), date(2023, 1, 1), date(2024, 2, 1), date(2024, 11, 1)],
    "papa": [date(2022, 4, 1), date(2023, 1, 1), date(2023, 9, 1), date(2024, 12, 1)],
}

LAUNCH = """
mutation ($backfillParams: LaunchBackfillParams!) {
  launchPartitionBackfill(backfillParams: $backfillParams) {
    __typename
    ... on LaunchBackfillSuccess { backfillId }
    ... on PythonError { message }
  }
}
"""


def dialog_filter(keys: list[str], text: str) -> list[str]:
    """What "Select all (N)" picks after typing `text` into the dialog's filter box."""
    return [k for k in keys if text.lower() in k.lower()]


@pytest.fixture
def workspace(tmp_path, monkeypatch):
    """A code server on the project's definitions and an instance holding both chats' keys."""
    from dagster_graphql.test.utils import define_out_of_process_workspace

    monkeypatch.setenv("TRUFFLE_HOME", str(tmp_path))
    home = tmp_path / "dagster_home"
    home.mkdir()
    shutil.copy(paths.PROJECT_ROOT / "dagster.yaml", home / "dagster.yaml")
    with dg.DagsterInstance.from_config(str(home)) as instance:
        add_chat_months(instance, MONTHS)
        with define_out_of_process_workspace(str(paths.PROJECT_ROOT / "truffle_assets" / "definitions.py"),
                                             "defs", instance) as process_context:
            yield process_context


def launch(process_context, partition_names: list[str], tags: dict[str, str]) -> list[dg.DagsterRun]:
    """Launch as the dialog does, run the backfill daemon until it is done, return the runs it queued."""
    from dagster._core.execution.backfill import BulkActionStatus
    from dagster._daemon.backfill import execute_backfill_iteration
    from dagster_graphql.test.utils import execute_dagster_graphql, infer_repository_selector

    context = process_context.create_request_context()
    params = {
        "selector": {"partitionSetName": "chat_memory_partition_set",
                     "repositorySelector": infer_repository_selector(context)},
        "assetSelection": [{"path": k.path} for k in CHAT_MONTH_KEYS],
        "partitionNames": partition_names,
        "fromFailure": False,
        "tags": [{"key": k, "value": v} for k, v in tags.items()],
    }
    result = execute_dagster_graphql(context, LAUNCH, {"backfillParams": params})
    assert not result.errors, result.errors
    outcome = result.data["launchPartitionBackfill"]
    assert outcome["__typename"] == "LaunchBackfillSuccess", outcome
    backfill_id = outcome["backfillId"]
    instance = process_context.instance
    for _ in range(5):
        errors = [e for e in execute_backfill_iteration(process_context, logging.getLogger("backfill")) if e]
        assert not errors, errors
        if instance.get_backfill(backfill_id).status != BulkActionStatus.REQUESTED:
            break
    records = instance.get_run_records(dg.RunsFilter(tags={"dagster/backfill": backfill_id}), ascending=True)
    return sorted((r.dagster_run for r in records), key=lambda run: run.tags["dagster/asset_partition_range_start"])


def ranges(runs: list[dg.DagsterRun]) -> list[tuple[str, str]]:
    return [(r.tags["dagster/asset_partition_range_start"], r.tags["dagster/asset_partition_range_end"]) for r in runs]


def test_a_chat_picked_in_the_dialog_is_one_chat_memory_run_with_the_tags_given(workspace):
    keys = workspace.instance.get_dynamic_partitions(chat_months.name)
    picked = dialog_filter(keys, "papa|")
    assert picked == ["papa|2022-04", "papa|2023-01", "papa|2023-09", "papa|2024-12"]
    runs = launch(workspace, picked, {CHAT_TAG: "papa"})
    assert ranges(runs) == [("papa|2022-04", "papa|2024-12")]
    (run,) = runs
    assert run.job_name == "chat_memory" and run.tags[CHAT_TAG] == "papa"
    assert set(run.asset_selection) == set(CHAT_MONTH_KEYS)


def test_a_stretch_of_one_chats_months_is_one_run(workspace):
    keys = workspace.instance.get_dynamic_partitions(chat_months.name)
    picked = dialog_filter(keys, "Mummy|2024")  # the filter ignores case
    assert picked == ["mummy|2024-02", "mummy|2024-11"]
    assert ranges(launch(workspace, picked, {})) == [("mummy|2024-02", "mummy|2024-11")]


def test_one_month_across_chats_is_one_run_per_chat_and_every_key_is_one_run(workspace):
    keys = workspace.instance.get_dynamic_partitions(chat_months.name)
    picked = dialog_filter(keys, "|2023-01")
    assert ranges(launch(workspace, picked, {})) == [("mummy|2023-01", "mummy|2023-01"), ("papa|2023-01", "papa|2023-01")]
    assert ranges(launch(workspace, keys, {})) == [("mummy|2022-03", "papa|2024-12")]  # the dialog's "All"
