"""`summaries` against a misbehaving LLM endpoint (a real local HTTP server): the run always succeeds,
every episode keeps its extractive tier-A summary, and tiers B/C fall back instead of being lost."""

from __future__ import annotations

import time

import dagster as dg
import polars as pl
import pytest

from truffle_assets.defs.memory.assets import summaries
from truffle_assets.defs.partitions import chat_range_tags
from truffle_assets.defs.resources import LLMResource
from truffle_assets_tests.defs.conftest import (
    CHAT, FIRST, LAST, clone_store, frame, make_resources, llm_resource, register,
)
from truffle_assets_tests.fake_llm import FakeLLM, closed_port_url

# every episode reaches tier B, the more salient ones C (which also asks for facts)
RUN_CONFIG = {"ops": {"summaries": {"config": {"tier_b": 0.0, "tier_c": 0.5}}}}
MAX_SECONDS = 20.0  # timeout 1 s, 1 retry, breaker: a bad endpoint must not stall the run


@pytest.fixture(scope="module")
def fake():
    with FakeLLM(mode="ok", delay_s=2.5) as f:
        yield f


@pytest.fixture(scope="module")
def instance():
    inst = dg.DagsterInstance.ephemeral()
    register(inst)
    return inst


def run_summaries(world, instance, root, base_url, recompute: bool = False):
    res = make_resources(root, world.corpus.exports, llm_resource(base_url, root / "llm-cache"))
    t0 = time.perf_counter()
    result = dg.materialize([summaries], instance=instance, resources=res, run_config=RUN_CONFIG, raise_on_error=False,
                            tags=chat_range_tags(CHAT, FIRST, LAST, recompute=recompute))
    return result, time.perf_counter() - t0


def stored(root):
    db = root / "memory.duckdb"
    p = [CHAT, FIRST, LAST]
    eps = frame(db, "SELECT id, message_ids, salience FROM episodes WHERE chat_id = ? AND day BETWEEN ? AND ?", p)
    summ = frame(db, "SELECT * FROM summaries WHERE chat_id = ? AND day BETWEEN ? AND ?", p)
    cands = frame(db, "SELECT * FROM llm_fact_candidates WHERE chat_id = ? AND day BETWEEN ? AND ?", p)
    return eps, summ, cands


def assert_no_partition_lost(eps: pl.DataFrame, summ: pl.DataFrame) -> pl.DataFrame:
    assert eps.height > 0
    a = summ.filter(pl.col("tier") == "A")
    assert sorted(a["episode_id"]) == sorted(eps["id"]) and set(a["source"]) == {"extractive"}
    bc = summ.filter(pl.col("tier") != "A")
    assert sorted(bc["episode_id"]) == sorted(eps["id"])  # tier_b = 0: every episode has a B or C row
    assert set(bc["tier"]) == {"B", "C"}, "run config should give both tiers"
    ids = dict(zip(eps["id"], eps["message_ids"].to_list()))
    for row in summ.iter_rows(named=True):
        assert row["text"].strip()
        assert row["evidence_message_ids"] and set(row["evidence_message_ids"]) <= set(ids[row["episode_id"]])
    return bc


@pytest.mark.parametrize("mode", ["invalid_json", "slow", "http500", "down"])
def test_failing_endpoint_falls_back_without_losing_partitions(world, instance, fake, tmp_path, mode):
    root = clone_store(world, tmp_path)
    fake.mode = "ok" if mode == "down" else mode
    fake.reset()
    url = closed_port_url() if mode == "down" else fake.base_url
    result, seconds = run_summaries(world, instance, root, url)
    assert result.success, mode
    assert seconds < MAX_SECONDS, f"{mode}: {seconds:.1f}s"
    eps, summ, cands = stored(root)
    bc = assert_no_partition_lost(eps, summ)
    assert set(bc["source"]) == {"fallback"} and bc["model"].null_count() == bc.height
    assert cands.height == 0  # no LLM claims from failed calls
    meta = result.asset_materializations_for_node("summaries")[0].metadata
    # every call fell back: the tier B/C ones and the routed fact reads of the episodes tier C did not cover
    reads = meta["llm_fact_reads"].value
    assert reads["answered"] == 0 and reads["batches"] >= 1
    assert meta["llm"].value["fallbacks"] == bc.height + reads["batches"]
    assert meta["tiers"].value == {"A/extractive": eps.height, **{
        f"{t}/fallback": n for t, n in bc.group_by("tier").len().iter_rows()}}
    if mode == "down":
        assert fake.requests == 0
    else:
        assert fake.requests > 0


def test_garbage_evidence_ids_are_replaced_and_llm_claims_dropped(world, instance, fake, tmp_path):
    root = clone_store(world, tmp_path)
    fake.mode = "garbage_ids"
    fake.reset()
    result, seconds = run_summaries(world, instance, root, fake.base_url)
    assert result.success and seconds < MAX_SECONDS
    eps, summ, cands = stored(root)
    bc = assert_no_partition_lost(eps, summ)  # also: evidence ⊆ the episode's own message ids
    # the text is a valid answer, only its citations are invented: kept as 'llm', cited as the whole episode
    assert set(bc["source"]) == {"llm"}
    ids = dict(zip(eps["id"], eps["message_ids"].to_list()))
    for row in bc.iter_rows(named=True):
        assert row["evidence_message_ids"] == ids[row["episode_id"]]
    assert cands.height == 0  # facts citing unknown ids never become claims


def test_ok_endpoint_summarizes_and_second_run_hits_the_cache(world, instance, fake, tmp_path):
    root = clone_store(world, tmp_path)
    fake.mode = "ok"
    fake.reset()
    first, _ = run_summaries(world, instance, root, fake.base_url)
    assert first.success
    eps, summ, cands = stored(root)
    bc = assert_no_partition_lost(eps, summ)
    assert set(bc["source"]) == {"llm"} and set(bc["model"]) == {b["model"] for b in fake.bodies}  # the model asked for
    assert fake.requests == bc.height
    assert cands.height > 0 and set(cands["source"]) == {"llm"}  # tier C asked for facts
    assert set(cands["message_id"]) <= set(frame(root / "memory.duckdb", "SELECT id FROM messages")["id"])

    fake.reset()
    same, _ = run_summaries(world, instance, root, fake.base_url)  # same inputs and settings: nothing redone
    assert same.success and fake.requests == 0
    assert same.asset_materializations_for_node("summaries")[0].metadata["days_redone"].value == 0
    second, _ = run_summaries(world, instance, root, fake.base_url, recompute=True)
    assert second.success
    assert fake.requests == 0
    assert second.asset_materializations_for_node("summaries")[0].metadata["llm"].value["cache_hits"] == bc.height
    _, summ2, cands2 = stored(root)
    key = ["episode_id", "tier"]
    assert summ2.sort(key).equals(summ.sort(key)) and cands2.sort("id").equals(cands.sort("id"))


def log_lines(instance, result) -> list[str]:
    return [e.user_message or "" for e in instance.all_logs(result.run_id)]


ROUTED_ONLY = {"ops": {"summaries": {"config": {"tier_b": 0.99, "tier_c": 0.995}}}}  # no episode is that salient


def test_routed_fact_reads_are_planned_logged_cached_and_budgeted(world, instance, fake, tmp_path):
    root = clone_store(world, tmp_path)
    fake.mode = "ok"
    fake.reset()

    def run(resource, recompute=False):
        res = make_resources(root, world.corpus.exports, resource)
        return dg.materialize([summaries], instance=instance, resources=res, run_config=ROUTED_ONLY,
                              tags=chat_range_tags(CHAT, FIRST, LAST, recompute=recompute))

    first = run(llm_resource(fake.base_url, root / "llm-cache"))
    meta = first.asset_materializations_for_node("summaries")[0].metadata
    plan, reads = meta["llm_plan"].value, meta["llm_fact_reads"].value
    # no summary reached tier B: every request is a routed fact read, as many as the plan said
    assert plan["summary_calls"] == 0 and plan["fact_calls"] == reads["batches"] == fake.requests > 0
    assert reads["answered"] == reads["episodes"] == plan["routed_episodes"]
    assert 0 < plan["transcript_tokens"] < plan["corpus_tokens"]
    logged = [m for m in log_lines(instance, first) if "LLM work for this run" in m]
    assert logged and f"about {plan['calls']} LLM calls" in logged[0]
    _, summ, cands = stored(root)
    assert set(summ["source"]) == {"extractive"}  # summaries stay salience-gated
    assert cands.height > 0 and set(cands["source"]) == {"llm"}
    eps = frame(root / "memory.duckdb", "SELECT id, message_ids FROM episodes WHERE chat_id = ?", [CHAT])
    assert set(cands["message_id"]) <= {m for ids in eps["message_ids"] for m in ids}

    fake.reset()  # the same episodes again: every read comes from the cache
    again = run(llm_resource(fake.base_url, root / "llm-cache"), recompute=True)
    assert fake.requests == 0
    assert again.asset_materializations_for_node("summaries")[0].metadata["llm_fact_reads"].value["cached"] == \
        reads["episodes"]

    fake.reset()  # a fresh cache under a budget smaller than the plan: the budget stops the reads
    tight = LLMResource(base_url=fake.base_url, api_key="x", timeout_s=1, max_retries=1, max_concurrency=1,
                        cache_dir=str(root / "llm-cache-2"), max_tokens_per_run=1000)
    stopped = run(tight, recompute=True)
    meta = stopped.asset_materializations_for_node("summaries")[0].metadata
    assert meta["llm"].value["budget_exhausted"] and fake.requests < plan["fact_calls"]
    assert any("ends the LLM work before it is done" in m for m in log_lines(instance, stopped))
