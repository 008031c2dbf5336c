"""First-person statements read from a dependency parse (spaCy), not from sentence templates.

For each clause whose subject is the speaker ("I", "we", "Naina and I", or no subject at all, as
chat writes "Moved to Pune last week"), the reader looks at the verb's lemma, its negation, tense
and modality, and its objects and prepositions, and maps them through `lexicon` to a predicate and
a value. "my <attribute> is <value>" and "my <relation> <Name>" are read the same way.

A clause is no claim when it asks, supposes ("if I ever move..."), hedges ("thinking of quitting",
"might", "maybe"), plans ("I'll join", "moving next month"), jokes (a laugh marker beside an
identity claim) or reports someone else's words ("she said I'm..."). A negation is a claim only
where it says something true about the person ("I can't swim", "I don't drink", "I don't eat meat")
and is otherwise dropped ("I'm not moving to the US team"); a negated habit bounded to an occasion
("I don't eat meat on Tuesdays", "not drinking tonight") says the habit holds at other times, and is dropped.

`guards` says which clauses are the speaker's own claims; `spans` cuts values out of the parse.

Each claim is a dict: predicate, value, confidence, rule ("parse:<verb or pattern>") and, for an
ending ("handed in my notice", "moved out of Chennai", "sold my Enfield", "broke up"), ending=True:
consolidation closes the current fact instead of asserting one.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from datetime import date

from typing import TYPE_CHECKING

if TYPE_CHECKING:  # annotations only: spaCy loads with the pipeline (truffle_assets.nlp)
    from spacy.tokens import Doc, Span, Token

from truffle_assets.memory.facts import guards, spans
from truffle_assets.memory.facts import lexicon as L
from truffle_assets.memory.facts import phrases
from truffle_assets.memory.facts.values import NOT_NAMES, ascii_fold


_SHORTCODE = re.compile(r":?\b[a-z]+(?:_[a-z0-9]+)+\b:?")
DECLINED = "declined:"  # the prefix of a predicate the parse read and found no claim of (`_Out.decline`)


class _Out:
    def __init__(self) -> None:
        self.claims: list[dict] = []

    def add(self, predicate: str, value: str | None, confidence: float, rule: str, ending: bool = False,
            qualifier: str = "") -> None:
        if value is None and not ending:
            return
        value = (value or "").strip()
        if not ending and (not value or not re.search(r"\w", value)):
            return
        if _SHORTCODE.search(value):  # an emoji the normalized stream spells ":smiling_face_with_halo:" is no value
            return
        self.claims.append({"predicate": predicate, "value": value, "confidence": confidence,
                            "rule": f"parse:{rule}", "ending": ending, "qualifier": qualifier})

    def decline(self, predicate: str, rule: str) -> None:
        """The parse read a clause of this kind and found no claim in it ("vegetarian on Tuesdays"): the
        pattern table must not read one there either."""
        self.claims.append({"predicate": DECLINED + predicate, "value": "", "confidence": 0.0,
                            "rule": f"parse:{rule}", "ending": False, "qualifier": ""})


def read(doc: Doc, said: date | None = None) -> list[dict]:
    """Claims the speaker makes about themself in `doc` (one message)."""
    out = _Out()
    quoted = guards.quoted_ranges(doc.text)
    laughs = phrases.laughs(doc.text)
    for sent in doc.sents:
        if guards.question(sent):
            continue
        _possessive_statements(sent, out, quoted, laughs)
        _set_phrases(sent, out)
        for v in sent:
            # the small parser tags some gerund clauses as nouns ("..., training for the 10K")
            gerund = v.dep_ in ("advcl", "conj", "xcomp") and spans.lower(v).endswith("ing")
            if v.pos_ not in ("VERB", "AUX") and v.dep_ != "ROOT" and not gerund:
                continue
            if not guards.speaker_is_subject(v) or guards.imperative(v):
                continue
            if guards.hypothetical(v) or guards.reported(v, quoted):
                continue
            goal = _goal(v, out)
            if goal:
                continue
            if guards.hedged(v) or guards.future(v) or guards.unreal(v):
                continue
            n = len(out.claims)
            _clause(v, guards.negated(v), out, laughs)
            past = _past_state(v)  # "I used to live in Delhi", "I was vegetarian in college": held once, ended since
            if past:
                for c in out.claims[n:]:
                    if c["predicate"] in STATES or past == "used to" and c["predicate"] in L.PREDICATES \
                            and L.PREDICATES[c["predicate"]].category != "event":
                        c["ending"] = True
    _pet_names(doc, out)
    return out.claims


def read_idioms(text: str) -> list[dict]:
    """Claims made through idioms the parse splits badly (`phrases`), read on the words alone, so a
    message needs no parse for them (every user message is read: ~0.07 ms each, against ~8 ms to
    parse); in the shape `read` gives."""
    out = _Out()
    if not phrases.laughs(text):
        for predicate, value, confidence, rule in phrases.read_message(text, guards.quoted_ranges(text)):
            out.add(predicate.removeprefix("end:"), value, confidence, rule, ending=predicate.startswith("end:"))
    return out.claims


_BLOOD = re.compile(r"\bmy\s+blood\s+(?:group|type)\s+(?:is\s+)?(AB|A|B|O)\s?(\+|-|positive|negative|\+ve|-ve)", re.I)
_MY_X_IS = re.compile(r"\bmy\s+([a-z]{3,})\s+(?:is|was)\s+([A-Z][\w\-]+(?:\s+[A-Z][\w\-]+){0,2})(?=[\s.,!?]|$)")
_LASIK = re.compile(r"\b(?:got|had|did|done\s+with)\s+(?:my\s+|the\s+)?(?:lasik|laser\s+eye)|\blasik\s+(?:done|karwa)", re.I)
_WORK_MODE = re.compile(r"\b(?:I(?:'m|\s+am)|we(?:'re|\s+are)|I)\s+(?:now\s+|mostly\s+|currently\s+)?(?:\w+\s+)?"
                        r"(fully\s+remote|remote|hybrid|wfh|work\s+from\s+home|back\s+to\s+office|work\s+from\s+office)\b",
                        re.I)
_WEEKDAYS = re.compile(r"(?i)\b(?:mon|tues|wednes|thurs|fri|satur|sun)days?\b")
_HOME_NOW = re.compile(r"\b([A-Z][\w\-]+(?:\s[A-Z][\w\-]+)?)\s+(?:is|feels\s+like)\s+(?:my\s+)?home\s+now\b")
_HANDED = re.compile(r"\bI(?:'m|\s+am)\s+(?:\w+\s+)?(left|right)[- ]?handed\b", re.I)
# what the expressions above need when the message has no first person ("LASIK done!", "Pune is home
# now"); the others read "I"/"my", which already sends a message to the parser
GATE = re.compile(r"\b(?:lasik|laser\s+eye|home\s+now)\b", re.I)


def _set_phrases(sent: Span, out: _Out) -> None:
    """Fixed expressions the small parser splits badly ("B+", "left-handed")."""
    m = _BLOOD.search(sent.text)
    if m:
        sign = "+" if m.group(2).lower() in ("+", "positive", "+ve") else "-"
        out.add("blood_group", f"{m.group(1).upper()}{sign}", 0.85, "my_blood_group")
    # "my manager is Rohit" when the small parser misses the copula: the noun, then a capitalized value
    for m in _MY_X_IS.finditer(sent.text):
        noun, value = m.group(1).lower(), m.group(2)
        if noun in L.TRANSIENT or noun in L.PREDICATES or noun in L.ATTRIBUTES or noun in L.FAVOURITE_WORDS \
                or noun in L.SIBLING_NOUNS or noun in L.PARTNER_NOUNS or noun in L.PARENT_NOUNS or noun in L.PETS:
            continue
        if ascii_fold(value.split()[0]).lower() in NOT_NAMES or spans.REDACTED.search(value):
            continue
        if not any(c["rule"] == "parse:my_attribute" and c["predicate"] == noun for c in out.claims):
            out.add(noun, value, 0.55, "my_attribute")
    if _LASIK.search(sent.text) and not re.search(r"\b(?:if|maybe|might|will|thinking|plan)\b", sent.text, re.I):
        out.add("eyesight", "LASIK", 0.75, "lasik")
    m = _WORK_MODE.search(sent.text)
    if m and not re.search(r"\b(?:not|no longer|if|maybe|might|will|next)\b", sent.text, re.I):
        mode = m.group(1).lower()
        mode = {"wfh": "remote", "work from home": "remote", "fully remote": "remote",
                "back to office": "from office", "work from office": "from office"}.get(mode, mode)
        if mode == "remote" and _WEEKDAYS.search(sent.text):  # from home on named days: a hybrid week
            mode = "hybrid"
        out.add("work_mode", mode, 0.65, "work_mode")
    m = _HOME_NOW.search(sent.text)  # "Bombay is home now" ("... will always be home" is where one is from)
    if m and ascii_fold(m.group(1)).lower() not in NOT_NAMES:
        out.add("lives_in", m.group(1), 0.7, "home_now")
    m = _HANDED.search(sent.text)
    if m and not re.search(r"\bnot\b", sent.text[:m.end()], re.I):
        out.add("handedness", f"{m.group(1).lower()}-handed", 0.8, "handed")


def _goal(v: Token, out: _Out) -> bool:
    """"I want to run a full marathon", "training for a half marathon", "my aim is ..." (a goal is a fact)."""
    lemma = v.lemma_
    if lemma == "train" or spans.lower(v) == "training":
        o = spans.prep_obj(v, "for")
        if o is not None and not guards.negated(v) and not guards.hypothetical(v):
            out.add("goal", spans.phrase(o), 0.75, "train_for")
            return True
    if lemma in ("want", "hope", "aim", "plan", "wish") and not guards.negated(v):
        x = next((c for c in v.children if c.dep_ == "xcomp" and c.pos_ == "VERB"), None)
        if x is not None and x.lemma_ in L.GOAL_OBJECTS and x.lemma_ not in ("move", "shift", "buy", "get"):
            obj = next((c for c in x.children if c.dep_ in ("dobj", "attr", "prep")), None)
            words = spans.phrase(x, max_words=8)
            if obj is not None and words:
                out.add("goal", words, 0.7, f"{lemma}_to")
            return True
    return False


def _clause(v: Token, neg: bool, out: _Out, laughs: bool) -> None:
    lemma = v.lemma_.lower()
    dobj = next(iter(spans.children(v, "dobj")), None)
    # ---- be + complement: identity, diet, allergies, age, status ---------------------------------
    if v.dep_ == "xcomp" and v.head.lemma_.lower() in L.STOP_VERBS | {"quit"}:
        return  # "stopped playing the guitar": the stop verb reads it as an ending, it is no hobby
    if neg and _no_more(v) and _state_ended(v, lemma, dobj, out):
        return
    if lemma in ("be", "become") or v.pos_ == "AUX" and v.dep_ == "ROOT":
        if v.dep_ == "xcomp" and v.head.lemma_.lower() in L.STOP_VERBS:
            return  # "stopped being vegan": the stop verb reads it as an ending
        _copula(v, neg, out, laughs)
        return
    if lemma in ("obsess", "addict", "hook") and any(c.dep_ == "auxpass" for c in v.children):
        # the small parser reads "I'm obsessed with X" as a passive verb, not a copula + adjective
        o = spans.prep_obj(v, "with", "to", "on")
        if o is not None and o.pos_ != "PRON" and not neg:
            out.add("likes", _taste(o), 0.7, "obsessed")
        return
    if lemma == "get" and dobj is None and (o := spans.prep_obj(v, "into")) is not None \
            and (o.tag_ == "VBG" or spans.lower(o).endswith("ing")) and not neg:
        out.add("hobby", spans.lower(o), 0.65, "get_into")  # "I've gotten really into birding"
        return  # "got into NLU" (an admission) has a noun, not an activity
    if lemma == "promote" and not neg:  # "got promoted to staff engineer"
        to = spans.prep_obj(v, "to", "as")
        if to is not None and spans.role(to):
            out.add("job", spans.role(to), 0.8, "promoted")
        return
    if lemma in ("get", "receive", "accept", "have") and dobj is not None and spans.lower(dobj) == "offer" and not neg:
        frm = spans.prep_obj(dobj, "from", "at") or spans.prep_obj(v, "from", "at")
        if frm is not None and spans.proper_name(frm):
            out.add("offer", spans.proper_name(frm), 0.65, "offer")
        return
    # ---- home -----------------------------------------------------------------------------------
    if lemma in L.LIVE_VERBS and re.match(r"(?:liv|stay|resid|settl)", spans.lower(v)):  # the lemmatizer reads "Loving" as live
        o = spans.prep_obj(v, "in", "at", "near")
        if o is not None and lemma == "stay" and spans.lower(o.head) == "at":
            o = None  # "staying at the Taj": a stay at a place, not a home in a town
        if o is not None and not neg:
            place = spans.place_name(o)
            if place:
                out.add("lives_in", place, 0.85, lemma)
            elif re.fullmatch(r"pg|hostel|flat|apartment|studio|house|villa|\d?\s?bhk", spans.lower(o)):
                out.add("home_type", spans.phrase(o), 0.7, lemma)
                where = spans.prep_obj(o, "in", "at")  # "a 1BHK in Aundh"
                if where is not None and spans.place_name(where):
                    out.add("lives_in", spans.place_name(where), 0.8, lemma)
        w = spans.prep_obj(v, "with")
        if w is not None and not neg:
            out.add("lives_with", spans.phrase(w) if w.pos_ != "PROPN" else spans.proper_name(w), 0.7, f"{lemma}_with")
        if spans.lower(v) in ("live", "stay") and any(spans.lower(c) == "alone" for c in v.children) and not neg:
            out.add("lives_with", "alone", 0.7, "live_alone")
        return
    if lemma in L.MOVE_VERBS:
        if neg or dobj is not None:  # "moving the migration to next sprint" moves a thing, not a home
            return
        to = spans.prep_obj(v, "to", "into")
        frm = spans.prep_obj(v, "from")
        out_of = spans.prep_obj(v, "out") if any(spans.lower(c) == "out" for c in v.children) else None
        if out_of is None:
            p = next((c for c in v.children if spans.lower(c) == "out"), None)
            if p is not None:
                o = spans.prep_obj(p, "of")
                out_of = o
        if frm is not None and spans.proper_name(frm):
            out.add("lives_in", spans.proper_name(frm), 0.75, "move_from", ending=True)
        if out_of is not None and spans.proper_name(out_of):
            out.add("lives_in", spans.proper_name(out_of), 0.75, "move_out", ending=True)
        if to is not None:
            place = spans.place_name(to)
            if place:
                out.add("lives_in", place, 0.8, "move_to")
                out.add("moved", place, 0.8, "move_to")
            elif spans.lower(to) == "team":  # "moved to the payments team"
                out.add("team", spans.phrase(to), 0.7, "move_team")
            elif spans.lower(to) in ("pg", "hostel", "flat", "apartment", "house", "bhk", "2bhk", "1bhk", "3bhk", "place"):
                out.add("home_type", spans.phrase(to), 0.6, "move_into")
        w = spans.prep_obj(v, "with")
        if w is not None and any(spans.lower(c) == "in" for c in v.children) and spans.proper_name(w):
            out.add("lives_with", spans.proper_name(w), 0.7, "move_in_with")  # "moved in with Naina"
        return
    # ---- work -----------------------------------------------------------------------------------
    if lemma == "work" and not neg:
        if any(c.dep_ == "prt" and spans.lower(c) == "out" for c in v.children):
            return  # "I work out at Cult": exercise, not a job
        at = spans.prep_obj(v, "at", "for", "with")
        if at is not None and spans.lower(at.head) == "with" and at.ent_type_ != "ORG":
            at = None  # "I work with Priya Sharma": a colleague, not an employer; "with Deloitte" (ORG) may be one
        if at is not None and spans.proper_name(at):
            out.add("employer", spans.proper_name(at), 0.8, "work_at")
        as_ = spans.prep_obj(v, "as")
        if as_ is not None and spans.role(as_):
            out.add("job", spans.role(as_), 0.8, "work_as")
        on = spans.prep_obj(v, "on", "in")
        if on is not None and spans.lower(on) == "team":
            out.add("team", spans.phrase(on), 0.7, "work_in_team")
        if any(spans.lower(c) in ("remotely", "remote") for c in v.subtree) or spans.prep_obj(v, "from") is not None and \
                spans.lower(spans.prep_obj(v, "from")) in ("home",):
            # from home on named days ("on Fridays") is a hybrid week, not a remote job
            out.add("work_mode", "hybrid" if _WEEKDAYS.search(v.sent.text) else "remote", 0.7, "work_from_home")
        return
    if lemma in L.JOIN_VERBS and not neg:
        if dobj is not None and spans.lower(dobj) in ("class", "classes", "course", "batch") and \
                any(c.dep_ in ("compound", "amod") for c in dobj.children):
            subject = " ".join(c.text for c in dobj.children if c.dep_ in ("compound", "amod"))
            out.add("learning", subject, 0.65, "join_class")
            return
        if dobj is not None and any(spans.lower(t) in ("gym", "cult", "cult.fit", "batch", "membership") for t in v.sent):
            gym = spans.proper_name(dobj) or spans.phrase(dobj) or "gym"
            out.add("habit", "goes to the gym" if gym.lower() in ("gym", "the gym") else f"gym ({gym})", 0.6, "join_gym")
            return
        if dobj is not None:
            if spans.lower(dobj) == "team" or any(spans.lower(c) == "team" for c in dobj.subtree):
                out.add("team", spans.phrase(dobj), 0.7, "join_team")
            elif spans.proper_name(dobj) and spans.lower(dobj) not in ("gym", "group", "class", "call", "meeting") \
                    and (v.tag_ in ("VBD", "VBN") or any(spans.lower(c) in ("'ve", "have", "has") for c in v.children)) \
                    and dobj.i - v.i <= 3:  # "joined Flipkart", not "Joining in 20 Standup ..."
                out.add("employer", spans.proper_name(dobj), 0.75, "join")
                out.add("started_job", spans.proper_name(dobj), 0.75, "join")
            elif spans.lower(dobj) in ("gym", "cult", "club", "class", "classes"):
                out.add("habit", "goes to " + (spans.phrase(dobj) or "the gym"), 0.6, "join_gym")
        as_ = spans.prep_obj(v, "as")
        if as_ is not None and spans.role(as_):
            out.add("job", spans.role(as_), 0.8, "join_as")
        return
    if lemma == "resign" or (lemma in ("hand", "put", "serve", "submit", "give") and _about(v, ("notice", "resignation", "papers"))):
        if not neg:
            org = next((t for t in v.subtree if t.dep_ == "pobj" and spans.lower(t.head) in ("from", "at", "with")
                        and t.pos_ == "PROPN"), None)
            name = spans.proper_name(org) if org is not None else None
            out.add("employer", name or "", 0.75, "resign", ending=True)
            if name:
                out.add("left_job", name, 0.7, "resign")
        return
    if lemma in ("quit", "leave") and not neg:
        # an acronym the tagger calls a noun ("quit K&R.", "left TCS") is an employer's name too
        acronym = dobj is not None and re.fullmatch(r"[A-Z][A-Z&]*[A-Z]", dobj.text.rstrip(".")) is not None
        # a lowercase word the tagger calls a proper noun ("I quit badminton") is an activity, no company
        named = dobj is not None and dobj.pos_ == "PROPN" and dobj.text[:1].isupper()
        if dobj is not None and (spans.lower(dobj) in ("job", "company", "work", "office") or named or acronym):
            org = spans.proper_name(dobj) if dobj.pos_ == "PROPN" else dobj.text.rstrip(".") if acronym else None
            if org and spans.lower(dobj) not in L.MEATS:
                out.add("employer", org, 0.75, "quit", ending=True)
                out.add("left_job", org, 0.7, "quit")
            elif not org:
                out.add("employer", "", 0.7, "quit_job", ending=True)
            return
        x = dobj if dobj is not None else next((c for c in v.children if c.dep_ == "xcomp" and c.tag_ == "VBG"), None)
        if lemma == "quit" and x is not None:  # "quit smoking", "I quit running.", "I quit badminton"
            _stop_habit(v, x, out)
        return
    # ---- relationships ----------------------------------------------------------------------------
    if lemma in ("engage", "marry", "wed") or (lemma == "get" and any(_wed_lemma(c) in ("engage", "marry") for c in v.children)):
        if neg or spans.prep_obj(v, "in") is not None:  # "engaged in a project" is busy, not betrothed
            return
        to = spans.prep_obj(v, "to", "with")
        for c in v.children:  # "got engaged to Kunal": the preposition hangs off "engaged"
            if to is None and _wed_lemma(c) in ("engage", "marry"):
                to = spans.prep_obj(c, "to", "with")
        status = "married" if lemma in ("marry", "wed") or any(_wed_lemma(c) == "marry" for c in v.children) else "engaged"
        partner = spans.proper_name(to) if to is not None else None
        if partner is None:
            subj = next(iter(guards.subjects(v)), None)
            if subj is not None and not guards.is_first_person(subj):
                partner = spans.proper_name(subj)
        if partner is None and dobj is not None:
            partner = spans.proper_name(dobj)
        if partner is None:  # "Rohan and I got engaged" (often parsed with Rohan as the root)
            m = re.search(r"\b([A-Z][\w\-]+)\s+(?:and|&)\s+(?:I|me)\b", v.sent.text)
            if m and ascii_fold(m.group(1)).lower() not in NOT_NAMES:
                partner = m.group(1)
        out.add("relationship_status", status, 0.85, status)
        if partner:
            out.add("partner", partner, 0.85, status)
        return
    if lemma in ("date", "see") and not neg and dobj is not None and spans.proper_name(dobj) and v.tag_ == "VBG":
        out.add("partner", spans.proper_name(dobj), 0.75, "dating")
        return
    if lemma in ("lay", "fire", "sack") and not neg and (lemma != "lay" or any(spans.lower(c) == "off" for c in v.children)) \
            and any(c.dep_ in ("auxpass", "nsubjpass") for c in v.children):
        # "got laid off from Swiggy", "I was fired": the job ended, the company named or not
        frm = spans.prep_obj(v, "from", "at")
        name = spans.proper_name(frm) if frm is not None else None
        out.add("employer", name or "", 0.75, "laid_off", ending=True)
        if name:
            out.add("left_job", name, 0.7, "laid_off")
        return
    if not neg and dobj is None and (lemma in ("divorce", "separate") or lemma == "get" and any(
            spans.lower(c) in ("divorced", "separated") for c in v.children)):
        # "got divorced", "we separated" (from whom, when said): the partner in force ends
        frm = spans.prep_obj(v, "from")
        out.add("partner", spans.proper_name(frm) if frm is not None and spans.proper_name(frm) else "", 0.75,
                "divorced", ending=True)
        return
    if lemma in ("break", "split") and any(spans.lower(c) == "up" for c in v.children) and not neg:
        w = spans.prep_obj(v, "with")
        out.add("partner", spans.proper_name(w) if w is not None else "", 0.8, "break_up", ending=True)
        return
    # ---- tastes -----------------------------------------------------------------------------------
    if lemma in L.LIKE_VERBS | L.DISLIKE_VERBS:
        target = dobj or next(iter(spans.children(v, "xcomp", "ccomp")), None)
        if target is None and v.i + 1 < v.sent.end:  # the small parser sometimes drops "trekking" as punct
            nxt = v.doc[v.i + 1]
            target = nxt if nxt.tag_ in ("VBG", "NN", "NNS", "NNP") and nxt.is_alpha else None
        if target is None:
            return
        dislike = (lemma in L.DISLIKE_VERBS) != neg
        if neg and lemma in L.DISLIKE_VERBS:
            return  # "I don't hate it": no claim either way
        for t in spans.conjoined(target):
            val = _taste(t)
            if t.tag_ == "VBG" and t.lemma_.lower() in L.LIVE_VERBS | {"work", "be", "have", "do", "go", "get"}:
                continue  # "I love living in Pune": the living is read as a home, it is no pastime
            if val and not spans.pronoun_value(t):
                if dislike:
                    out.add("dislikes", val, 0.7, lemma)
                else:
                    strength = 0.75 if lemma in ("love", "adore", "enjoy") else 0.65
                    out.add("hobby" if t.pos_ == "VERB" or t.tag_ == "VBG" else "likes", val, strength, lemma)
        return
    # ---- health -----------------------------------------------------------------------------------
    if lemma in ("have", "suffer", "get", "develop", "diagnose") and not neg:
        objs = spans.conjoined(dobj) if dobj is not None else []
        if lemma in ("suffer",):
            o = spans.prep_obj(v, "from")
            objs = spans.conjoined(o) if o is not None else []
        if lemma == "diagnose":
            o = spans.prep_obj(v, "with")
            objs = spans.conjoined(o) if o is not None else []
        for o in objs:
            if spans.lower(o) in ("allergy", "allergies"):
                target = spans.prep_obj(o, "to") or next((c for c in o.children if c.dep_ in ("compound", "amod", "nmod")), None)
                if target is not None:
                    out.add("allergy", spans.phrase(target), 0.8, "have_allergy")
                continue
            if spans.lower(o) in L.CONDITIONS and spans.lower(o) not in L.ACUTE:
                where = spans.prep_obj(v, "in") or spans.prep_obj(o, "in")
                if where is not None and spans.lower(where) in ("family", "genes", "blood"):
                    out.decline("condition", "in_the_family")  # "diabetes in my family": a relative's, a risk
                else:
                    out.add("condition", spans.phrase(o), 0.7, f"{lemma}_condition")
                continue
            if _possession(v, o, out, lemma):
                continue
            if spans.lower(o) in L.PETS:
                continue  # handled by _pet_names (needs the name)
            if lemma == "have" and (spans.lower(o) in L.SIBLING_NOUNS or spans.lower(o) in ("sisters", "brothers", "siblings")):
                out.add("family", spans.phrase(o), 0.7, "have_sibling")
        return
    if lemma in ("buy", "purchase", "own", "upgrade", "switch", "bring", "gift") and not neg:
        for o in (spans.conjoined(dobj) if dobj is not None else []):
            if not _possession(v, o, out, lemma) and lemma in ("buy", "purchase", "own") and o.pos_ == "NOUN" \
                    and not any(c.dep_ == "nummod" for c in o.children) \
                    and o.lemma_.lower() not in L.CONSUMABLES and not spans.pronoun_value(o) and v.tag_ in ("VBD", "VBN", "VBP"):
                out.add("possession", spans.phrase(o), 0.6, f"{lemma}_thing")  # "bought binoculars": a durable thing
        to = spans.prep_obj(v, "to")
        if lemma in ("upgrade", "switch") and to is not None:
            _possession(v, to, out, lemma)
        return
    if lemma in L.SELL_VERBS and not neg and dobj is not None:
        kind = L.POSSESSIONS.get(spans.lower(dobj)) or next((L.POSSESSIONS[spans.lower(c)] for c in dobj.subtree
                                                         if spans.lower(c) in L.POSSESSIONS), None)
        if kind:
            out.add(kind, spans.phrase(dobj) or "", 0.75, "sell", ending=True)
        return
    if lemma in ("wear",) and dobj is not None and spans.lower(dobj) in ("glasses", "specs", "spectacles", "lenses"):
        out.add("eyesight", ("no " if neg else "") + "glasses", 0.7, "wear_glasses")
        return
    # ---- abilities and habits --------------------------------------------------------------------------
    if lemma in L.SKILL_VERBS and any(spans.lower(c) in ("can", "ca") for c in v.children if c.dep_ == "aux"):
        obj = spans.phrase(dobj) if dobj is not None and lemma in ("play", "speak", "ride", "drive", "cook") else None
        out.add("skill", ("cannot " if neg else "can ") + lemma + (f" {obj}" if obj else ""), 0.75, "can")
        return
    if lemma == "learn" and dobj is not None and not neg:
        tense_ok = v.tag_ in ("VBG", "VBD", "VBN") or v.dep_ == "xcomp"
        if tense_ok:
            out.add("learning", spans.phrase(dobj), 0.7, "learn")
        return
    if lemma == "speak" and dobj is not None and not neg:
        for o in spans.conjoined(dobj):
            if spans.lower(o) in L.LANGUAGES:
                out.add("language", o.text.capitalize(), 0.75, "speak")
        return
    if lemma == "play" and dobj is not None and not neg and v.tag_ in ("VBP", "VB", "VBZ", "VBG") and not _once(v):
        out.add("hobby", spans.phrase_or_word(dobj), 0.65, "play")  # "Hobby: cricket"
        return
    if lemma in ("eat", "have") and dobj is not None:
        _diet(v, dobj, neg, out)
        return
    if lemma in ("drink", "smoke") and dobj is not None and not neg and v.tag_ in ("VBP", "VB") \
            and spans.lower(dobj) in L.DRINKS_AND_SMOKES:  # "I drink beer", a habit (not "I drank a beer")
        out.add("habit", f"{lemma}s {spans.lower(dobj)}", 0.65, "habit_object")
        return
    if neg and (lemma in L.HABIT_VERBS or lemma == "go") and guards.occasional(v, dobj):
        out.decline("habit", "occasional")  # "I don't drink on weekdays": the habit holds at other times
        return
    if lemma in L.HABIT_VERBS and not dobj and v.dep_ in ("ROOT", "conj") and _habitual(v):
        out.add("habit", ("doesn't " if neg else "") + lemma, 0.65, "habit")
        return
    if lemma in ("drink", "smoke") and neg:
        if dobj is None or spans.lower(dobj) in L.DRINKS_AND_SMOKES:  # not "I don't drink coffee"
            out.add("habit", f"doesn't {lemma}", 0.7, "habit")
        return
    if lemma == "go" and (o := spans.prep_obj(v, "to")) is not None and v.tag_ in ("VBP", "VB") \
            and (spans.lower(o) in L.HABIT_NOUNS or spans.lower(o) in ("class", "classes")) and _habitual(v):
        # "I go to the gym every morning", "I don't go to the gym": a routine, or its absence
        what = spans.phrase(o) or spans.lower(o)
        out.add("habit", f"doesn't go to {what}" if neg else what, 0.6, "go_to_habit")
        return
    if lemma in L.STOP_VERBS | {"start", "begin"} and not neg:
        if lemma == "give" and any(spans.lower(c) == "away" for c in v.children) \
                and dobj is not None and spans.proper_name(dobj):
            out.add("gave_away", spans.proper_name(dobj), 0.7, "give_away")  # ends a pet held under that name
            return
        if lemma == "give" and not any(c.dep_ == "prt" and spans.lower(c) == "up" for c in v.children):
            return  # "gave away my cat", "gave her my notes": only "give up" stops something
        x = next((c for c in v.children if c.dep_ == "xcomp"), None)
        if x is not None:
            if x.lemma_ in ("eat", "have"):
                xo = next(iter(spans.children(x, "dobj")), None)
                if xo is not None:
                    _diet(x, xo, lemma in L.STOP_VERBS, out)
                return
            if lemma in L.STOP_VERBS and x.lemma_ == "be":  # "stopped being vegan"
                what = next(iter(spans.children(x, "attr", "acomp")), None) or dobj
                diet = L.DIETS.get(spans.lower(what)) if what is not None else None
                if diet:
                    out.add("diet", diet, 0.75, "stop_being", ending=True)
            elif lemma in L.STOP_VERBS:
                _stop_habit(v, x, out)
            elif x.lemma_ == "learn":
                xo = next(iter(spans.children(x, "dobj")), None)
                if xo is not None:
                    out.add("learning", spans.phrase(xo), 0.7, "start_learning")
            else:
                out.add("hobby", spans.phrase(x), 0.6, "start")
            return
        if dobj is not None and lemma in L.STOP_VERBS:
            _stop_habit(v, dobj, out)
        return
    if lemma == "get" and not neg and spans.prep_obj(v, "into") is not None:  # "I've gotten really into birding"
        out.add("likes", _taste(spans.prep_obj(v, "into")), 0.65, "get_into")
        return
    if lemma == "call" and not neg and v.i + 2 < v.sent.end and spans.lower(v.doc[v.i + 1]) == "me":
        n = v.doc[v.i + 2]  # "call me Mehu": the name right after "me", in the same sentence
        after = v.doc[v.i + 3] if v.i + 3 < v.sent.end else None
        if n.is_alpha and n.text[:1].isupper() and n.pos_ in ("PROPN", "NOUN") and spans.proper_name(n) \
                and (after is None or after.is_punct or after.pos_ in ("CCONJ", "PUNCT")):
            out.add("nickname", spans.proper_name(n), 0.75, "call_me")
        return
    if lemma in ("get", "do", "have") and dobj is not None and spans.lower(dobj) in L.BODY_MARKS and not neg \
            and v.tag_ in ("VBD", "VBN"):
        out.add("appearance", spans.phrase(dobj), 0.65, "got_" + spans.lower(dobj))
        return
    if lemma in ("switch", "move", "get") and not neg:
        to = spans.prep_obj(v, "to") or dobj
        if to is not None and spans.lower(to) in L.EYEWEAR:
            out.add("eyesight", L.EYEWEAR[spans.lower(to)], 0.7, "eyewear")
            return
    if lemma == "do" and dobj is not None and not neg:
        if spans.lower(dobj) in L.HABIT_NOUNS and _habitual(v) or spans.lower(dobj) in L.HABIT_NOUNS and v.tag_ == "VBP":
            out.add("habit", spans.lower(dobj), 0.6, "do_habit")
            return
        if any(spans.lower(t) in ("certificate", "course", "diploma", "mba", "masters", "phd", "degree")
               for t in dobj.subtree) and v.tag_ == "VBG":
            out.add("learning", spans.phrase(dobj, max_words=8), 0.65, "doing_course")
            return
    if lemma == "snore" and not neg:
        out.add("habit", "snores", 0.65, "snore")
        return
    # ---- done things --------------------------------------------------------------------------------
    if lemma in L.FINISH_VERBS and not neg and v.tag_ in ("VBD", "VBN") and dobj is not None:
        if any(spans.lower(t) in L.RACES for t in dobj.subtree):
            out.add("completed", spans.phrase(dobj, max_words=7), 0.75, lemma)
        return
    if lemma in ("graduate",) and not neg:
        o = spans.prep_obj(v, "from", "in")
        if o is not None:
            out.add("education", f"graduated from {spans.proper_name(o) or spans.phrase(o)}", 0.7, "graduate")
        return
    if lemma == "study" and not neg and v.tag_ in ("VBD", "VBN"):
        o = dobj or spans.prep_obj(v, "at", "in")
        what = spans.phrase_or_word(o) if o is not None else None
        if what:
            out.add("education", "studied " + what, 0.65, "study")
        return
    if lemma in ("wake", "sleep") and not neg and _habitual(v):
        t = spans.prep_obj(v, "at", "by", "before")
        if t is not None:
            when = t.doc[t.left_edge.i:t.i + 1].text  # "1 am", not "am"
            out.add("sleep", f"{'wakes up' if lemma == 'wake' else 'sleeps'} at {when}", 0.6, lemma)
        return
    if lemma in ("adopt", "rescue", "foster") and dobj is not None and not neg:
        if spans.lower(dobj) in L.PETS or any(spans.lower(c) in L.PETS for c in dobj.subtree):
            out.add("pet", spans.phrase(dobj), 0.6, "adopt")
        return
    if lemma in ("visit", "go", "travel", "fly", "land") and not neg and v.tag_ in ("VBD", "VBN"):
        o = dobj if lemma == "visit" else spans.prep_obj(v, "to", "in")
        if o is not None and spans.proper_name(o) and o.ent_type_ in ("GPE", "LOC", "ORG", "PERSON", "NORP", "FAC", ""):
            if spans.lower(o) not in ("office", "work", "home", "gym"):
                out.add("trip", spans.proper_name(o), 0.55, "travel")
        return
    if lemma == "turn" and not neg:
        n = next((c for c in v.children if c.like_num or c.dep_ in ("attr", "oprd", "dobj", "acomp")), None)
        if n is not None and n.like_num and 10 < spans.to_int(n.text) < 100:
            out.add("age", n.text, 0.8, "turn")
        return


def _once(v: Token) -> bool:
    """A single occasion ("played tennis yesterday"), not a habit."""
    return v.tag_ == "VBD" or any(spans.lower(t) in ("yesterday", "today", "tonight", "last") for t in v.subtree)


def _no_longer(v: Token) -> bool:
    """A negation that says a state ended: "not ... anymore", "no longer"."""
    words = [spans.lower(t) for t in v.sent]
    return "anymore" in words or ("any" in words and "more" in words) or "longer" in words


def _habitual(v: Token) -> bool:
    if v.tag_ not in ("VBP", "VBZ", "VB", "VBG"):
        return False
    return any(spans.lower(t) in ("every", "daily", "always", "usually", "regularly", "week", "weekly", "times", "days",
                             "mornings", "morning", "religiously", "never", "at") for t in v.subtree) or guards.negated(v)


def _about(v: Token, words: Iterable[str]) -> bool:
    return any(spans.lower(t) in words for t in v.subtree)


def _possession(v: Token, o: Token, out: _Out, lemma: str) -> bool:
    # the noun phrase itself, without what is attached after it ("a bike ride with the group on Sunday")
    attached = {t.i for c in o.children if c.dep_ in ("prep", "relcl", "acl") for t in c.subtree}
    np = [x for x in o.subtree if x.i not in attached]
    kind = L.POSSESSIONS.get(spans.lower(o)) or L.POSSESSIONS.get(o.lemma_.lower())
    if kind is None and o.pos_ != "NOUN":  # a model's name around the kind; "bike ride", "car pool" are no bike or car
        kind = next((L.POSSESSIONS[w] for w in [spans.lower(x) for x in np][:4] if w in L.POSSESSIONS), None)
    if kind is None:
        return False
    if lemma in ("get", "have") and v.tag_ not in ("VBD", "VBN", "VBP", "VBZ"):
        return False
    if lemma in ("get", "bring", "have") and not any(t.pos_ == "PROPN" or t.like_num for t in np):
        return False  # "got a new laptop" at work says little; "got an iPhone 13" names the thing
    # a gift: "bought a Kindle for my sister", "got mummy an iPhone"
    for_whom = spans.prep_obj(v, "for")
    if for_whom is not None and spans.lower(for_whom) not in ("me", "myself", "us", "ourselves") \
            or any(c.dep_ in ("dative", "iobj") for c in v.children):
        return True
    val = spans.phrase(o, max_words=6) or spans.phrase_or_word(o)
    if not val:
        return True
    if val.lower() in L.POSSESSIONS and kind == "phone":
        return True  # "bought a phone": which one is not said
    out.add(kind, val, 0.7, f"{lemma}_{kind}")
    return True


def _diet(v: Token, o: Token, neg_or_stop: bool, out: _Out) -> None:
    words = {spans.lower(t) for t in o.subtree} | {o.lemma_.lower()}
    if re.search(r"non-?veg", "".join(spans.lower(t) for t in o.subtree)):  # the tokenizer splits "non-veg"
        words.add("non-veg")
    if not words & L.MEATS:
        return
    eggs_only = words <= {"egg", "eggs", "now", "again", "too"}
    if neg_or_stop and guards.negated(v) and guards.occasional(v, o):
        out.decline("diet", "occasional")  # "I don't eat meat on Tuesdays": meat on the other days
        return
    if neg_or_stop:
        out.add("diet", "vegetarian" if not eggs_only else "vegan", 0.7, "no_meat")
    elif v.tag_ in ("VBP", "VBZ", "VBD", "VBN", "VBG", "VB"):
        started = v.head.lemma_ in ("start", "begin") or any(spans.lower(t) in ("now", "again", "started") for t in v.subtree)
        if started or _habitual(v) or v.tag_ in ("VBP", "VBZ"):
            out.add("diet", "eggetarian" if eggs_only else "non-vegetarian", 0.65, "eats_meat")


def _wed_lemma(t: Token) -> str:
    """The verb behind "got married" / "got engaged": the tagger often reads the participle as an adjective
    whose lemma is the word itself."""
    return {"married": "marry", "engaged": "engage"}.get(spans.lower(t), t.lemma_)


# states a clause in the past tense says no longer hold ("I lived in Delhi for 5 years", "I was vegetarian
# in college"); a status said in the past is often the event ("I was married in 2019"), so it is not here
STATES = frozenset({"lives_in", "lives_with", "home_type", "employer", "job", "team", "office", "work_mode", "diet",
                     "habit", "hobby", "likes", "dislikes", "condition", "eyesight", "learning", "sleep"})
_STATE_VERBS = frozenset({"live", "stay", "reside", "work", "be", "have", "love", "like", "hate", "play", "smoke",
                          "drink", "eat", "wear"})


def _past_state(v: Token) -> str | None:
    """How the clause puts its state in the past: "used to" ("I used to live in Delhi"), or "past" (a
    state verb in the simple or progressive past: "I lived in Delhi for 5 years", "I was working at
    Infosys then", "I was vegetarian till 2019"); None when it holds now ("since", "still")."""
    h = v.head
    if v.dep_ == "xcomp" and h.lemma_ == "use" and h.tag_ == "VBD" \
            and any(c.dep_ == "aux" and spans.lower(c) == "to" for c in v.children):
        return "used to"
    if any(spans.lower(t) in ("since", "still", "now", "ab") for t in v.subtree):
        return None
    if v.tag_ == "VBD" and v.lemma_.lower() in _STATE_VERBS:
        return "past"
    if v.tag_ == "VBG" and any(c.dep_ == "aux" and spans.lower(c) in ("was", "were") for c in v.children) \
            and v.lemma_.lower() in _STATE_VERBS:
        return "past"
    return None


def _taste(t: Token) -> str | None:
    """What a taste is for, or None when it names nothing of the speaker's own: something pointed at
    ("this show"), someone else's ("your cooking", "Rohan's biryani") or a whole clause ("that you
    remembered")."""
    if any(c.dep_ == "det" and spans.lower(c) in ("this", "that", "these", "those") for c in t.children):
        return None
    # "my mom's rajma" is still a taste of the speaker's home: only someone else's own thing is theirs
    if any(c.dep_ == "poss" and spans.lower(c) not in ("my", "our")
           and not any(g.dep_ == "poss" and spans.lower(g) in ("my", "our") for g in c.children) for c in t.children):
        return None
    if t.dep_ == "ccomp" or any(c.dep_ in ("nsubj", "mark") for c in t.children):
        return None
    return spans.phrase(t)


def _no_more(v: Token) -> bool:
    """The clause says its state is over: "anymore", "any more", "no longer"."""
    for c in v.children:
        low = spans.lower(c)
        if low == "anymore" or low == "longer" and any(spans.lower(g) == "no" for g in c.children):
            return True
        if low == "more" and c.i > 0 and spans.lower(v.doc[c.i - 1]) == "any":
            return True
    return False


_ACTIVITY_VERBS = L.HABIT_VERBS | {"play", "practise", "practice", "go", "train", "attend"}


def _gerund(lemma: str) -> str:
    if lemma.endswith("ie"):
        return lemma[:-2] + "ying"
    if lemma.endswith("e") and not lemma.endswith(("ee", "ye", "oe")):
        return lemma[:-1] + "ing"
    if re.fullmatch(r"[^aeiou]*[aeiou][bdgmnprt]", lemma):  # run, swim, jog
        return lemma + lemma[-1] + "ing"
    return lemma + "ing"


def _state_ended(v: Token, lemma: str, dobj: Token | None, out: _Out) -> bool:
    """The end of what the clause would state, said as "not ... anymore" / "no longer": "I'm no longer
    at Zoho", "I'm not with Naina anymore", "I don't live in Pune anymore", "I don't play the guitar
    anymore". True when read; other states ("I don't care anymore") are left to the usual negation."""
    if lemma in ("be", "become") or v.pos_ == "AUX":
        at, w = spans.prep_obj(v, "at"), spans.prep_obj(v, "with")
        if at is not None and at.pos_ == "PROPN" and spans.proper_name(at):
            out.add("employer", spans.proper_name(at), 0.7, "no_longer_at", ending=True)
            out.add("left_job", spans.proper_name(at), 0.65, "no_longer_at")
            return True
        if w is not None and w.pos_ == "PROPN" and spans.proper_name(w):
            # a partner, a provider, a team: "left" ends only a value already held under that name
            out.add("left", spans.proper_name(w), 0.7, "no_longer_with")
            return True
        return False
    if lemma in L.LIVE_VERBS:
        o, w = spans.prep_obj(v, "in", "at"), spans.prep_obj(v, "with")
        if o is not None and spans.place_name(o):
            out.add("lives_in", spans.place_name(o), 0.75, "no_longer_live", ending=True)
        if w is not None and (spans.proper_name(w) or spans.phrase(w)):
            out.add("lives_with", spans.proper_name(w) or spans.phrase(w), 0.7, "no_longer_live_with", ending=True)
        return True
    if lemma in ("date", "see") and dobj is not None and spans.proper_name(dobj):
        out.add("left", spans.proper_name(dobj), 0.7, "no_longer_dating")  # "not dating Naina anymore"
        return True
    if lemma == "work":
        at = spans.prep_obj(v, "at", "for", "with")
        if at is not None and at.pos_ == "PROPN" and spans.proper_name(at):
            out.add("employer", spans.proper_name(at), 0.7, "no_longer_work", ending=True)
            out.add("left_job", spans.proper_name(at), 0.65, "no_longer_work")
        return True
    if lemma not in _ACTIVITY_VERBS:
        return False
    to = spans.prep_obj(v, "to") if lemma in ("go", "attend") else None
    if to is not None or lemma == "attend" and dobj is not None:
        what = spans.phrase(to if to is not None else dobj)  # "don't go to the gym anymore": the gym
    elif dobj is not None and lemma in ("play", "practise", "practice", "do"):
        what = spans.phrase(dobj)  # "don't play the guitar anymore": the guitar
    elif dobj is not None:
        what = f"{_gerund(lemma)} {spans.phrase(dobj)}"
    else:
        what = _gerund(lemma)
    if what:
        out.add("habit", f"stopped {what}", 0.65, "no_longer")
    return True


def _stop_habit(v: Token, x: Token, out: _Out) -> None:
    to = spans.prep_obj(x, "to") if x.lemma_ == "go" else None
    # "stopped going to the gym" stops the gym: the place it names, as "goes to the gym" does
    what = spans.phrase(to) if to is not None else spans.phrase(x, max_words=5)
    if not what:
        return
    verb = "quit" if v.lemma_ == "quit" else "stopped"
    out.add("habit", f"{verb} {what}", 0.7 if x.lemma_ in ("smoke", "drink", "smoking", "drinking") else 0.65, "stop")


def _copula(v: Token, neg: bool, out: _Out, laughs: bool) -> None:
    comps = spans.children(v, "attr", "acomp", "oprd")
    for c in comps:
        low = spans.lower(c)
        lemma = c.lemma_.lower()
        # diet
        diet = L.DIETS.get(low) or L.DIETS.get(lemma)
        if diet is None and low == "veg" and any(spans.lower(g) == "non" for g in c.children):
            diet = "non-vegetarian"
        if diet:
            before = [spans.lower(t) for t in c.doc[max(c.sent.start, c.i - 2):c.i]]  # "non", "-" split off as siblings
            if diet == "vegetarian" and (any(spans.lower(g) in ("non", "non-") for g in c.subtree)
                                         or before[-1:] == ["non"] or before == ["non", "-"]):
                diet = "non-vegetarian"
            if (neg and _no_longer(v)) or re.search(r"(?i)\bno\s+longer\b", v.sent.text):
                out.add("diet", diet, 0.75, "no_longer_diet", ending=True)  # "I'm not vegetarian anymore"
            elif not neg and v.tag_ != "VBD" and guards.occasional(v, c):  # "was vegetarian in college" ended
                out.decline("diet", "occasional")  # "vegetarian on Tuesdays", "vegan for January"
            elif not neg:
                out.add("diet", diet, 0.8, "be_diet")
            return
        # allergies and other "be <adj> to/of/with"
        if lemma == "allergic":
            o = spans.prep_obj(c, "to")
            for t in (spans.conjoined(o) if o is not None else []):
                if not neg:
                    out.add("allergy", spans.phrase(t), 0.85, "allergic")
            return
        if lemma in ("asleep", "awake", "up") and not neg:  # "I'm asleep by 11 these days"
            t = spans.prep_obj(c, "by", "at", "till", "until") or spans.prep_obj(v, "by", "at", "till", "until")
            if t is not None and (t.like_num or re.match(r"\d", t.text)):
                out.add("sleep", f"{'asleep' if lemma == 'asleep' else 'up'} by {t.text}", 0.6, "asleep_by")
            return
        if lemma in ("afraid", "scared", "terrified") and not neg:
            o = spans.prep_obj(c, "of")
            if o is not None:
                out.add("condition", f"{c.text.lower()} of {spans.phrase(o)}", 0.65, "afraid")
            return
        if lemma in ("obsessed", "addicted", "hooked", "into", "crazy", "mad") and not neg:
            o = spans.prep_obj(c, "with", "to", "on", "about")
            if o is not None:
                out.add("likes", _taste(o), 0.7, "obsessed")
            return
        if lemma in ("fan",) and not neg:
            o = spans.prep_obj(c, "of")
            if o is not None:
                out.add("likes", _taste(o), 0.7, "fan_of")
            return
        status = low if low in ("engaged", "married") else lemma  # the tagger may lemmatize "engaged" to "engage"
        if low in ("divorced", "separated") and not neg:  # "I'm divorced", "got divorced from Kabir"
            frm = spans.prep_obj(c, "from")
            out.add("partner", spans.proper_name(frm) if frm is not None and spans.proper_name(frm) else "", 0.75,
                    "divorced", ending=True)
            return
        to = spans.prep_obj(c, "to")
        if status in ("engaged", "married") and to is not None and not to.text[:1].isupper():
            return  # "married to my job": no one named, a figure of speech
        if status in ("engaged", "married", "single") and not neg and spans.prep_obj(c, "in") is None:  # not "engaged in a project"
            out.add("relationship_status", status, 0.8, f"be_{status}")
            to = spans.prep_obj(c, "to")
            if to is not None and spans.proper_name(to):
                out.add("partner", spans.proper_name(to), 0.8, f"be_{status}")
            return
        if lemma in ("left-handed", "right-handed", "lefty", "ambidextrous") and not neg:
            out.add("handedness", lemma.replace("lefty", "left-handed"), 0.8, "hand")
            return
        if low in ("owl", "riser", "person") and not neg:
            if v.tag_ != "VBD" and guards.occasional(v, c):
                out.decline("sleep", "occasional")  # "a morning person on weekends only"
                return
            phrase = " ".join(t.text for t in c.subtree if t.i <= c.i and t.dep_ != "det")  # phrase() drops "morning"
            if phrase and any(w in phrase.lower() for w in ("night owl", "early riser", "morning person", "night person")):
                # one name per sleep type, whichever words the person used
                kind = "early riser" if re.search(r"(?i)morning\s+person|early\s+riser", phrase) else "night owl"
                out.add("sleep", kind, 0.7, "sleep_type")
            return
        # age: "I'm 28", "I am 28 years old"
        if c.like_num and 10 < spans.to_int(c.text) < 100 and not neg:
            out.add("age", c.text, 0.75, "be_age")
            return
        if low in ("years", "yrs") and any(g.like_num for g in c.children) and not neg:
            n = next(g for g in c.children if g.like_num)
            if 10 < spans.to_int(n.text) < 100:
                out.add("age", n.text, 0.8, "be_age")
            return
        trait = next((g.lemma_.lower() for g in [c, *c.children] if g.lemma_.lower() in L.PERSONALITY), None)
        if trait and not neg:
            out.add("personality", trait, 0.7, "be_personality")
            return
        doer = L.DOER_NOUNS.get(lemma)
        if doer and not neg and spans.lower(c) not in ("slow", "bad"):
            pred, val = doer
            mods = [spans.lower(g) for g in c.children if g.dep_ in ("amod", "compound")]
            if pred == "habit" and "social" in mods:
                val = f"social {lemma}"
            if not any(m in ("slow", "bad", "terrible") for m in mods):
                out.add(pred, val, 0.65, "be_doer")
                return
        # "I'm a Ludhiana girl": where the person is from; "I'm now a Power BI guy" is not (origin does not
        # begin "now")
        if lemma in ("girl", "boy", "guy", "kid", "lad", "lass") and not neg:
            if any(spans.lower(g) in ("now", "officially", "finally") for g in v.children if g.dep_ == "advmod"):
                return
            place = next((g for g in c.children if g.dep_ in ("compound", "amod") and g.pos_ == "PROPN"), None)
            if place is not None and spans.proper_name(place):
                out.add("hometown", spans.proper_name(place), 0.7, "place_girl")
            return
        if re.fullmatch(r"\d['’]\d{1,2}\"?|\d(?:\.\d+)?\s*(?:ft|feet)", c.text) and not neg:
            out.add("height", c.text, 0.75, "be_height")
            return
        # profession: "I'm a product designer (at X)"
        if spans.role(c) and not neg and not laughs:
            out.add("job", spans.role(c), 0.75, "be_role")
            at = spans.prep_obj(c, "at", "with", "in", "for")
            if at is not None and spans.proper_name(at):
                out.add("employer", spans.proper_name(at), 0.7, "be_role_at")
            return
    if neg:
        return
    # "I'm 5'3": the parse splits the height
    m = re.match(r"\s*(?:i['’]?m|i am)\s+(\d['’]\s?\d{1,2}\"?)(?=[\s,.!]|$)", v.sent.text, re.I)
    if m and guards.is_first_person(v.sent[0]):
        out.add("height", m.group(1).replace(" ", ""), 0.75, "be_height")
    # "I'm at the Lower Parel office"
    at = spans.prep_obj(v, "at")
    if at is not None and spans.lower(at) == "office" and not comps:
        where = " ".join(t.text for t in at.subtree if t.i < at.i and t.dep_ in ("compound", "amod") and t.pos_ == "PROPN")
        if where:
            where = f"{where} office"
            out.add("office", where, 0.65, "at_office")
    # "I'm into birding"
    into = spans.prep_obj(v, "into")
    if into is not None and not comps:
        out.add("likes", _taste(into), 0.65, "into")
    # "I'm from Lucknow", "I'm in Bangalore now", "I'm based in Pune"
    frm = spans.prep_obj(v, "from")
    if frm is not None and spans.proper_name(frm) and not comps and frm.ent_type_ == "ORG":
        out.decline("hometown", "from_org")  # "I'm from Infosys, calling about ...": where one works
    elif frm is not None and spans.proper_name(frm) and not comps:
        out.add("hometown", spans.proper_name(frm), 0.8, "be_from")
    for c in comps:
        if c.lemma_ in ("base", "settle", "located"):
            o = spans.prep_obj(c, "in", "at", "out")
            if o is not None and spans.place_name(o):
                out.add("lives_in", spans.place_name(o), 0.8, "based_in")
        if c.lemma_ in ("remote", "hybrid"):
            out.add("work_mode", c.lemma_, 0.7, "be_remote")


def _possessive_statements(sent: Span, out: _Out, quoted: list[tuple[int, int]], laughs: bool) -> None:
    """"my birthday is 3 March", "my favourite food is dosa", "dosa is my favourite", "my sister Ria",
    "Naina is my girlfriend", "my dog Bruno"."""
    for t in sent:
        if any(a <= t.idx < b for a, b in quoted):
            continue
        poss = next((c for c in t.children if c.dep_ == "poss" and spans.lower(c) in ("my", "our")), None)
        if poss is None:
            continue
        low = spans.lower(t)
        is_fav = any(spans.lower(c) in L.FAVOURITE_WORDS for c in t.children) or low in L.FAVOURITE_WORDS
        # "my X is Y" (X the subject of a copula)
        if t.dep_ == "nsubj" and t.head.lemma_ == "be" and not guards.negated(t.head) and not guards.hypothetical(t.head) \
                and not guards.hedged(t.head) and not guards.future(t.head):
            comp = next((c for c in t.head.children if c.dep_ in ("attr", "acomp", "oprd")), None)
            comp = comp or spans.prep_obj(t.head, "on", "in", "at")
            if comp is None:
                continue
            if is_fav:
                kind = None if low in L.FAVOURITE_WORDS else L.FAVOURITE_KINDS.get(t.lemma_.lower(), t.lemma_.lower())
                for c in spans.conjoined(comp):
                    out.add(f"favourite_{kind}" if kind else "favourite", spans.phrase(c), 0.85, "my_favourite")
                continue
            attr = L.ATTRIBUTES.get(low) or L.ATTRIBUTES.get(t.lemma_.lower())
            if attr in ("birthday",):
                out.add("birthday", spans.date_phrase(t.head), 0.85, "my_birthday")
            elif attr == "blood_group":
                m = re.search(r"\b(A|B|AB|O)\s*(\+ve|-ve|\+|-|positive|negative)", sent.text, re.I)
                if m:  # one spelling for every way of writing it: "O negative" is "O-"
                    sign = "+" if m.group(2).lower() in ("+", "+ve", "positive") else "-"
                    out.add("blood_group", m.group(1).upper() + sign, 0.85, "my_blood_group")
            elif attr in ("goal",):
                out.add("goal", spans.phrase(comp, max_words=8), 0.8, "my_goal")
            elif attr in ("name", "nickname"):
                if spans.proper_name(comp):
                    out.add(attr, spans.proper_name(comp), 0.85, f"my_{attr}")
            elif attr in ("hometown",):
                if spans.proper_name(comp):
                    out.add("hometown", spans.proper_name(comp), 0.8, "my_hometown")
            elif attr in ("height", "weight", "age", "rent"):
                out.add(attr, spans.measure(t.head), 0.7, f"my_{attr}")
            elif attr == "office":
                where = spans.prep_obj(t.head, "in", "at")
                if where is not None and spans.place_name(where):
                    out.add("office", spans.place_name(where), 0.7, "my_office")
            elif attr == "internship":
                if spans.proper_name(comp):
                    out.add("internship", spans.proper_name(comp), 0.75, "my_internship")
            elif attr in ("team", "job", "employer"):
                if comp.pos_ == "ADJ":
                    continue  # "my team is amazing", "my job is boring": how it is, not which it is
                val = spans.proper_name(comp) or spans.phrase(comp)
                out.add(attr, val, 0.7, f"my_{attr}")
            elif attr in ("likes", "hobby"):
                out.add(attr, spans.phrase(comp), 0.75, f"my_{low}")
            elif low in L.LANGUAGES and comp.pos_ == "ADJ":  # "my Marathi is very basic"
                out.add("language", f"{comp.text} {t.text}", 0.7, "my_language")
            elif low in L.SIBLING_NOUNS or low in L.PARTNER_NOUNS or low in L.PETS or low in L.PARENT_NOUNS:
                pass  # "my sister is a doctor": a fact about her
            elif t.pos_ == "NOUN" and t.lemma_.lower() not in L.TRANSIENT and t.lemma_.lower() not in L.PREDICATES \
                    and comp.pos_ in ("PROPN", "NUM") and spans.proper_name(comp) and t.lemma_.isalpha():
                # any other "my <thing> is <name>" ("my manager is Rohit"): filed under the thing's name,
                # below the profile's cut until it is said again. Only a name says which one: "my boss is
                # a nightmare", "my flat is just a storage unit" describe it
                out.add(t.lemma_.lower(), spans.proper_name(comp), 0.55, "my_attribute")
            continue
        # "<Name>, my sister" / "my sister Ria" / "my dog Bruno" / "my girlfriend Naina"
        name_tok = next((c for c in t.children if c.dep_ in ("appos", "compound", "npadvmod", "flat")
                         and c.pos_ == "PROPN" and c.i > t.i), None)
        if name_tok is None and t.dep_ == "compound" and t.head.i == t.i + 1 and t.head.text[:1].isupper():
            name_tok = t.head  # "my pet Mishti" parsed with the name as head
        if name_tok is None and t.i + 1 < sent.end and sent.doc[t.i + 1].pos_ == "PROPN":
            name_tok = sent.doc[t.i + 1]
        if name_tok is None and t.dep_ == "attr" and t.head.lemma_ == "be":
            subj = next((c for c in t.head.children if c.dep_ == "nsubj"), None)
            if subj is not None and subj.pos_ == "PROPN" and not guards.negated(t.head) and not guards.hypothetical(t.head):
                name_tok = subj
        if name_tok is None:
            continue
        name = spans.proper_name(name_tok)
        if not name:
            continue
        adj = next((spans.lower(c) for c in t.children if c.dep_ == "amod"
                    and spans.lower(c) in ("younger", "elder", "older", "little", "big", "baby", "twin", "best")), "")
        if low in L.SIBLING_NOUNS and low not in ("bro", "bhai"):
            rel = L.SIBLING_NOUNS[low]
            out.add(rel, name, 0.85, f"my_{low}",
                    qualifier={"older": "elder", "big": "elder", "little": "younger", "baby": "younger"}.get(adj, adj))
        elif low in L.PARTNER_NOUNS:
            out.add("partner", name, 0.85, f"my_{low}", qualifier=low)
            if low in ("wife", "husband", "spouse"):
                out.add("relationship_status", "married", 0.75, f"my_{low}")
            elif low.startswith("fianc"):
                out.add("relationship_status", "engaged", 0.75, f"my_{low}")
        elif low in L.PETS:
            out.add("pet", name, 0.8, f"my_{low}", qualifier=low)
        elif low in L.PARENT_NOUNS:
            out.add(L.PARENT_NOUNS[low], name, 0.75, f"my_{low}")
        elif low == "friend" and adj == "best":
            out.add("best_friend", name, 0.8, "my_best_friend")
        elif low in L.FAMILY_NOUNS:
            out.add("family", f"{name} ({low})", 0.7, f"my_{low}")
    # "<X> is my favourite (<kind>)"
    for t in sent:
        if t.dep_ in ("attr", "acomp") and t.head.lemma_ == "be" and not guards.negated(t.head):
            fav = spans.lower(t) in L.FAVOURITE_WORDS or any(spans.lower(c) in L.FAVOURITE_WORDS for c in t.children)
            mine = any(c.dep_ == "poss" and spans.lower(c) == "my" for c in t.children)
            subj = next((c for c in t.head.children if c.dep_ == "nsubj"), None)
            if fav and mine and subj is not None and not spans.pronoun_value(subj):
                kind = None if spans.lower(t) in L.FAVOURITE_WORDS else L.FAVOURITE_KINDS.get(t.lemma_.lower())
                out.add(f"favourite_{kind}" if kind else "favourite", spans.phrase(subj), 0.8, "is_my_favourite")


def _pet_names(doc: Doc, out: _Out) -> None:
    """A pet adopted or had in this message, named here: "adopted a beagle, his name is Bruno",
    "got a kitten named Mochi", "we have a dog called Simba"."""
    animals = [t for t in doc if spans.lower(t) in L.PETS and not guards.question(t.sent)
               and t.dep_ in ("dobj", "pobj", "attr", "conj", "appos")
               and (t.head.lemma_ in L.ADOPT_VERBS or t.head.dep_ == "prep") and guards.speaker_is_subject(t.head)
               and not guards.negated(t.head) and not guards.hypothetical(t.head) and not guards.hedged(t.head)
               and not guards.future(t.head)]
    if not animals:
        return
    animal = animals[0]
    name = None
    for t in doc:
        if spans.lower(t) in ("named", "called") and t.i > animal.i:
            n = next((c for c in t.children if c.pos_ == "PROPN" or c.dep_ in ("oprd", "attr", "dobj")), None)
            if n is None and t.i + 1 < len(doc):
                n = doc[t.i + 1]
            name = spans.proper_name(n) if n is not None else None
        elif spans.lower(t) == "name" and any(spans.lower(c) in ("his", "her", "its", "their") for c in t.children) \
                and t.head.lemma_ == "be":
            n = next((c for c in t.head.children if c.dep_ in ("attr", "acomp")), None)
            name = spans.proper_name(n) if n is not None else None
        if name and guards.question(t.sent):
            name = None
        if name:
            break
    if name:
        kind = spans.phrase(animal) or animal.text
        out.claims = [c for c in out.claims if not (c["predicate"] == "pet" and c["rule"] == "parse:adopt")]
        out.add("pet", name, 0.85, "pet_named", qualifier=kind.lower())
