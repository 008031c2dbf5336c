"""Questions anchored on another fact: "Where did I work before Northwind Analytics?", "Who did I date
before Priya?".

Retrieval reads such a question as one about its anchor: every line naming Northwind scores, and a
small model answers "You worked at Northwind Analytics before it". The published facts know the
order. The fact the anchor's fact superseded (or the same predicate's latest fact that
ended before it began) is what held before, and the anchor's `valid_from` is when "before" ends.
`resolve` finds both. The `timeline` node (the graph's step before retrieval) then has the turn show
that fact with its evidence messages above every hit (`State.pinned`) and search the question
without its anchor clause, bounded to that side of the anchor's date (`State.search`, read by
`published.retrieve_summaries`). A question whose anchor no fact's value names is left to plain
retrieval.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass
from datetime import date, datetime, time as dtime

from langgraph.runtime import Runtime

from truffle_assets.memory.facts.values import ascii_fold
from truffle_assets.runtime.dates import day_of
from truffle_assets.runtime.prompts import text
from truffle_assets.runtime.published import fetch_messages, item_from_row, load_facts
from truffle_assets.runtime.state import Context, State, elapsed_ms

# "before X" / "after X", X running to the end of the question; "before I joined X" keeps X only
_ANCHOR = re.compile(r"\b(before|after)\s+(?:i\s+(?:moved|joined|started|met|got|went|switched|shifted)"
                     r"(?:\s+(?:to|at|with|in|into))?\s+)?(?P<x>[^?!.]+?)\s*[?!.]*\s*$", re.I)
_WORD = re.compile(r"[a-z0-9]+")
_STOP = frozenset("a an the my at in to of for with and job company city place".split())
MAX_NEIGHBOURS = 2  # "Where did I work before X?" can mean the employer or the title: show both


@dataclass(frozen=True)
class Anchor:
    direction: str  # "before" | "after"
    phrase: str     # the anchor as asked ("Northwind Analytics")
    rest: str       # the question without its anchor clause ("Where did I work")


@dataclass(frozen=True)
class Resolution:
    anchor: Anchor
    anchor_fact: str                       # fact id of the fact the anchor names
    neighbours: list[tuple[str, dict]]     # (fact id, fact) that held just before (after) it
    bound: date | None                     # the anchor's start ("before") or end ("after")


def _words(s: str) -> set[str]:
    return {w for w in _WORD.findall(ascii_fold(s or "").lower()) if w not in _STOP}


def anchor_of(question: str) -> Anchor | None:
    m = _ANCHOR.search(question or "")
    if not m or not _words(m["x"]):
        return None
    rest = (question[: m.start()].rstrip(" ,") or question).strip()
    return Anchor(m[1].lower(), m["x"].strip(), rest)


def _names(phrase: set[str], fact: dict) -> float:
    """How fully the anchor phrase and the fact's value name each other: every word of the shorter."""
    value = _words(str(fact.get("value") or ""))
    if not value or not phrase:
        return 0.0
    return len(value & phrase) / min(len(value), len(phrase))


def _neighbours(direction: str, fid: str, fact: dict, facts: dict[str, dict]) -> list[tuple[str, dict]]:
    same = [(i, f) for i, f in facts.items() if i != fid and f.get("predicate") == fact.get("predicate")]
    if direction == "before":
        chained = [(i, f) for i, f in same if f.get("superseded_by") == fid]
        start = day_of(fact.get("valid_from"))
        ended = [(i, f) for i, f in same if start and day_of(f.get("valid_to")) and day_of(f["valid_to"]) <= start]
        pick = chained or sorted(ended, key=lambda x: str(x[1].get("valid_to")))[-1:]
    else:
        nxt = fact.get("superseded_by")
        end = day_of(fact.get("valid_to"))
        begun = [(i, f) for i, f in same if end and day_of(f.get("valid_from")) and day_of(f["valid_from"]) >= end]
        pick = [(nxt, facts[nxt])] if nxt in facts else sorted(begun, key=lambda x: str(x[1].get("valid_from")))[:1]
    return pick


def resolve(question: str, facts: dict[str, dict]) -> Resolution | None:
    """The facts a "before X"/"after X" question is about, or None when no dated fact's value names X."""
    anchor = anchor_of(question)
    if anchor is None:
        return None
    phrase = _words(anchor.phrase)
    # the dated facts X names fully, the most confident first
    named = [i for _, i in sorted(((float(f.get("confidence") or 0.0), i) for i, f in facts.items()
                                   if f.get("valid_from") and _names(phrase, f) == 1.0), reverse=True)]
    found: dict[str, dict] = {}
    first: str | None = None
    for fid in named:  # the employer and the title can both name "Northwind Analytics": both count
        for i, f in _neighbours(anchor.direction, fid, facts[fid], facts):
            found.setdefault(i, f)
            first = first or fid
    if not named:
        return None
    first = first or named[0]  # nothing held before (after) it: the date still bounds the search
    f = facts[first]
    side = f.get("valid_from") if anchor.direction == "before" else f.get("valid_to") or f.get("valid_from")
    return Resolution(anchor, first, list(found.items())[:MAX_NEIGHBOURS], day_of(side))


def evidence(fact: dict, n: int = 2) -> list[str]:
    """The first `n` messages a fact rests on: what the turn shows beside it."""
    return [str(m) for m in (fact.get("evidence_message_ids") or [])[:n]]


def describe(neighbours: list[tuple[str, dict]], shown: set[str]) -> str:
    """"Works at: Zentrix (2019-03-14 to 2022-07-11, fact dc3124) [msg:…]; …": each fact with its time
    span and the first of its messages the prompt shows, so the answer can cite it."""
    from truffle_assets.ids import shown_fact_id

    out = []
    for fid, fact in neighbours:
        span = " to ".join(str(fact.get(k))[:10] if fact.get(k) else "?" for k in ("valid_from", "valid_to"))
        what = fact.get("fact_text") or f"{fact.get('predicate')}: {fact.get('value')}"
        cite = next((f" [msg:{m}]" for m in evidence(fact) if m in shown), "")
        out.append(f"{what} ({span}, fact {shown_fact_id(fid)}){cite}")
    return "; ".join(out)


# ---- the node ---------------------------------------------------------------------------------------

def timeline(state: State, runtime: Runtime[Context]) -> dict:
    """A "before X"/"after X" question: the facts that held before (after) X become shown facts, their
    messages are pinned above every retrieval hit, and the retrieval searches only that side of X's
    date, without X's words (`resolve`). Any other question, or `Context.timeline` off: nothing."""
    ctx = runtime.context
    t0 = time.perf_counter()
    step: dict = {"step": "timeline"}
    if not ctx.timeline or not ctx.pointer.is_file():
        return {"trace": [step | {"ms": elapsed_ms(t0)}]}
    try:
        res = resolve(state.question, load_facts(ctx.published_dir))
        rows = fetch_messages(ctx.pointer, [m for _, f in res.neighbours for m in evidence(f)]) if res else []
    except Exception as exc:  # noqa: BLE001 - without it the question is searched as asked
        return {"trace": [step | {"error": f"{type(exc).__name__}: {exc}"[:300], "ms": elapsed_ms(t0)}]}
    if res is None:
        return {"trace": [step | {"ms": elapsed_ms(t0)}]}
    edge = datetime.combine(res.bound, dtime.min).isoformat() if res.bound else None
    before = res.anchor.direction == "before"
    search = {"query": res.anchor.rest, "since": None if before else edge, "until": edge if before else None}
    notes = [text("timeline_note", direction=res.anchor.direction, anchor=res.anchor.phrase,
                  facts=describe(res.neighbours, {r["message_id"] for r in rows}))] if res.neighbours else []
    step["timeline"] = {"direction": res.anchor.direction, "anchor_fact": res.anchor_fact,
                        "facts": [fid for fid, _ in res.neighbours], "bound": str(res.bound) if res.bound else None}
    return {"search": search, "facts": [{**f, "fact_id": fid} for fid, f in res.neighbours],
            "pinned": [item_from_row(r, 0.0, 0, "timeline") for r in rows], "recall_notes": notes,
            "trace": [step | {"ms": elapsed_ms(t0)}]}
