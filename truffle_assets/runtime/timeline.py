"""Questions anchored on another fact: "Where did I work before Northwind Analytics?", "Who did I date
before Priya?".

Retrieval reads such a question as one about its anchor: every line naming Northwind scores, and the
small model answered "You worked at Northwind Analytics before it" (validation: 6 of the 13
answerable questions whose fact's message the prompt missed were "before X"). The published facts
know the order. The fact the anchor's fact superseded (or the same predicate's latest fact that
ended before it began) is what held before, and the anchor's `valid_from` is when "before" ends.
`resolve` finds both; the turn then shows that fact with its evidence messages first and searches
the question without its anchor clause, bounded to that side of the anchor's date
(`runtime.published.retrieve_summaries`). A question whose anchor no fact's value names is left to
plain retrieval.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date

from truffle_assets.memory.facts.values import ascii_fold
from truffle_assets.runtime.dates import day_of

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
