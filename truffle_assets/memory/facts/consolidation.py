"""Claims -> the bitemporal `facts` table: one row per (subject, predicate, compatible value) and period.

Single-valued predicates (lives_in, job, partner, diet, ...) form a timeline: a new incompatible
value closes the current fact (valid_to = new valid_from, superseded_by = new id) instead of
deleting it, so `facts_as_of(facts, when)` answers the past. Multi-valued predicates (trip, goal,
pet, sibling, favourite, ...) coexist. A completed event closes a matching goal; "X and I broke up"
closes (or records) the partner fact.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date, datetime

import polars as pl

from truffle_assets.memory.facts.render import restated
from truffle_assets.memory.facts.schema import FACT_COLUMNS, FACT_SCHEMA, SINGLE_VALUED, TIMELESS, ended_predicate, stable_id
from truffle_assets.memory.facts.values import compatible, normalize_value, value_tokens


@dataclass
class _Cluster:
    subject: str
    predicate: str
    category: str
    claims: list[dict]
    valid_from: date | None
    valid_to: date | None = None
    superseded_by: _Cluster | None = None
    id: str = ""

    @property
    def values(self) -> list[str]:
        return [c["value"] for c in self.claims if not c.get("_ending")]

    def best(self) -> dict:
        """The most informative claim: a full date, then most content words, most repeated, earliest."""
        asserting = [c for c in self.claims if not c.get("_ending")] or self.claims
        counts: dict[str, int] = {}
        for c in asserting:
            counts[normalize_value(c["value"])] = counts.get(normalize_value(c["value"]), 0) + 1

        def key(c: dict) -> tuple:
            v = c["value"]
            full_date = 1 if re.fullmatch(r"\d{4}-\d{2}-\d{2}", v) else 0
            return (-full_date, -len(value_tokens(v)), -counts[normalize_value(v)], c["ts"], c["id"])
        return min(asserting, key=key)

    @property
    def said(self) -> date:
        """The day its first claim was made."""
        return min(c["ts"] for c in self.claims).date()

    def holds(self, value: str) -> bool:
        """`value` is this cluster's value, said more or less precisely (endings assert no value)."""
        return any(compatible(value, v) for v in self.values)


def _confidence(claims: list[dict]) -> float:
    """Independent evidence: 1 - Π(1 - p) over messages (a message counts once, with its best claim)."""
    per_msg: dict[str, float] = {}
    for c in claims:
        per_msg[c["message_id"]] = max(per_msg.get(c["message_id"], 0.0), c["confidence"])
    miss = 1.0
    for p in per_msg.values():
        miss *= 1.0 - min(max(p, 0.0), 0.99)
    return round(min(0.99, 1.0 - miss), 4)


def consolidate(claims: pl.DataFrame) -> pl.DataFrame:
    """Group claims into `facts`; single-valued predicates keep superseded values with valid_to/superseded_by."""
    if claims.height == 0:
        return pl.DataFrame(schema=FACT_SCHEMA)
    # at one instant an ending goes first: "moved from Chennai to Bangalore" ends Chennai, then starts Bangalore
    rows = sorted(claims.to_dicts(), key=lambda c: (c["ts"], ended_predicate(c["predicate"]) is None, c["id"]))
    rows = _name_new_jobs(rows)
    # A generic "favourite" whose value is also a typed favourite (e.g. favourite_sport) joins it.
    typed: dict[tuple[str, str], str] = {}
    for c in rows:
        if c["predicate"].startswith("favourite_"):
            typed.setdefault((c["subject"], normalize_value(c["value"])), c["predicate"])
    for c in rows:
        if c["predicate"] == "favourite":
            for (subj, nv), pred in typed.items():
                if subj == c["subject"] and compatible(nv, normalize_value(c["value"])):
                    c["predicate"] = pred
                    break
        ended = ended_predicate(c["predicate"])
        if ended is not None:
            c["predicate"] = ended
            c["_ending"] = True

    groups: dict[tuple[str, str], list[dict]] = {}
    for c in rows:
        groups.setdefault((c["subject"], c["predicate"]), []).append(c)

    clusters: list[_Cluster] = []
    for (subject, predicate), cs in sorted(groups.items()):
        if predicate in SINGLE_VALUED:
            clusters.extend(_timeline(subject, predicate, cs))
        else:
            clusters.extend(_coexisting(subject, predicate, cs))

    _close_goals(clusters)
    _close_offers(clusters)
    _close_with_employer(clusters)
    _drop_home_trips(clusters)
    return _to_frame(clusters)


# An ending and the next value within this many days are one change ("handed in my notice" in June,
# "first day at Razorpay" in July): the ended fact's superseded_by names the new one.
_LINK_DAYS = 120


def _name_new_jobs(rows: list[dict]) -> list[dict]:
    """A first day at a company the message does not name is at the one the user's latest offer came
    from (within `_LINK_DAYS`, and no other employer started in between): "I took the Tata Projects
    offer", then "Yes, first day, Senior Planning Engineer". It then says both that they started there
    and work there; without such an offer it says nothing the memory can hold, and is left out."""
    out: list[dict] = []
    for c in rows:  # in time order: the offers before `c` are in `out`
        if c["predicate"] != "started_unnamed_job":
            out.append(c)
            continue
        offers = [o for o in out if o["subject"] == c["subject"] and o["predicate"] == "offer"
                  and 0 <= (c["ts"] - o["ts"]).days <= _LINK_DAYS]
        if not offers:
            continue
        offer = offers[-1]
        if any(o["subject"] == c["subject"] and o["predicate"] == "employer" and o["ts"] > offer["ts"]
               and not compatible(o["value"], offer["value"]) for o in out):
            continue
        for predicate in ("started_job", "employer"):
            out.append({**restated(c, predicate, offer["value"]), "id": stable_id(c["id"], predicate)})
    return out


def _timeline(subject: str, predicate: str, cs: list[dict]) -> list[_Cluster]:
    """A single-valued predicate's claims, in time order -> periods; `current` is the value in force."""
    out: list[_Cluster] = []
    current: _Cluster | None = None
    ended: _Cluster | None = None  # closed by an ending, waiting for the value that replaced it
    for c in cs:
        day = c["ts"].date()
        ending = c.get("_ending")
        if ending and not value_tokens(c["value"]):  # "I resigned": ends whatever is current
            if current is not None:
                current.claims.append(c)
                current.valid_to = day
                ended, current = current, None
            continue
        if current is not None and current.holds(c["value"]):
            current.claims.append(c)
            if ending:  # "X and I broke up" closes the current fact
                current.valid_to = day
                ended, current = current, None
            continue
        past = next((k for k in reversed(out) if k.holds(c["value"])), None)
        if past is not None:
            past.claims.append(c)  # a later mention of a past value (or of its end): evidence, not a move back
            continue
        if ending:  # the end of a fact never stated: record one that ended here
            ended = _Cluster(subject, predicate, c["category"], [c], None, day)
            out.append(ended)
            continue
        new = _Cluster(subject, predicate, c["category"], [c], None if predicate in TIMELESS else day)
        if current is not None:
            current.valid_to = new.valid_from or day
            current.superseded_by = new
        elif ended is not None and ended.superseded_by is None and ended.valid_to is not None \
                and (day - ended.valid_to).days <= _LINK_DAYS:
            ended.superseded_by = new
        ended = None
        out.append(new)
        current = new
    return out


def _coexisting(subject: str, predicate: str, cs: list[dict]) -> list[_Cluster]:
    """A multi-valued predicate's claims -> one open cluster per value (compatible values join)."""
    out: list[_Cluster] = []
    for c in cs:
        day = c["ts"].date()
        home = next((k for k in out if k.holds(c["value"]) and k.valid_to is None), None)
        if c.get("_ending"):  # "sold my Enfield", "quit smoking": the matching value ends here
            if not value_tokens(c["value"]):
                continue
            if home is None:
                home = _Cluster(subject, predicate, c["category"], [], None)
                out.append(home)
            home.claims.append(c)
            home.valid_to = day
            continue
        if home is not None:
            home.claims.append(c)
            continue
        flipped = next((k for k in out if k.valid_to is None
                        and _opposite(k.best()["value"], c["value"], either_way=predicate == "skill")), None)
        vf = None if predicate in ("sister", "brother", "sibling") else day
        if flipped is not None:  # "cannot swim" then "can swim": the new state ends the old one
            new = _Cluster(subject, predicate, c["category"], [c], vf)
            flipped.valid_to, flipped.superseded_by = day, new
            out.append(new)
        else:
            out.append(_Cluster(subject, predicate, c["category"], [c], vf))
    return out


_NEGATIVE = {"not", "no", "cannot", "cant", "doesn", "doesnt", "don", "dont", "stopped", "quit", "never", "non", "without"}
_POSITIVE = {"can", "does", "started", "now", "again", "still"}


def _stem(w: str) -> str:
    """One stem for a verb, its -ing and -s forms and its doer: drink/drinks/drinking/drinker, smoker/smoking."""
    for suf in ("ing", "er", "s"):
        if len(w) > 4 and w.endswith(suf):
            w = w[: -len(suf)]
            break
    return w.rstrip("e")


def _opposite(a: str, b: str, either_way: bool = False) -> bool:
    """The same thing with the opposite polarity: "can swim" / "cannot swim", "drinks beer on weekends" /
    "stopped drinking", "social smoker" / "quit smoking". The negative side's words (less its polarity
    words) are all among the positive side's: an ending names the activity, rarely its every detail.
    Not the other way round: "no sugar in tea" says more than "likes tea" and does not end it. For a
    skill (`either_way`) the detail may sit on either side: "can drive" ends "cannot drive a car"."""
    ta, tb = value_tokens(a), value_tokens(b)
    if bool(ta & _NEGATIVE) == bool(tb & _NEGATIVE):
        return False
    if ta & _NEGATIVE:
        ta, tb = tb, ta  # ta: the positive side, tb: the negative one
    kpos = {_stem(w) for w in ta - _NEGATIVE - _POSITIVE}
    kneg = {_stem(w) for w in tb - _NEGATIVE - _POSITIVE}
    return bool(kpos) and bool(kneg) and (kneg <= kpos or (either_way and kpos <= kneg))


_VERB_LEAD = re.compile(r"^(?:run|learn|do|finish|complete|become|buy|build|save|get|start|visit|master|study|write)\b\s*", re.I)


def _close_goals(clusters: list[_Cluster]) -> None:
    """A completed event whose words contain a goal's object closes that goal (achieved)."""
    done = [k for k in clusters if k.predicate == "completed"]
    for g in clusters:
        if g.predicate != "goal" or g.valid_to is not None:
            continue
        obj = value_tokens(_VERB_LEAD.sub("", g.best()["value"]))
        if not obj:
            continue
        for d in sorted(done, key=lambda k: k.claims[0]["ts"]):
            if obj <= value_tokens(d.best()["value"]) and d.claims[0]["ts"] > g.claims[0]["ts"]:
                g.valid_to = d.claims[0]["ts"].date()
                g.superseded_by = d
                break


def _close_offers(clusters: list[_Cluster]) -> None:
    """An offer ends when the user starts working there: it became the job."""
    jobs = [k for k in clusters if k.predicate == "employer" and k.valid_from is not None]
    for o in clusters:
        if o.predicate != "offer" or o.valid_to is not None:
            continue
        for j in sorted(jobs, key=lambda k: k.valid_from):
            if j.subject == o.subject and j.valid_from >= o.said and j.holds(o.best()["value"]):
                o.valid_to, o.superseded_by = j.valid_from, j
                break


# What belongs to a job ends with it: leaving Zoho ends the Zoho title, team, office and work mode,
# even when no new title is ever stated ("where do I work now?" must not answer the old title).
_WITH_EMPLOYER = ("job", "team", "office", "work_mode")


def _close_with_employer(clusters: list[_Cluster]) -> None:
    employers = [k for k in clusters if k.predicate == "employer" and k.valid_to is not None]
    for k in clusters:
        if k.predicate not in _WITH_EMPLOYER or k.valid_to is not None:
            continue
        said = k.said
        # a title that names its employer belongs to that one: "senior data engineer at Northwind", said
        # with the offer while still at Zentrix, does not end when Zentrix does
        at = re.search(r"\bat\s+(\S.*)$", k.best()["value"])
        ended = [e for e in employers if e.subject == k.subject and said < e.valid_to
                 and (e.valid_from is None or e.valid_from <= said)
                 and (at is None or compatible(at.group(1), e.best()["value"]))]
        if ended:
            k.valid_to = min(e.valid_to for e in ended)


def _drop_home_trips(clusters: list[_Cluster]) -> None:
    """Arriving in the city you live in (or come from) is going home, not a trip."""
    homes = [k for k in clusters if k.predicate in ("lives_in", "hometown")]
    for t in [k for k in clusters if k.predicate == "trip"]:
        if any(k.subject == t.subject and k.holds(t.best()["value"]) for k in homes):
            clusters.remove(t)


def _to_frame(clusters: list[_Cluster]) -> pl.DataFrame:
    for k in clusters:
        b = k.best()
        k.id = stable_id("fact", k.subject, k.predicate, normalize_value(b["value"]), k.valid_from or "")
    out = []
    for k in clusters:
        b = k.best()
        ts = [c["ts"] for c in k.claims]
        evidence = sorted({c["message_id"] for c in k.claims})
        if not evidence:
            continue
        out.append({
            "id": k.id, "subject": k.subject, "predicate": k.predicate, "value": b["value"], "category": k.category,
            "fact_text": b["fact_text"], "confidence": _confidence(k.claims), "first_seen_at": min(ts),
            "last_seen_at": max(ts), "valid_from": k.valid_from, "valid_to": k.valid_to,
            "superseded_by": k.superseded_by.id if k.superseded_by is not None else None,
            "evidence_message_ids": evidence, "chat_ids": sorted({c["chat_id"] for c in k.claims}),
        })
    df = pl.DataFrame(out, schema=FACT_SCHEMA)
    return df.sort("subject", "category", "predicate", "first_seen_at", "id").select(FACT_COLUMNS)


def facts_as_of(facts: pl.DataFrame, when: date | datetime) -> pl.DataFrame:
    """Facts that held on `when`: started on or before it (or timeless) and not yet ended."""
    if isinstance(when, datetime):
        when = when.date()
    known = pl.col("first_seen_at").dt.date() <= when
    started = pl.col("valid_from").is_null() | (pl.col("valid_from") <= when)
    not_ended = pl.col("valid_to").is_null() | (pl.col("valid_to") > when)
    # a timeless fact first said after `when` is still true then; a dated one only from valid_from
    return facts.filter(started & not_ended & (known | pl.col("valid_from").is_null()
                                               | (pl.col("valid_from") <= when)))
