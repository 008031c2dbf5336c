"""Fusion of per-candidate signals into one score, the ranking, and the weak-support rule.

Plain numpy on arrays aligned with the candidate rows: no index, no model. The "learned" fusion is
a logistic regression over `features()`, fitted by scripts/fit_fusion.py on the synthetic corpus
(never on LoCoMo); its coefficients ship as fusion_weights.json beside this module.
"""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path

import numpy as np

from truffle_assets.retrieval.models import RetrievalWeights
from truffle_assets.retrieval.signals import Signals

STRONG = 0.4  # dense cosine below ~0.4 is topical noise for MiniLM; the same bar serves BM25 and summaries
LEARNED = Path(__file__).with_name("fusion_weights.json")
FEATURES = ("semantic", "lexical", "context", "summary", "speaker", "date", "keys", "answer", "recency", "salience")


def minmax(x: np.ndarray) -> np.ndarray:
    if x.size == 0:
        return x
    lo, hi = float(x.min()), float(x.max())
    return np.zeros_like(x) if hi - lo < 1e-9 else (x - lo) / (hi - lo)


def rrf(values: np.ndarray, k: int, present: np.ndarray | None = None) -> np.ndarray:
    """Reciprocal-rank score of each candidate under one signal (0 where the signal is absent)."""
    ranks = np.empty(values.size)
    ranks[np.argsort(-values, kind="stable")] = np.arange(1, values.size + 1)
    out = (k + 1) / (k + ranks)  # 1.0 for the top rank
    if present is not None:
        out = np.where(present, out, 0.0)
    return out


def features(s: Signals) -> np.ndarray:
    """(candidates, FEATURES) on a 0..1 scale: cosines min-max scaled within the query, the rest as-is."""
    cols = {"semantic": minmax(s.semantic), "context": minmax(s.context)}
    return np.stack([cols[f] if f in cols else getattr(s, f).astype(float) for f in FEATURES], axis=1)


@lru_cache(maxsize=4)
def learned_model(path: str = str(LEARNED)) -> tuple[np.ndarray, float]:
    """(coefficients in FEATURES order, intercept) from a fusion_weights.json."""
    spec = json.loads(Path(path).read_text())
    if tuple(spec["features"]) != FEATURES:
        raise ValueError(f"{path}: features {spec['features']} are not {list(FEATURES)}; refit with scripts/fit_fusion.py")
    return np.asarray(spec["coef"], dtype=float), float(spec["intercept"])


def learned(s: Signals) -> np.ndarray:
    """Probability that a candidate is evidence, under the fitted logistic model (0..1)."""
    coef, b = learned_model()
    return 1.0 / (1.0 + np.exp(-(features(s) @ coef + b)))


def fuse(s: Signals, w: RetrievalWeights) -> np.ndarray:
    """Weighted mean of the signals on a 0..1 scale (min-max / as-is scores, or weighted RRF) less
    the asking penalty, or the learned logistic model."""
    if w.fusion == "learned":
        return learned(s)
    if w.fusion == "rrf":
        parts = [(w.semantic, rrf(s.semantic, w.rrf_k)), (w.lexical, rrf(s.lexical, w.rrf_k, s.lexical_present)),
                 (w.context, rrf(s.context, w.rrf_k)), (w.summary, rrf(s.summary, w.rrf_k, s.summary > 0))]
    else:
        parts = [(w.semantic, minmax(s.semantic)), (w.lexical, s.lexical), (w.context, minmax(s.context)),
                 (w.summary, s.summary)]
    parts += [(w.speaker, s.speaker), (w.recency, s.recency), (w.salience, s.salience), (w.date, s.date),
              (w.keys, s.keys), (w.answer, s.answer)]
    total_w = sum(wt for wt, _ in parts) or 1.0
    fused = sum(wt * x for wt, x in parts) / total_w
    if w.asking and s.asks is not None:  # a penalty, outside the mean: it only ever lowers a line
        fused = fused - w.asking * s.asks
    return fused


def blend_episode_best(fused: np.ndarray, episode_ids: list[str | None], weight: float) -> np.ndarray:
    """Lines of the episode that best matches the query are likelier answers than equally scored
    strays: add the episode's best fused score (kept on the 0..1 scale)."""
    if weight <= 0:
        return fused
    best: dict[str | None, float] = {}
    for e, f in zip(episode_ids, fused):
        best[e] = max(best.get(e, 0.0), float(f))
    ep_best = np.asarray([best[e] if e else f for e, f in zip(episode_ids, fused)])
    return (fused + weight * ep_best) / (1.0 + weight)


def mmr(scores: np.ndarray, V: np.ndarray, k: int, lam: float) -> list[int]:
    """Maximal marginal relevance over the top max(5k, 50): each pick trades score for novelty."""
    chosen: list[int] = []
    rest = list(np.argsort(-scores)[: max(k * 5, 50)])
    while rest and len(chosen) < k:
        if not chosen:
            best = rest[0]
        else:
            sim = (V[rest] @ V[chosen].T).max(axis=1)
            best = rest[int(np.argmax(lam * scores[rest] - (1 - lam) * sim))]
        chosen.append(best)
        rest.remove(best)
    return chosen


def rank(fused: np.ndarray, V: np.ndarray, k: int, mmr_lambda: float,
         episode_ids: list[str | None] | None = None, per_episode: int = 0) -> list[int]:
    """Positions of the top k: by score (stable, so ties keep pool order), or MMR below lambda 1.

    `per_episode` > 0 caps how many of the top k one episode may hold before the rest get a turn
    (the capped ones come back only if the pool runs out): an answer gathered across sessions needs
    its other sessions in the list, and a single-turn answer is the episode's best line anyway."""
    if mmr_lambda < 1.0:
        return mmr(fused, V, k, mmr_lambda)
    order = np.argsort(-fused, kind="stable")
    if per_episode <= 0 or episode_ids is None:
        return list(order[:k])
    taken: dict[str | None, int] = {}
    first, later = [], []
    for j in order:
        e = episode_ids[j]
        n = taken.get(e, 0)
        (first if e is None or n < per_episode else later).append(int(j))
        taken[e] = n + 1
        if len(first) >= k:
            break
    return (first + later)[:k]


def is_uncertain(semantic: float, lexical: float, summary: float, base: float, below: float) -> bool:
    """Weak support: no signal clearly fires, or just one does and the fused score (before the
    episode blend) is under `below`."""
    strong = int(semantic >= STRONG) + int(lexical >= STRONG) + int(summary >= STRONG)
    return bool(strong == 0 or (strong == 1 and base < below))
