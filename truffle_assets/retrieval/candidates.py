"""The candidate pool: which messages get scored at all, and their lexical score.

Rows are the dicts the index returns (`message_id`, `episode_id`, `vector`, `_distance` for dense
hits, `_score` for BM25 hits); the stages here add `lex` (BM25, 0..1) and `sem` (cosine) to them
in place. Lookups in the index stay with the caller, so each stage runs on plain rows.
"""

from __future__ import annotations

import numpy as np

from truffle_assets.retrieval.models import RetrievalWeights


def score_summaries(dense: list[dict], lexical: list[dict], qvec: np.ndarray, w: RetrievalWeights) -> list[dict]:
    """Best `w.summary_hits` summaries by the weighted mean of cosine and best-relative BM25."""
    by_ep: dict[str, dict] = {}
    top_bm = max((r["_score"] for r in lexical), default=0.0) or 1.0
    for r in dense:
        by_ep.setdefault(r["episode_id"], r)["sem"] = 1.0 - r["_distance"]
    for r in lexical:
        by_ep.setdefault(r["episode_id"], r)["lex"] = r["_score"] / top_bm
    for r in by_ep.values():
        if "sem" not in r:
            r["sem"] = float(np.dot(qvec, np.asarray(r["vector"], dtype=np.float32)))
        r["score"] = (w.semantic * r["sem"] + w.lexical * r.get("lex", 0.0)) / (w.semantic + w.lexical)
    return sorted(by_ep.values(), key=lambda r: -r["score"])[: w.summary_hits]


def candidate_pool(dense: list[dict], lexical: list[dict]) -> dict[str, dict]:
    """Dense and BM25 hits by message id (dense first), BM25 as a share of the best BM25 hit."""
    cand: dict[str, dict] = {}
    for r in dense:
        cand[r["message_id"]] = r
    top_bm = max((r["_score"] for r in lexical), default=0.0) or 1.0
    for r in lexical:
        cand.setdefault(r["message_id"], r)["lex"] = r["_score"] / top_bm
    return cand


def add_key_hits(cand: dict[str, dict], keyed: list[dict]) -> None:
    """BM25 hits on the `keys` column (entities, answer tags) join the pool; `key` is their score as a
    share of the best one."""
    top = max((r["_score"] for r in keyed), default=0.0) or 1.0
    for r in keyed:
        cand.setdefault(r["message_id"], r)["key"] = r["_score"] / top


def expand_summaries(cand: dict[str, dict], summaries: list[dict], members: list[dict], qvec: np.ndarray,
                     per_summary: int) -> dict[str, float]:
    """Add each summary's `per_summary` members most similar to the query to `cand`.

    `members` are the message rows of the summaries' episodes. Returns the summary support of each
    added message: the best score among the summaries that reached it.
    """
    support: dict[str, float] = {}
    by_episode: dict[str, list[dict]] = {}
    for m in members:
        m["sem"] = float(np.dot(qvec, np.asarray(m["vector"], dtype=np.float32)))
        by_episode.setdefault(m["episode_id"], []).append(m)
    for h in summaries:
        inside = [m for m in by_episode.get(h["episode_id"], []) if m["message_id"] in set(h["message_ids"] or [])]
        for m in sorted(inside, key=lambda m: -m["sem"])[:per_summary]:
            support[m["message_id"]] = max(support.get(m["message_id"], 0.0), h["score"])
            cand.setdefault(m["message_id"], m)
    return support


def spread_lexical(cand: dict[str, dict], lexical: list[dict], seq: dict[str, list[dict]],
                   pos: dict[str, tuple[str, int]], share: float) -> None:
    """Pass `share` of each BM25 hit's score to the messages either side of it in its episode.

    A chat answer rarely repeats the words of its question ("Where did you go?" / "Paris!"), so the
    neighbours join the pool; `lex` is then rescaled so the best candidate has 1. `seq` holds each
    episode's messages in order and `pos` each message's (episode, index) in it.
    """
    if share <= 0:
        return
    spread: dict[str, float] = {}
    for r in lexical:
        mid = r["message_id"]
        if mid not in pos:
            continue
        ep, i = pos[mid]
        for n in (i - 1, i + 1):
            if 0 <= n < len(seq[ep]):
                nid = seq[ep][n]["message_id"]
                spread[nid] = spread.get(nid, 0.0) + share * cand[mid]["lex"]
    for nid, extra in spread.items():
        ep, i = pos[nid]
        r = cand.setdefault(nid, seq[ep][i])
        r["lex"] = r.get("lex", 0.0) + extra
    top_lex = max((r.get("lex", 0.0) for r in cand.values()), default=0.0) or 1.0
    for r in cand.values():
        if "lex" in r:
            r["lex"] /= top_lex
