"""`exports_sensor` asks for the whole chat × month chain (the `chat_memory` job), and such a request runs end to end."""

from __future__ import annotations

import json
from datetime import date
from pathlib import Path

import dagster as dg
import lancedb
import polars as pl

from truffle_assets.defs.ingest.sensors import exports_sensor
from truffle_assets.defs.partitions import chat_months
from truffle_assets.defs.pipeline import CHAT_MONTH_KEYS
from truffle_assets.definitions import defs
from truffle_assets_tests.conftest import write_export
from truffle_assets_tests.defs.conftest import frame, make_resources, scalar


def tick(instance, exports: Path, cache: Path, cursor: str | None = None):
    from truffle_assets.defs.resources import ExportsResource

    ctx = dg.build_sensor_context(instance=instance, cursor=cursor, resources={
        "exports": ExportsResource(exports_dir=str(exports), cache_dir=str(cache))})
    result = exports_sensor(ctx)
    for req in result.dynamic_partitions_requests:  # what the daemon would do
        instance.add_dynamic_partitions(req.partitions_def_name, list(req.partition_keys))
    return result


def chat_month_asset_keys() -> set[dg.AssetKey]:
    graph = defs.resolve_asset_graph()
    return {k for k in graph.get_all_asset_keys()
            if graph.get(k).is_materializable and graph.get(k).partitions_def == chat_months}


def test_chain_keys_are_every_chat_month_asset_in_order():
    assert set(CHAT_MONTH_KEYS) == chat_month_asset_keys()
    assert CHAT_MONTH_KEYS[0] == dg.AssetKey("messages") and CHAT_MONTH_KEYS[-1] == dg.AssetKey("memory_index")
    graph = defs.resolve_asset_graph()
    pos = {k: i for i, k in enumerate(CHAT_MONTH_KEYS)}
    for k in CHAT_MONTH_KEYS:  # topological: every in-chain parent comes first
        assert all(pos[p] < pos[k] for p in graph.get(k).parent_keys if p in pos), k


def test_sensor_requests_carry_the_whole_chain(corpus, tmp_path):
    instance = dg.DagsterInstance.ephemeral()
    result = tick(instance, corpus.exports, tmp_path / "cache")
    expected_chats = sorted(c["chat_id"] for c in corpus.truth["chats"])
    keys = list(result.dynamic_partitions_requests[0].partition_keys)
    assert sorted({k.split("|")[0] for k in keys}) == expected_chats and keys == sorted(keys)  # chat by chat, in order
    assert len(result.run_requests) == len(expected_chats)  # one run per chat
    for req in result.run_requests:
        assert req.asset_selection is None  # the whole job
        start, end = req.tags["dagster/asset_partition_range_start"], req.tags["dagster/asset_partition_range_end"]
        assert start.split("|")[0] == end.split("|")[0] == req.tags["truffle/chat"] in expected_chats and start <= end
    assert {r.tags["dagster/asset_partition_range_start"].split("|")[0] for r in result.run_requests} == set(expected_chats)
    # the sensor's own target is the job over the same chain
    assert exports_sensor.job_name == "chat_memory"
    assert set(defs.resolve_job_def("chat_memory").asset_layer.executable_asset_keys) == set(CHAT_MONTH_KEYS)
    # a second tick with the cursor and nothing stored yet requests nothing new for unchanged files
    again = tick(instance, corpus.exports, tmp_path / "cache", result.cursor)
    assert again.run_requests == [] and again.dynamic_partitions_requests == []


def test_sensor_request_runs_the_chain_end_to_end(workdir, alice_export, bob_export, _no_llm_env):
    instance = dg.DagsterInstance.ephemeral()
    result = tick(instance, workdir / "exports", workdir / "cache")
    req = next(r for r in result.run_requests if r.tags["dagster/asset_partition_range_start"].startswith("alice|"))
    run = dg.materialize(defs.assets, selection=CHAT_MONTH_KEYS, instance=instance,
                         resources=make_resources(workdir, workdir / "exports"), tags=req.tags)
    assert run.success
    materialized = {e.asset_key for e in run.get_asset_materialization_events()}
    assert materialized == set(CHAT_MONTH_KEYS)
    assert instance.get_materialized_partitions(dg.AssetKey("memory_index")) == {"alice|2023-03"}
    db = workdir / "memory.duckdb"
    n = scalar(db, "SELECT count(*) FROM messages WHERE chat_id = 'alice'")
    assert n == 6
    for table in ("message_pii", "message_streams"):
        assert scalar(db, f"SELECT count(*) FROM {table} WHERE chat_id = 'alice'") == n
    assert scalar(db, "SELECT count(*) FROM episodes WHERE chat_id = 'alice'") > 0
    assert scalar(db, "SELECT count(*) FROM summaries WHERE chat_id = 'alice' AND tier = 'A'") == \
        scalar(db, "SELECT count(*) FROM episodes WHERE chat_id = 'alice'")
    pointer = json.loads((workdir / "published" / "latest.json").read_text())
    assert set(pointer["watermarks"]) == {"alice"}
    assert frame(db, "SELECT DISTINCT author FROM messages WHERE is_user")["author"].to_list() == ["Arjun"]


# three months with messages (Jan, Feb, Apr 2023; March silent), several days each
ERIN = [
    "05/01/2023, 09:00 - Erin: did you book the flights to Lisbon?",
    "05/01/2023, 09:05 - Arjun: yes, we fly on the 3rd of March",
    "19/01/2023, 20:00 - Erin: my sister Maya is visiting next week",
    "19/01/2023, 20:02 - Arjun: great, I love Maya's cooking",
    "02/02/2023, 08:15 - Arjun: I started running every morning",
    "02/02/2023, 08:16 - Erin: impressive! how far?",
    "14/02/2023, 19:00 - Erin: happy valentine's day",
    "14/02/2023, 19:01 - Arjun: dinner at the Italian place at 8?",
    "21/02/2023, 12:00 - Arjun: the dentist moved my appointment to Friday",
    "09/04/2023, 11:00 - Erin: easter brunch at mum's",
    "09/04/2023, 11:03 - Arjun: I'll bring the pastel de nata",
]
TABLES = ("messages", "message_pii", "message_streams", "episodes", "summaries", "fact_claims")


def day_rows(db: Path) -> dict[str, pl.DataFrame]:
    return {t: frame(db, f"SELECT * FROM {t} WHERE chat_id = 'erin' ORDER BY ALL") for t in TABLES}


def lance_rows(root: Path) -> pl.DataFrame:
    tbl = lancedb.connect(str(root / "index")).open_table("raw_episodes_index")
    return pl.from_arrow(tbl.to_arrow()).filter(pl.col("chat_id") == "erin").sort("message_id")


def test_changed_day_reruns_only_its_month_and_leaves_other_days_untouched(workdir, _no_llm_env):
    export = write_export(workdir / "exports", "WhatsApp Chat with Erin.txt", ERIN)
    instance = dg.DagsterInstance.ephemeral()
    res = make_resources(workdir, workdir / "exports")
    first = tick(instance, workdir / "exports", workdir / "cache")
    assert [(r.tags["dagster/asset_partition_range_start"], r.tags["dagster/asset_partition_range_end"])
            for r in first.run_requests] == [("erin|2023-01", "erin|2023-04")]  # silent March has no key
    for req in first.run_requests:
        assert dg.materialize(defs.assets, selection=CHAT_MONTH_KEYS, instance=instance, resources=res,
                              tags=req.tags).success
    assert instance.get_materialized_partitions(dg.AssetKey("episodes")) == {"erin|2023-01", "erin|2023-02", "erin|2023-04"}
    db = workdir / "memory.duckdb"
    before, vectors_before = day_rows(db), lance_rows(workdir)

    # one day changes: 14 February gets an edited message
    export.write_text(export.read_text().replace("the Italian place at 8", "the Italian place at 9"))
    second = tick(instance, workdir / "exports", workdir / "cache", first.cursor)
    assert [(r.tags["dagster/asset_partition_range_start"], r.tags["dagster/asset_partition_range_end"])
            for r in second.run_requests] == [("erin|2023-02", "erin|2023-02")]
    run = dg.materialize(defs.assets, selection=CHAT_MONTH_KEYS, instance=instance,
                         resources=res, tags=second.run_requests[0].tags)
    assert run.success
    for node in CHAT_MONTH_KEYS:  # in February, only the 14th is redone, by every stage
        meta = run.asset_materializations_for_node(node.to_user_string())[0].metadata
        assert (meta["days_redone"].value, meta["days_kept"].value) == (1, 2), node
    assert run.asset_materializations_for_node("memory_index")[0].metadata["texts_embedded"].value <= 2

    changed = date(2023, 2, 14)
    after, vectors_after = day_rows(db), lance_rows(workdir)
    for t in TABLES:  # every other day: the same rows, ids and hashes
        assert after[t].filter(pl.col("day") != changed).equals(before[t].filter(pl.col("day") != changed)), t
    assert "at 9?" in "".join(after["messages"].filter(pl.col("day") == changed)["raw_text"])
    others = pl.col("day") != changed
    assert vectors_after.filter(others).equals(vectors_before.filter(others))  # ids, text and vectors
    assert vectors_after.filter(~others)["text"].to_list() != vectors_before.filter(~others)["text"].to_list()
