"""The partitions a person sees in the UI: one key per chat-month with messages, one run per chat on a
first ingest, nothing missing once an ingest is done, and an instance of the calendar-month layout
migrated. The real `truffle ingest` on a real SQLite instance, read back as the UI reads it."""

from __future__ import annotations

import json
import subprocess
import sys
from datetime import date
from pathlib import Path

import dagster as dg
import pytest

from truffle_assets.defs.partitions import (
    LEGACY_CHATS, LEGACY_LAYOUT, chat_months, in_key_order, layout, legacy_layout,
)
from truffle_assets.defs.pipeline import CHAT_MONTH_KEYS
from truffle_assets.ingest.planning import ChatPlan, IngestPlan
from truffle_assets_tests.conftest import TWO_CHATS, newcomer_env, write_export

pytestmark = pytest.mark.subprocess  # each case runs `truffle ingest`

TRUFFLE = str(Path(sys.executable).with_name("truffle"))
# Priya: January, February and April 2024 (March silent); Rahul: March 2024; Dan: 2021 and 2022, a year apart
DAN = ["03/01/2021, 10:00 - Dan: new flat, come over", "05/06/2022, 10:00 - Arjun: congrats on the job"]


@pytest.fixture
def env(workdir) -> dict:
    for name, lines in TWO_CHATS.items():
        write_export(workdir / "exports", name, lines)
    write_export(workdir / "exports", "WhatsApp Chat with Dan.txt", DAN)
    return newcomer_env(workdir)


def ingest(env: dict) -> tuple[dict, str]:
    proc = subprocess.run([TRUFFLE, "ingest", "--json"], env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout), proc.stderr


def seen_in_ui(env: dict) -> dict:
    """The keys, and per chat-level asset the materialized and missing counts the UI shows."""
    with dg.DagsterInstance.from_config(env["DAGSTER_HOME"]) as instance:
        keys = instance.get_dynamic_partitions(chat_months.name)
        done = {k.to_user_string(): instance.get_materialized_partitions(k) for k in CHAT_MONTH_KEYS}
        return {"keys": keys, "missing": {a: len(set(keys) - d) for a, d in done.items()},
                "materialized": {a: len(d & set(keys)) for a, d in done.items()}, "legacy": legacy_layout(instance)}


def runs_of(env: dict, report: dict) -> list[dg.DagsterRun]:
    ids = [r["run_id"] for e in report["chats"].values() for r in e["runs"]]
    with dg.DagsterInstance.from_config(env["DAGSTER_HOME"]) as instance:
        return [r.dagster_run for r in instance.get_run_records(dg.RunsFilter(run_ids=ids), ascending=True)]


def test_a_first_ingest_is_one_run_per_chat_and_leaves_nothing_missing(env, workdir):
    report, _ = ingest(env)
    assert {c: len(e["runs"]) for c, e in report["chats"].items()} == {"dan": 1, "priya": 1, "rahul": 1}
    ui = seen_in_ui(env)
    assert ui["keys"] == ["dan|2021-01", "dan|2022-06", "priya|2024-01", "priya|2024-02", "priya|2024-04",
                          "rahul|2024-03"]  # no key for a month without messages
    assert ui["missing"] == dict.fromkeys(ui["missing"], 0)
    assert ui["materialized"] == dict.fromkeys(ui["materialized"], 6)
    runs = runs_of(env, report)  # the Runs page: a named job, the chat and its months
    assert {r.job_name for r in runs} == {"chat_memory"}
    assert sorted((r.tags["truffle/chat"], r.tags["truffle/months"]) for r in runs) == [
        ("dan", "2021-01..2022-06"), ("priya", "2024-01..2024-04"), ("rahul", "2024-03")]

    # a re-export: priya's April changed and May is new. Her keys move to the end, months in order, so
    # the two months are one run, and nothing is missing
    priya = workdir / "exports" / "WhatsApp Chat with Priya.txt"
    priya.write_text(priya.read_text().replace("Happy early birthday!", "Happy early birthday!!")
                     + "05/05/2024, 10:00 - Priya: how was the match?\n")
    later, _ = ingest(env)
    assert {c: [(r["first_month"], r["last_month"]) for r in e["runs"]] for c, e in later["chats"].items()} == {
        "dan": [], "priya": [("2024-04", "2024-05")], "rahul": []}
    ui = seen_in_ui(env)
    assert ui["keys"] == ["dan|2021-01", "dan|2022-06", "rahul|2024-03", "priya|2024-01", "priya|2024-02",
                          "priya|2024-04", "priya|2024-05"]
    assert ui["missing"] == dict.fromkeys(ui["missing"], 0)


def test_an_instance_of_the_calendar_month_layout_is_migrated_with_a_message(env):
    first, _ = ingest(env)
    with dg.DagsterInstance.from_config(env["DAGSTER_HOME"]) as instance:  # as that layout left it
        for key in instance.get_dynamic_partitions(chat_months.name):
            instance.delete_dynamic_partition(chat_months.name, key)
        instance.add_dynamic_partitions(LEGACY_CHATS, sorted(first["chats"]))
    report, stderr = ingest(env)
    assert LEGACY_LAYOUT in stderr
    assert {c: len(e["runs"]) for c, e in report["chats"].items()} == {"dan": 1, "priya": 1, "rahul": 1}
    assert all(r["days_redone"] == 0 for e in report["chats"].values() for r in e["runs"])  # the store was whole
    ui = seen_in_ui(env)
    assert not ui["legacy"] and len(ui["keys"]) == 6 and ui["missing"] == dict.fromkeys(ui["missing"], 0)
    again, stderr = ingest(env)
    assert LEGACY_LAYOUT not in stderr and {e["status"] for e in again["chats"].values()} == {"up to date"}


def test_a_chat_a_live_run_covers_keeps_its_keys_where_they_are():
    existing = ["carol|2023-09", "dan|2022-06"]
    months = {"carol": [date(2023, 9, 1), date(2023, 11, 1)]}
    assert layout(existing, months) == (["carol|2023-09"], ["carol|2023-09", "carol|2023-11"])
    assert layout(existing, months, busy={"carol"}) == ([], ["carol|2023-11"])  # appended: its own run
    assert layout(["dan|2022-06", "carol|2023-09"], months) == ([], ["carol|2023-11"])  # already at the end


def test_runs_are_cut_where_another_chats_key_lies_between():
    """The plan's months regrouped over the real key order (no Dagster run needed to see the cut)."""
    m = [date(2024, 1, 1), date(2024, 2, 1), date(2024, 5, 1)]
    digests = {"2024-01-03": "a", "2024-02-03": "b", "2024-05-03": "c"}
    plan = IngestPlan([ChatPlan("priya", 3, [], changed=[date(2024, 1, 3), date(2024, 2, 3), date(2024, 5, 3)],
                                months=m, digests=digests)], [], {})
    keys = ["priya|2024-01", "priya|2024-02", "rahul|2024-03", "priya|2024-05"]
    assert [(r.first, r.last, r.changed_days) for r in in_key_order(plan, keys).chats[0].ranges] == [
        (m[0], m[1], 2), (m[2], m[2], 1)]
    keys = ["priya|2024-01", "priya|2024-02", "priya|2024-05", "rahul|2024-03"]  # adjacent: one run, April has no key
    assert [(r.first, r.last) for r in in_key_order(plan, keys).chats[0].ranges] == [(m[0], m[2])]
