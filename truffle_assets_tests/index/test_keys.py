"""Retrieval keys: entities and answer tags per message (spaCy NER, the pinned small model), the
`keys` column and its BM25 index in the real LanceDB table, and the wh-word -> tag rules."""

import polars as pl

from truffle_assets.index import RAW_TABLE, MemoryIndex, raw_rows_from
from truffle_assets.index.keys import TAGS, message_keys, tags_of, wanted_tags
from truffle_assets_tests.index.memory_fixtures import D1, D2, contract_frames


def test_message_keys_hold_entities_and_answer_tags():
    keys = message_keys(["I moved to Paris in 2021 with 3 friends", "ok sure", "",
                         "We went camping last weekend"])
    assert set(keys[0].split()) >= {"paris", "kplace", "2021", "kdate", "knumber"}
    assert keys[1] == "" and keys[2] == ""  # nothing named, nothing kept
    assert "kdate" in keys[3].split()  # the time rule covers what the small NER misses
    assert tags_of(keys[0]) == {"kplace", "kdate", "knumber"} and tags_of(None) == set()


def test_wanted_tags_follow_the_question_wording():
    assert wanted_tags("When did Caroline go to the support group?") == ["kdate"]
    assert wanted_tags("Where has Melanie camped?") == ["kplace"]
    assert wanted_tags("How many children does Melanie have?") == ["knumber"]
    assert wanted_tags("Which books has she read?") == ["kwork"]
    assert wanted_tags("What did Melanie paint?") == []
    assert set(wanted_tags("Who went where, and when?")) == {"kdate", "kplace", "kperson"}
    assert set(TAGS) >= {t for q in ("when", "where", "who", "how many", "how much") for t in wanted_tags(q)}


def test_index_stores_keys_searchable_and_reused_for_unchanged_text(tmp_path, embedder):
    messages, streams, episodes = contract_frames()
    raw = raw_rows_from(messages, streams, episodes).filter(pl.col("chat_id") == "alice")
    idx = MemoryIndex(tmp_path / "idx", embedder, entity_keys=True)
    idx.upsert_partitions("alice", [D1, D2], raw)
    idx.refresh_indexes()
    tbl = idx.table(RAW_TABLE)
    assert ("keys",) in {tuple(i.columns) for i in tbl.list_indices() if i.index_type == "FTS"}
    keys = dict(zip(*tbl.search().select(["message_id", "keys"]).limit(None).to_arrow().to_pydict().values()))
    assert "kdate" in keys["a1"].split()  # "... yesterday"
    hits = tbl.search("kdate", query_type="fts", fts_columns="keys").select(["message_id"]).limit(10).to_arrow()
    assert "a1" in hits["message_id"].to_pylist() and "a6" not in hits["message_id"].to_pylist()
    # rewriting the same days with one edited line: its keys follow the new text, the others are kept
    edited = raw.with_columns(pl.when(pl.col("message_id") == "a6").then(pl.lit("Send me the recipe from Rome"))
                              .otherwise(pl.col("text")).alias("text"))
    idx.upsert_partitions("alice", [D1, D2], edited)
    keys2 = dict(zip(*idx.table(RAW_TABLE).search().select(["message_id", "keys"]).limit(None).to_arrow().to_pydict().values()))
    assert "rome" in keys2["a6"].split() and keys2["a1"] == keys["a1"]


def test_table_written_before_keys_gains_the_column(tmp_path, embedder):
    """An index from before the keys column: the next write adds it (then fills it for its rows)."""
    import lancedb

    from truffle_assets.index.lance import raw_schema

    messages, streams, episodes = contract_frames()
    raw = raw_rows_from(messages, streams, episodes)
    old = raw_schema(embedder.dim)
    old = old.remove(old.get_field_index("keys"))
    lancedb.connect(str(tmp_path / "idx")).create_table(RAW_TABLE, schema=old)
    idx = MemoryIndex(tmp_path / "idx", embedder, entity_keys=True)
    idx.upsert_partitions("bob", [raw.filter(pl.col("chat_id") == "bob")["day"][0]], raw.filter(pl.col("chat_id") == "bob"))
    tbl = idx.table(RAW_TABLE)
    assert "keys" in tbl.schema.names and tbl.count_rows() == 2
    keys = tbl.search().select(["keys"]).limit(None).to_arrow()["keys"].to_pylist()
    assert all(k is not None for k in keys)
