"""Claims -> the bitemporal `facts` table: one row per (subject, predicate, compatible value) and period.

Single-valued predicates (lives_in, job, partner, diet, ...) form a timeline: a new incompatible
value closes the current fact (valid_to = new valid_from, superseded_by = new id) instead of
deleting it, so `facts_as_of(facts, when)` answers the past. Multi-valued predicates (trip, goal,
pet, sibling, favourite, ...) coexist. A completed event closes a matching goal; "X and I broke up"
closes (or records) the partner fact.

Every tier's claims (rules, wishes, llm) go through the same predicate families (`families`): a
model's `works_at` is an `employer` claim, "Left: Zentrix" ends "Works at: Zentrix Labs", and what
holds with a value (the title at that employer, "Started at: Zentrix Labs") closes with it. The store
then holds one current value per one-at-a-time predicate; `one_value_conflicts` lists the exceptions
(two tiers reading one message differently), which the facts asset's check reports.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import date, datetime

import polars as pl

from truffle_assets.memory.facts import families, recovery
from truffle_assets.memory.facts.coherence import contradicted_ids
from truffle_assets.memory.facts.families import FAMILIES, family_of, same_value
from truffle_assets.memory.facts.lexicon import PREDICATES
from truffle_assets.memory.facts.render import restated
from truffle_assets.memory.facts.schema import (
    ENDING_PREFIX, FACT_COLUMNS, FACT_SCHEMA, SINGLE_VALUED, TIMELESS, ended_predicate, stable_id,
)
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
    moved_out: bool = False  # ended by an ending or by a value a start event began (not a mere refinement)
    value: str | None = None  # the value as shown, when consolidation words it ("engaged to Naina")
    _best: tuple[int, dict] | None = field(default=None, repr=False)  # best() for this many claims

    def __post_init__(self) -> None:
        self.family = family_of(self.predicate)

    @property
    def values(self) -> list[str]:
        """The values it asserts; a fact known only from its ending holds the value the ending names."""
        return [c["value"] for c in self.claims if not c.get("_ending")] or [c["value"] for c in self.claims]

    def best(self) -> dict:
        """The most informative claim: a full date, then most content words, most repeated, earliest."""
        if self._best is not None and self._best[0] == len(self.claims):
            return self._best[1]
        self._best = (len(self.claims), self._pick())
        return self._best[1]

    def _pick(self) -> dict:
        asserting = [c for c in self.claims if not c.get("_ending")] or self.claims
        counts: dict[str, int] = {}
        for c in asserting:
            counts[normalize_value(c["value"])] = counts.get(normalize_value(c["value"]), 0) + 1

        def key(c: dict) -> tuple:
            v = c["value"]
            full_date = 1 if re.fullmatch(r"\d{4}-\d{2}-\d{2}", v) else 0
            return (-full_date, -len(value_tokens(v)), -counts[normalize_value(v)], c["ts"], c["id"])
        return min(asserting, key=key)

    def shown(self) -> dict:
        """The best claim, worded as consolidation words the value when it does."""
        b = self.best()
        return b if self.value is None else {**restated(b, self.predicate, self.value), "category": b["category"]}

    @property
    def said(self) -> date:
        """The day its first claim was made."""
        return min(c["ts"] for c in self.claims).date()

    def holds(self, value: str) -> bool:
        """`value` is this cluster's value, said more or less precisely (endings assert no value; a
        company compares without its Labs/Inc)."""
        return any(same_value(self.family, value, v) for v in self.values)


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
    unreliable = contradicted_ids(claims)  # a reader that gives one name exclusive roles in one message
    if unreliable:
        claims = claims.filter(~pl.col("id").is_in(list(unreliable)))
    if claims.height == 0:
        return pl.DataFrame(schema=FACT_SCHEMA)
    # at one instant an ending goes first: "moved from Chennai to Bangalore" ends Chennai, then starts Bangalore
    rows = sorted(claims.to_dicts(), key=lambda c: (c["ts"], not _is_ending(c["predicate"]), c["id"]))
    rows = _mark_new_homes(_through_families(_name_new_jobs(rows)))
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

    # recoveries end conditions, a finished course ends learning it: they assert nothing themselves
    recoveries = [c for c in rows if c["predicate"] == recovery.PREDICATE]
    finished = [c for c in rows if c["predicate"] == _FINISHED]
    groups: dict[tuple[str, str], list[dict]] = {}
    for c in rows:
        if c["predicate"] not in (recovery.PREDICATE, _FINISHED):
            groups.setdefault((c["subject"], c["predicate"]), []).append(c)

    clusters: list[_Cluster] = []
    for (subject, predicate), cs in sorted(groups.items()):
        if predicate in SINGLE_VALUED:
            clusters.extend(_timeline(subject, predicate, cs))
        else:
            clusters.extend(_coexisting(subject, predicate, cs))

    _close_goals(clusters)
    _close_offers(clusters)
    _close_dating(clusters)
    _close_across(clusters)
    _close_attitudes(clusters)
    _close_recovered(clusters, recoveries)
    _close_courses(clusters, finished)
    _close_members(clusters)
    _close_starts(clusters)
    _close_ages(clusters, max(c["ts"] for c in rows).date() if rows else None)
    _drop_home_trips(clusters)
    return _to_frame(clusters)


def _is_ending(predicate: str) -> bool:
    p = families.canonical(predicate)
    return ended_predicate(p) is not None or families.ending_of(p) is not None


# Endings that name no kind of fact: what they end is whichever value they name ("quit" Zoho or smoking).
_GENERIC_ENDINGS = {"quit", "stopped", "left", "gave_up", "no_longer", "sold", "got_rid_of", "died", "passed_away",
                    "gave_away"}
# ... and "left" a value nobody stated ends nothing: people leave parties and groups, not only jobs; a
# death ends a pet or a partner held under that name, and records nobody else
_MATCH_ONLY = {"left", "died", "passed_away", "gave_away"}


def _through_families(rows: list[dict]) -> list[dict]:
    """Every claim in its family's terms (rows in time order): aliases renamed to the canonical
    predicate, a start event also states the value it starts, an ending becomes `end:<predicate>` of
    the value it names (the ending events the lexicon knows, like "Left: Zentrix", are kept too)."""
    by_message: dict[str, list[dict]] = {}
    for c in rows:
        by_message.setdefault(c["message_id"], []).append(c)
    out: list[dict] = []
    # (subject, family, content word) -> the value claims so far holding that word: an ending's candidates
    held: dict[tuple[str, str, str], list[dict]] = {}

    def emit(c: dict) -> None:
        out.append(c)
        f = family_of(c["predicate"])
        if f is not None and not _is_ending(c["predicate"]) and c["predicate"] not in f.members | f.starts:
            for w in value_tokens(c["value"]):
                held.setdefault((c["subject"], f.name, w), []).append(c)

    for c in rows:
        p = families.canonical(c["predicate"])
        if p != c["predicate"]:
            c = {**c, "predicate": p}
        base = p.removeprefix(ENDING_PREFIX)
        if p.startswith(ENDING_PREFIX) or families.ending_of(p) is not None:
            kept = not p.startswith(ENDING_PREFIX) and (p in PREDICATES or ended_predicate(p) is not None)
            if kept:
                emit(c)  # the event ("Left: Zentrix") or the lexicon's own ending (ex_partner)
                if ended_predicate(p) is not None:
                    continue
            # an event kept as it is says enough on its own: it ends only a value stated before it
            target = _ended(c, p, held, named_only=kept)
            if target is not None:
                emit({**c, "predicate": ENDING_PREFIX + target, "id": stable_id(c["id"], ENDING_PREFIX + target)})
            continue
        fam = families.start_of(base)
        if fam is None:
            emit(c)
            continue
        if base in PREDICATES:
            emit(c)
        same = [o for o in by_message[c["message_id"]] if families.canonical(o["predicate"]) == fam.canonical
                and same_value(fam, o["value"], c["value"])]
        for o in same:
            o["_start"] = True  # the value a start event began: the one before it did not just get refined
        if not same:
            emit({**restated(c, fam.canonical, c["value"]), "id": stable_id(c["id"], fam.canonical), "_start": True})
    return out


_HOME = next(f for f in FAMILIES if f.name == "home")


def _mark_new_homes(rows: list[dict]) -> list[dict]:
    """A flat described somewhere else is a move, said or not: "Kalyani Nagar mein 2BHK liya hai, 42 ka
    rent" after "Aundh mein 1BHK hai, akeli rahungi" starts a new home (its place `_start`, as a "moved
    to" would, and its type, rent and household `_new_home`), so the old home's flat, rent and
    household end with it. Only when the home in force was itself described as a flat: a place named
    after a bare city ("Bengaluru", then "HSR Layout, 2BHK") may only refine it (rows in time order)."""
    by_message: dict[str, list[dict]] = {}
    for c in rows:
        if not c.get("_ending") and not c["predicate"].startswith(ENDING_PREFIX):
            by_message.setdefault(c["message_id"], []).append(c)
    home: dict[str, tuple[str, bool]] = {}  # subject -> (the place in force, described as a flat)
    seen: set[str] = set()
    for c in rows:
        if c["message_id"] in seen or c["message_id"] not in by_message:
            continue
        seen.add(c["message_id"])
        said = by_message[c["message_id"]]
        for subject in dict.fromkeys(o["subject"] for o in said):
            places = [o for o in said if o["subject"] == subject and o["predicate"] == _HOME.canonical]
            flat = [o for o in said if o["subject"] == subject and o["predicate"] in _HOME.members]
            if not places:
                continue
            where, described = home.get(subject, (None, False))
            value = places[0]["value"]
            if where is not None and same_value(_HOME, where, value):
                home[subject] = (where, described or bool(flat))
                continue
            if where is not None and described and flat:
                for o in places:
                    o["_start"] = True
                for o in places + flat:
                    o["_new_home"] = True
            home[subject] = (value, bool(flat))
    return rows


def _ended(c: dict, p: str, held: dict[tuple[str, str, str], list[dict]], named_only: bool = False) -> str | None:
    """The predicate whose value the ending claim `c` (predicate `p`) ends: the latest earlier claim of
    the ending's family (any family, for a generic "quit") holding the value it names (`held`: earlier
    value claims by subject, family and content word); else the family's canonical predicate, or the
    predicate an `end:` names."""
    if p.startswith(ENDING_PREFIX):
        base = p.removeprefix(ENDING_PREFIX)
        fam = family_of(base)
        fams = [fam] if fam is not None else []
        fallback = base
    else:
        fam = families.ending_of(p)
        fams = [fam] + ([f for f in FAMILIES if f is not fam] if p in _GENERIC_ENDINGS else [])
        fallback = fam.canonical
    if value_tokens(c["value"]):
        words = value_tokens(c["value"])
        earlier = sorted({id(o): o for f in fams for w in words for o in held.get((c["subject"], f.name, w), ())}.values(),
                         key=lambda o: (o["ts"], o["id"]), reverse=True)
        same = [o for o in earlier if same_value(family_of(o["predicate"]), c["value"], o["value"])]
        if same:  # the predicate an `end:` names, then the value it names exactly, then the latest
            named, said = p.removeprefix(ENDING_PREFIX), normalize_value(c["value"])
            return min(same, key=lambda o: (o["predicate"] != named, normalize_value(o["value"]) != said))["predicate"]
    elif not named_only and p not in _MATCH_ONLY and (p.startswith(ENDING_PREFIX) or fam.canonical in SINGLE_VALUED):
        return fallback  # "I resigned": ends whatever is current
    else:
        return None
    return None if named_only or p in _MATCH_ONLY else fallback


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
    rivals: list[_Cluster] = []  # other values read from the message that set `current`, by another tier
    ended: _Cluster | None = None  # closed by an ending, waiting for the value that replaced it
    for c in cs:
        day = c["ts"].date()
        ending = c.get("_ending")
        if ending and not value_tokens(c["value"]):  # "I resigned": ends whatever is current
            if current is not None:
                current.claims.append(c)
                current.valid_to, current.moved_out = day, True
                ended, current = current, None
            for r in rivals:
                r.valid_to, r.moved_out = day, True
            rivals = []
            continue
        if current is not None and current.holds(c["value"]):
            current.claims.append(c)
            if ending:  # "X and I broke up" closes the current fact
                current.valid_to, current.moved_out = day, True
                ended, current = current, None
                current, rivals = (rivals[0], rivals[1:]) if rivals else (None, [])
            continue
        rival = next((r for r in rivals if r.holds(c["value"])), None)
        if rival is not None:
            rival.claims.append(c)
            if ending:
                rival.valid_to, rival.moved_out = day, True
                rivals.remove(rival)
            continue
        past = next((k for k in reversed(out) if k.holds(c["value"])), None)
        # a later mention of a past value (or of its end) is evidence, not a move back; but right after
        # another value ended ("vegan band ... wapas vegetarian") an older value is taken up again
        back = (past is not None and not ending and current is None and ended is not None and past is not ended
                and ended.valid_to is not None and 0 <= (day - ended.valid_to).days <= _LINK_DAYS)
        # a new home's flat may be of a type lived in before: it is a new period, not a memory
        back = back or (past is not None and bool(c.get("_new_home")) and current is not None)
        if past is not None and not back:
            past.claims.append(c)
            continue
        if ending:  # the end of a fact never stated: record one that ended here
            ended = _Cluster(subject, predicate, c["category"], [c], None, day)
            out.append(ended)
            continue
        new = _Cluster(subject, predicate, c["category"], [c], None if predicate in TIMELESS else day)
        if current is not None and _disputed(current, c):
            # another tier read this very message as another value: neither is newer, both stay current
            # and the facts check reports the conflict
            rivals.append(new)
            out.append(new)
            continue
        for r in rivals:
            r.valid_to, r.superseded_by, r.moved_out = new.valid_from or day, new, bool(c.get("_start"))
        rivals = []
        if current is not None:
            current.valid_to = new.valid_from or day
            current.superseded_by = new
            current.moved_out = bool(c.get("_start"))
        elif ended is not None and ended.superseded_by is None and ended.valid_to is not None \
                and (day - ended.valid_to).days <= _LINK_DAYS:
            ended.superseded_by = new
        ended = None
        out.append(new)
        current = new
    return out


def _disputed(current: _Cluster, c: dict) -> bool:
    """`c` comes from a message `current` was read from, by another source (the reader and the model disagree)."""
    return any(k["message_id"] == c["message_id"] and k.get("source") != c.get("source") for k in current.claims)


def _coexisting(subject: str, predicate: str, cs: list[dict]) -> list[_Cluster]:
    """A multi-valued predicate's claims -> one open cluster per value (compatible values join)."""
    out: list[_Cluster] = []
    ended_at: list[tuple[_Cluster, str]] = []  # closed by an ending, and the message that said it
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
            ended_at.append((home, c["message_id"]))
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
    # a value the ending message states in its place succeeds it ("green tea now, one chai a day")
    for k, mid in ended_at:
        if k.superseded_by is None:
            k.superseded_by = next((n for n in out if n is not k and n.claims[0]["message_id"] == mid), None)
    return out


_NEGATIVE = {"not", "no", "cannot", "cant", "doesn", "doesnt", "don", "dont", "stopped", "quit", "never", "non", "without"}
_POSITIVE = {"can", "does", "started", "now", "again", "still"}


def _stem(w: str) -> str:
    """One stem for a verb, its -ing and -s forms and its doer: drink/drinks/drinking/drinker, smoker/smoking."""
    for suf in ("ing", "er", "s"):
        if len(w) > 4 and w.endswith(suf):
            w = w[: -len(suf)]
            if suf != "s" and len(w) > 2 and w[-1] == w[-2] and w[-1] not in "aeiouls":
                w = w[:-1]  # running -> run, swimmer -> swim
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
    # "stopped playing the guitar" ends "guitar", "stopped learning German" ends "German": the verb that
    # only says what one does with the thing is not part of it
    if kneg - _LIGHT:
        kneg -= _LIGHT
    return bool(kpos) and bool(kneg) and (kneg <= kpos or (either_way and kpos <= kneg))


# stemmed; besides the verbs, what one pays or signs up for to do the thing: "cancelled my Cult
# membership" ends "gym (Cult)", "stopped the dance classes" ends "dance"
_LIGHT = {"play", "learn", "go", "do", "practis", "practic", "attend", "membership", "subscription", "class", "clas",
          "lesson", "session"}


def _close_across(clusters: list[_Cluster]) -> None:
    """The opposite state ends a fact filed under another name of its family: "stopped running" (a
    habit) ends "Hobby: running", "doesn't drink" ends "Loves: drinking"."""
    for fam in FAMILIES:
        names = {fam.canonical} | fam.also
        if len(names) < 2:
            continue
        group = sorted((k for k in clusters if k.predicate in names), key=lambda k: k.claims[0]["ts"])
        negative = [n for n in group if value_tokens(n.best()["value"]) & _NEGATIVE]
        for k in group:
            if k.valid_to is not None or k in negative:
                continue
            for n in negative:
                if n.predicate != k.predicate and n.subject == k.subject and n.claims[0]["ts"] > k.claims[0]["ts"] \
                        and _opposite(k.best()["value"], n.best()["value"]):
                    k.valid_to, k.superseded_by = n.said, n
                    break


# How a value says the user feels about a thing, and the words that only say so: what is left is the thing.
_AVERSION = re.compile(r"^(?:scared|afraid|terrified|frightened|fear|phobia|hates?|can'?t\s+stand)\b", re.I)
_FEELING_WORDS = frozenset("""scared afraid terrified frightened fear phobia hate hates stand of person people lover
fan addict big huge total complete now really so very""".split())
_FOND = ("likes", "hobby", "favourite")


def _felt_about(value: str) -> frozenset[str]:
    """The thing a feeling is about, plurals folded: "scared of dogs" and "dog person" are both about {dog}."""
    return frozenset(w[:-1] if len(w) > 3 and w.endswith("s") and not w.endswith("ss") else w
                     for w in value_tokens(value) - _FEELING_WORDS)


def _close_attitudes(clusters: list[_Cluster]) -> None:
    """A later opposite feeling about the same thing ends the earlier one, whatever each was filed as:
    "I'm a dog person now" ends "scared of dogs" (a fear filed as a condition), "hated running" ends
    with "love running". Only about exactly the same thing: "likes movies" leaves "dislikes horror
    movies" standing."""
    def side(k: _Cluster) -> int:
        v = k.best()["value"]
        if k.predicate == "dislikes" or _AVERSION.match(v):
            return -1
        if k.predicate in _FOND or k.predicate.startswith("favourite_"):
            return 0 if value_tokens(v) & _NEGATIVE else 1
        return 0
    felt = sorted(((k, s) for k in clusters if (s := side(k)) != 0), key=lambda ks: ks[0].said)
    for i, (k, s) in enumerate(felt):
        if k.valid_to is not None or not (about := _felt_about(k.best()["value"])):
            continue
        for n, t in felt[i + 1:]:
            if t == -s and n.subject == k.subject and n.said > k.said and _felt_about(n.best()["value"]) == about:
                k.valid_to, k.superseded_by = n.said, n
                break


def _close_recovered(clusters: list[_Cluster], recoveries: list[dict]) -> None:
    """A recovery ends the conditions it names that were said on an earlier day ("LDL 112, normal hai ab"
    ends "borderline high LDL cholesterol"; see `recovery`); it is their evidence, never a fact itself."""
    for r in recoveries:
        day = r["ts"].date()
        for k in clusters:
            if k.predicate == "condition" and k.subject == r["subject"] and k.valid_to is None and k.said < day \
                    and recovery.ends(r["value"], k.best()["value"]):
                k.claims.append({**r, "_ending": True})
                k.valid_to = day


_FINISHED = "finished"
# what names a course without saying which: "data privacy certificate" is about {data, privacy}
_COURSE_WORDS = frozenset("""course certificate certification diploma program programme degree bootcamp online
weekend weekends class classes exam""".split())


def _close_courses(clusters: list[_Cluster], finished: list[dict]) -> None:
    """Finishing a course ends learning it: "passed the data privacy certificate" ends "Learning: data
    privacy law certificate" (they share what the course is about); the finish is its evidence. Being
    able to do it ends learning it too: "I can swim now!" ends "Learning: swimming"."""
    learning = [k for k in clusters if k.predicate == "learning"]
    for s in sorted((k for k in clusters if k.predicate == "skill"), key=lambda k: k.said):
        words = value_tokens(s.best()["value"])
        if words & _NEGATIVE:
            continue
        can = {_stem(w) for w in words - _POSITIVE}
        for k in learning:
            if k.subject == s.subject and k.valid_to is None and k.said < s.said \
                    and {_stem(w) for w in value_tokens(k.best()["value"])} <= can:
                k.valid_to, k.superseded_by = s.said, s
    for c in finished:
        about = value_tokens(c["value"]) - _COURSE_WORDS
        day = c["ts"].date()
        for k in clusters:
            if k.predicate in ("learning", "goal") and k.subject == c["subject"] and k.valid_to is None \
                    and k.said < day and about and about <= value_tokens(k.best()["value"]):
                k.claims.append({**c, "_ending": True})
                k.valid_to = day


_VERB_LEAD = re.compile(r"^(?:run|learn|do|finish|complete|become|buy|build|save|get|start|visit|master|study|write)\b\s*", re.I)


# Words that date or grade a goal or a finish without naming what it is: "Pune 10K in january",
# "my first proper half marathon".
_GOAL_NOISE = frozenset("""next this year month week end by before under properly proper first ever real own finally
tak tk january february march april may june july august september october november december jan feb mar apr jun
jul aug sep sept oct nov dec""".split())
_TAKE_UP = re.compile(r"^(?:learn|start|take\s+up|pick\s+up|get\s+into|begin|try)\b", re.I)
_ACTIVITIES = ("hobby", "learning", "skill", "habit")
_CLASSES = frozenset({"class", "classes", "lessons", "lesson", "course", "every", "regularly", "now", "weekly", "daily"})


def _close_goals(clusters: list[_Cluster]) -> None:
    """A goal ends when it is done: a later completed event naming its object ("finished the half
    marathon" closes "run the Bengaluru half marathon", "10K done" closes "Pune 10K in january"); a goal
    to take something up ends when the user does it ("learn Kathak" -> "Kathak classes every Saturday")."""
    done = sorted((k for k in clusters if k.predicate == "completed"), key=lambda k: k.claims[0]["ts"])
    doing = sorted((k for k in clusters if k.predicate in _ACTIVITIES), key=lambda k: k.claims[0]["ts"])
    for g in clusters:
        if g.predicate != "goal" or g.valid_to is not None:
            continue
        stated = g.best()["value"]
        obj = value_tokens(_VERB_LEAD.sub("", stated)) - _GOAL_NOISE
        if not obj:
            continue
        said = g.claims[0]["ts"]
        for d in done:
            what = value_tokens(d.best()["value"]) - _GOAL_NOISE
            if d.subject == g.subject and d.claims[0]["ts"] > said and what and (obj <= what or what <= obj):
                g.valid_to, g.superseded_by = d.claims[0]["ts"].date(), d
                break
        if g.valid_to is not None or not _TAKE_UP.match(stated):
            continue
        for d in doing:
            what = value_tokens(d.best()["value"]) - _GOAL_NOISE - _CLASSES
            if d.subject == g.subject and d.claims[0]["ts"].date() > said.date() and what and obj <= what | _CLASSES:
                g.valid_to, g.superseded_by = d.claims[0]["ts"].date(), d
                break


_STAGES = frozenset({"engaged", "married", "fiance", "fiancee", "wife", "husband", "spouse"})


def _close_dating(clusters: list[_Cluster]) -> None:
    """Getting engaged or married ends the dating that came before it: "Partner: Naina" closes there,
    superseded by "Relationship: engaged to Naina" (the stage names the partner it is with, unless the
    partner fact ended with a breakup)."""
    stages = sorted((k for k in clusters if k.predicate == "relationship_status"
                     and value_tokens(k.best()["value"]) & _STAGES), key=lambda k: k.said)
    for s in stages:
        day = s.valid_from or s.said
        partners = [p for p in clusters if p.predicate == "partner" and p.subject == s.subject and p.said < day
                    and (p.valid_to is None or p.valid_to > day)]
        for p in partners:
            p.valid_to, p.superseded_by = day, s
        named = [p for p in clusters if p.predicate == "partner" and p.subject == s.subject and p.said <= day
                 and not p.moved_out]
        value = s.best()["value"]
        if named and len(value_tokens(value)) == 1:
            who = max(named, key=lambda p: p.said).best()["value"]
            s.value = f"{value} to {who}"


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


# What belongs to a value ends with it: leaving Zoho ends the Zoho title, team, office and work mode,
# even when no new title is ever stated ("where do I work now?" must not answer the old title); moving
# out ends the flat, the flatmates and the rent (a refined address, "HSR" after "Bengaluru", does not).
def _close_members(clusters: list[_Cluster]) -> None:
    for fam in FAMILIES:
        if not fam.members:
            continue
        ended_values = [k for k in clusters if k.predicate == fam.canonical and k.valid_to is not None
                        and (fam.name == "employer" or k.moved_out)]
        for k in clusters:
            if k.predicate not in fam.members or k.valid_to is not None:
                continue
            said = k.said
            # a title that names its employer belongs to that one: "senior data engineer at Northwind", said
            # with the offer while still at Zentrix, does not end when Zentrix does
            at = re.search(r"\bat\s+(\S.*)$", k.best()["value"]) if fam.name == "employer" else None
            ended = [e for e in ended_values if e.subject == k.subject and said < e.valid_to
                     and (e.valid_from is None or e.valid_from <= said)
                     and (at is None or same_value(fam, at.group(1), e.best()["value"]))]
            if ended:
                k.valid_to = min(e.valid_to for e in ended)


def _close_starts(clusters: list[_Cluster]) -> None:
    """A start event closes with the value it began: "Started at: Zentrix Labs" goes with "Works at:
    Zentrix Labs" (unless the user went back there and it holds again)."""
    for fam in FAMILIES:
        values = [k for k in clusters if k.predicate == fam.canonical]
        for k in clusters:
            if k.predicate not in fam.starts or k.valid_to is not None:
                continue
            v = k.best()["value"]
            mine = [e for e in values if e.subject == k.subject and e.holds(v)]
            if mine and all(e.valid_to is not None for e in mine):
                last = max(mine, key=lambda e: e.valid_to)
                # a city refined to its neighbourhood ("Pune", then "Aundh") was not moved out of
                if last.valid_to >= k.said and (last.moved_out or fam.name == "employer"):
                    k.valid_to, k.superseded_by = last.valid_to, last.superseded_by


def _close_ages(clusters: list[_Cluster], horizon: date | None) -> None:
    """An age holds until the next birthday: with the birthday known, "I'm 28" said in August 2023 ends
    on the birthday in 2024 once the history reaches it (`horizon`: the latest claim), next age said or not;
    with the birthday unknown it ends within the year, so a year on it is no longer current."""
    if horizon is None:
        return
    for a in clusters:
        if a.predicate != "age" or a.valid_to is not None:
            continue
        days = [m for k in clusters if k.predicate == "birthday" and k.subject == a.subject
                and (m := re.fullmatch(r"(?:\d{4}|-)-(\d{2})-(\d{2})", k.best()["value"]))]
        said = a.valid_from or a.said
        if not days:
            a_year_on = _day_or_march_first(said.year + 1, said.month, said.day)
            if a_year_on <= horizon:
                a.valid_to = a_year_on
            continue
        month, day = int(days[0].group(1)), int(days[0].group(2))
        for year in (said.year, said.year + 1):
            nxt = _day_or_march_first(year, month, day)
            if nxt > said:
                break
        if nxt <= horizon:
            a.valid_to = nxt


def _day_or_march_first(year: int, month: int, day: int) -> date:
    """That day of that year; 29 February (or a day the month lacks) in a year without it is 1 March."""
    try:
        return date(year, month, day)
    except ValueError:
        return date(year, 3, 1)


def _drop_home_trips(clusters: list[_Cluster]) -> None:
    """Arriving in the city you live in (or come from) is going home, not a trip."""
    homes = [k for k in clusters if k.predicate in ("lives_in", "hometown")]
    for t in [k for k in clusters if k.predicate == "trip"]:
        if any(k.subject == t.subject and k.holds(t.best()["value"]) for k in homes):
            clusters.remove(t)


def _to_frame(clusters: list[_Cluster]) -> pl.DataFrame:
    for k in clusters:
        b = k.shown()
        k.id = stable_id("fact", k.subject, k.predicate, normalize_value(b["value"]), k.valid_from or "")
    out = []
    for k in clusters:
        b = k.shown()
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


def one_value_conflicts(facts: pl.DataFrame) -> list[dict]:
    """Current facts of a one-at-a-time predicate that disagree, per subject and predicate: two truths
    the store cannot choose between (consolidation lets a newer value close an older one, so this is
    what is left: two tiers reading one message differently)."""
    if facts.height == 0:
        return []
    current = facts.filter(pl.col("valid_to").is_null() & pl.col("predicate").is_in(sorted(SINGLE_VALUED)))
    out = []
    for (subject, predicate), rows in current.group_by("subject", "predicate", maintain_order=True):
        if rows.height < 2:
            continue
        fam = family_of(predicate)
        values = rows["value"].to_list()
        if all(same_value(fam, a, b) for i, a in enumerate(values) for b in values[i + 1:]):
            continue
        out.append({"subject": subject, "predicate": predicate, "values": sorted(values),
                    "fact_ids": sorted(rows["id"].to_list())})
    return sorted(out, key=lambda c: (c["subject"], c["predicate"]))
