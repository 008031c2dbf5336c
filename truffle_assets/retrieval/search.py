"""Hybrid retrieval over the memory index: dense + BM25 on messages and summaries, fused, reranked.

`retrieve()` runs these stages (each timed into `EvidencePack.timing_ms`); the index lookups stay
here, the stages themselves take plain rows and arrays:
1. embed the query once (with the participants it names said as "they", `query.without_names`);
   `query.query_terms`: BM25 words (question-frame words and the names of
   the speakers it mentions dropped), named speakers, calendar dates;
2. search: vector and BM25 (LanceDB native FTS) on the message table, the same on the summary
   table (`candidates.score_summaries`);
3. candidate pool (`candidates`): dense and BM25 hits, plus the messages of the best summaries
   most similar to the query (`expand_summaries`), so the ranked items are always messages; each
   BM25 hit passes a share of its score to its episode neighbours, which join the pool
   (`spread_lexical`: chat answers often sit one line after the question that names the topic);
4. signals (`signals.measure`) for every candidate, whichever search found it: cosine to the
   query, BM25 (0 when BM25 did not reach it), context cosine (the message plus its episode
   neighbours), summary support, recency decay, episode salience, speaker named in the query, sent
   on a date the query names, the share of its sentences that ask (a penalty);
5. fusion (`fusion`): normalised weighted sum by default (weighted RRF available), blended with
   the best fused score of each candidate's episode, ranked (optionally MMR-diversified), and
   flagged uncertain where support is weak.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterable
from datetime import datetime
from pathlib import Path
from typing import Any, Literal

import numpy as np

from truffle_assets.index.embedder import Embedder
from truffle_assets.index.lance import RAW_TABLE, SUMMARY_TABLE, MemoryIndex, present, sql_in, sql_lit
from truffle_assets.retrieval.candidates import (
    add_key_hits, candidate_pool, expand_summaries, score_summaries, spread_lexical,
)
from truffle_assets.retrieval.fusion import blend_episode_best, fuse, is_uncertain, rank
from truffle_assets.retrieval.log import RetrievalLog
from truffle_assets.retrieval.models import (
    EvidenceItem,
    EvidencePack,
    RetrievalWeights,
    ScoreComponents,
    SummaryHit,
)
from truffle_assets.retrieval.query import query_terms, without_names, words
from truffle_assets.retrieval.signals import Signals, context_scores, measure, naive

RAW_COLS = ["message_id", "episode_id", "chat_id", "ts", "author", "is_user", "text", "salience", "vector"]
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


def _filters(chats: Iterable[str] | None, since: datetime | None, until: datetime | None,
             start_col: str, end_col: str) -> str | None:
    parts = []
    if chats:
        parts.append(sql_in("chat_id", list(chats)))
    if since is not None:
        parts.append(f"{end_col} >= {sql_lit(naive(since))}")
    if until is not None:
        parts.append(f"{start_col} <= {sql_lit(naive(until))}")
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
    fetch = limit * 2 if fts_col is not None else limit  # room for a BM25 tie group (`_exact_top`)
    try:
        rows = _rows(q.select(cols + [score_col]).limit(fetch).to_arrow())
        return _exact_top(rows, limit, fetch) if fts_col is not None else sorted(rows, key=lambda r: (r[score_col], _key(r)))
    except Exception as exc:  # no FTS index and no rows yet, etc.: a missing signal, not an error
        if fts_col is None:
            raise
        import logging
        logging.getLogger(__name__).debug("FTS search skipped: %s", exc)
        return []


def _key(r: dict) -> tuple[str, str, str]:
    return (r.get("message_id") or "", r.get("episode_id") or "", r.get("tier") or "")


def _exact_top(rows: list[dict], limit: int, fetched: int) -> list[dict]:
    """The best `limit` BM25 rows, the same in every process. Equal scores are common (short messages
    sharing a word), and the engine cuts a tie group at its limit arbitrarily, so the same question
    found different candidates run to run: rows are ordered by score then id, and a tie group that
    reaches the last row fetched (and so may be cut) is left out unless nothing else is left."""
    rows.sort(key=lambda r: (-r["_score"], _key(r)))
    if len(rows) == fetched and rows:
        whole = [r for r in rows if r["_score"] > rows[-1]["_score"]]
        rows = whole or rows
    return rows[:limit]


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


def retrieve(query: str, index: str | Path | MemoryIndex, k: int = 10, *,
             chats: Iterable[str] | None = None, since: datetime | None = None,
             until: datetime | None = None, now: datetime | None = None,
             weights: RetrievalWeights | None = None, log: RetrievalLog | None = None,
             expand: bool = True) -> EvidencePack:
    w = weights or RetrievalWeights()
    clock = _Clock()
    idx = open_index(index)
    chats = list(chats) if chats is not None else None
    pack = EvidencePack(query=query, watermarks=idx.pointer.get("watermarks") or idx.watermarks(),
                        index_versions=idx.table_versions())
    scored = _scored_pool(query, idx, w, pack, clock, chats, since, until, now, expand)
    if scored is None:
        pack.timing_ms = clock.total()
        return pack
    rows, V, sig = scored
    base = fuse(sig, w)
    # the weak-support flag reads the hand-weighted score's 0..1 scale, whichever fusion ranks
    flag_base = base if w.fusion != "learned" else fuse(sig, w.model_copy(update={"fusion": "score"}))
    fused = blend_episode_best(base, [r["episode_id"] for r in rows], w.episode)
    order = rank(fused, V, k, w.mmr_lambda, [r["episode_id"] for r in rows], w.per_episode)
    clock.lap("fuse")

    pack.items = [_evidence_item(rows[j], sig, j, fused[j], flag_base[j], w) for j in order]
    pack.timing_ms = clock.total()
    if log is not None:
        log.write(query=query, params={"k": k, "chats": chats, "since": since, "until": until, "now": now,
                                       "expand": expand, "weights": w.model_dump()},
                  item_ids=pack.message_ids, scores=[i.score for i in pack.items],
                  uncertain=[i.uncertain for i in pack.items], latency_ms=pack.timing_ms["total"],
                  timing=pack.timing_ms, index_versions=pack.index_versions)
    return pack


def candidate_signals(query: str, index: str | Path | MemoryIndex, weights: RetrievalWeights | None = None, *,
                      chats: Iterable[str] | None = None) -> tuple[list[dict], Signals]:
    """The scored candidate pool of `retrieve` (rows and their signals) without fusion: what
    scripts/fit_fusion.py fits the learned fusion on."""
    idx = open_index(index)
    pack = EvidencePack(query=query)
    scored = _scored_pool(query, idx, weights or RetrievalWeights(), pack, _Clock(),
                          list(chats) if chats is not None else None, None, None, None, True)
    return (scored[0], scored[2]) if scored else ([], None)


def _scored_pool(query: str, idx: MemoryIndex, w: RetrievalWeights, pack: EvidencePack, clock: _Clock,
                 chats: list[str] | None, since: datetime | None, until: datetime | None, now: datetime | None,
                 expand: bool) -> tuple[list[dict], np.ndarray, Signals] | None:
    """Stages 1-4: the candidate rows, their vectors and signals (None when there is nothing to rank).
    Fills `pack.summaries` and the timing laps on the way."""
    raw, summ = idx.table(RAW_TABLE), idx.table(SUMMARY_TABLE)
    if raw is None or not query.strip():
        return None
    watermarks = pack.watermarks

    terms = query_terms(query, _people(idx, chats))
    clock.mark()  # "embed" times the model alone, not opening the index
    qvec = idx.embedder.encode_query(without_names(query, terms.named) if w.unnamed_dense else query)
    clock.lap("embed")
    raw_where = _filters(chats, since, until, "ts", "ts")
    cols = RAW_COLS + present(raw, "keys", "shown_text")  # indexes built before them lack these
    dense = _search(raw, qvec, w.candidates, raw_where, cols)
    clock.lap("dense")
    lexical = _search(raw, terms.bm25, w.candidates, raw_where, cols, fts_col="passage")
    keyed = (_search(raw, terms.keys, w.candidates, raw_where, cols, fts_col="keys")
             if (w.keys > 0 or w.fusion == "learned") and "keys" in cols else [])
    clock.lap("bm25")
    sum_hits = _summary_hits(summ, qvec, terms.bm25, w, _filters(chats, since, until, "start_ts", "end_ts"))
    pack.summaries = [_summary_hit(r) for r in sum_hits]
    clock.lap("summaries")

    cand = candidate_pool(dense, lexical)
    add_key_hits(cand, keyed)
    support: dict[str, float] = {}
    if expand and sum_hits:
        members = _fetch(raw, _and(sql_in("message_id", _member_ids(sum_hits)), raw_where), cols)
        support = expand_summaries(cand, sum_hits, members, qvec, w.expand_per_summary)
    clock.lap("expand")
    if not cand:
        return None

    seq, pos = _episodes(raw, cand.values(), raw_where, cols)
    spread_lexical(cand, lexical, seq, pos, w.lexical_neighbours)
    rows = list(cand.values())
    V = np.asarray([r["vector"] for r in rows], dtype=np.float32)
    ctx = context_scores(seq, pos, rows, V, qvec)
    clock.lap("context")
    return rows, V, measure(rows, V, qvec, ctx, support, terms, watermarks, now, w)


class _Clock:
    """Milliseconds per stage since the previous lap, for `EvidencePack.timing_ms`."""

    def __init__(self) -> None:
        self.start = self.last = time.perf_counter()
        self.timing: dict[str, float] = {}

    def mark(self) -> None:
        self.last = time.perf_counter()

    def lap(self, stage: str) -> None:
        t = time.perf_counter()
        self.timing[stage] = round((t - self.last) * 1000, 2)
        self.last = t

    def total(self) -> dict[str, float]:
        self.timing["total"] = round((time.perf_counter() - self.start) * 1000, 2)
        return self.timing


def _and(clause: str, where: str | None) -> str:
    return clause + (f" AND {where}" if where else "")


def _people(idx: MemoryIndex, chats: list[str] | None) -> list[str]:
    """Participants of the chats searched (all chats when None)."""
    return sorted({p for c, ps in idx.participants().items() if chats is None or c in chats for p in ps})


def _summary_hits(summ, qvec: np.ndarray, bq: str, w: RetrievalWeights, where: str | None) -> list[dict]:
    """Dense and BM25 search on the summary table, merged and scored (see `score_summaries`)."""
    if summ is None or not summ.count_rows():
        return []
    dense = _search(summ, qvec, w.summary_hits * 2, where, SUM_COLS)
    lexical = _search(summ, bq, w.summary_hits * 2, where, SUM_COLS, fts_col="text")
    return score_summaries(dense, lexical, qvec, w)


def _summary_hit(r: dict) -> SummaryHit:
    return SummaryHit(episode_id=r["episode_id"], chat_id=r["chat_id"], start_ts=r["start_ts"], end_ts=r["end_ts"],
                      tier=r["tier"], text=r["text"], score=round(float(r["score"]), 4),
                      evidence_message_ids=list(r["evidence_message_ids"] or r["message_ids"] or []))


def _member_ids(summaries: list[dict]) -> list[str]:
    """Message ids of the summaries' episodes, each once."""
    return list(dict.fromkeys(m for h in summaries for m in (h["message_ids"] or [])))


def _evidence_item(r: dict, sig: Signals, j: int, score: float, base: float, w: RetrievalWeights) -> EvidenceItem:
    comp = ScoreComponents(semantic=round(float(sig.semantic[j]), 4), lexical=round(float(sig.lexical[j]), 4),
                           context=round(float(sig.context[j]), 4), recency=round(float(sig.recency[j]), 4),
                           salience=round(float(sig.salience[j]), 4), summary=round(float(sig.summary[j]), 4),
                           speaker=float(sig.speaker[j]),
                           asks=round(float(sig.asks[j]), 4) if sig.asks is not None else 0.0)
    return EvidenceItem(
        message_id=r["message_id"], episode_id=r["episode_id"], chat_id=r["chat_id"], ts=r["ts"],
        author=r["author"], is_user=bool(r.get("is_user")), text=r["text"], shown_text=r.get("shown_text"),
        score=round(float(score), 4),
        components=comp,
        # dense and BM25 hits (and their BM25 neighbours) are "raw"; the rest came through a summary
        via="raw" if ("_distance" in r or "lex" in r) else "summary",
        uncertain=is_uncertain(sig.semantic[j], sig.lexical[j], sig.summary[j], base, w.uncertain_below))


def _episodes(raw, rows: Iterable[dict], where: str | None, cols: list[str] = RAW_COLS
              ) -> tuple[dict[str, list[dict]], dict[str, tuple[str, int]]]:
    """Messages (within the filters) of the candidates' episodes in order, and each one's position."""
    episodes = sorted({r["episode_id"] for r in rows if r["episode_id"]})
    if not episodes:
        return {}, {}
    members = _fetch(raw, _and(sql_in("episode_id", episodes), where), cols)
    seq: dict[str, list[dict]] = {}
    for m in members:
        seq.setdefault(m["episode_id"], []).append(m)
    pos: dict[str, tuple[str, int]] = {}
    for ep, ms in seq.items():
        ms.sort(key=lambda m: (m["ts"], m["message_id"]))
        for i, m in enumerate(ms):
            pos[m["message_id"]] = (ep, i)
    return seq, pos


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
    cols = RAW_COLS + present(raw, "shown_text")
    if mode == "bm25":
        hits = _search(raw, " ".join(words(query)), k, where, cols, fts_col="passage")
        score = [r["_score"] for r in hits]
    elif mode == "dense":
        hits = _search(raw, idx.embedder.encode_query(query), k, where, cols)
        score = [1.0 - r["_distance"] for r in hits]
    else:
        raise ValueError(f"unknown baseline mode {mode!r}")
    for r, s in zip(hits, score):
        comp = ScoreComponents(**({"lexical": s} if mode == "bm25" else {"semantic": s}))
        pack.items.append(EvidenceItem(message_id=r["message_id"], episode_id=r["episode_id"],
                                       chat_id=r["chat_id"], ts=r["ts"], author=r["author"], text=r["text"],
                                       is_user=bool(r.get("is_user")),
                                       shown_text=r.get("shown_text"),
                                       score=round(float(s), 4), components=comp, via="raw", uncertain=False))
    pack.timing_ms = {"total": round((time.perf_counter() - t0) * 1000, 2)}
    return pack


