import json

import numpy as np
import polars as pl
import pytest

from truffle_assets.index import RAW_TABLE, SUMMARY_TABLE, Embedder, MemoryIndex, raw_rows_from, summary_rows_from
from truffle_assets_tests.index.memory_fixtures import D1, D2, D3, contract_frames, summary_frame


def _rows():
    messages, streams, episodes = contract_frames()
    return raw_rows_from(messages, streams, episodes), summary_rows_from(summary_frame(), episodes)


def _load(idx: MemoryIndex, raw: pl.DataFrame | None = None) -> None:
    """Both chats' partitions; `raw` in place of the fixture's message rows."""
    fixture, summ = _rows()
    raw = fixture if raw is None else raw
    for chat, days in (("alice", [D1, D2]), ("bob", [D3])):
        idx.upsert_partitions(chat, days, raw.filter(pl.col("chat_id") == chat),
                              summ.filter(pl.col("chat_id") == chat))


def test_raw_rows_skip_system_and_media_and_carry_episode():
    raw, summ = _rows()
    assert set(raw["message_id"]) == {"a1", "a2", "a4", "a5", "a6", "a7", "b1", "b2"}  # no a0 system, no a3 media
    row = raw.filter(pl.col("message_id") == "a4").row(0, named=True)
    assert row["episode_id"] == "e1" and row["salience"] == 0.8
    assert summ.row(0, named=True)["message_ids"] == ["a5", "a6", "a7"]


def test_upsert_idempotent_and_reuses_vectors(tmp_path, embedder):
    idx = MemoryIndex(tmp_path / "idx", embedder)
    _load(idx)
    raw, summ = _rows()
    counts = (idx.table(RAW_TABLE).count_rows(), idx.table(SUMMARY_TABLE).count_rows())
    assert counts == (8, 1)
    again = idx.upsert_partitions("alice", [D1, D2], raw.filter(pl.col("chat_id") == "alice"),
                                  summ.filter(pl.col("chat_id") == "alice"))
    assert (idx.table(RAW_TABLE).count_rows(), idx.table(SUMMARY_TABLE).count_rows()) == counts
    assert again[RAW_TABLE] == {"deleted": 6, "added": 6, "embedded": 0, "dropped_messages": 0}  # unchanged texts: no re-embedding
    assert again[SUMMARY_TABLE]["embedded"] == 0
    unloaded = Embedder()  # a new process's: rewriting stored texts never loads the model
    MemoryIndex(tmp_path / "idx", unloaded).upsert_partitions("bob", [D3], raw.filter(pl.col("chat_id") == "bob"))
    assert unloaded._model is None


def test_delete_by_partition_leaves_other_days(tmp_path, embedder):
    idx = MemoryIndex(tmp_path / "idx", embedder)
    _load(idx)
    raw, _ = _rows()
    day1 = raw.filter(pl.col("day") == D1).with_columns(
        pl.when(pl.col("message_id") == "a4").then(pl.lit("My cat Miso is fine now")).otherwise(pl.col("text")).alias("text"))
    out = idx.upsert_partitions("alice", [D1], day1, pl.DataFrame())
    assert out[RAW_TABLE]["embedded"] == 1  # only the edited line
    tbl = idx.table(RAW_TABLE)
    assert tbl.count_rows("day = CAST('2023-05-08' AS DATE)") == 3  # D2 untouched
    assert tbl.count_rows("chat_id = 'bob'") == 2
    assert idx.table(SUMMARY_TABLE).count_rows() == 1  # D2's summary untouched by a D1 rewrite
    idx.upsert_partitions("alice", [D2], pl.DataFrame(), pl.DataFrame())  # empty partition = delete
    assert tbl.count_rows("chat_id = 'alice'") == 3 and idx.table(SUMMARY_TABLE).count_rows() == 0
    with pytest.raises(ValueError):  # a writer may only touch the partitions it names
        idx.upsert_partitions("alice", [D1], raw.filter(pl.col("chat_id") == "bob"), pl.DataFrame())


def test_a_repeated_line_is_embedded_once_and_a_line_stored_in_another_chat_not_again(tmp_path, embedder):
    idx = MemoryIndex(tmp_path / "idx", embedder)
    raw, _ = _rows()
    alice = raw.filter(pl.col("chat_id") == "alice")
    assert idx.upsert_partitions("alice", [D1, D2], alice)[RAW_TABLE]["embedded"] == 6
    bob = raw.filter(pl.col("chat_id") == "bob")
    same = alice.filter(pl.col("message_id") == "a2").with_columns(pl.lit("bob").alias("chat_id"), pl.lit(D3).alias("day"))
    twice = bob.filter(pl.col("message_id") == "b2").with_columns(pl.lit("b3").alias("message_id"))
    repeats = pl.concat([bob, twice, same.with_columns(pl.lit("b4").alias("message_id"))])
    out = idx.upsert_partitions("bob", [D3], repeats)
    assert out[RAW_TABLE] == {"deleted": 0, "added": 4, "embedded": 2, "dropped_messages": 0}  # b1 and b2 only
    rows = {r["message_id"]: r for r in idx.table(RAW_TABLE).to_arrow().select(["message_id", "passage", "vector"]).to_pylist()}
    assert rows["b4"]["passage"] == rows["a2"]["passage"] == "Arjun: That's wonderful, proud of you"
    assert rows["b4"]["vector"] == rows["a2"]["vector"] and rows["b3"]["vector"] == rows["b2"]["vector"]
    fresh = embedder.encode([rows["b2"]["passage"], rows["a2"]["passage"]])
    assert np.allclose(rows["b3"]["vector"], fresh[0], atol=1e-5) and np.allclose(rows["b4"]["vector"], fresh[1], atol=1e-5)


def test_refresh_publish_and_pinned_reader(tmp_path, embedder):
    idx = MemoryIndex(tmp_path / "idx", embedder)
    _load(idx)
    info = idx.refresh_indexes()
    assert info[RAW_TABLE]["fts_column"] == "passage" and not info[RAW_TABLE]["vector_index"]
    assert any(i.index_type == "FTS" for i in idx.table(RAW_TABLE).list_indices())
    btrees = {(name, tuple(i.columns)) for name in (RAW_TABLE, SUMMARY_TABLE)
              for i in idx.table(name).list_indices() if i.index_type == "BTree"}
    assert btrees == {(RAW_TABLE, ("message_id",)), (RAW_TABLE, ("episode_id",)), (SUMMARY_TABLE, ("episode_id",))}
    assert idx.table(RAW_TABLE).search().where("message_id IN ('a1', 'b1')").limit(None).to_arrow().num_rows == 2
    pointer = idx.publish()
    on_disk = json.loads((tmp_path / "idx" / "latest.json").read_text())
    assert on_disk["tables"] == pointer["tables"] and on_disk["rows"] == {RAW_TABLE: 8, SUMMARY_TABLE: 1}
    assert on_disk["watermarks"] == {"alice": "2023-05-08T18:03:00", "bob": "2023-05-09T10:01:00"}
    assert on_disk["embedding_model"] and on_disk["published_at"]
    # a write after publish: the writer sees it, a reader at the published version does not
    raw, _ = _rows()
    extra = raw.filter(pl.col("message_id") == "b1").with_columns(pl.lit("b9").alias("message_id"),
                                                                   pl.lit("New budget line").alias("text"))
    idx.upsert_partitions("bob", [D3], pl.concat([raw.filter(pl.col("chat_id") == "bob"), extra]), pl.DataFrame())
    assert idx.table(RAW_TABLE).count_rows() == 9
    reader = MemoryIndex.open(tmp_path / "idx", embedder)
    assert reader.table(RAW_TABLE).count_rows() == 8
    assert reader.table_versions() == pointer["tables"]
    with pytest.raises(RuntimeError):
        reader.upsert_partitions("bob", [D3], pl.DataFrame(), pl.DataFrame())


def test_refresh_folds_new_rows_into_the_indexes_it_built_once(tmp_path, embedder):
    idx = MemoryIndex(tmp_path / "idx", embedder)
    raw, summ = _rows()
    idx.upsert_partitions("alice", [D1, D2], raw.filter(pl.col("chat_id") == "alice"), summ)
    idx.refresh_indexes()
    built = {i.name for i in idx.table(RAW_TABLE).list_indices()}
    idx.upsert_partitions("bob", [D3], raw.filter(pl.col("chat_id") == "bob"), pl.DataFrame())
    word = max(raw.filter(pl.col("chat_id") == "bob")["text"][0].split(), key=len).strip(".,!?")
    idx.refresh_indexes()
    tbl = idx.table(RAW_TABLE)
    assert {i.name for i in tbl.list_indices()} == set(built)
    assert all(tbl.index_stats(name).num_unindexed_rows == 0 for name in built)  # bob's rows are in every index
    hits = tbl.search(word, query_type="fts").limit(10).to_arrow()["chat_id"].to_pylist()
    assert "bob" in hits, word


def test_a_table_written_before_shown_text_gets_it_when_its_days_are_rewritten(tmp_path, embedder):
    """`shown_text` (the redacted raw text the runtime shows) rides beside the search text: an old
    table gets the column on its next write, the rewritten days fill it without re-embedding
    (vectors key on the embedded search text), the days not rewritten stay null until theirs."""
    messages, streams, episodes = contract_frames()
    idx = MemoryIndex(tmp_path / "idx", embedder)
    _load(idx)
    idx.table(RAW_TABLE).drop_columns(["shown_text"])  # what a table from before the column holds
    idx = MemoryIndex(tmp_path / "idx", embedder)
    assert "shown_text" not in idx.table(RAW_TABLE).schema.names
    pii = messages.select("id", (pl.col("raw_text") + " 🐱").alias("redacted_text"))  # as written: emoji kept
    alice = raw_rows_from(messages, streams, episodes, pii).filter(pl.col("chat_id") == "alice")
    out = idx.upsert_partitions("alice", [D1, D2], alice)
    assert out[RAW_TABLE]["embedded"] == 0 and out[RAW_TABLE]["added"] == 6
    rows = pl.from_arrow(idx.table(RAW_TABLE).to_arrow())
    shown = dict(zip(rows["message_id"], rows["shown_text"]))
    assert shown["a4"] == "My cat Miso knocked over the plant again 🐱"
    assert shown["b1"] is None and shown["b2"] is None  # bob's day was not rewritten
    texts = dict(zip(rows["message_id"], rows["text"]))
    assert texts["a4"] == "My cat Miso knocked over the plant again"  # search text unchanged
    assert raw_rows_from(messages, streams, episodes)["shown_text"].null_count() == 8  # no pii frame: null


def test_a_hinglish_line_is_searchable_by_its_english_gloss(tmp_path, embedder):
    raw, _ = _rows()
    raw = raw.with_columns(pl.when(pl.col("message_id") == "a4").then(pl.lit("Pune shift ho gayi finally"))
                           .otherwise(pl.col("text")).alias("text"))
    for gloss_passages in (True, False):
        idx = MemoryIndex(tmp_path / f"idx-{gloss_passages}", embedder, gloss_passages=gloss_passages)
        _load(idx, raw)
        tbl = idx.table(RAW_TABLE)
        rows = {r["message_id"]: r for r in tbl.to_arrow().select(["message_id", "passage", "text"]).to_pylist()}
        passages = {m: r["passage"] for m, r in rows.items()}
        hits = [r["message_id"] for r in tbl.search("moved", query_type="fts", fts_columns="passage")
                .select(["message_id"]).limit(5).to_list()]
        if gloss_passages:
            # the English clause joins the passage (what BM25 and the embedder read); the text stays as written
            assert passages["a4"].endswith("Pune shift ho gayi finally | I moved to Pune.")
            assert hits == ["a4"]
            assert rows["a4"]["text"] == "Pune shift ho gayi finally"
        else:
            assert "|" not in passages["a4"] and hits == []
        # English lines have no gloss either way
        assert "|" not in passages["a1"]
