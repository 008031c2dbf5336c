"""Fact extraction routed by the candidate detector: batching to the context, one read per episode
(cached by content), evidence filed under the right episode, the run budget and breaker, and the
work plan counted before a run. The fake OpenAI-compatible server answers (a real HTTP server); the
last test runs a real llama.cpp server."""

import json
import time
from datetime import date, datetime, timedelta

import polars as pl
import pytest

from truffle_assets.llm.client import LLMClient
from truffle_assets.memory.llm_facts import (
    FactList, batches, extract_facts, plan_for_messages, plan_llm_work, route, sent_message_ids,
)
from truffle_assets.memory.summaries import FACT_CLAIMS_SCHEMA
from truffle_assets_tests.fake_llm import closed_port_url
from truffle_assets_tests.llm.conftest import llm_cfg

# (author, text): the user is Kiran; each list is one episode of a one-to-one chat with Dev
EPISODES = [
    [("Dev", "hey, long time"), ("Kiran", "I joined Northwind last month, the payments team"),
     ("Dev", "nice"), ("Kiran", "ok")],
    [("Dev", "good morning"), ("Kiran", "morning"), ("Dev", "see you at 8")],  # nothing about the user
    [("Dev", "which city are you in now?"), ("Kiran", "Pune since March"), ("Dev", "cool")],
    [("Kiran", "we adopted a beagle, her name is Mochi"), ("Dev", "omg photos please")],
    [("Dev", "are you free for lunch tomorrow?"), ("Kiran", "can't, I'm vegetarian now and that place is all meat")],
]


def frames(episodes=EPISODES, chat="dev"):
    eps, msgs = [], []
    for k, lines in enumerate(episodes):
        day = date(2024, 1, 1) + timedelta(days=k)
        start = datetime.combine(day, datetime.min.time()).replace(hour=9)
        ids = [f"{chat}-{k}-{i}" for i in range(len(lines))]
        for i, (author, text) in enumerate(lines):
            msgs.append({"id": ids[i], "chat_id": chat, "day": day, "ts": start + timedelta(minutes=i), "author": author,
                         "is_user": author == "Kiran", "kind": "message", "normalized_text": text, "raw_text": text})
        eps.append({"id": f"ep-{chat}-{k}", "chat_id": chat, "day": day, "start_ts": start,
                    "end_ts": start + timedelta(minutes=len(lines)), "message_ids": ids,
                    "text": "\n".join(f"09:{i:02d} {a}: {t}" for i, (a, t) in enumerate(lines)), "salience": 0.2})
    return pl.DataFrame(eps), pl.DataFrame(msgs)


def fact_bodies(fake):
    return [b for b in fake.bodies if "Excerpts of" in b["messages"][1]["content"]]


def test_route_reads_only_episodes_with_candidates_and_skips_what_tier_c_read():
    eps, msgs = frames()
    routed = route(eps, msgs)
    assert [r.episode["id"] for r in routed] == ["ep-dev-0", "ep-dev-2", "ep-dev-3", "ep-dev-4"]
    assert sent_message_ids(routed) == {"dev-0-1", "dev-2-0", "dev-2-1", "dev-3-0", "dev-4-0", "dev-4-1"}
    assert [r.episode["id"] for r in route(eps, msgs, skip={"ep-dev-0", "ep-dev-3"})] == ["ep-dev-2", "ep-dev-4"]


def test_batches_fit_the_context_and_each_episode_is_sent_once(fake, tmp_path):
    fake.mode = "ok"
    fake.reset()
    eps, msgs = frames()
    routed = route(eps, msgs)
    cfg = llm_cfg(fake.base_url, tmp_path, max_concurrency=1, max_output_tokens=64)  # room for one fact a call
    assert len(batches(routed, cfg.model_copy(update={"max_output_tokens": 1024}))) == 1  # all four fit one call
    assert [len(b.routed) for b in batches(routed, cfg)] == [1, 1, 1, 1]  # never split
    claims, stats = extract_facts(routed, LLMClient(cfg))
    assert fake.requests == 4 and stats["batches"] == 4 and stats["answered"] == 4
    sent = [b["messages"][1]["content"] for b in fact_bodies(fake)]
    for r in routed:  # every routed episode's candidate lines in exactly one request
        assert sum(r.lines[r.candidates.candidates[0]] in s for s in sent) == 1
    assert "09:01 Dev: nice" not in "".join(sent)  # lines that state nothing stay home


def test_claims_are_filed_under_the_episode_of_their_evidence_and_invented_refs_dropped(fake, tmp_path):
    fake.mode = "ok"
    fake.reset()
    eps, msgs = frames()
    routed = route(eps, msgs)
    client = LLMClient(llm_cfg(fake.base_url, tmp_path))
    claims, stats = extract_facts(routed, client)
    assert fake.requests == 1 and stats == {"episodes": 4, "cached": 0, "sent": 4, "answered": 4, "batches": 1,
                                            "candidates": 4}
    # the fake cites the batch's last ref (the vegetarian line, episode 4) and an unknown ref (dropped)
    assert claims.columns == list(FACT_CLAIMS_SCHEMA)
    assert claims.height == 1 and claims["message_id"].to_list() == ["dev-4-1"]
    row = claims.row(0, named=True)
    assert row["source"] == "llm" and row["day"] == date(2024, 1, 5) and row["ts"] == datetime(2024, 1, 5, 9, 1)
    body = fact_bodies(fake)[0]
    assert json.loads(body["messages"][0]["content"].rsplit("\n", 1)[-1]) == FactList.model_json_schema()


def test_answers_are_cached_per_episode_whatever_the_batch(fake, tmp_path):
    fake.mode = "ok"
    fake.reset()
    eps, msgs = frames()
    first, _ = extract_facts(route(eps, msgs), LLMClient(llm_cfg(fake.base_url, tmp_path)))
    assert fake.requests == 1
    fake.reset()
    # a new run, batched differently (one episode a call): every episode comes from the cache
    client = LLMClient(llm_cfg(fake.base_url, tmp_path))
    client.config = client.config.model_copy(update={"max_output_tokens": 64})
    again, stats = extract_facts(route(eps, msgs), client)
    assert fake.requests == 0 and stats["cached"] == 4 and client.stats.cache_hits == 4
    assert again.sort("id").equals(first.sort("id"))
    # an episode whose text changed is a new episode: only it is read again
    changed = [list(e) for e in EPISODES]
    changed[2] = [("Dev", "which city are you in now?"), ("Kiran", "Mumbai, moved in June")]
    eps2, msgs2 = frames(changed)
    eps2 = eps2.with_columns(pl.when(pl.col("id") == "ep-dev-2").then(pl.lit("ep-dev-2b")).otherwise("id").alias("id"))
    _, stats = extract_facts(route(eps2, msgs2), LLMClient(llm_cfg(fake.base_url, tmp_path)))
    assert fake.requests == 1 and stats["cached"] == 3 and stats["sent"] == 1
    # the cache entries name their episode, so a forget finds them
    entries = [json.loads(p.read_text()) for p in (tmp_path / "llm-cache").glob("*/*.json")]
    assert {e["cache_key"] for e in entries} == {"ep-dev-0:facts", "ep-dev-2:facts", "ep-dev-2b:facts",
                                                "ep-dev-3:facts", "ep-dev-4:facts"}


def test_the_run_budget_stops_the_reads_and_nothing_is_cached(fake, tmp_path):
    fake.mode = "ok"
    fake.reset()
    eps, msgs = frames()
    client = LLMClient(llm_cfg(fake.base_url, tmp_path, max_tokens_per_run=1500, max_output_tokens=64,
                               max_concurrency=1))
    claims, stats = extract_facts(route(eps, msgs), client)
    assert client.stats.budget_exhausted and 0 < fake.requests < 4
    assert stats["answered"] == fake.requests and claims.height <= fake.requests
    cached = len(list((tmp_path / "llm-cache").glob("*/*.json")))
    assert cached == fake.requests  # the unanswered episodes are asked again by a later run


def test_a_down_endpoint_opens_the_breaker_fast(tmp_path):
    eps, msgs = frames()
    client = LLMClient(llm_cfg(closed_port_url(), tmp_path, max_retries=1, breaker_threshold=2, max_concurrency=1,
                               max_output_tokens=64))
    t0 = time.perf_counter()
    claims, stats = extract_facts(route(eps, msgs), client)
    assert time.perf_counter() - t0 < 10
    assert claims.height == 0 and stats["answered"] == 0 and client.stats.breaker_open
    assert client.stats.calls == 2 and client.stats.fallbacks == 4  # the rest fall back without a request


def test_no_endpoint_reads_nothing():
    eps, msgs = frames()
    claims, stats = extract_facts(route(eps, msgs), None)
    assert claims.height == 0 and stats["batches"] == 0


def test_the_plan_counts_the_calls_the_run_makes(fake, tmp_path):
    fake.mode = "ok"
    fake.reset()
    eps, msgs = frames()
    cfg = llm_cfg(fake.base_url, tmp_path, max_output_tokens=64)
    plan = plan_llm_work(eps, msgs, cfg, tier_b=0.9, tier_c=0.95)
    assert (plan.summary_calls, plan.fact_calls, plan.routed_episodes) == (0, 4, 4)
    extract_facts(route(eps, msgs), LLMClient(cfg))
    assert fake.requests == plan.fact_calls
    assert 0 < plan.transcript_tokens < plan.corpus_tokens and plan.tokens_out <= 4 * 64
    assert plan.cost_usd == pytest.approx((plan.tokens_in * 0.10 + plan.tokens_out * 0.40) / 1e6)
    text = plan.describe(cfg)
    assert "about 4 LLM calls" in text and "$0.1/$0.4 per million" in text
    # salient episodes: tier B/C calls; a tier-C episode is not read again
    salient = eps.with_columns(salience=pl.Series([0.8, 0.5, 0.2, 0.2, 0.2]))
    p2 = plan_llm_work(salient, msgs, cfg, tier_b=0.45, tier_c=0.7)
    assert (p2.summary_calls, p2.fact_calls, p2.routed_episodes) == (2, 3, 3)
    assert not plan.over_budget(cfg) and plan.over_budget(cfg.model_copy(update={"max_tokens_per_run": 10}))
    # before the build: from export rows
    rows = msgs.drop("normalized_text").with_columns(day=pl.col("ts").dt.date())
    assert plan_for_messages(rows, cfg, 0.45, 0.7).routed_episodes >= 1


def test_a_real_llama_cpp_server_answers_the_batched_reads(tmp_path_factory, tmp_path):
    pytest.importorskip("llama_cpp.server", reason="llama-cpp-python[server] is not installed")
    from truffle_assets.llm.server import LlamaServer
    from truffle_assets_tests.model_fixtures import shared_tiny_gguf

    eps, msgs = frames()
    routed = route(eps, msgs)
    with LlamaServer(shared_tiny_gguf(tmp_path_factory), alias="tiny", n_ctx=4096) as srv:
        cfg = llm_cfg(srv.base_url, tmp_path, model="tiny", timeout_s=120, max_output_tokens=48, max_concurrency=1,
                      context_tokens=4096)
        client = LLMClient(cfg)
        claims, stats = extract_facts(routed, client, context_tokens=4096)
        log = srv.log_tail()
    # a random tiny model answers HTTP 200 with no usable JSON: the reads fall back, nothing invented
    assert stats["batches"] >= 1 and client.stats.calls >= stats["batches"] and client.stats.tokens_in > 0, log
    assert set(claims["message_id"].to_list()) <= sent_message_ids(routed)
