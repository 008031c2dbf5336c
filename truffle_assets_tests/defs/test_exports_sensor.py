"""Sensor ticks with build_sensor_context against a real temporary instance."""

import json
from pathlib import Path

import dagster as dg
import pytest

from truffle_assets.defs.ingest.sensors import exports_sensor
from truffle_assets.defs.partitions import chats
from truffle_assets.defs.pipeline import CHAT_MONTH_ASSETS
from truffle_assets.ingest.chat_ids import ChatScan
from truffle_assets.defs.resources import ExportsResource
from truffle_assets.ingest.exports import scan_exports
from truffle_assets.files import sha256_file
from truffle_assets.ids import chat_id_for_name, legacy_chat_id
from truffle_assets_tests.conftest import write_export
from truffle_assets_tests.defs.conftest import frame, make_resources


@pytest.fixture
def instance():
    with dg.instance_for_test() as inst:
        yield inst


def tick(instance, workdir: Path, cursor: str | None):
    exports = ExportsResource(exports_dir=str(workdir / "exports"), cache_dir=str(workdir / "cache"),
                              store_path=str(workdir / "memory.duckdb"))
    ctx = dg.build_sensor_context(instance=instance, cursor=cursor, resources={"exports": exports})
    result = exports_sensor(ctx)
    # apply partition additions like the daemon would
    for req in result.dynamic_partitions_requests:
        instance.add_dynamic_partitions(req.partitions_def_name, list(req.partition_keys))
    return result


def ranges(result) -> list[tuple[str, str]]:
    return [(r.tags["dagster/asset_partition_range_start"], r.tags["dagster/asset_partition_range_end"]) for r in result.run_requests]


def run(instance, workdir, result):
    """The requested runs, whole chain: a month counts as done once `memory_index` has published it."""
    res = {k: v for k, v in make_resources(workdir, workdir / "exports").items() if k != "models"}
    for req in result.run_requests:
        assert dg.materialize(CHAT_MONTH_ASSETS, instance=instance, resources=res, tags=req.tags).success


def test_new_export_registers_chat_and_requests_its_months(instance, workdir, alice_export):
    result = tick(instance, workdir, None)
    assert [r.partition_keys for r in result.dynamic_partitions_requests] == [["alice"]]
    # one single-run backfill covering the chat's one month with messages
    assert ranges(result) == [("alice|2023-03", "alice|2023-03")]
    assert result.run_requests[0].run_key.startswith("alice:2023-03:2023-03:")
    assert json.loads(result.cursor)["files"] == {"alice": {str(alice_export): sha256_file(alice_export)}}


def test_unchanged_file_requests_nothing_and_ticks_are_safe_to_repeat(instance, workdir, alice_export):
    first = tick(instance, workdir, None)
    run(instance, workdir, first)
    second = tick(instance, workdir, first.cursor)
    assert second.run_requests == [] and second.dynamic_partitions_requests == []
    # a lost cursor re-parses but the store already holds every day: still nothing to do
    third = tick(instance, workdir, None)
    assert third.run_requests == []


def test_changed_export_requests_only_changed_months(instance, workdir, alice_export):
    first = tick(instance, workdir, None)
    run(instance, workdir, first)
    text = alice_export.read_text()
    alice_export.write_text(text.replace("<Media omitted>", "lovely photo") + "06/05/2023, 08:00 - Alice: new day\n")
    result = tick(instance, workdir, first.cursor)
    # March (one changed day) and May (a new day); silent April is not requested
    assert ranges(result) == [("alice|2023-03", "alice|2023-03"), ("alice|2023-05", "alice|2023-05")]
    assert result.dynamic_partitions_requests == []
    # run keys carry content digests: the same change asked twice gets the same keys
    again = tick(instance, workdir, first.cursor)
    assert [r.run_key for r in again.run_requests] == [r.run_key for r in result.run_requests]
    run(instance, workdir, result)
    assert tick(instance, workdir, result.cursor).run_requests == []


def test_second_chat_is_independent(instance, workdir, alice_export, bob_export):
    result = tick(instance, workdir, None)
    assert sorted(result.dynamic_partitions_requests[0].partition_keys) == ["alice", "bob"]
    assert ("bob|2023-03", "bob|2023-03") in ranges(result)
    assert set(instance.get_dynamic_partitions(chats.name)) == {"alice", "bob"}


def test_broken_export_is_reported_not_fatal(instance, workdir, alice_export):
    (workdir / "exports" / "WhatsApp Chat with Junk.txt").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00binary")
    result = tick(instance, workdir, None)
    assert ranges(result) == [("alice|2023-03", "alice|2023-03")]


def test_zip_export_is_picked_up(instance, workdir):
    import zipfile

    src = write_export(workdir / "staging", "_chat.txt", ["[1/2/23, 10:00:00] Dee: hello", "[1/13/23, 10:01:00] Arjun: hi"], "\r\n")
    with zipfile.ZipFile(workdir / "exports" / "WhatsApp Chat - Dee.zip", "w") as zf:
        zf.write(src, "_chat.txt")
    result = tick(instance, workdir, None)
    assert result.dynamic_partitions_requests[0].partition_keys == ["dee"]
    assert ranges(result) == [("dee|2023-01", "dee|2023-01")]  # 13 reveals month-first: both in January


def test_daily_instance_rerequests_every_month_once(instance, workdir, alice_export, bob_export):
    """An instance from chat × day partitions shows no months: the sensor asks for them all, once."""
    first = tick(instance, workdir, None)
    run(instance, workdir, first)
    with dg.instance_for_test() as old:
        old.add_dynamic_partitions(chats.name, ["alice", "bob"])
        old.report_runless_asset_event(dg.AssetMaterialization("messages", partition="alice|2023-03-01"))
        migrated = tick(old, workdir, first.cursor)  # the files are unchanged, the store is complete
        assert sorted(ranges(migrated)) == [("alice|2023-03", "alice|2023-03"), ("bob|2023-03", "bob|2023-03")]
        assert migrated.dynamic_partitions_requests == []
        run(old, workdir, migrated)
        assert tick(old, workdir, migrated.cursor).run_requests == []


def test_a_chat_the_old_rule_folded_together_is_split_by_the_sensor(instance, workdir, monkeypatch):
    """`Zoë` and `Zoe` were one chat `zoe` before distinct ids. The first tick after the upgrade gives
    Zoë her own chat and re-reads `zoe`, whose files are unchanged but one fewer: its January
    changes and its February (Zoë's alone) empties, and no message is lost or doubled."""
    write_export(workdir / "exports", "WhatsApp Chat with Zoe.txt", [
        "12/01/2024, 09:00 - Zoe: hi, it's Zoe from the gym", "03/03/2024, 10:00 - Zoe: the gym moves"])
    write_export(workdir / "exports", "WhatsApp Chat with Zoë.txt", [
        "12/01/2024, 11:00 - Zoë: bonjour", "20/02/2024, 10:00 - Zoë: my flight lands on Friday"])

    def folded(self) -> ChatScan:  # the chats as the sensor and the runs saw them then
        chats: dict = {}
        for p in sorted(p for files in scan_exports(self.exports_dir).values() for p in files):
            chats.setdefault(legacy_chat_id(p), []).append(p)
        return ChatScan(chats)

    with monkeypatch.context() as m:
        m.setattr(ExportsResource, "scan", folded)
        first = tick(instance, workdir, None)
        assert first.dynamic_partitions_requests[0].partition_keys == ["zoe"]
        run(instance, workdir, first)
    per_file = "SELECT source_file, chat_id, count(*) AS n FROM messages GROUP BY ALL ORDER BY ALL"
    before = frame(workdir / "memory.duckdb", per_file)
    assert before["chat_id"].to_list() == ["zoe", "zoe"]

    zoe2 = chat_id_for_name("Zoë")
    split = tick(instance, workdir, first.cursor)
    assert [r.partition_keys for r in split.dynamic_partitions_requests] == [[zoe2]]
    assert sorted(ranges(split)) == [(f"{zoe2}|2024-01", f"{zoe2}|2024-02"), ("zoe|2024-01", "zoe|2024-02")]
    run(instance, workdir, split)
    after = frame(workdir / "memory.duckdb", per_file)
    assert after["n"].to_list() == before["n"].to_list() and after["chat_id"].to_list() == ["zoe", zoe2]
    assert frame(workdir / "memory.duckdb", "SELECT count(DISTINCT id) = count(*) AS ok FROM messages")["ok"][0]
    assert tick(instance, workdir, split.cursor).run_requests == []
