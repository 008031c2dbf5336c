"""Tiered episode summaries, fact claims and rollups, with the LLM tiers on a real local server."""

import hashlib
import time
from datetime import date, datetime, timedelta

import polars as pl
import pytest

from truffle_assets.llm.client import LLMClient, LLMConfig
from truffle_assets.memory.summaries import (
    FACT_CLAIMS_SCHEMA,
    ROLLUPS_SCHEMA,
    SUMMARIES_SCHEMA,
    extractive_summary,
    rollups,
    summarize_episodes,
)
from truffle_assets_tests.fake_llm import closed_port_url
from truffle_assets_tests.llm.conftest import llm_cfg

EPISODE_LINES = [
    ("09:00", "Alice", "Good morning!"),
    ("09:01", "Arjun", "morning :) running late, the bus broke down near Indiranagar"),
    ("09:03", "Alice", "ok"),
    ("09:05", "Alice", "Are we still doing dinner at Toit on 13/03 for Priya's birthday?"),
    ("09:06", "Arjun", "yes! booked the table for 8 people at 8pm, paid 2000 with card [CARD]"),
    ("09:07", "Arjun", "the otp was [OTP] lol"),
    ("09:08", "Alice", "<Media omitted>"),
    ("09:10", "Alice", "Priya's birthday dinner will be amazing, she loves the Toit pizza"),
]


def _hash(*parts) -> str:
    return hashlib.blake2b("\x1f".join(map(str, parts)).encode(), digest_size=10).hexdigest()


def make_episode(chat_id: str, day: date, hour: int, salience: float, lines=EPISODE_LINES, tag: str = "") -> dict:
    ids = [_hash(chat_id, day, hour, i, tag) for i in range(len(lines))]
    shifted = [(f"{hour:02d}:{t[3:]}", a, m) for t, a, m in lines]
    start = datetime.combine(day, datetime.min.time()).replace(hour=hour)
    return {
        "id": _hash("ep", chat_id, day, hour, tag), "chat_id": chat_id, "day": day,
        "start_ts": start, "end_ts": start + timedelta(minutes=10),
        "message_ids": ids, "n_messages": len(ids), "n_tokens": sum(len(m.split()) for _, _, m in lines),
        "text": "\n".join(f"{t} {a}: {m}" for t, a, m in shifted),
        "salience": salience, "recency": 0.5, "user_centricity": 0.5, "repetition": 0.1, "density": 0.5, "urgency": 0.0,
    }


EPISODES_SCHEMA = {
    "id": pl.String, "chat_id": pl.String, "day": pl.Date, "start_ts": pl.Datetime("us"), "end_ts": pl.Datetime("us"),
    "message_ids": pl.List(pl.String), "n_messages": pl.Int64, "n_tokens": pl.Int64, "text": pl.String,
    "salience": pl.Float64, "recency": pl.Float64, "user_centricity": pl.Float64, "repetition": pl.Float64,
    "density": pl.Float64, "urgency": pl.Float64,
}


def episodes_frame() -> pl.DataFrame:
    d1, d2, d3 = date(2023, 3, 3), date(2023, 3, 5), date(2023, 3, 7)  # Fri, Sun | Tue (next ISO week)
    rows = [
        make_episode("alice", d1, 9, 0.9),  # tier C
        make_episode("alice", d1, 18, 0.2, EPISODE_LINES[:3], "low"),  # tier A only
        make_episode("alice", d2, 10, 0.5),  # tier B
        make_episode("alice", d3, 20, 0.75, tag="c2"),  # tier C
        make_episode("bob", d3, 11, 0.3, EPISODE_LINES[3:6], "bob"),  # tier A only
        make_episode("bob", d3, 15, 0.6, tag="bob"),  # tier B
    ]
    return pl.DataFrame(rows, schema=EPISODES_SCHEMA, orient="row")


@pytest.fixture(autouse=True)
def _reset(fake):
    fake.mode = "ok"
    fake.reset()


def check_contract(summaries: pl.DataFrame, facts: pl.DataFrame, episodes: pl.DataFrame) -> None:
    assert summaries.schema == pl.Schema(SUMMARIES_SCHEMA)
    assert facts.schema == pl.Schema(FACT_CLAIMS_SCHEMA)
    ids = dict(zip(episodes["id"], episodes["message_ids"].to_list()))
    for row in summaries.iter_rows(named=True):
        assert row["text"].strip()
        assert row["evidence_message_ids"] and set(row["evidence_message_ids"]) <= set(ids[row["episode_id"]])
        assert "[CARD]" not in row["entities"] and "[OTP]" not in row["entities"]
    # every episode has an A row, and a B/C row exactly when salient enough
    a = summaries.filter(pl.col("tier") == "A")
    assert sorted(a["episode_id"]) == sorted(episodes["id"]) and set(a["source"]) == {"extractive"}
    for ep in episodes.iter_rows(named=True):
        tiers = set(summaries.filter(pl.col("episode_id") == ep["id"])["tier"])
        want = {"A", "C"} if ep["salience"] >= 0.7 else {"A", "B"} if ep["salience"] >= 0.45 else {"A"}
        assert tiers == want


# ----------------------------------------------------------------------------- tier A

def test_extractive_summary_is_deterministic_and_grounded():
    ep = make_episode("alice", date(2023, 3, 3), 9, 0.9)
    s1 = extractive_summary(ep["text"], ep["message_ids"])
    s2 = extractive_summary(ep["text"], list(ep["message_ids"]))
    assert s1 == s2
    assert 1 <= len(s1["evidence_message_ids"]) <= 3
    assert set(s1["evidence_message_ids"]) <= set(ep["message_ids"])
    order = [ep["message_ids"].index(m) for m in s1["evidence_message_ids"]]
    assert order == sorted(order)
    assert len(s1["text"].split("\n")) == len(s1["evidence_message_ids"])
    # content lines win over greetings, "ok", media
    assert "Good morning" not in s1["text"] and "<Media omitted>" not in s1["text"]
    assert "Toit" in s1["text"] or "birthday" in s1["text"]
    assert all(k.islower() and "[" not in k for k in s1["keywords"]) and "birthday" in s1["keywords"]
    ents = s1["entities"]
    assert {"Alice", "Arjun", "Priya", "Toit", "13/03"} <= set(ents)
    assert not any("CARD" in e or "OTP" in e for e in ents)


def test_extractive_summary_edge_cases():
    assert extractive_summary("", [])["text"] == ""
    one = extractive_summary("10:00 Bob: <Media omitted>", ["x1"])
    assert one["evidence_message_ids"] == ["x1"]
    s = extractive_summary("10:00 Bob: एक दो तीन चार\n10:01 Ana: hola mañana en Madrid 5pm", ["a", "b"], max_sentences=1)
    assert s["evidence_message_ids"] in (["a"], ["b"]) and "Madrid" in s["entities"]


# ----------------------------------------------------------------------------- tiers B / C

def test_no_client_gives_fallback_rows_with_tier_kept():
    eps = episodes_frame()
    summaries, facts = summarize_episodes(eps, None)
    check_contract(summaries, facts, eps)
    bc = summaries.filter(pl.col("tier") != "A")
    assert bc.height == 4 and set(bc["source"]) == {"fallback"} and bc["model"].null_count() == 4
    assert facts.height == 0
    disabled, _ = summarize_episodes(eps, LLMClient(LLMConfig()))
    assert disabled.equals(summaries)


def test_llm_tiers_ok_and_cached_rerun(fake, tmp_path):
    eps = episodes_frame()
    client = LLMClient(llm_cfg(fake.base_url, tmp_path))
    summaries, facts = summarize_episodes(eps, client)
    check_contract(summaries, facts, eps)
    bc = summaries.filter(pl.col("tier") != "A")
    assert set(bc["source"]) == {"llm"} and set(bc["model"]) == {"fake-model"}
    assert bc["tokens_in"].min() > 0 and bc["tokens_out"].min() > 0
    assert fake.requests == 4
    ids = dict(zip(eps["id"], eps["message_ids"].to_list()))
    for row in bc.iter_rows(named=True):  # the fake cites [m1] and [m2]: mapped back to real ids
        assert row["evidence_message_ids"] == ids[row["episode_id"]][:2]
        assert row["text"].startswith("LLM summary")
    # the tier-C prompt asks for facts and shows refs, never raw ids; tier B asks for no facts
    c_bodies = [b for b in fake.bodies if "facts" in b["messages"][0]["content"]]
    assert len(c_bodies) == 2  # concurrent: any order
    assert any("[m1] 09:00 Alice: Good morning!" in b["messages"][1]["content"] for b in c_bodies)
    assert not any(m in b["messages"][1]["content"] for b in fake.bodies for ids_ in ids.values() for m in ids_)
    # facts: only from tier C, the claim citing a non-existent ref is dropped
    c_eps = set(eps.filter(pl.col("salience") >= 0.7)["id"])
    assert facts.height == 2 and set(facts["source"]) == {"llm"} and set(facts["predicate"]) == {"likes"}
    for f in facts.iter_rows(named=True):
        ep = next(e for e in eps.iter_rows(named=True) if e["id"] in c_eps and f["message_id"] in e["message_ids"])
        assert f["message_id"] == ep["message_ids"][-1] and f["category"] == "preference"
        assert f["ts"] == ep["start_ts"].replace(minute=10) and f["day"] == ep["day"]
        assert 0 <= f["confidence"] <= 1 and f["fact_text"] == "Alice likes mangoes."
    assert facts["id"].n_unique() == 2

    fake.reset()
    client2 = LLMClient(llm_cfg(fake.base_url, tmp_path))
    summaries2, facts2 = summarize_episodes(eps, client2)
    assert fake.requests == 0 and client2.stats.cache_hits == 4
    assert summaries2.equals(summaries) and facts2.equals(facts)


@pytest.mark.parametrize("mode", ["invalid_json", "prose", "http500", "slow"])
def test_misbehaving_llm_falls_back(fake, mode):
    fake.mode = mode
    eps = episodes_frame()
    client = LLMClient(llm_cfg(fake.base_url))
    t0 = time.monotonic()
    summaries, facts = summarize_episodes(eps, client)
    assert time.monotonic() - t0 < 8
    check_contract(summaries, facts, eps)
    bc = summaries.filter(pl.col("tier") != "A")
    assert set(bc["source"]) == {"fallback"} and bc.height == 4 and facts.height == 0
    assert (bc["tokens_in"] == 0).all()
    c = bc.filter(pl.col("tier") == "C")["text"]
    assert all(len(t.split("\n")) <= 5 for t in c)  # tier C fallback keeps up to 5 lines
    assert client.stats.fallbacks == 4


def test_rate_limited_llm_recovers(fake):
    fake.mode = "http429_then_ok"
    summaries, facts = summarize_episodes(episodes_frame(), LLMClient(llm_cfg(fake.base_url)))
    assert set(summaries.filter(pl.col("tier") != "A")["source"]) == {"llm"} and facts.height == 2
    assert fake.requests == 8


def test_garbage_evidence_ids_are_replaced_and_claims_dropped(fake):
    fake.mode = "garbage_ids"
    eps = episodes_frame()
    summaries, facts = summarize_episodes(eps, LLMClient(llm_cfg(fake.base_url)))
    check_contract(summaries, facts, eps)
    ids = dict(zip(eps["id"], eps["message_ids"].to_list()))
    bc = summaries.filter(pl.col("tier") != "A")
    assert set(bc["source"]) == {"llm"}
    for row in bc.iter_rows(named=True):
        assert row["evidence_message_ids"] == ids[row["episode_id"]]  # whole episode, not invented ids
    assert facts.height == 0


def test_down_endpoint_trips_breaker_and_falls_back():
    eps = pl.concat([episodes_frame()] + [
        pl.DataFrame([make_episode("carol", date(2023, 3, 3), h, 0.8, tag=str(h)) for h in range(24)],
                     schema=EPISODES_SCHEMA, orient="row")])
    client = LLMClient(llm_cfg(closed_port_url(), backoff_s=0.5, max_retries=3))
    t0 = time.monotonic()
    summaries, facts = summarize_episodes(eps, client)
    assert time.monotonic() - t0 < 3
    check_contract(summaries, facts, eps)
    assert client.stats.breaker_open and client.stats.calls <= 8
    assert set(summaries.filter(pl.col("tier") != "A")["source"]) == {"fallback"}


def test_budget_exhaustion_stops_calls_and_falls_back(fake):
    eps = episodes_frame()
    client = LLMClient(llm_cfg(fake.base_url, max_tokens_per_run=2500, max_output_tokens=300, max_concurrency=1))
    summaries, facts = summarize_episodes(eps, client)
    check_contract(summaries, facts, eps)
    sources = summaries.filter(pl.col("tier") != "A")["source"].to_list()
    assert "llm" in sources and "fallback" in sources
    assert client.stats.budget_exhausted and fake.requests == sources.count("llm")
    assert client.stats.tokens_in + client.stats.tokens_out <= 2500


def test_empty_episodes():
    empty = pl.DataFrame(schema=EPISODES_SCHEMA)
    s, f = summarize_episodes(empty, None)
    assert s.height == 0 and s.schema == pl.Schema(SUMMARIES_SCHEMA) and f.schema == pl.Schema(FACT_CLAIMS_SCHEMA)
    r = rollups(s, empty)
    assert r.height == 0 and r.schema == pl.Schema(ROLLUPS_SCHEMA)


# ----------------------------------------------------------------------------- rollups

def test_rollups_cover_days_and_weeks(fake):
    eps = episodes_frame()
    summaries, _ = summarize_episodes(eps, LLMClient(llm_cfg(fake.base_url)))
    r = rollups(summaries, eps)
    assert r.schema == pl.Schema(ROLLUPS_SCHEMA)
    days = r.filter(pl.col("period") == "day")
    weeks = r.filter(pl.col("period") == "week")
    assert sorted(zip(days["chat_id"], days["period_start"])) == sorted(set(zip(eps["chat_id"], eps["day"])))
    assert sorted(zip(weeks["chat_id"], weeks["period_start"])) == [
        ("alice", date(2023, 2, 27)), ("alice", date(2023, 3, 6)), ("bob", date(2023, 3, 6))]
    assert all(d.weekday() == 0 for d in weeks["period_start"])
    all_ids = {m for ids in eps["message_ids"] for m in ids}
    ep_ids = set(eps["id"])
    for row in r.iter_rows(named=True):
        assert row["text"].strip() and set(row["episode_ids"]) <= ep_ids
        assert row["evidence_message_ids"] and set(row["evidence_message_ids"]) <= all_ids
        limit = 120 if row["period"] == "day" else 250
        assert len(row["text"].split()) <= limit + 2 * len(row["episode_ids"]) + 1  # + time/day labels
    wk = weeks.filter((pl.col("chat_id") == "alice") & (pl.col("period_start") == date(2023, 2, 27))).row(0, named=True)
    assert len(wk["episode_ids"]) == 3 and "[Fri 03 Mar]" in wk["text"] and "[Sun 05 Mar]" in wk["text"]
    # the best summary (LLM) is used, not the tier-A extract
    assert "LLM summary" in days.filter(pl.col("chat_id") == "bob")["text"][0]
    assert rollups(summaries, eps).equals(r)


def test_rollups_respect_word_budget():
    long_lines = [(f"10:{i:02d}", "Alice", " ".join(f"word{i}x{j} Topic{j}" for j in range(30))) for i in range(20)]
    eps = pl.DataFrame([make_episode("dan", date(2023, 3, 6), h, 0.1 * (h % 5), long_lines, str(h)) for h in range(8, 16)],
                       schema=EPISODES_SCHEMA, orient="row")
    summaries, _ = summarize_episodes(eps, None)
    r = rollups(summaries, eps)
    day = r.filter(pl.col("period") == "day").row(0, named=True)
    week = r.filter(pl.col("period") == "week").row(0, named=True)
    assert len(day["text"].split()) <= 125 and len(week["text"].split()) <= 260
    assert len(day["episode_ids"]) == 8 and len(day["evidence_message_ids"]) <= 40
