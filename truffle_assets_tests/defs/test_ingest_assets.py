"""The messages asset against a real DuckDB file and a real (temporary) Dagster instance."""

from datetime import date
from pathlib import Path

import dagster as dg
import duckdb
import pytest

from truffle_assets.defs.ingest.assets import messages
from truffle_assets.defs.partitions import (
    LEGACY_CHATS, add_chat_months, chat_month_key, chat_range_tags, forget_legacy_layout, legacy_layout, split_key,
)
from truffle_assets.defs.resources import DuckDBStore, ExportsResource
from truffle_assets.ingest.exports import detect_user, load_chat
from truffle_assets_tests.conftest import write_export


def resources(workdir: Path, user: str | None = None) -> dict:
    return {
        "exports": ExportsResource(exports_dir=str(workdir / "exports"), cache_dir=str(workdir / "cache"), user_name=user),
        "duckdb": DuckDBStore(path=str(workdir / "memory.duckdb")),
    }


def snapshot(db: Path) -> list[tuple]:
    with duckdb.connect(str(db), read_only=True) as con:
        return con.execute("SELECT * FROM messages ORDER BY id").fetchall()


@pytest.fixture
def instance():
    with dg.instance_for_test() as inst:
        yield inst


def month_key(chat: str, month: str) -> str:
    return str(chat_month_key(chat, month))


def test_split_key_round_trips():
    assert split_key(month_key("alice", "2023-03")) == ("alice", date(2023, 3, 1))
    assert month_key("alice", "2023-03") == str(chat_month_key("alice", date(2023, 3, 17))) == "alice|2023-03"


def test_direct_call_writes_its_month(workdir, alice_export, instance):
    add_chat_months(instance, {"alice": [date(2023, 3, 1)]})
    ctx = dg.build_asset_context(partition_key=chat_month_key("alice", "2023-03"), instance=instance)
    result = messages(ctx, **resources(workdir, user="Arjun"))
    rows = snapshot(workdir / "memory.duckdb")
    assert {r[2] for r in rows} == {date(2023, 3, 1), date(2023, 3, 2), date(2023, 3, 4)}
    two_line = next(r for r in rows if r[4] == "Arjun" and r[2] == date(2023, 3, 1))
    assert two_line[7] == "Morning :) running late\nthe bus broke down" and two_line[5] is True
    assert (two_line[10], two_line[11]) == (3, 4)
    assert all(c.passed for c in result.check_results)


def test_materialize_month_is_idempotent_and_only_its_month_is_materialized(workdir, alice_export, instance):
    add_chat_months(instance, {"alice": [date(2023, 3, 1)]})
    tags = chat_range_tags("alice", date(2023, 3, 1), date(2023, 3, 1))
    first = dg.materialize([messages], instance=instance, resources=resources(workdir), tags=tags)
    assert first.success
    before = snapshot(workdir / "memory.duckdb")
    assert len(before) == 6 and {r[6] for r in before} == {"system", "message", "media", "deleted"}
    again = dg.materialize([messages], instance=instance, resources=resources(workdir), tags=tags)
    assert again.success
    assert snapshot(workdir / "memory.duckdb") == before  # same rows, same ids, same hashes
    assert instance.get_materialized_partitions(messages.key) == {"alice|2023-03"}
    meta = [m.metadata for m in again.asset_materializations_for_node("messages")]
    assert [(m["dagster/partition_row_count"].value, m["days_redone"].value, m["days_kept"].value) for m in meta] == [(6, 0, 3)]
    checks = again.get_asset_check_evaluations()
    assert {c.check_name for c in checks} == {"quarantine_below_threshold", "timestamps_match_day", "ids_unique"}
    assert all(c.passed for c in checks)
    with duckdb.connect(str(workdir / "memory.duckdb"), read_only=True) as con:
        assert con.execute("SELECT count(DISTINCT run_id) FROM ingestion_jobs").fetchall()[0][0] == 2


def test_each_month_of_a_ranged_run_carries_its_own_metadata(workdir, instance):
    write_export(workdir / "exports", "WhatsApp Chat with Carol.txt", [
        "30/12/2022, 10:00 - Carol: see you next year",
        "02/01/2023, 10:00 - Arjun: happy new year",
        "14/02/2023, 10:00 - Carol: roses",
        "20/02/2023, 10:00 - Arjun: thanks",
    ])
    add_chat_months(instance, {"carol": [date(2022, 12, 1), date(2023, 1, 1), date(2023, 2, 1)]})
    result = dg.materialize([messages], instance=instance, resources=resources(workdir),
                            tags=chat_range_tags("carol", date(2022, 12, 1), date(2023, 2, 1)))
    assert result.success
    by_key = {m.partition: m.metadata for m in result.asset_materializations_for_node("messages")}
    assert {k: v["dagster/partition_row_count"].value for k, v in by_key.items()} == {
        "carol|2022-12": 1, "carol|2023-01": 1, "carol|2023-02": 2}
    assert "roses" in by_key["carol|2023-02"]["preview"].value and "roses" not in by_key["carol|2023-01"]["preview"].value
    assert {v["dagster/row_count"].value for v in by_key.values()} == {4}  # store-wide figures are shared


def test_rerun_after_edit_replaces_only_that_day(workdir, alice_export, instance):
    add_chat_months(instance, {"alice": [date(2023, 3, 1)]})
    res = resources(workdir)
    dg.materialize([messages], instance=instance, resources=res, partition_key=chat_month_key("alice", "2023-03"))
    before = {r[0]: r for r in snapshot(workdir / "memory.duckdb")}
    alice_export.write_text(alice_export.read_text().replace("<Media omitted>", "nice photo"))
    result = dg.materialize([messages], instance=instance, resources=res, partition_key=chat_month_key("alice", "2023-03"))
    meta = result.asset_materializations_for_node("messages")[0].metadata
    assert (meta["days_redone"].value, meta["days_kept"].value) == (1, 2)
    after = {r[0]: r for r in snapshot(workdir / "memory.duckdb")}
    assert set(before) - set(after) == {next(k for k, r in before.items() if r[7] == "<Media omitted>")}
    assert [r[7] for r in after.values() if r[2] == date(2023, 3, 2)] == ["nice photo"]
    assert {k: r for k, r in after.items() if r[2] != date(2023, 3, 2)} == {k: r for k, r in before.items() if r[2] != date(2023, 3, 2)}
    # the recompute tag redoes every day of the month, to the same rows
    again = dg.materialize([messages], instance=instance, resources=res,
                           tags=chat_range_tags("alice", date(2023, 3, 1), date(2023, 3, 1), recompute=True))
    assert again.asset_materializations_for_node("messages")[0].metadata["days_redone"].value == 3
    assert {r[0]: r for r in snapshot(workdir / "memory.duckdb")} == after


def test_an_instance_of_the_calendar_month_layout_is_recognised_until_forgotten(workdir, alice_export, instance):
    add_chat_months(instance, {"alice": [date(2023, 3, 1)]})
    assert not legacy_layout(instance)
    instance.add_dynamic_partitions(LEGACY_CHATS, ["alice"])  # chat × calendar month: its chats dimension
    assert legacy_layout(instance)
    forget_legacy_layout(instance)
    assert not legacy_layout(instance) and instance.get_dynamic_partitions(LEGACY_CHATS) == []


def test_quarantine_check_fails_on_garbage_prefix(workdir, instance):
    path = workdir / "exports" / "WhatsApp Chat with Carol.txt"
    path.write_text("\n".join(["junk line %d" % i for i in range(5)] + ["01/03/2023, 09:01 - Carol: hi"]) + "\n")
    add_chat_months(instance, {"carol": [date(2023, 3, 1)]})
    result = dg.materialize([messages], instance=instance, resources=resources(workdir),
                            partition_key=chat_month_key("carol", "2023-03"))
    check = next(c for c in result.get_asset_check_evaluations() if c.check_name == "quarantine_below_threshold")
    assert not check.passed
    with duckdb.connect(str(workdir / "memory.duckdb"), read_only=True) as con:
        q = con.execute("SELECT quarantined_lines, quarantined FROM ingestion_jobs").fetchall()[0]
    assert q[0] == 5 and '"text before the first message header"' in q[1]


def test_user_is_the_author_in_every_chat(workdir, alice_export, bob_export):
    exports = resources(workdir)["exports"]
    assert exports.user() == "Arjun"
    rows = load_chat("alice", [alice_export], "Arjun").rows
    assert rows.filter(rows["is_user"])["author"].unique().to_list() == ["Arjun"]


def test_detect_user_refuses_to_guess_a_lone_chat():
    assert detect_user({"a": [{"authors": {"X": 3, "Y": 5}, "you": {}}]}) is None
    assert detect_user({"a": [{"authors": {"X": 3, "Y": 5}, "you": {"X": 1}}]}) == "X"
