"""The messages asset against a real DuckDB file and a real (temporary) Dagster instance."""

from datetime import date
from pathlib import Path

import dagster as dg
import duckdb
import pytest

from truffle_assets.defs.ingest.assets import messages
from truffle_assets.defs.partitions import chat_day_key, chat_range_tags, chats, split_key
from truffle_assets.defs.resources import DuckDBStore, ExportsResource
from truffle_assets.exports import detect_user, load_chat


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


def test_split_key_round_trips():
    assert split_key(str(chat_day_key("alice", "2023-03-01"))) == ("alice", date(2023, 3, 1))


def test_direct_call_writes_one_partition(workdir, alice_export, instance):
    instance.add_dynamic_partitions(chats.name, ["alice"])
    ctx = dg.build_asset_context(partition_key=chat_day_key("alice", "2023-03-01"), instance=instance)
    result = messages(ctx, **resources(workdir, user="Arjun"))
    assert result.metadata["dagster/partition_row_count"] == 3  # notice, greeting, 2-line message
    rows = snapshot(workdir / "memory.duckdb")
    assert {r[2] for r in rows} == {date(2023, 3, 1)}
    two_line = next(r for r in rows if r[4] == "Arjun")
    assert two_line[7] == "Morning :) running late\nthe bus broke down" and two_line[5] is True
    assert (two_line[10], two_line[11]) == (3, 4)
    assert all(c.passed for c in result.check_results)


def test_materialize_range_is_idempotent(workdir, alice_export, instance):
    instance.add_dynamic_partitions(chats.name, ["alice"])
    tags = chat_range_tags("alice", date(2023, 3, 1), date(2023, 3, 4))
    first = dg.materialize([messages], instance=instance, resources=resources(workdir), tags=tags)
    assert first.success
    before = snapshot(workdir / "memory.duckdb")
    assert len(before) == 6 and {r[6] for r in before} == {"system", "message", "media", "deleted"}
    again = dg.materialize([messages], instance=instance, resources=resources(workdir), tags=tags)
    assert again.success
    assert snapshot(workdir / "memory.duckdb") == before  # same rows, same ids, same hashes
    # every partition in the range, the silent 3 March included, is recorded as materialized
    mats = instance.get_materialized_partitions(messages.key)
    assert {str(chat_day_key("alice", f"2023-03-0{d}")) for d in (1, 2, 3, 4)} <= mats
    checks = again.get_asset_check_evaluations()
    assert {c.check_name for c in checks} == {"quarantine_below_threshold", "timestamps_within_partition_day", "ids_unique"}
    assert all(c.passed for c in checks)
    with duckdb.connect(str(workdir / "memory.duckdb"), read_only=True) as con:
        assert con.execute("SELECT count(DISTINCT run_id) FROM ingestion_jobs").fetchall()[0][0] == 2


def test_rerun_after_edit_replaces_only_that_day(workdir, alice_export, instance):
    instance.add_dynamic_partitions(chats.name, ["alice"])
    res = resources(workdir)
    dg.materialize([messages], instance=instance, resources=res, tags=chat_range_tags("alice", date(2023, 3, 1), date(2023, 3, 4)))
    before = {r[0]: r for r in snapshot(workdir / "memory.duckdb")}
    alice_export.write_text(alice_export.read_text().replace("<Media omitted>", "nice photo"))
    dg.materialize([messages], instance=instance, resources=res, partition_key=chat_day_key("alice", "2023-03-02"))
    after = {r[0]: r for r in snapshot(workdir / "memory.duckdb")}
    assert set(before) - set(after) == {next(k for k, r in before.items() if r[7] == "<Media omitted>")}
    assert [r[7] for r in after.values() if r[2] == date(2023, 3, 2)] == ["nice photo"]
    assert {k: r for k, r in after.items() if r[2] != date(2023, 3, 2)} == {k: r for k, r in before.items() if r[2] != date(2023, 3, 2)}


def test_quarantine_check_fails_on_garbage_prefix(workdir, instance):
    path = workdir / "exports" / "WhatsApp Chat with Carol.txt"
    path.write_text("\n".join(["junk line %d" % i for i in range(5)] + ["01/03/2023, 09:01 - Carol: hi"]) + "\n")
    instance.add_dynamic_partitions(chats.name, ["carol"])
    result = dg.materialize([messages], instance=instance, resources=resources(workdir),
                            partition_key=chat_day_key("carol", "2023-03-01"))
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
