"""Per-candidate signals, each a float array aligned with the candidate rows.

Rows are the dicts the index returns (`ts`, `chat_id`, `author`, `salience`, ...); nothing here
touches the index, so every signal can be checked on hand-made rows.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date, datetime, timedelta

import numpy as np

from truffle_assets.index.keys import tags_of, text_tags
from truffle_assets.retrieval.models import RetrievalWeights
from truffle_assets.retrieval.query import QueryTerms


@dataclass
class Signals:
    """Field names follow `RetrievalWeights`, which weighs them in `fusion.fuse`."""

    semantic: np.ndarray         # cosine(query, passage)
    lexical: np.ndarray          # BM25 share of the best hit, neighbour spread included
    lexical_present: np.ndarray  # BM25 (or its spread) reached the candidate at all
    context: np.ndarray          # cosine(query, message + episode neighbours)
    summary: np.ndarray          # score of the best matching summary that expanded to it
    speaker: np.ndarray
    recency: np.ndarray
    salience: np.ndarray
    date: np.ndarray
    keys: np.ndarray             # BM25 on the message's entities and answer tags, share of the best hit
    answer: np.ndarray           # the message holds the kind of answer the question asks for (a date for "when")
    asks: np.ndarray | None = None  # share of the message's sentences that are questions (None: all 0)


def naive(dt: datetime | None) -> datetime | None:
    """Index timestamps are naive local times: drop a tz rather than compare across kinds."""
    return dt.replace(tzinfo=None) if dt is not None and dt.tzinfo is not None else dt


def context_scores(seq: dict[str, list[dict]], pos: dict[str, tuple[str, int]], rows: list[dict],
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


def recency(rows: list[dict], watermarks: dict[str, str], now: datetime | None,
            half_life_days: float) -> np.ndarray:
    """0.5 ** (age / half-life), age from `now` or else from the chat's newest message."""
    ref_now = {c: naive(now) if now else datetime.fromisoformat(ts) for c, ts in watermarks.items()}
    age_days = np.asarray([max(0.0, (ref_now.get(r["chat_id"], r["ts"]) - r["ts"]).total_seconds() / 86400)
                           if r["ts"] is not None else 0.0 for r in rows])
    return np.power(0.5, age_days / max(half_life_days, 1e-6))


def speaker_match(rows: list[dict], named: list[str], people: list[str], about_self: bool = False) -> np.ndarray:
    """1 for lines by a participant the query names. A question about a named participant is mostly
    answered by their own lines ("What did Melanie paint?" -> Melanie: "I painted..."); naming
    everyone carries no signal. With `about_self` (the question says "I"/"my" and names nobody)
    the memory owner's own lines match instead."""
    if about_self and not named:
        return np.asarray([1.0 if r.get("is_user") else 0.0 for r in rows])
    return np.asarray([1.0 if named and len(named) < len(people) and r["author"] in named else 0.0 for r in rows])


def salience(rows: list[dict]) -> np.ndarray:
    return np.clip(np.asarray([r.get("salience") or 0.0 for r in rows], dtype=float), 0.0, 1.0)


def date_match(rows: list[dict], spans: list[tuple[date, date]], pad_days: int) -> np.ndarray:
    """"What did Jon say on 3 June, 2023?": 1 for messages of a named day (or month), 0.5 within
    `pad_days` of it."""
    on_date = np.zeros(len(rows))
    pad = timedelta(days=pad_days)
    for first, last in spans:
        days = [r["ts"].date() if r["ts"] is not None else None for r in rows]
        near = np.asarray([d is not None and first - pad <= d <= last + pad for d in days], dtype=float)
        exact = np.asarray([d is not None and first <= d <= last for d in days], dtype=float)
        on_date = np.maximum(on_date, 0.5 * near + 0.5 * exact)
    return on_date


def answer_match(rows: list[dict], wanted: list[str]) -> np.ndarray:
    """1 for messages that hold the kind of answer the question's wording wants ("When ..." -> a
    date): a tag in their keys (NER, when the index computed them) or, from the text itself, a time
    expression ("yesterday", "last weekend", "in March")."""
    if not wanted:
        return np.zeros(len(rows))
    want = set(wanted)
    return np.asarray([1.0 if want & (tags_of(r.get("keys")) | text_tags(r.get("text"))) else 0.0 for r in rows])


_SENTENCE = re.compile(r"[^.!?]+[.!?]*")


def asks(text: str | None) -> float:
    """Share of a message's sentences that end in a question mark.

    A line that asks ("How did you two meet?") shares the question's words and meaning but
    rarely holds its answer, which sits in the reply; fusion docks such lines (`RetrievalWeights.asking`)."""
    parts = [p.strip() for p in _SENTENCE.findall(text or "") if p.strip()]
    return sum(p.endswith("?") for p in parts) / len(parts) if parts else 0.0


def measure(rows: list[dict], V: np.ndarray, qvec: np.ndarray, context: np.ndarray, summary_support: dict[str, float],
            terms: QueryTerms, watermarks: dict[str, str], now: datetime | None, w: RetrievalWeights) -> Signals:
    """Every signal for the candidate `rows` (V: their vectors; `lex` already on the rows)."""
    return Signals(
        semantic=V @ qvec,
        lexical=np.asarray([r.get("lex", 0.0) for r in rows]),
        lexical_present=np.asarray(["lex" in r for r in rows]),
        context=context,
        summary=np.asarray([summary_support.get(r["message_id"], 0.0) for r in rows]),
        speaker=speaker_match(rows, terms.named, terms.people, terms.about_self and w.self_speaker),
        recency=recency(rows, watermarks, now, w.half_life_days),
        salience=salience(rows),
        date=date_match(rows, terms.dates if w.date > 0 else [], w.date_pad_days),
        keys=np.asarray([r.get("key", 0.0) for r in rows]),
        # like the date: skipped at weight 0 (the text fallback is a regex per candidate), unless the
        # learned fusion reads it as a feature
        answer=answer_match(rows, terms.wanted if w.answer > 0 or w.fusion == "learned" else []),
        asks=np.asarray([asks(r.get("text")) for r in rows]),
    )
