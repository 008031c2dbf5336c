"""The user profile: a compact, versioned snapshot of current, confident facts for an LLM's context.

`build_profile(facts, user, generated_at)` keeps facts that hold now (valid_to null) with confidence
>= min_confidence, groups them by category (each with its fact id and how many messages support
it), adds a short "previously" list of superseded/ended facts and the people the user writes to
most in one-to-one chats (`closest_people`), and trims lowest-confidence facts
until the JSON's token estimate (characters / 4) fits `max_tokens`.
`write_profile(path, profile)` writes it atomically as indented JSON (`files.write_json_atomic`) with a
`content_hash` over everything but the timestamp, and a `version` that goes up only when that content
changes. Each fact is named by `fact_id`, as in facts.json and everywhere the product shows a fact.
"""

from __future__ import annotations

import hashlib
import json
from datetime import date, datetime
from pathlib import Path

import polars as pl

from truffle_assets.files import json_default, write_json_atomic

CATEGORIES = ("identity", "home", "work", "relationship", "health", "preference", "hobby", "habit", "skill",
              "education", "possession", "goal", "event")
PREVIOUSLY_MAX = 10
_VOLATILE = ("version", "content_hash", "generated_at")


def estimate_tokens(obj: object) -> int:
    """Characters / 4 of the compact JSON rendering."""
    return len(json.dumps(obj, ensure_ascii=False, default=json_default, separators=(",", ":"))) // 4


def _iso(v: object) -> str | None:
    if v is None:
        return None
    if isinstance(v, datetime):
        return v.date().isoformat()
    if isinstance(v, date):
        return v.isoformat()
    return str(v)


def _entry(f: dict) -> dict:
    e = {"fact_id": f["id"], "text": f["fact_text"], "predicate": f["predicate"], "value": f["value"],
         "confidence": round(float(f["confidence"]), 2), "evidence": len(f["evidence_message_ids"] or [])}
    if f.get("valid_from") is not None:
        e["since"] = _iso(f["valid_from"])
    return e


PEOPLE_MAX = 5
# who the user writes to most in one-to-one chats: a relationship no message states
CLOSEST_PEOPLE_SQL = """
WITH pair AS (
  SELECT chat_id FROM messages WHERE kind = 'message' AND author IS NOT NULL
  GROUP BY chat_id HAVING COUNT(DISTINCT author) FILTER (WHERE NOT is_user) = 1
     AND COUNT(*) FILTER (WHERE is_user) > 0
)
SELECT any_value(m.author) FILTER (WHERE NOT m.is_user) AS name, m.chat_id,
       COUNT(*) FILTER (WHERE m.is_user) AS your_messages, MAX(m.ts) AS last_message_at
FROM messages m JOIN pair USING (chat_id) WHERE m.kind = 'message'
GROUP BY m.chat_id ORDER BY your_messages DESC, m.chat_id LIMIT ?
"""


def closest_people(rows: list[tuple]) -> list[dict]:
    """CLOSEST_PEOPLE_SQL rows -> profile entries with each person's share of the user's 1:1 messages."""
    total = sum(r[2] for r in rows) or 1
    return [{"name": name, "chat_id": chat, "your_messages": int(n), "share": round(n / total, 3),
             "last_message_at": _iso(last)} for name, chat, n, last in rows if name]


def build_profile(facts: pl.DataFrame, user: str | None, generated_at: datetime, max_tokens: int = 5000,
                  min_confidence: float = 0.6, people: list[dict] | None = None) -> dict:
    """Current confident facts by category + a short 'previously' list + the people the user writes to
    most, within `max_tokens` (chars/4)."""
    rows = facts.to_dicts() if facts.height else []
    if user is not None:
        rows = [f for f in rows if f["subject"] == user]
    current = [f for f in rows if f["valid_to"] is None and f["confidence"] >= min_confidence]
    past = [f for f in rows if f["valid_to"] is not None and f["confidence"] >= min_confidence]
    current.sort(key=lambda f: (-f["confidence"], f["category"], f["predicate"], f["id"]))
    past.sort(key=lambda f: (f["valid_to"], f["id"]), reverse=True)
    past = past[:PREVIOUSLY_MAX]
    by_id = {f["id"]: f for f in rows}

    def render(cur: list[dict], prev: list[dict]) -> dict:
        cats: dict[str, list[dict]] = {}
        for f in sorted(cur, key=lambda f: (f["predicate"], -f["confidence"], f["id"])):
            cats.setdefault(f["category"], []).append(_entry(f))
        previously = []
        for f in prev:
            p = {"fact_id": f["id"], "text": f["fact_text"], "predicate": f["predicate"], "value": f["value"],
                 "until": _iso(f["valid_to"])}
            if f.get("superseded_by") in by_id:
                p["superseded_by"] = f["superseded_by"]
            previously.append(p)
        ordered = {c: cats[c] for c in CATEGORIES if c in cats}
        ordered.update({c: v for c, v in sorted(cats.items()) if c not in CATEGORIES})
        prof = {"user": user, "generated_at": generated_at.isoformat(), "facts": ordered,
                "previously": previously, "people": list(people or [])[:PEOPLE_MAX], "n_facts": len(cur),
                "token_estimate": 0}
        prof["token_estimate"] = estimate_tokens(prof) + 2  # + the digits of the estimate itself
        return prof

    prof = render(current, past)
    if prof["token_estimate"] <= max_tokens:
        return prof

    # Over budget: keep the k most confident current facts (with a 'previously' list of about k/4);
    # the largest k that fits, by binary search (size grows with k).
    def with_k(k: int) -> dict:
        return render(current[:k], past[:min(len(past), max(2, k // 4))])

    lo, hi = 0, len(current)
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if with_k(mid)["token_estimate"] <= max_tokens:
            lo = mid
        else:
            hi = mid - 1
    prof = with_k(lo)
    n_past = min(len(past), max(2, lo // 4))
    while prof["token_estimate"] > max_tokens and n_past > 0:
        n_past -= 1
        prof = render(current[:lo], past[:n_past])
    return prof


FACTS_FORMAT = 2  # facts.json's layout: one `fact_id` per fact, ISO 8601 timestamps (a file without it is rebuilt)


def published_facts(facts: pl.DataFrame) -> list[dict]:
    """facts.json's rows: every column of table `facts`, its `id` named `fact_id` (one id field per fact)."""
    return [{"fact_id": f.pop("id"), **f} for f in facts.to_dicts()] if facts.height else []


def content_hash(profile: dict) -> str:
    body = {k: v for k, v in profile.items() if k not in _VOLATILE}
    blob = json.dumps(body, ensure_ascii=False, sort_keys=True, default=json_default, separators=(",", ":"))
    return hashlib.sha256(blob.encode()).hexdigest()[:16]


def write_profile(path: Path, profile: dict) -> dict:
    """Atomically write `profile` as indented JSON; version + 1 only when the content (not the timestamp) changed.

    Unchanged content leaves the file as it is and returns what it holds (same version).
    """
    path = Path(path)
    digest = content_hash(profile)
    version = 1
    if path.is_file():
        try:
            prev = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            prev = {}
        pv = int(prev.get("version") or 0)
        if prev.get("content_hash") == digest and pv:
            return prev
        version = pv + 1
    out = {**profile, "version": version, "content_hash": digest}
    write_json_atomic(path, out)  # the token estimate counts the compact form, which is what a prompt holds
    return out
