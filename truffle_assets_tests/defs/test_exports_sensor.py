"""Sensor ticks with build_sensor_context against a real temporary instance."""

import json
from pathlib import Path

import dagster as dg
import pytest

from truffle_assets.defs.ingest.sensors import exports_sensor
from truffle_assets.defs.partitions import LEGACY_CHATS, chat_months, legacy_layout
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
    # apply partition requests like the daemon would
    for req in result.dynamic_partitions_requests:
        if isinstance(req, dg.DeleteDynamicPartitionsRequest):
            for key in req.partition_keys:
                instance.delete_dynamic_partition(req.partitions_def_name, key)
        else:
            instance.add_dynamic_partitions(req.partitions_def_name, list(req.partition_keys))
    return result


def ranges(result) -> list[tuple[str, str]]:
    return [(r.tags["dagster/asset_partition_range_start"], r.tags["dagster/asset_partition_range_end"]) for r in result.run_requests]


def run(instance, workdir, result):
    """The requested runs, whole chain: a month counts as done once `memory_index` has published it."""
    res = {k: v for k, v in make_resources(workdir, workdir / "exports").items() if k != "models"}
    for req in result.run_requests:
        assert dg.materialize(CHAT_MONTH_ASSETS, instance=instance, resources=res, tags=req.tags).success


def added(result) -> list[list[str]]:
    return [list(r.partition_keys) for r in result.dynamic_partitions_requests
            if isinstance(r, dg.AddDynamicPartitionsRequest)]


def missing(instance) -> dict[str, int]:
    """Per chat-level asset, how many keys have no materialization: what the UI shows as Missing."""
    keys = set(instance.get_dynamic_partitions(chat_months.name))
    return {a.key.to_user_string(): len(keys - instance.get_materialized_partitions(a.key)) for a in CHAT_MONTH_ASSETS}


def test_new_export_registers_chat_and_requests_its_months(instance, workdir, alice_export):
    result = tick(instance, workdir, None)
    assert added(result) == [["alice|2023-03"]]  # its one month with messages
    # one single-run backfill covering the chat's one month with messages
    assert ranges(result) == [("alice|2023-03", "alice|2023-03")]
    assert result.run_requests[0].run_key.startswith("alice:2023-03:2023-03:")
    assert result.run_requests[0].tags["truffle/chat"] == "alice" and result.run_requests[0].tags["truffle/months"] == "2023-03"
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
    # March (one changed day) and May (a new day, a new key right after March's): one run; silent April has no key
    assert ranges(result) == [("alice|2023-03", "alice|2023-05")]
    assert added(result) == [["alice|2023-05"]]
    # run keys carry content digests: the same change asked twice gets the same keys
    again = tick(instance, workdir, first.cursor)
    assert [r.run_key for r in again.run_requests] == [r.run_key for r in result.run_requests]
    run(instance, workdir, result)
    assert tick(instance, workdir, result.cursor).run_requests == []


def test_second_chat_is_independent(instance, workdir, alice_export, bob_export):
    result = tick(instance, workdir, None)
    assert added(result) == [["alice|2023-03", "bob|2023-03"]]
    assert ("bob|2023-03", "bob|2023-03") in ranges(result)
    assert instance.get_dynamic_partitions(chat_months.name) == ["alice|2023-03", "bob|2023-03"]


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
    assert added(result) == [["dee|2023-01"]]
    assert ranges(result) == [("dee|2023-01", "dee|2023-01")]  # 13 reveals month-first: both in January


def test_calendar_month_instance_registers_and_rerequests_every_month_once(instance, workdir, alice_export, bob_export):
    """An instance from chat × calendar-month (or chat × day) partitions has no chat-month keys: the
    sensor registers them all, asks for them once and drops the old chats."""
    first = tick(instance, workdir, None)
    run(instance, workdir, first)
    with dg.instance_for_test() as old:
        old.add_dynamic_partitions(LEGACY_CHATS, ["alice", "bob"])
        old.report_runless_asset_event(dg.AssetMaterialization("messages", partition="alice|2023-03-01"))
        migrated = tick(old, workdir, first.cursor)  # the files are unchanged, the store is complete
        assert ranges(migrated) == [("alice|2023-03", "alice|2023-03"), ("bob|2023-03", "bob|2023-03")]
        assert added(migrated) == [["alice|2023-03", "bob|2023-03"]] and not legacy_layout(old)
        run(old, workdir, migrated)
        assert tick(old, workdir, migrated.cursor).run_requests == []
        assert missing(old) == dict.fromkeys(missing(old), 0)


def test_one_run_per_new_chat_and_no_missing_partition_once_done(instance, workdir):
    """Chats with silent months in between: every chat is one run, every key is a month with messages,
    and once the runs are done no chat-level asset has a missing partition."""
    write_export(workdir / "exports", "WhatsApp Chat with Carol.txt", [
        "30/12/2022, 10:00 - Carol: see you next year", "14/02/2023, 10:00 - Carol: roses",
        "09/04/2023, 10:00 - Arjun: easter?", "01/09/2023, 10:00 - Carol: back from the trip"])
    write_export(workdir / "exports", "WhatsApp Chat with Dan.txt", [
        "03/01/2021, 10:00 - Dan: new flat", "05/06/2022, 10:00 - Arjun: congrats"])
    first = tick(instance, workdir, None)
    assert ranges(first) == [("carol|2022-12", "carol|2023-09"), ("dan|2021-01", "dan|2022-06")]
    assert instance.get_dynamic_partitions(chat_months.name) == [
        "carol|2022-12", "carol|2023-02", "carol|2023-04", "carol|2023-09", "dan|2021-01", "dan|2022-06"]
    run(instance, workdir, first)
    assert missing(instance) == dict.fromkeys(missing(instance), 0)

    # a re-export of carol: her changed September and a new November. Her keys move after dan's, months
    # in order, so both are one run and never one over dan's months
    carol = workdir / "exports" / "WhatsApp Chat with Carol.txt"
    carol.write_text(carol.read_text().replace("back from the trip", "back from the long trip")
                     + "02/11/2023, 10:00 - Carol: rain\n")
    later = tick(instance, workdir, first.cursor)
    carols = ["carol|2022-12", "carol|2023-02", "carol|2023-04", "carol|2023-09", "carol|2023-11"]
    assert [list(r.partition_keys) for r in later.dynamic_partitions_requests] == [carols[:-1], carols]
    assert instance.get_dynamic_partitions(chat_months.name) == ["dan|2021-01", "dan|2022-06", *carols]
    assert ranges(later) == [("carol|2023-09", "carol|2023-11")]
    run(instance, workdir, later)
    assert missing(instance) == dict.fromkeys(missing(instance), 0)  # moved keys keep their materializations
    # the same for dan, now that carol's keys follow his
    dan = workdir / "exports" / "WhatsApp Chat with Dan.txt"
    dan.write_text(dan.read_text() + "05/06/2022, 11:00 - Dan: thanks\n07/07/2022, 10:00 - Dan: housewarming?\n")
    third = tick(instance, workdir, later.cursor)
    assert ranges(third) == [("dan|2022-06", "dan|2022-07")]
    run(instance, workdir, third)
    assert missing(instance) == dict.fromkeys(missing(instance), 0)


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
        assert added(first) == [["zoe|2024-01", "zoe|2024-02", "zoe|2024-03"]]
        run(instance, workdir, first)
    per_file = "SELECT source_file, chat_id, count(*) AS n FROM messages GROUP BY ALL ORDER BY ALL"
    before = frame(workdir / "memory.duckdb", per_file)
    assert before["chat_id"].to_list() == ["zoe", "zoe"]

    zoe2 = chat_id_for_name("Zoë")
    split = tick(instance, workdir, first.cursor)
    assert added(split) == [[f"{zoe2}|2024-01", f"{zoe2}|2024-02"]]
    assert sorted(ranges(split)) == [(f"{zoe2}|2024-01", f"{zoe2}|2024-02"), ("zoe|2024-01", "zoe|2024-02")]
    run(instance, workdir, split)
    after = frame(workdir / "memory.duckdb", per_file)
    assert after["n"].to_list() == before["n"].to_list() and after["chat_id"].to_list() == ["zoe", zoe2]
    assert frame(workdir / "memory.duckdb", "SELECT count(DISTINCT id) = count(*) AS ok FROM messages")["ok"][0]
    assert tick(instance, workdir, split.cursor).run_requests == []
