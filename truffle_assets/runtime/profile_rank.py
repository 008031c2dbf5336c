"""Which profile facts a question is about.

The prompt's profile section has room for a handful of facts (its token budget, with fact ids), so
which ones it shows decides what the model can answer from the profile. Ranked by confidence, "Where
do I work now?" got the name, the home, a brother and the favourite sport, and never "Works at": the
model then answered from a chat named after the old employer. Ranked by the cosine between the
question and each fact line (the same MiniLM embedder the index uses), the question's own facts come
first. Past facts compete only when the question asks about the past: shown beside the current
ones, "Which city do I live in?" was answered with the old city under "Previously" (held-out QA).
"""

from __future__ import annotations

import re
from collections import OrderedDict
from threading import Lock

import numpy as np

_CACHE: OrderedDict[str, tuple[list[str], np.ndarray]] = OrderedDict()  # profile content hash -> ids, vectors
_LOCK = Lock()
_KEEP = 4
# Words that point a question at the past: "before", "used to", "did I", "was my", "ever", Hinglish
# "pehle"/"tha". A plain present question ("where do I work?") has none of them.
_PAST = re.compile(r"\b(before|previous(ly)?|used to|earlier|former(ly)?|past|ago|last (year|month|week|time|summer|"
                   r"winter|spring)|ever|back then|originally|grew up|old|ex|until|did|was|were|had|"
                   r"pehle|purana|purani|tha|thi)\b", re.IGNORECASE)


# Without the question to rank by, who the user is now comes first, then the most confident facts: by
# confidence alone the sample's profile section showed name, home, a brother and the favourite sport
# and not "Works at: Northwind" (14th of 30), and "Where do I work now?" was answered with the old job.
CORE = frozenset({"name", "lives_in", "employer", "job", "partner"})


def standing(entry: dict) -> float:
    """A current profile fact's place without a question: the core facts above every other."""
    return float(entry.get("confidence") or 0.0) + (1.0 if entry.get("predicate") in CORE else 0.0)


def asks_about_past(question: str) -> bool:
    return bool(_PAST.search(question or ""))


def fact_lines(profile: dict | None) -> list[tuple[str, str]]:
    """(fact id, "text (category)") for every current and past fact of a published profile."""
    if not profile:
        return []
    out = [(str(e.get("id")), f"{e.get('text') or ''} ({cat})")
           for cat, entries in (profile.get("facts") or {}).items() for e in entries or []]
    out += [(str(p.get("id")), str(p.get("text") or "")) for p in profile.get("previously") or []]
    return [(i, t) for i, t in out if t.strip()]


def relevance(profile: dict | None, question: str, embedder) -> dict[str, float]:
    """Fact id -> cosine(question, fact line), past facts only for a question about the past. Fact
    vectors are kept per profile version, so a turn embeds only its question once the profile has
    been seen."""
    lines = fact_lines(profile)
    if not lines or not question.strip():
        return {}
    key = str(profile.get("content_hash") or hash(tuple(lines)))
    with _LOCK:
        hit = _CACHE.get(key)
    if hit is None:
        hit = ([i for i, _ in lines], embedder.encode([t for _, t in lines]))
        with _LOCK:
            _CACHE[key] = hit
            while len(_CACHE) > _KEEP:
                _CACHE.popitem(last=False)
    ids, vectors = hit
    scores = vectors @ embedder.encode_query(question)
    past = set() if asks_about_past(question) else {str(p.get("id")) for p in profile.get("previously") or []}
    return {i: round(float(s), 4) for i, s in zip(ids, scores) if i not in past}
