"""Candidate-pool stages on hand-made rows: pool merge, summary scoring and expansion, BM25 spread."""

from datetime import datetime

import numpy as np
import pytest

from truffle_assets.retrieval.candidates import candidate_pool, expand_summaries, score_summaries, spread_lexical
from truffle_assets.retrieval.models import RetrievalWeights

Q = np.asarray([1.0, 0.0, 0.0], dtype=np.float32)


def vec(*xs: float) -> np.ndarray:
    v = np.asarray(xs, dtype=np.float32)
    return v / np.linalg.norm(v)


def msg(mid: str, ep: str | None = "e1", minute: int = 0, v=(0.0, 1.0, 0.0), **extra) -> dict:
    return {"message_id": mid, "episode_id": ep, "ts": datetime(2023, 5, 7, 9, minute), "vector": vec(*v), **extra}


def test_pool_keeps_dense_rows_and_scores_bm25_against_the_best_hit():
    dense = [msg("a", _distance=0.2), msg("b", _distance=0.3)]
    lexical = [msg("b", _score=8.0), msg("c", _score=2.0)]
    cand = candidate_pool(dense, lexical)
    assert list(cand) == ["a", "b", "c"]  # dense first, BM25-only hits after
    assert cand["b"] is dense[1] and "_distance" in cand["b"]  # the dense row is the one kept
    assert cand["b"]["lex"] == 1.0 and cand["c"]["lex"] == 0.25 and "lex" not in cand["a"]


def test_pool_of_nothing_and_zero_bm25_scores():
    assert candidate_pool([], []) == {}
    assert candidate_pool([], [msg("x", _score=0.0)])["x"]["lex"] == 0.0  # no division by zero


def test_summaries_merge_dense_and_bm25_per_episode():
    w = RetrievalWeights(semantic=1.0, lexical=1.0, summary_hits=2)
    dense = [{"episode_id": "e1", "_distance": 0.4, "vector": vec(1, 0, 0)},
             {"episode_id": "e2", "_distance": 0.9, "vector": vec(0, 1, 0)}]
    lexical = [{"episode_id": "e2", "_score": 4.0, "vector": vec(0, 1, 0)},
               {"episode_id": "e3", "_score": 2.0, "vector": vec(1, 1, 0)}]
    hits = score_summaries(dense, lexical, Q, w)
    assert [h["episode_id"] for h in hits] == ["e3", "e2"]  # top 2 of 3, best first
    # e3 came only from BM25: its cosine is computed from its vector
    assert hits[0]["sem"] == pytest.approx(1 / np.sqrt(2)) and hits[0]["lex"] == 0.5
    assert hits[0]["score"] == pytest.approx((1 / np.sqrt(2) + 0.5) / 2)
    assert hits[1]["score"] == pytest.approx((0.1 + 1.0) / 2)


def test_expansion_adds_the_members_closest_to_the_query():
    summaries = [{"episode_id": "e1", "message_ids": ["m1", "m2", "m3"], "score": 0.6},
                 {"episode_id": "e2", "message_ids": ["m4"], "score": 0.9}]
    members = [msg("m1", "e1", v=(0, 1, 0)), msg("m2", "e1", v=(1, 0, 0)), msg("m3", "e1", v=(1, 1, 0)),
               msg("m4", "e2", v=(1, 0, 0)), msg("m5", "e2", v=(1, 0, 0))]  # m5: not in e2's summary
    dense_hit = msg("m2", "e1", _distance=0.0)
    cand = {"m2": dense_hit}
    support = expand_summaries(cand, summaries, members, Q, per_summary=2)
    assert support == {"m2": 0.6, "m3": 0.6, "m4": 0.9}  # m1 is the least similar of e1: left out
    assert cand["m2"] is dense_hit and cand["m3"]["sem"] == pytest.approx(1 / np.sqrt(2))
    assert list(cand) == ["m2", "m3", "m4"]


def test_expansion_support_is_the_best_summary_reaching_a_message():
    summaries = [{"episode_id": "e1", "message_ids": ["m1"], "score": 0.3},
                 {"episode_id": "e1", "message_ids": ["m1"], "score": 0.7}]
    assert expand_summaries({}, summaries, [msg("m1")], Q, per_summary=3) == {"m1": 0.7}


def episode(*ids: str, ep: str = "e1") -> tuple[dict, dict]:
    rows = [msg(m, ep, minute=i) for i, m in enumerate(ids)]
    return {ep: rows}, {m: (ep, i) for i, m in enumerate(ids)}


def test_bm25_hit_passes_a_share_to_both_neighbours():
    seq, pos = episode("q", "hit", "answer", "far")
    hit = msg("hit", _score=5.0, lex=1.0)
    cand = {"hit": hit, "other": msg("other", None, lex=0.5)}
    spread_lexical(cand, [hit], seq, pos, share=0.3)
    assert set(cand) == {"hit", "other", "q", "answer"}  # neighbours join the pool, "far" does not
    # 1.0 is still the top, so nothing is rescaled
    assert cand["q"]["lex"] == pytest.approx(0.3) and cand["answer"]["lex"] == pytest.approx(0.3)
    assert cand["hit"]["lex"] == 1.0 and cand["other"]["lex"] == 0.5


def test_spread_adds_up_and_rescales_to_the_best():
    seq, pos = episode("a", "b", "c")
    a, c = msg("a", lex=1.0), msg("c", lex=1.0)
    cand = {"a": a, "c": c}
    spread_lexical(cand, [a, c], seq, pos, share=0.8)
    # b gets 0.8 from each side = 1.6, the new best: everything is divided by 1.6
    assert cand["b"]["lex"] == pytest.approx(1.0)
    assert cand["a"]["lex"] == pytest.approx(1 / 1.6) and cand["c"]["lex"] == pytest.approx(1 / 1.6)


def test_spread_skips_hits_outside_any_episode_and_is_off_at_zero():
    seq, pos = episode("a", "b")
    stray = msg("stray", None, lex=1.0)
    cand = {"stray": stray}
    spread_lexical(cand, [stray], seq, pos, share=0.3)
    assert list(cand) == ["stray"]
    a = msg("a", lex=0.5)
    cand = {"a": a}
    spread_lexical(cand, [a], seq, pos, share=0.0)
    assert list(cand) == ["a"] and a["lex"] == 0.5  # no spread and no rescaling
