"""Retention logic: old day files, retrieval traces and the dataset rows made from pruned turns go;
what is inside the window, the synthetic pack and files that are not day files stay."""

from __future__ import annotations

from datetime import date, timedelta

import duckdb

from truffle_assets.feedback.retention import cutoff_for, prune_retrieval_log, prune_store, retrieval_log_paths
from truffle_assets.feedback.turns import append_feedback, load_turns, write_turn
from truffle_assets.retrieval.log import RetrievalLog
from truffle_assets.training.datasets import build_datasets, check_manifest, prune_datasets, read_jsonl, write_dataset
from truffle_assets_tests.training.test_datasets import sft_pack_row

TODAY = date(2026, 11, 24)
OLD, NEW = TODAY - timedelta(days=91), TODAY - timedelta(days=90)  # 90 days: NEW is the first day kept
SYSTEM = {"role": "system", "content": "memory"}


def _turn(store, tid, day, answer, rating=None, **kw):
    write_turn(store, tid, "c1", messages=[SYSTEM, {"role": "user", "content": f"question {tid}"}], answer=answer,
               ts=f"{day}T09:00:00+00:00", model="qwen", **kw)
    if rating is not None:
        append_feedback(store, tid, rating, ts=f"{day}T09:05:00+00:00")


def _store(tmp_path):
    store = tmp_path / "runtime"
    _turn(store, "old-a", OLD, "An old good answer.", rating=1)
    _turn(store, "old-b", OLD, "An old bad answer.", rating=-1)
    _turn(store, "new-c", NEW, "A better answer, regenerated.", rating=1, reroll_of="old-b")
    _turn(store, "new-d", NEW, "A recent answer.")
    (store / "turns" / "notes.jsonl").write_text("not a day file\n")
    (store / "settings.json").write_text('{"transcripts": true}')
    return store


def test_cutoff_is_the_first_day_kept():
    assert cutoff_for(90, TODAY) == NEW and cutoff_for(1, TODAY) == TODAY - timedelta(days=1)


def test_prune_store_deletes_old_day_files_and_counts_records(tmp_path):
    store = _store(tmp_path)
    report = prune_store(store, 90, TODAY)
    assert report.cutoff == NEW and report.days_removed == [OLD.isoformat()]
    assert report.days == {s: [OLD.isoformat()] for s in ("turns", "content", "feedback")}
    assert report.records == {"turns": 2, "content": 2, "feedback": 2}
    assert sorted(p.parent.name for p in report.deleted) == ["content", "feedback", "turns"]
    assert {t.turn_id for t in load_turns(store)} == {"new-c", "new-d"}
    assert (store / "turns" / "notes.jsonl").exists() and (store / "settings.json").exists()
    again = prune_store(store, 90, TODAY)
    assert again.deleted == [] and again.records == {"turns": 0, "content": 0, "feedback": 0}


def test_prune_datasets_drops_rows_of_pruned_turns_only(tmp_path):
    store = _store(tmp_path)
    pack = [sft_pack_row(n) for n in range(3)]
    build = build_datasets(load_turns(store), pack, [])
    out = {"sft": tmp_path / "training" / "sft", "dpo": tmp_path / "training" / "dpo"}
    write_dataset(build.sft_rows, out["sft"], "sft", {"source_date_range": [OLD.isoformat(), NEW.isoformat()]})
    write_dataset(build.dpo_rows, out["dpo"], "dpo")
    assert {r["source_id"] for r in build.dpo_rows} == {"new-c>old-b"}  # a pair across the window

    unchanged = prune_datasets(out, store)  # nothing pruned yet: nothing rewritten
    assert {k: (p.rows_removed, p.manifest) for k, p in unchanged.items()} == {"sft": (0, None), "dpo": (0, None)}

    prune_store(store, 90, TODAY)
    result = prune_datasets(out, store)
    assert (result["sft"].rows_removed, result["dpo"].rows_removed) == (1, 1)
    sft = {r["source_id"] for s in ("train", "eval") for r in read_jsonl(out["sft"] / f"{s}.jsonl")}
    assert sft == {"new-c", "new-d"} | {r["source_id"] for r in pack}
    manifest = check_manifest(out["sft"])  # the rewrite is a valid dataset the trainer accepts
    assert manifest.row_counts.train + manifest.row_counts.eval == 5
    assert manifest.source_date_range == (NEW.isoformat(), NEW.isoformat())
    dropped = getattr(manifest, "dropped", None) or manifest.extra["dropped"]
    assert dropped["retention"] == 1
    dpo = check_manifest(out["dpo"])
    assert dpo.row_counts.train + dpo.row_counts.eval == 0
    assert prune_datasets({"missing": tmp_path / "nowhere"}, store) == {}


def test_prune_retrieval_logs_in_both_places(tmp_path):
    store = tmp_path / "data" / "runtime"
    store.mkdir(parents=True)
    paths = retrieval_log_paths(store)
    assert paths == [store / "retrieval.duckdb", tmp_path / "data" / "runtime.duckdb"]
    for p in paths:
        log = RetrievalLog(p)
        for q in ("an old question about the flat", "a new question"):
            assert log.write(query=q, params={}, item_ids=["m1"], scores=[1.0], uncertain=[False], latency_ms=1.0,
                             timing={}, index_versions={})
        with duckdb.connect(str(p)) as con:
            con.execute("UPDATE retrieval_logs SET logged_at = TIMESTAMP '2026-08-01 12:00:00' WHERE query LIKE 'an old%'")
    assert prune_retrieval_log(store, NEW) == 2
    for p in paths:
        with duckdb.connect(str(p), read_only=True) as con:
            assert con.execute("SELECT query FROM retrieval_logs").fetchall() == [("a new question",)]
        assert b"old question" not in p.read_bytes()  # rewritten, not just marked deleted
    assert prune_retrieval_log(store, NEW) == 0
    assert prune_retrieval_log(tmp_path / "elsewhere" / "runtime", NEW) == 0  # no log: nothing created
    assert not (tmp_path / "elsewhere").exists()
