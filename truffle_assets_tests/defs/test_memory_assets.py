"""The whole chat × month chain on a temp Dagster instance: metadata, store consistency, no secret leaks,
idempotent re-runs and the blocking `facts_have_evidence` check."""

from __future__ import annotations

import json
from datetime import datetime, time
from pathlib import Path

import dagster as dg
import duckdb
import lancedb
import polars as pl
import pytest

from truffle_assets.defs.memory.assets import facts, profile
from truffle_assets.defs.pipeline import CHAT_MONTH_ASSETS
from truffle_assets.defs.partitions import chat_month_key, chat_range_tags
from truffle_assets.defs.resources import ExportsResource
from truffle_assets_tests.defs.conftest import (
    CHAIN_NODES, CHAT, FIRST, LAST, MEMORY_NODES, clone_store, frame, make_resources, range_tags, register, scalar,
)

TABLE_NAMES = {"messages": "messages", "message_pii": "message_pii", "message_streams": "message_streams",
               "episodes": "episodes", "summaries": "summaries", "facts": "fact_claims",
               "memory_index": "raw_episodes_index"}
IN_RANGE = "chat_id = ? AND day BETWEEN ? AND ?"


def params() -> list:
    return [CHAT, FIRST, LAST]


def metadata(result: dg.ExecuteInProcessResult, node: str) -> list[dict]:
    return [{k: v.value for k, v in m.metadata.items()} for m in result.asset_materializations_for_node(node)]


def lance_text(index_root: Path) -> dict[str, str]:
    """Every string (and list-of-string) cell of each LanceDB table, joined: what a leak would show in."""
    db = lancedb.connect(str(index_root))
    out = {}
    for name in db.list_tables().tables:
        df = pl.from_arrow(db.open_table(name).to_arrow())
        cols = [c for c, t in df.schema.items() if t == pl.String or t == pl.List(pl.String)]
        out[name] = "\n".join(json.dumps(df.select(cols).to_dicts(), default=str, ensure_ascii=False).split("\\n"))
        out[name] += f"\n#rows={df.height}"
    return out


def leaked(secrets: list[str], text: str) -> list[str]:
    return [s for s in secrets if s in text]


# ------------------------------------------------------------------------------------------ chain


def test_every_chain_asset_materializes_each_partition_with_table_metadata(world):
    assert world.chain.success
    expected = {str(chat_month_key(CHAT, FIRST))}  # one month: September 2022
    for node in CHAIN_NODES:
        mats = world.chain.asset_materializations_for_node(node)
        assert {m.partition for m in mats} == expected, node
        meta = metadata(world.chain, node)[0]
        assert meta["dagster/table_name"] == TABLE_NAMES[node], node
        assert meta["dagster/partition_row_count"] > 0, node
        assert meta["dagster/row_count"] >= meta["dagster/partition_row_count"], node
    eps = metadata(world.chain, "episodes")[0]
    assert eps["unchanged_episodes"] == 0 and "salience_histogram" in eps
    summ = metadata(world.chain, "summaries")[0]
    assert summ["llm_enabled"] is True and summ["tiers"].get("A/extractive", 0) == eps["dagster/partition_row_count"]
    assert {t.split("/")[1] for t in summ["tiers"] if not t.startswith("A/")} == {"llm"}  # default tiers, FakeLLM ok
    idx = metadata(world.chain, "memory_index")[0]
    assert idx["texts_embedded"] > 0 and idx["embedding_model"]
    checks = {c.check_name: c.passed for c in world.chain.get_asset_check_evaluations()}
    assert checks["every_message_flagged"] and checks["facts_have_evidence"]
    assert all(checks.values()), checks


def test_duckdb_tables_are_populated_and_ids_consistent(world):
    db = world.db
    n_msgs = scalar(db, f"SELECT count(*) FROM messages WHERE {IN_RANGE}", params())
    assert n_msgs > 0
    for table in ("message_pii", "message_streams"):
        # exactly one row per message, no orphan rows
        assert scalar(db, f"""SELECT count(*) FROM messages m LEFT JOIN {table} t USING (id)
                             WHERE m.chat_id = ? AND m.day BETWEEN ? AND ? AND t.id IS NULL""", params()) == 0, table
        assert scalar(db, f"SELECT count(*) - count(DISTINCT id) FROM {table}") == 0, table
        assert scalar(db, f"SELECT count(*) FROM {table} t LEFT JOIN messages m USING (id) WHERE m.id IS NULL") == 0
        assert scalar(db, f"SELECT count(*) FROM {table} WHERE {IN_RANGE}", params()) == n_msgs, table
    assert scalar(db, f"SELECT count(*) FROM episodes WHERE {IN_RANGE}", params()) > 0
    # every episode's message ids exist, in the episode's chat and day
    assert scalar(db, """SELECT count(*) FROM (SELECT chat_id, day, unnest(message_ids) AS mid FROM episodes) e
                         LEFT JOIN messages m ON m.id = e.mid AND m.chat_id = e.chat_id AND m.day = e.day
                         WHERE m.id IS NULL""") == 0
    assert scalar(db, "SELECT count(*) FROM episodes WHERE n_messages <> len(message_ids) OR n_messages = 0") == 0
    # every summary belongs to an episode and cites only that episode's messages
    assert scalar(db, "SELECT count(*) FROM summaries s LEFT JOIN episodes e ON e.id = s.episode_id WHERE e.id IS NULL") == 0
    assert scalar(db, """SELECT count(*) FROM summaries s JOIN episodes e ON e.id = s.episode_id
                         WHERE len(s.evidence_message_ids) = 0
                            OR NOT list_has_all(e.message_ids, s.evidence_message_ids)""") == 0
    assert scalar(db, """SELECT count(*) FROM episodes e LEFT JOIN summaries s ON s.episode_id = e.id AND s.tier = 'A'
                         WHERE s.episode_id IS NULL""") == 0
    assert scalar(db, "SELECT count(*) FROM rollups WHERE chat_id = ?", [CHAT]) > 0
    # facts: at least the planted "lives in" claim, every claim and fact backed by stored messages
    assert scalar(db, "SELECT count(*) FROM fact_claims") > 0 and scalar(db, "SELECT count(*) FROM facts") > 0
    assert scalar(db, "SELECT count(*) FROM fact_claims c LEFT JOIN messages m ON m.id = c.message_id WHERE m.id IS NULL") == 0
    assert scalar(db, "SELECT count(*) FROM facts WHERE coalesce(len(evidence_message_ids), 0) = 0") == 0
    assert scalar(db, """SELECT count(*) FROM (SELECT unnest(evidence_message_ids) AS mid FROM facts) f
                         LEFT JOIN messages m ON m.id = f.mid WHERE m.id IS NULL""") == 0


def test_lancedb_index_and_latest_json_published(world):
    pointer = json.loads((world.published / "latest.json").read_text())
    assert set(pointer["tables"]) == {"raw_episodes_index", "episodic_summaries"}
    assert pointer["rows"]["raw_episodes_index"] > 0 and pointer["rows"]["episodic_summaries"] > 0
    assert pointer["rows"]["episodic_summaries"] == scalar(world.db, "SELECT count(*) FROM summaries")
    db = lancedb.connect(pointer["root"])
    raw = pl.from_arrow(db.open_table("raw_episodes_index").to_arrow())
    assert raw.height == pointer["rows"]["raw_episodes_index"]
    ids = set(frame(world.db, "SELECT id FROM messages")["id"])
    assert set(raw["message_id"]) <= ids and raw["message_id"].n_unique() == raw.height
    eps = set(frame(world.db, "SELECT id FROM episodes")["id"])
    assert set(raw["episode_id"].drop_nulls()) <= eps
    # what the runtime shows: the message redacted but as written; what is searched: the normalized stream
    pii = dict(frame(world.db, "SELECT id, redacted_text FROM message_pii").iter_rows())
    streams = dict(frame(world.db, "SELECT id, normalized_text FROM message_streams").iter_rows())
    assert raw["shown_text"].to_list() == [pii[m] for m in raw["message_id"]]
    assert raw["text"].to_list() == [streams[m] for m in raw["message_id"]]
    assert (raw["shown_text"] != raw["text"]).any()  # the corpus has emoji: the two differ somewhere
    # the watermark is the newest indexed message of the chat, inside the run's range
    indexed = frame(world.db, f"SELECT max(ts) AS ts FROM messages WHERE {IN_RANGE} AND list_contains(?, id)",
                    [*params(), raw["message_id"].to_list()])["ts"][0]
    assert pointer["watermarks"] == {CHAT: indexed.isoformat()} and FIRST <= indexed.date() <= LAST


def test_an_index_built_before_shown_text_gets_it_on_its_next_build(world, tmp_path):
    """An index from before `shown_text`: no column, and day digests recorded without `message_pii`
    among the index's inputs. Its next build rewrites every day once, fills the column from
    `message_pii` and embeds nothing (the search text, which vectors key on, is unchanged)."""
    import shutil

    from truffle_assets.ingest import stage_days
    from truffle_assets.defs.index.assets import memory_index

    root = clone_store(world, tmp_path)
    shutil.copytree(world.root / "index", root / "index")
    lancedb.connect(str(root / "index")).open_table("raw_episodes_index").drop_columns(["shown_text"])
    model = json.loads((world.published / "latest.json").read_text())["embedding_model"]
    with duckdb.connect(str(root / "memory.duckdb")) as con:
        months = sorted({d.replace(day=1) for (d,) in con.execute(
            "SELECT day FROM stage_days WHERE stage = 'memory_index' AND chat_id = ?", [CHAT]).fetchall()})
        old = stage_days.derived(con, ["message_streams", "episodes", "summaries"], CHAT, months, model)
        for day, digest in old.items():
            con.execute("UPDATE stage_days SET digest = ? WHERE stage = 'memory_index' AND chat_id = ? AND day = ?",
                        [digest, CHAT, day])
    instance = dg.DagsterInstance.ephemeral()
    register(instance)
    res = make_resources(root, world.corpus.exports)
    first = dg.materialize([memory_index], instance=instance, resources=res, tags=range_tags())
    meta = metadata(first, "memory_index")[0]
    assert first.success and meta["days_kept"] == 0 and meta["days_redone"] == len(old)
    assert meta["texts_embedded"] == 0
    pointer = json.loads((root / "published" / "latest.json").read_text())
    raw = pl.from_arrow(lancedb.connect(str(root / "index")).open_table(
        "raw_episodes_index", version=pointer["tables"]["raw_episodes_index"]).to_arrow())
    pii = dict(frame(root / "memory.duckdb", "SELECT id, redacted_text FROM message_pii").iter_rows())
    assert raw.height and raw["shown_text"].to_list() == [pii[m] for m in raw["message_id"]]
    again = dg.materialize([memory_index], instance=instance, resources=res, tags=range_tags())
    assert metadata(again, "memory_index")[0]["days_redone"] == 0  # once, not on every build


def test_profile_json_written_with_version(world):
    doc = json.loads((world.published / "profile.json").read_text())
    assert doc["version"] >= 1 and doc["content_hash"]
    meta = metadata(world.profile, "profile")[0]
    assert meta["version"] == doc["version"] and meta["dagster/uri"] == (world.published / "profile.json").as_uri()
    assert meta["facts_in_profile"] == doc["n_facts"] > 0
    assert doc["user"] == world.corpus.truth["user"]


def test_profile_reads_the_user_from_the_store_unless_named(world, tmp_path):
    """The user comes from `messages.is_user`: the exports are not read again (here: an empty folder)."""
    root = clone_store(world, tmp_path)
    for name, user in ((None, world.corpus.truth["user"]), ("Someone Else", "Someone Else")):
        res = make_resources(root, tmp_path / "no-exports")
        res["exports"] = ExportsResource(exports_dir=str(tmp_path / "no-exports"), cache_dir=str(root / "cache"), user_name=name)
        assert dg.materialize([profile], instance=dg.DagsterInstance.ephemeral(), resources=res).success
        assert json.loads((root / "published" / "profile.json").read_text())["user"] == user


def test_no_raw_secret_leaves_duckdb_messages(world):
    secrets = world.corpus.secret_values()
    # the range really holds planted secrets, raw, in `messages` (else this test proves nothing)
    in_range = frame(world.db, f"SELECT id, raw_text FROM messages WHERE {IN_RANGE}", params())
    planted = [s for s in world.corpus.truth["secrets"] if s["message_id"] in set(in_range["id"])]
    assert planted, "the chosen range should contain a planted secret"
    raw = "\n".join(in_range["raw_text"])
    assert all(s["value"] in raw for s in planted)
    # short secrets (PINs, CVVs) are checked in what derives from their own message
    for s in planted:
        own = [frame(world.db, f"SELECT {col} FROM {table} WHERE id = ?", [s["message_id"]]).write_json()
               for table, col in (("message_pii", "redacted_text"), ("message_streams", "normalized_text"))]
        own.append(frame(world.db, "SELECT text FROM episodes WHERE list_contains(message_ids, ?)", [s["message_id"]]).write_json())
        assert not any(s["value"] in t for t in own), s["type"]

    for table, cols in {"message_pii": "redacted_text, spans", "message_streams": "normalized_text, english_text",
                        "episodes": "text", "summaries": "text, keywords, entities", "rollups": "text",
                        "fact_claims": "subject, value, fact_text", "facts": "subject, value, fact_text"}.items():
        text = frame(world.db, f"SELECT {cols} FROM {table}").write_json()
        assert not leaked(secrets, text), table
    for table, text in lance_text(world.root / "index").items():
        assert not leaked(secrets, text), table
    for node in MEMORY_NODES:
        for meta in metadata(world.chain, node):
            assert not leaked(secrets, json.dumps(meta, default=str, ensure_ascii=False)), node
    assert not leaked(secrets, json.dumps(metadata(world.profile, "profile"), default=str, ensure_ascii=False))
    assert not leaked(secrets, (world.published / "profile.json").read_text())
    assert not leaked(secrets, (world.published / "latest.json").read_text())
    # nor did any prompt sent to the LLM carry one
    assert world.llm_bodies, "the tier B/C summaries should have called the fake LLM"
    assert not leaked(secrets, json.dumps(world.llm_bodies, ensure_ascii=False))


def test_messages_preview_metadata_masks_secrets(world):
    from truffle_assets.defs.ingest.assets import _preview

    rows = frame(world.db, f"SELECT ts, author, kind, raw_text FROM messages WHERE {IN_RANGE} ORDER BY ts", params())
    planted = [s["value"] for s in world.corpus.truth["secrets"] if s["value"] in "\n".join(rows["raw_text"])]
    assert planted
    secret_rows = rows.filter(pl.col("raw_text").str.contains_any(planted))
    assert not leaked(planted, _preview(secret_rows))


# ------------------------------------------------------------------------------------ facts check


def _bad_claim(message_id: str | None) -> dict:
    day = FIRST.replace(year=2020)
    return {"id": "bad-claim", "chat_id": CHAT, "day": day, "subject": "Arjun Mehta",
            "predicate": "lives_in", "value": "Nowhere", "category": "identity",
            "fact_text": "Arjun Mehta lives in Nowhere.", "confidence": 0.99, "message_id": message_id,
            "ts": datetime.combine(day, time(10, 0)), "source": "rules"}


@pytest.mark.parametrize("message_id", ["0123456789abcdef0123", None], ids=["dangling_id", "no_evidence"])
def test_facts_check_fails_and_blocks_profile(world, tmp_path, message_id):
    root = clone_store(world, tmp_path)
    with duckdb.connect(str(root / "memory.duckdb")) as con:
        claim = pl.DataFrame([_bad_claim(message_id)], schema=dict(frame(world.db, "SELECT * FROM fact_claims LIMIT 0").schema))
        con.register("bad", claim)
        # a day outside the run's range: re-materializing `facts` keeps it and consolidates it with the rest
        con.execute("INSERT INTO fact_claims BY NAME SELECT * FROM bad")
    instance = dg.DagsterInstance.ephemeral()
    register(instance)
    res = make_resources(root, world.corpus.exports)
    result = dg.materialize([facts, profile], instance=instance, resources=res, tags=range_tags(), raise_on_error=False)
    check = next(c for c in result.get_asset_check_evaluations() if c.check_name == "facts_have_evidence")
    assert check.passed is False
    assert check.metadata["facts_without_evidence"].value + check.metadata["dangling_evidence_ids"].value >= 1
    assert result.asset_materializations_for_node("facts")  # facts itself is written
    assert result.asset_materializations_for_node("profile") == []  # the blocking check stops downstream
    assert not (root / "published" / "profile.json").exists()


def test_facts_check_passes_and_profile_follows_in_same_run(world, tmp_path):
    root = clone_store(world, tmp_path)
    instance = dg.DagsterInstance.ephemeral()
    register(instance)
    result = dg.materialize([facts, profile], instance=instance, resources=make_resources(root, world.corpus.exports),
                            tags=range_tags())
    assert result.success
    assert all(c.passed for c in result.get_asset_check_evaluations())
    assert len(result.asset_materializations_for_node("profile")) == 1
    assert json.loads((root / "published" / "profile.json").read_text())["n_facts"] > 0


# ------------------------------------------------------------------------------------ idempotency

SNAPSHOTS = {
    "messages": f"SELECT * FROM messages WHERE {IN_RANGE}",
    "message_pii": f"SELECT * FROM message_pii WHERE {IN_RANGE}",
    "message_streams": f"SELECT * FROM message_streams WHERE {IN_RANGE}",
    "episodes": f"SELECT * FROM episodes WHERE {IN_RANGE}",
    "summaries": f"SELECT * FROM summaries WHERE {IN_RANGE}",
    "llm_fact_candidates": f"SELECT * FROM llm_fact_candidates WHERE {IN_RANGE}",
    "fact_claims": f"SELECT * FROM fact_claims WHERE {IN_RANGE}",
    "rollups": "SELECT * FROM rollups WHERE chat_id = ?",
    "facts": "SELECT * FROM facts",
}


def snapshot(db: Path) -> dict[str, pl.DataFrame]:
    out = {}
    for name, sql in SNAPSHOTS.items():
        df = frame(db, sql, [CHAT] if sql.endswith("chat_id = ?") else params() if "?" in sql else None)
        out[name] = df.sort(df.columns[:3]) if df.height else df
    return out


def lance_counts(index_root: Path) -> dict[str, int]:
    db = lancedb.connect(str(index_root))
    return {n: db.open_table(n).count_rows() for n in db.list_tables().tables}


def test_rematerializing_the_month_is_idempotent_and_redoes_nothing(world):
    before = snapshot(world.db)
    assert all(before[t].height for t in ("messages", "message_pii", "message_streams", "episodes", "summaries"))
    lance_before = lance_counts(world.root / "index")
    profile_before = json.loads((world.published / "profile.json").read_text())
    world.fake.reset()
    again = dg.materialize(CHAT_MONTH_ASSETS, instance=world.instance, resources=world.resources, tags=range_tags())
    assert again.success
    after = snapshot(world.db)
    for name in SNAPSHOTS:
        assert after[name].equals(before[name]), name
    assert lance_counts(world.root / "index") == lance_before
    n_eps = before["episodes"].height
    for node in CHAIN_NODES:  # every day's digest matches: no day of the month is redone
        meta = metadata(again, node)[0]
        assert (meta["days_redone"], meta["days_kept"]) == (0, len(set(before["messages"]["day"]))), node
    assert metadata(again, "episodes")[0]["dagster/partition_row_count"] == n_eps
    assert metadata(again, "memory_index")[0]["texts_embedded"] == 0
    assert world.fake.requests == 0
    # asked to recompute, every day is redone, to the same rows, with LLM answers from the cache
    redo = dg.materialize(CHAT_MONTH_ASSETS, instance=world.instance, resources=world.resources,
                          tags=chat_range_tags(CHAT, FIRST, LAST, recompute=True))
    assert redo.success
    after = snapshot(world.db)
    for name in SNAPSHOTS:
        assert after[name].equals(before[name]), name
    meta = metadata(redo, "episodes")[0]
    assert meta["unchanged_episodes"] == n_eps and meta["days_redone"] == len(set(before["messages"]["day"]))
    assert metadata(redo, "memory_index")[0]["texts_embedded"] == 0  # vectors reused by text hash
    assert world.fake.requests == 0  # every LLM answer came from the cache
    assert metadata(redo, "summaries")[0]["llm"]["cache_hits"] > 0
    # same facts → profile content (and so its version) unchanged
    prof = dg.materialize([profile], instance=world.instance, resources=world.resources)
    doc = json.loads((world.published / "profile.json").read_text())
    assert prof.success and doc["version"] == profile_before["version"]
    assert doc["content_hash"] == profile_before["content_hash"]


def facts_with_claims(world, root: Path, claims: pl.DataFrame) -> dg.ExecuteInProcessResult:
    """`facts` and `profile` on the store copy at `root` after adding `claims` to its `fact_claims`."""
    with duckdb.connect(str(root / "memory.duckdb")) as con:
        con.register("added", claims)
        con.execute("INSERT INTO fact_claims BY NAME SELECT * FROM added")
    instance = dg.DagsterInstance.ephemeral()
    register(instance)
    return dg.materialize([facts, profile], instance=instance, resources=make_resources(root, world.corpus.exports),
                          tags=range_tags(), raise_on_error=False)


def test_two_current_values_of_a_one_at_a_time_predicate_fail_the_conflict_check(world, tmp_path):
    """The model reads a line the reader already read as another value of a one-at-a-time predicate:
    neither is newer, so both stay current and `one_value_at_a_time` fails (a warning: the profile
    still follows); a clean store passes it."""
    root = clone_store(world, tmp_path)
    single = frame(world.db, """
        SELECT * FROM fact_claims WHERE source = 'rules' AND predicate IN ('lives_in', 'employer', 'diet', 'partner')
        ORDER BY ts, id LIMIT 1""")
    assert single.height == 1, "the sample chat states a one-at-a-time fact"
    rival = single.with_columns(id=pl.lit("rival-claim"), value=pl.lit("Atlantis Dynamics Ltd"), source=pl.lit("llm"))
    result = facts_with_claims(world, root, rival)
    checks = {c.check_name: c for c in result.get_asset_check_evaluations()}
    conflict = checks["one_value_at_a_time"]
    assert conflict.passed is False and conflict.severity == dg.AssetCheckSeverity.WARN
    assert conflict.metadata["conflicts"].value == 1
    [example] = conflict.metadata["examples"].value
    assert example["predicate"] == single["predicate"][0] and "Atlantis Dynamics Ltd" in example["values"]
    assert checks["facts_have_evidence"].passed
    assert len(result.asset_materializations_for_node("profile")) == 1  # a warning does not block the profile
    assert next(c for c in world.chain.get_asset_check_evaluations() if c.check_name == "one_value_at_a_time").passed


def test_a_reader_giving_one_name_exclusive_roles_in_one_message_is_set_aside_and_reported(world, tmp_path):
    """A model's answer files one name as partner, mother and pet from one message: the claims stay in
    `fact_claims` for the audit, make no fact, and `one_role_per_person` warns with them."""
    root = clone_store(world, tmp_path)
    said = frame(world.db, "SELECT * FROM fact_claims WHERE source = 'rules' ORDER BY ts, id LIMIT 1")
    roles = ("partner", "mother", "pet")
    rows = pl.concat([said.with_columns(id=pl.lit(f"model-{p}"), predicate=pl.lit(p), value=pl.lit("Zubin Quorra"),
                                        category=pl.lit("relationship"), source=pl.lit("llm")) for p in roles])
    result = facts_with_claims(world, root, rows)
    check = next(c for c in result.get_asset_check_evaluations() if c.check_name == "one_role_per_person")
    assert check.passed is False and check.severity == dg.AssetCheckSeverity.WARN
    assert check.metadata["claims_set_aside"].value == 3
    [example] = check.metadata["examples"].value
    assert example["roles"] == sorted(roles) and example["message_id"] == said["message_id"][0]
    kept = frame(root / "memory.duckdb", "SELECT count(*) AS n FROM fact_claims WHERE value = 'Zubin Quorra'")
    made = frame(root / "memory.duckdb", "SELECT count(*) AS n FROM facts WHERE value = 'Zubin Quorra'")
    assert (kept["n"][0], made["n"][0]) == (3, 0)
    assert "Zubin Quorra" not in (root / "published" / "profile.json").read_text()
    assert next(c for c in world.chain.get_asset_check_evaluations() if c.check_name == "one_role_per_person").passed
