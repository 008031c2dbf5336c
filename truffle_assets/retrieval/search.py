"""Hybrid retrieval over the memory index: dense + BM25 on messages and summaries, fused, reranked.

Pipeline (each stage timed into `EvidencePack.timing_ms`):
1. embed the query once;
2. candidates: vector search and BM25 (LanceDB native FTS, question-frame words dropped) on the
   message table, the same on the summary table; summary hits are expanded to their messages
   (those most similar to the query), so the ranked items are always messages;
3. features for every candidate, whichever signal found it: cosine to the query, BM25 (0 when
   BM25 did not return it; each BM25 hit also passes a share of its score to its episode
   neighbours, which join the pool — chat answers often sit one line after the question that
   names the topic), context cosine (the message plus its episode neighbours), summary support,
   recency decay, episode salience, speaker named in the query, sent on a date the query names;
4. fuse (normalised weighted sum by default; weighted RRF available), blend in the best fused
   score of each candidate's episode, and optionally MMR-diversify.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterable
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any, Literal

import numpy as np

from truffle_assets.index.embedder import Embedder
from truffle_assets.index.lance import RAW_TABLE, SUMMARY_TABLE, MemoryIndex, sql_in, sql_lit
from truffle_assets.retrieval.log import RetrievalLog
from truffle_assets.retrieval.models import (
    EvidenceItem,
    EvidencePack,
    RetrievalWeights,
    ScoreComponents,
    SummaryHit,
)
from truffle_assets.retrieval.query import bm25_query, dates_in, names_in, words

RAW_COLS = ["message_id", "episode_id", "chat_id", "ts", "author", "text", "salience", "vector"]
SUM_COLS = ["episode_id", "chat_id", "start_ts", "end_ts", "tier", "text", "message_ids",
            "evidence_message_ids", "vector"]

_default_embedder: Embedder | None = None
_open: dict[str, tuple[float, MemoryIndex]] = {}
_lock = threading.Lock()


def _embedder() -> Embedder:
    global _default_embedder
    with _lock:
        if _default_embedder is None:
            _default_embedder = Embedder()
        return _default_embedder


def open_index(index: str | Path | MemoryIndex) -> MemoryIndex:
    """Resolve `index`, reusing an already-open reader until its latest.json changes."""
    if isinstance(index, MemoryIndex):
        return index
    p = Path(index)
    pointer = p if p.is_file() else p / "latest.json"
    stamp = pointer.stat().st_mtime_ns if pointer.is_file() else -1.0
    key = str(p.resolve())
    with _lock:
        hit = _open.get(key)
    if hit and hit[0] == stamp and stamp != -1.0:
        return hit[1]
    idx = MemoryIndex.open(p, _embedder())
    with _lock:
        _open[key] = (stamp, idx)
    return idx


def _naive(dt: datetime | None) -> datetime | None:
    return dt.replace(tzinfo=None) if dt is not None and dt.tzinfo is not None else dt


def _filters(chats: Iterable[str] | None, since: datetime | None, until: datetime | None,
             start_col: str, end_col: str) -> str | None:
    parts = []
    if chats:
        parts.append(sql_in("chat_id", list(chats)))
    if since is not None:
        parts.append(f"{end_col} >= {sql_lit(_naive(since))}")
    if until is not None:
        parts.append(f"{start_col} <= {sql_lit(_naive(until))}")
    return " AND ".join(parts) or None


def _search(tbl, query: Any, limit: int, where: str | None, cols: list[str], fts_col: str | None = None):
    """One LanceDB query -> list of dict rows (with `_distance` or `_score`)."""
    if fts_col is not None:
        if not query:
            return []
        q = tbl.search(query, query_type="fts", fts_columns=fts_col)
        score_col = "_score"
    else:
        q = tbl.search(query, vector_column_name="vector").distance_type("cosine")
        score_col = "_distance"
    if where:
        q = q.where(where, prefilter=True)
    try:
        return _rows(q.select(cols + [score_col]).limit(limit).to_arrow())
    except Exception as exc:  # no FTS index and no rows yet, etc.: a missing signal, not an error
        if fts_col is None:
            raise
        import logging
        logging.getLogger(__name__).debug("FTS search skipped: %s", exc)
        return []


def _fetch(tbl, where: str, cols: list[str]) -> list[dict]:
    return _rows(tbl.search().where(where).select(cols).limit(None).to_arrow())


def _rows(t) -> list[dict]:
    """Arrow rows as dicts, with `vector` as a row of one float32 matrix: `to_list()` builds a Python
    float per dimension, which at a few thousand candidates costs more than the search itself."""
    names = [c for c in t.column_names if c != "vector"]
    cols = [t[c].to_pylist() for c in names]
    out = [dict(zip(names, vals)) for vals in zip(*cols)] if names else [{} for _ in range(t.num_rows)]
    if "vector" in t.column_names and t.num_rows:
        arr = t["vector"].combine_chunks()
        dim = arr.type.list_size
        matrix = arr.flatten().to_numpy(zero_copy_only=False).astype(np.float32, copy=False).reshape(-1, dim)
        for r, v in zip(out, matrix):
            r["vector"] = v
    return out


def _minmax(x: np.ndarray) -> np.ndarray:
    if x.size == 0:
        return x
    lo, hi = float(x.min()), float(x.max())
    return np.zeros_like(x) if hi - lo < 1e-9 else (x - lo) / (hi - lo)


def _rrf(values: np.ndarray, k: int, present: np.ndarray | None = None) -> np.ndarray:
    """Reciprocal-rank score of each candidate under one signal (0 where the signal is absent)."""
    ranks = np.empty(values.size)
    ranks[np.argsort(-values, kind="stable")] = np.arange(1, values.size + 1)
    out = (k + 1) / (k + ranks)  # 1.0 for the top rank
    if present is not None:
        out = np.where(present, out, 0.0)
    return out


def retrieve(query: str, index: str | Path | MemoryIndex, k: int = 10, *,
             chats: Iterable[str] | None = None, since: datetime | None = None,
             until: datetime | None = None, now: datetime | None = None,
             weights: RetrievalWeights | None = None, log: RetrievalLog | None = None,
             expand: bool = True) -> EvidencePack:
    w = weights or RetrievalWeights()
    t_start = time.perf_counter()
    timing: dict[str, float] = {}

    def lap(stage: str, t0: float) -> float:
        t1 = time.perf_counter()
        timing[stage] = round((t1 - t0) * 1000, 2)
        return t1

    idx = open_index(index)
    chats = list(chats) if chats is not None else None
    raw, summ = idx.table(RAW_TABLE), idx.table(SUMMARY_TABLE)
    watermarks = idx.pointer.get("watermarks") or idx.watermarks()
    pack = EvidencePack(query=query, watermarks=watermarks, index_versions=idx.table_versions())
    if raw is None or not query.strip():
        return pack

    t = time.perf_counter()
    qvec = idx.embedder.encode_query(query)
    t = lap("embed", t)

    raw_where = _filters(chats, since, until, "ts", "ts")
    sum_where = _filters(chats, since, until, "start_ts", "end_ts")
    people = sorted({p for c, ps in idx.participants().items() if chats is None or c in chats for p in ps})
    # Speaker names sit in every "Author: ..." passage: noise for BM25, kept for the dense side.
    named = names_in(query, people)
    name_words = {n.split()[0] for n in named}
    bq = bm25_query(query, drop=name_words) or bm25_query(query)

    dense = _search(raw, qvec, w.candidates, raw_where, RAW_COLS)
    t = lap("dense", t)
    lexical = _search(raw, bq, w.candidates, raw_where, RAW_COLS, fts_col="passage")
    t = lap("bm25", t)

    # ---- summaries: hit list for the pack, and expansion of the best to their messages ------
    sum_hits: list[dict] = []
    if summ is not None and summ.count_rows():
        s_dense = _search(summ, qvec, w.summary_hits * 2, sum_where, SUM_COLS)
        s_lex = _search(summ, bq, w.summary_hits * 2, sum_where, SUM_COLS, fts_col="text")
        by_ep: dict[str, dict] = {}
        top_bm = max((r["_score"] for r in s_lex), default=0.0) or 1.0
        for r in s_dense:
            by_ep.setdefault(r["episode_id"], r)["sem"] = 1.0 - r["_distance"]
        for r in s_lex:
            by_ep.setdefault(r["episode_id"], r)["lex"] = r["_score"] / top_bm
        for r in by_ep.values():
            if "sem" not in r:
                r["sem"] = float(np.dot(qvec, np.asarray(r["vector"], dtype=np.float32)))
            r["score"] = (w.semantic * r["sem"] + w.lexical * r.get("lex", 0.0)) / (w.semantic + w.lexical)
        sum_hits = sorted(by_ep.values(), key=lambda r: -r["score"])[: w.summary_hits]
        pack.summaries = [SummaryHit(episode_id=r["episode_id"], chat_id=r["chat_id"], start_ts=r["start_ts"],
                                     end_ts=r["end_ts"], tier=r["tier"], text=r["text"],
                                     score=round(float(r["score"]), 4),
                                     evidence_message_ids=list(r["evidence_message_ids"] or r["message_ids"] or []))
                          for r in sum_hits]
    t = lap("summaries", t)

    # ---- candidate pool ----------------------------------------------------------------
    cand: dict[str, dict] = {}
    for r in dense:
        cand[r["message_id"]] = r
    top_bm = max((r["_score"] for r in lexical), default=0.0) or 1.0
    for r in lexical:
        cand.setdefault(r["message_id"], r)["lex"] = r["_score"] / top_bm
    summary_support: dict[str, float] = {}
    if expand and sum_hits:
        wanted = {m: h["score"] for h in sum_hits for m in (h["message_ids"] or [])}
        where = sql_in("message_id", wanted) + (f" AND {raw_where}" if raw_where else "")
        members = _fetch(raw, where, RAW_COLS)
        by_episode: dict[str, list[dict]] = {}
        for m in members:
            m["sem"] = float(np.dot(qvec, np.asarray(m["vector"], dtype=np.float32)))
            by_episode.setdefault(m["episode_id"], []).append(m)
        for h in sum_hits:
            inside = [m for m in by_episode.get(h["episode_id"], []) if m["message_id"] in set(h["message_ids"] or [])]
            for m in sorted(inside, key=lambda m: -m["sem"])[: w.expand_per_summary]:
                summary_support[m["message_id"]] = max(summary_support.get(m["message_id"], 0.0), h["score"])
                cand.setdefault(m["message_id"], m)
    t = lap("expand", t)
    if not cand:
        timing["total"] = round((time.perf_counter() - t_start) * 1000, 2)
        pack.timing_ms = timing
        return pack

    # ---- episode neighbours: context vectors, BM25 propagation ------------------------------
    seq, pos = _episodes(raw, cand.values(), raw_where)
    if w.lexical_neighbours > 0:
        # A chat answer rarely repeats the words of its question ("Where did you go?" / "Paris!"):
        # each BM25 hit passes a share of its score to the messages either side of it.
        spread: dict[str, float] = {}
        for r in lexical:
            mid = r["message_id"]
            if mid not in pos:
                continue
            ep, i = pos[mid]
            for n in (i - 1, i + 1):
                if 0 <= n < len(seq[ep]):
                    nid = seq[ep][n]["message_id"]
                    spread[nid] = spread.get(nid, 0.0) + w.lexical_neighbours * cand[mid]["lex"]
        for nid, extra in spread.items():
            ep, i = pos[nid]
            r = cand.setdefault(nid, seq[ep][i])
            r["lex"] = r.get("lex", 0.0) + extra
        top_lex = max((r.get("lex", 0.0) for r in cand.values()), default=0.0) or 1.0
        for r in cand.values():
            if "lex" in r:
                r["lex"] /= top_lex

    ids = list(cand)
    rows = [cand[i] for i in ids]
    V = np.asarray([r["vector"] for r in rows], dtype=np.float32)
    sem = V @ qvec
    lex = np.asarray([r.get("lex", 0.0) for r in rows])
    lex_present = np.asarray(["lex" in r for r in rows])
    summ_s = np.asarray([summary_support.get(i, 0.0) for i in ids])

    # ---- episode context: message + neighbours, cosine to the query ------------------------
    ctx = _context_scores(seq, pos, rows, V, qvec)
    t = lap("context", t)

    ref_now = {c: _naive(now) if now else datetime.fromisoformat(ts) for c, ts in watermarks.items()}
    age_days = np.asarray([max(0.0, (ref_now.get(r["chat_id"], r["ts"]) - r["ts"]).total_seconds() / 86400)
                           if r["ts"] is not None else 0.0 for r in rows])
    rec = np.power(0.5, age_days / max(w.half_life_days, 1e-6))
    # A question about a named participant is mostly answered by that participant's own lines
    # ("What did Melanie paint?" -> Melanie: "I painted..."); naming everyone carries no signal.
    spk = np.asarray([1.0 if named and len(named) < len(people) and r["author"] in named else 0.0 for r in rows])
    sal = np.clip(np.asarray([r.get("salience") or 0.0 for r in rows], dtype=float), 0.0, 1.0)
    # "What did Jon say on 3 June, 2023?": messages of that day (or month) answer it.
    on_date = np.zeros(len(rows))
    pad = timedelta(days=w.date_pad_days)
    for first, last in dates_in(query) if w.date > 0 else []:
        days = [r["ts"].date() if r["ts"] is not None else None for r in rows]
        near = np.asarray([d is not None and first - pad <= d <= last + pad for d in days], dtype=float)
        exact = np.asarray([d is not None and first <= d <= last for d in days], dtype=float)
        on_date = np.maximum(on_date, 0.5 * near + 0.5 * exact)

    if w.fusion == "rrf":
        parts = [(w.semantic, _rrf(sem, w.rrf_k)), (w.lexical, _rrf(lex, w.rrf_k, lex_present)),
                 (w.context, _rrf(ctx, w.rrf_k)), (w.summary, _rrf(summ_s, w.rrf_k, summ_s > 0))]
    else:
        parts = [(w.semantic, _minmax(sem)), (w.lexical, lex), (w.context, _minmax(ctx)), (w.summary, summ_s)]
    parts += [(w.speaker, spk), (w.recency, rec), (w.salience, sal), (w.date, on_date)]
    total_w = sum(wt for wt, _ in parts) or 1.0
    fused = sum(wt * x for wt, x in parts) / total_w
    base = fused
    if w.episode > 0:
        # Lines of the episode that best matches the query are likelier answers than equally
        # scored strays: add the episode's best fused score (kept on the 0..1 scale).
        best: dict[str | None, float] = {}
        for r, f in zip(rows, fused):
            best[r["episode_id"]] = max(best.get(r["episode_id"], 0.0), float(f))
        ep_best = np.asarray([best[r["episode_id"]] if r["episode_id"] else f for r, f in zip(rows, fused)])
        fused = (fused + w.episode * ep_best) / (1.0 + w.episode)

    order = _mmr(fused, V, k, w.mmr_lambda) if w.mmr_lambda < 1.0 else list(np.argsort(-fused, kind="stable")[:k])
    t = lap("fuse", t)

    for j in order:
        r = rows[j]
        comp = ScoreComponents(semantic=round(float(sem[j]), 4), lexical=round(float(lex[j]), 4),
                               context=round(float(ctx[j]), 4), recency=round(float(rec[j]), 4),
                               salience=round(float(sal[j]), 4), summary=round(float(summ_s[j]), 4),
                               speaker=float(spk[j]))
        # Weak support: no signal clearly fires (dense below ~0.4 is topical noise for MiniLM),
        # or just one does and the fused score is low.
        strong = int(sem[j] >= 0.4) + int(lex[j] >= 0.4) + int(summ_s[j] >= 0.4)
        uncertain = strong == 0 or (strong == 1 and base[j] < w.uncertain_below)
        pack.items.append(EvidenceItem(
            message_id=r["message_id"], episode_id=r["episode_id"], chat_id=r["chat_id"], ts=r["ts"],
            author=r["author"], text=r["text"], score=round(float(fused[j]), 4), components=comp,
            via="raw" if ("_distance" in r or "lex" in r) else "summary", uncertain=bool(uncertain)))
    timing["total"] = round((time.perf_counter() - t_start) * 1000, 2)
    pack.timing_ms = timing
    if log is not None:
        log.write(query=query, params={"k": k, "chats": chats, "since": since, "until": until, "now": now,
                                       "expand": expand, "weights": w.model_dump()},
                  item_ids=pack.message_ids, scores=[i.score for i in pack.items],
                  uncertain=[i.uncertain for i in pack.items], latency_ms=timing["total"], timing=timing,
                  index_versions=pack.index_versions)
    return pack


def _episodes(raw, rows: Iterable[dict], where: str | None
              ) -> tuple[dict[str, list[dict]], dict[str, tuple[str, int]]]:
    """Messages (within the filters) of the candidates' episodes in order, and each one's position."""
    episodes = sorted({r["episode_id"] for r in rows if r["episode_id"]})
    if not episodes:
        return {}, {}
    members = _fetch(raw, sql_in("episode_id", episodes) + (f" AND {where}" if where else ""), RAW_COLS)
    seq: dict[str, list[dict]] = {}
    for m in members:
        seq.setdefault(m["episode_id"], []).append(m)
    pos: dict[str, tuple[str, int]] = {}
    for ep, ms in seq.items():
        ms.sort(key=lambda m: (m["ts"], m["message_id"]))
        for i, m in enumerate(ms):
            pos[m["message_id"]] = (ep, i)
    return seq, pos


def _context_scores(seq: dict[str, list[dict]], pos: dict[str, tuple[str, int]], rows: list[dict],
                    V: np.ndarray, qvec: np.ndarray) -> np.ndarray:
    """cos(query, normalise(2·self + prev + next)) within each candidate's episode."""
    ctx = V @ qvec
    for j, r in enumerate(rows):
        if r["message_id"] not in pos:
            continue
        ep, i = pos[r["message_id"]]
        ms = seq[ep]
        v = 2.0 * V[j]
        for n in (i - 1, i + 1):
            if 0 <= n < len(ms):
                v = v + np.asarray(ms[n]["vector"], dtype=np.float32)
        ctx[j] = float(v @ qvec) / (float(np.linalg.norm(v)) or 1.0)
    return ctx


def _mmr(scores: np.ndarray, V: np.ndarray, k: int, lam: float) -> list[int]:
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


def retrieve_baseline(query: str, index: str | Path | MemoryIndex, k: int = 10,
                      mode: Literal["bm25", "dense"] = "dense", *,
                      chats: Iterable[str] | None = None) -> EvidencePack:
    """Single-signal baselines on the message table (no fusion, no rerank, no query tricks)."""
    t0 = time.perf_counter()
    idx = open_index(index)
    raw = idx.table(RAW_TABLE)
    pack = EvidencePack(query=query, watermarks=idx.pointer.get("watermarks") or idx.watermarks(),
                        index_versions=idx.table_versions())
    if raw is None:
        return pack
    where = _filters(list(chats) if chats is not None else None, None, None, "ts", "ts")
    if mode == "bm25":
        hits = _search(raw, " ".join(words(query)), k, where, RAW_COLS, fts_col="passage")
        score = [r["_score"] for r in hits]
    elif mode == "dense":
        hits = _search(raw, idx.embedder.encode_query(query), k, where, RAW_COLS)
        score = [1.0 - r["_distance"] for r in hits]
    else:
        raise ValueError(f"unknown baseline mode {mode!r}")
    for r, s in zip(hits, score):
        comp = ScoreComponents(**({"lexical": s} if mode == "bm25" else {"semantic": s}))
        pack.items.append(EvidenceItem(message_id=r["message_id"], episode_id=r["episode_id"],
                                       chat_id=r["chat_id"], ts=r["ts"], author=r["author"], text=r["text"],
                                       score=round(float(s), 4), components=comp, via="raw", uncertain=False))
    pack.timing_ms = {"total": round((time.perf_counter() - t0) * 1000, 2)}
    return pack


