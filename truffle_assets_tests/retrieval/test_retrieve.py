import subprocess
import sys
import time
from datetime import datetime

import duckdb
import polars as pl
import pytest

from truffle_assets.index import MemoryIndex, raw_rows_from, summary_rows_from
from truffle_assets.retrieval import RetrievalLog, RetrievalWeights, retrieve, retrieve_baseline
from truffle_assets_tests.index.memory_fixtures import D1, D2, D3, contract_frames, summary_frame


@pytest.fixture(scope="module")
def index(tmp_path_factory, embedder) -> MemoryIndex:
    root = tmp_path_factory.mktemp("mem") / "idx"
    idx = MemoryIndex(root, embedder)
    messages, streams, episodes = contract_frames()
    raw, summ = raw_rows_from(messages, streams, episodes), summary_rows_from(summary_frame(), episodes)
    for chat, days in (("alice", [D1, D2]), ("bob", [D3])):
        idx.upsert_partitions(chat, days, raw.filter(pl.col("chat_id") == chat), summ.filter(pl.col("chat_id") == chat))
    idx.refresh_indexes()
    idx.publish()
    return MemoryIndex.open(root, embedder)  # the published, pinned reader


def test_bm25_baseline_returns_lexical_hits(index):
    pack = retrieve_baseline("quarterly budget spreadsheet", index, k=3, mode="bm25")
    assert pack.message_ids[0] == "b1" and pack.items[0].components.lexical > 0


def test_dense_baseline_finds_paraphrase(index):
    pack = retrieve_baseline("my kitten broke a flowerpot", index, k=2, mode="dense")
    assert pack.message_ids[0] == "a4"  # no shared content word: only the embedding can find it


def test_fusion_items_carry_every_component(index):
    pack = retrieve("When did Alice go to the LGBTQ support group?", index, k=5, now=datetime(2023, 6, 1))
    top = pack.items[0]
    assert top.message_id == "a1" and top.via == "raw" and not top.uncertain
    c = top.components
    assert c.semantic > 0.4 and c.lexical == 1.0 and c.speaker == 1.0 and c.salience == 0.8
    assert 0 < c.recency < 1 and c.context > 0 and c.asks == 0.0  # a statement: not docked
    assert len(set(pack.message_ids)) == len(pack.items)  # deduped by message id
    assert {"embed", "dense", "bm25", "fuse", "total"} <= set(pack.timing_ms)
    assert pack.index_versions == index.pointer["tables"] and pack.watermarks["bob"].startswith("2023-05-09")


def test_summary_hit_expands_to_its_messages(index):
    q = "Is Alice planning to grow her family with children?"
    narrow = RetrievalWeights(candidates=1)  # raw signals return one row each: only expansion adds more
    pack = retrieve(q, index, k=10, chats=["alice"], weights=narrow)
    assert pack.summaries and pack.summaries[0].episode_id == "e2" and pack.summaries[0].evidence_message_ids == ["a7"]
    via_summary = {i.message_id: i for i in pack.items if i.via == "summary"}
    assert via_summary and set(via_summary) <= {"a5", "a6", "a7"}
    assert all(i.components.summary > 0 for i in via_summary.values())
    plain = retrieve(q, index, k=10, chats=["alice"], weights=narrow, expand=False)
    assert not any(i.via == "summary" for i in plain.items)


def test_chat_and_time_filters(index):
    pack = retrieve("budget numbers and the pasta recipe", index, k=10, chats=["bob"])
    assert pack.items and {i.chat_id for i in pack.items} == {"bob"}
    window = retrieve("what happened", index, k=10, since=datetime(2023, 5, 8), until=datetime(2023, 5, 8, 23, 59))
    assert window.items and {i.message_id for i in window.items} <= {"a5", "a6", "a7"}
    assert all(s.chat_id == "alice" for s in window.summaries)


def test_retrieval_log_rows_and_failures_never_break(index, tmp_path):
    log = RetrievalLog(tmp_path / "logs.duckdb")
    pack = retrieve("Miso the cat", index, k=3, log=log)
    with duckdb.connect(str(tmp_path / "logs.duckdb"), read_only=True) as con:
        row = con.execute("SELECT query, item_ids, latency_ms, len(scores) FROM retrieval_logs").fetchall()
    assert row[0][0] == "Miso the cat" and row[0][1] == pack.message_ids and row[0][3] == len(pack.items)

    missing = RetrievalLog(tmp_path / "no" / "such" / "dir" / "logs.duckdb")
    assert retrieve("Miso the cat", index, k=3, log=missing).items and missing.failures == 1

    # another process holds the write lock on the log file
    locked = tmp_path / "locked.duckdb"
    holder = subprocess.Popen([sys.executable, "-c", "import duckdb, sys, time; c = duckdb.connect(sys.argv[1]); "
                               "print('ready', flush=True); time.sleep(60)", str(locked)], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "ready"
        busy = RetrievalLog(locked)
        t = time.perf_counter()
        assert retrieve("Miso the cat", index, k=3, log=busy).items
        # waited at most lock_wait_s, then kept the trace in the spool instead of losing it
        assert busy.failures == 0 and busy.spooled == 1 and time.perf_counter() - t < 10
    finally:
        holder.kill()
        holder.wait()
    assert busy.flush() == 1
    with duckdb.connect(str(locked), read_only=True) as con:
        assert con.execute("SELECT query FROM retrieval_logs").fetchall() == [("Miso the cat",)]


def test_bm25_neighbours_join_the_pool(index):
    narrow = RetrievalWeights(candidates=1)  # one dense and one BM25 hit (a6): the rest comes from spreading
    pack = retrieve("garlic pasta recipe", index, k=10, chats=["alice"], weights=narrow, expand=False)
    lexical = {i.message_id: i.components.lexical for i in pack.items}
    assert lexical == {"a6": 1.0, "a5": 0.3, "a7": 0.3} and pack.message_ids[0] == "a6"
    assert all(i.via == "raw" for i in pack.items)
    off = retrieve("garlic pasta recipe", index, k=10, chats=["alice"], expand=False,
                   weights=narrow.model_copy(update={"lexical_neighbours": 0.0}))
    assert off.message_ids == ["a6"]


def test_off_topic_query_is_flagged_uncertain(index):
    pack = retrieve("quantum chromodynamics on a lattice", index, k=5)
    assert pack.items and all(i.uncertain for i in pack.items)
    assert all(i.components.semantic < 0.4 and i.components.lexical == 0 for i in pack.items)
    sure = retrieve("garlic pasta recipe", index, k=5)
    assert sure.items[0].message_id == "a6" and not sure.items[0].uncertain
