"""First-person statements read from a dependency parse (spaCy), not from sentence templates.

For each clause whose subject is the speaker ("I", "we", "Naina and I", or no subject at all, as
chat writes "Moved to Pune last week"), the reader looks at the verb's lemma, its negation, tense
and modality, and its objects and prepositions, and maps them through `lexicon` to a predicate and
a value. "my <attribute> is <value>" and "my <relation> <Name>" are read the same way.

A clause is no claim when it asks, supposes ("if I ever move..."), hedges ("thinking of quitting",
"might", "maybe"), plans ("I'll join", "moving next month"), jokes (a laugh marker beside an
identity claim) or reports someone else's words ("she said I'm..."). A negation is a claim only
where it says something true about the person ("I can't swim", "I don't drink", "I don't eat meat")
and is otherwise dropped ("I'm not moving to the US team").

Each claim is a dict: predicate, value, confidence, rule ("parse:<verb or pattern>") and, for an
ending ("handed in my notice", "moved out of Chennai", "sold my Enfield", "broke up"), ending=True:
consolidation closes the current fact instead of asserting one.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from datetime import date

from spacy.tokens import Doc, Span, Token

from truffle_assets.memory.facts import lexicon as L
from truffle_assets.memory.facts.values import NOT_NAMES, ascii_fold

_SUBJ = {"nsubj", "nsubjpass", "csubj", "expl"}
_OBJ = {"dobj", "attr", "oprd", "acomp", "pobj", "dative"}
_MODALS = {"would", "could", "might", "may", "should", "must", "'d", "d"}
_DROP_LEFT = {"det", "poss", "predet", "punct", "cc", "advmod", "neg", "aux", "case", "prep", "mark", "intj"}
_TIMEWORDS = {"today", "yesterday", "now", "tonight", "again", "already", "finally", "officially", "recently",
              "ago", "last", "this", "since", "week", "month", "year", "morning", "evening", "weekend", "also",
              "too", "just", "still", "anymore", "yet", "currently", "ever", "onwards", "lol", "haha", "yaar",
              "bro", "btw", "tbh", "actually", "honestly", "really", "officially", "back"}
_REDACTED = re.compile(r"[<\[{]|█")
_NUM = re.compile(r"^\d+(?:\.\d+)?$")


# ---- tokens and spans --------------------------------------------------------------------------------

def _lower(t: Token) -> str:
    return t.lower_.replace("’", "'")


def _is_first_person(t: Token) -> bool:
    return _lower(t) in ("i", "we", "me", "us", "i'm", "im", "myself")


def _subjects(v: Token) -> list[Token]:
    subs = [c for c in v.children if c.dep_ in _SUBJ]
    if not subs and (v.dep_ in ("conj", "xcomp") or v.dep_ == "advcl" and v.i > v.head.i) and v.head.i != v.i:
        return _subjects(v.head)  # "I quit Zoho and joined Swiggy": the conjunct shares the subject
    return subs


def _speaker_is_subject(v: Token) -> bool:
    subs = _subjects(v)
    if not subs:
        # chat ellipsis: "Moved to Pune last week", "Handed in my notice" (a sentence-initial verb)
        if v.dep_ in ("ROOT", "advcl", "ccomp") and v.tag_ in ("VBD", "VBN", "VBG", "VB", "VBP", "VBZ"):
            first = next((t for t in v.sent if not t.is_punct
                          and t.dep_ not in ("intj", "advmod", "discourse", "aux", "auxpass", "neg")), v)
            return first.i >= v.i and not v.sent.text.rstrip().endswith("?")
        return False
    s = subs[0]
    if _is_first_person(s):
        return True
    # "Naina and I got engaged"
    return any(_is_first_person(c) for c in s.conjuncts)


def _negated(v: Token) -> bool:
    for t in [v, *[c for c in v.children if c.dep_ in ("aux", "auxpass")]]:
        for c in t.children:
            if c.dep_ == "neg" or _lower(c) in ("never", "nahi", "nahin"):
                return True
            if _lower(c) == "longer" and any(_lower(g) == "no" for g in c.children):
                return True
    return any(_lower(c) in ("never",) for c in v.children)


def _modal(v: Token) -> str | None:
    for c in v.children:
        if c.dep_ == "aux" and _lower(c) in _MODALS | {"will", "'ll", "shall", "wo", "ll"}:
            return _lower(c)
    return None


def _future(v: Token) -> bool:
    """A plan, not yet true: "I'll join", "I'm going to move", "moving next month", "joining on Monday"."""
    if _modal(v) in ("will", "'ll", "shall", "wo", "ll"):
        return True
    h = v.head
    if v.dep_ == "xcomp" and h.lemma_ == "go" and h.tag_ == "VBG":  # going to move
        return True
    if _lower(v) == "gonna" or any(_lower(c) == "gonna" for c in v.children):
        return True
    if v.tag_ == "VBG" and any(c.dep_ == "aux" for c in v.children) and not any(
            _lower(c) in ("been",) for c in v.children):
        # progressive with a future time: "I'm moving to Pune next month", "joining Swiggy on Monday"
        for t in v.subtree:
            if _lower(t) in L.FUTURE_WORDS or _lower(t) in ("monday", "tuesday", "wednesday", "thursday",
                                                             "friday", "saturday", "sunday"):
                return True
    return False


def _hedged(v: Token) -> bool:
    """Thinking of / planning to / might / maybe / hoping to ... anywhere above the clause."""
    if _modal(v) in _MODALS:
        return True
    for c in v.children:
        if c.dep_ == "advmod" and _lower(c) in ("maybe", "probably", "perhaps", "shayad", "possibly"):
            return True
    t = v
    while t.head.i != t.i:
        t = t.head
        if t.lemma_ in L.HEDGE_HEADS or _lower(t) in ("thinking", "planning", "considering", "wondering"):
            return True
    return any(_lower(x) in ("maybe", "shayad", "perhaps", "probably") for x in v.sent[:3])


def _hypothetical(v: Token) -> bool:
    t = v
    while True:
        if any(c.dep_ == "mark" and _lower(c) in ("if", "unless", "whether", "agar", "once", "when", "till", "until")
               for c in t.children):
            return True
        if t.head.i == t.i:
            break
        t = t.head
    first = _lower(v.sent[0])
    return first in ("if", "agar", "imagine", "suppose", "hypothetically", "unless")


def _reported(v: Token, quoted: list[tuple[int, int]]) -> bool:
    """Someone else's words: inside quotation marks, or under "she said ..."."""
    if any(a <= v.idx < b for a, b in quoted):
        return True
    t = v
    while t.head.i != t.i:
        p = t.head
        if p.lemma_ in L.SAY_VERBS and t.dep_ in ("ccomp", "xcomp", "parataxis", "dobj"):
            subs = _subjects(p)
            if not subs or not _is_first_person(subs[0]):
                return True
        t = p
    return False


def _quoted_ranges(text: str) -> list[tuple[int, int]]:
    # single quotes only around words: "I'm in ... I'm" is two apostrophes, not a quotation
    return [(m.start(), m.end()) for m in re.finditer(
        r"\"[^\"\n]{3,}\"|“[^”]{3,}”|(?:^|(?<=\s))['‘][^'’\n]{3,}['’](?=[\s.,!?]|$)", text)]


def _question(sent: Span) -> bool:
    txt = sent.text.strip()
    if txt.endswith("?"):
        return True
    first = _lower(sent[0])
    return first in ("do", "does", "did", "are", "is", "should", "would", "could", "can", "will", "shall",
                     "have", "kya", "what", "where", "why", "how", "who", "when", "which") and sent[0].dep_ in (
        "aux", "advmod", "ROOT", "attr", "nsubj", "dobj", "auxpass", "det")


# ---- values -------------------------------------------------------------------------------------------

def _children(t: Token, *deps: str) -> list[Token]:
    return [c for c in t.children if c.dep_ in deps]


def _prep_obj(v: Token, *preps: str) -> Token | None:
    for p in v.children:
        if p.dep_ in ("prep", "dative", "agent") and _lower(p) in preps:
            o = next((c for c in p.children if c.dep_ in ("pobj", "pcomp")), None)
            if o is not None:
                return o
    return None


def _phrase(head: Token, max_words: int = 6, keep_of: bool = True) -> str | None:
    """The noun phrase around `head`: its modifiers and compounds, without determiners, possessives,
    time words, relative clauses or other prepositional phrases ("a new Pixel 7" -> "Pixel 7")."""
    keep = {head.i}
    stack = [head]
    while stack:
        t = stack.pop()
        for c in t.children:
            if c.dep_ in ("amod", "compound", "nummod", "nmod", "flat", "npadvmod", "quantmod", "poss") \
                    and c.i < head.i + 4:
                if c.dep_ == "poss" and c.pos_ == "PRON":
                    continue
                if c.dep_ == "amod" and _lower(c) in ("new", "old", "own", "current", "latest", "whole",
                                                       "little", "big", "dear", "sweet", "favourite", "favorite",
                                                       "proper", "good", "nice", "great", "cheap", "fancy", "real"):
                    if not (c.dep_ == "amod" and head.pos_ == "PROPN"):
                        continue
                if _lower(c) in _TIMEWORDS:
                    continue
                keep.add(c.i)
                stack.append(c)
            elif c.dep_ == "prep" and keep_of and _lower(c) == "of" and t.i == head.i:
                o = next((g for g in c.children if g.dep_ == "pobj"), None)
                if o is not None and o.i - head.i <= 3:
                    keep.update(range(c.i, o.i + 1))
            elif c.dep_ in ("dobj", "xcomp") and t.i == head.i and head.pos_ == "VERB":  # "playing the guitar"
                for g in c.subtree:
                    if g.dep_ not in ("det", "poss", "punct", "cc", "conj", "relcl", "prep") and g.i - head.i <= 4:
                        keep.add(g.i)
            elif c.dep_ == "prt" and head.pos_ == "VERB":
                keep.add(c.i)
    lo, hi = min(keep), max(keep)
    toks = [head.doc[i] for i in range(lo, hi + 1)]
    if any(_placeholder(t) for t in toks):
        return None
    # drop determiners/possessives/punctuation that sit inside the range
    kept = [t for t in toks if not (t.dep_ in ("det", "poss", "punct", "case") and t.i != head.i)
            and _lower(t) not in ("my", "our", "a", "an", "the") and (t.i in keep or t.dep_ not in ("amod",))]
    if not kept or len(kept) > max_words:
        return None
    # the words as written ("10K" stays one word though the tokenizer split it)
    v = "".join(t.text_with_ws if i + 1 < len(kept) and kept[i + 1].i == t.i + 1 else t.text + " "
                for i, t in enumerate(kept)).strip(" -,.'’")
    v = re.sub(r"\s+([’']s)\b", r"\1", v)
    if not v or _REDACTED.search(v) or _lower(head) in NOT_NAMES | {"it", "this", "that", "something", "one",
                                                                   "everything", "anything", "lot", "bit", "lots"}:
        return None
    return v


def _placeholder(t: Token) -> bool:
    """Part of a PII placeholder ("[AADHAAR]", "<PHONE_1>"): never a value."""
    doc = t.doc
    return (t.i > 0 and doc[t.i - 1].text[-1:] in "[<{") or (t.i + 1 < len(doc) and doc[t.i + 1].text[:1] in "]>}") \
        or bool(_REDACTED.search(t.text))


def _name(head: Token) -> str | None:
    """A person's or a place's name: the proper-noun run around `head` ("HSR Layout", "Naina Kapoor")."""
    if not (head.pos_ == "PROPN" or head.text[:1].isupper()) or _placeholder(head):
        return None
    if ascii_fold(head.text).lower() in NOT_NAMES or _REDACTED.search(head.text):
        return None
    i, j = head.i, head.i
    doc = head.doc
    while i - 1 >= head.sent.start and doc[i - 1].text[:1].isupper() and doc[i - 1].pos_ in ("PROPN", "NOUN") \
            and i - 1 > head.sent.start and ascii_fold(doc[i - 1].text).lower() not in NOT_NAMES:
        i -= 1
    while j + 1 < head.sent.end and doc[j + 1].text[:1].isupper() and doc[j + 1].pos_ in ("PROPN", "NOUN") \
            and ascii_fold(doc[j + 1].text).lower() not in NOT_NAMES and j - i < 2:
        j += 1
    return doc[i:j + 1].text.rstrip(".,!?;:")


def _place(head: Token) -> str | None:
    """A place name, with the city after a comma when one follows ("HSR Layout, Bengaluru")."""
    name = _name(head)
    if not name:
        return None
    doc, j = head.doc, head.i
    while j + 1 < head.sent.end and doc[j + 1].text[:1].isupper() and doc[j + 1].pos_ == "PROPN":
        j += 1
    if j + 2 < head.sent.end and doc[j + 1].text == "," and doc[j + 2].pos_ == "PROPN" \
            and ascii_fold(doc[j + 2].text).lower() not in NOT_NAMES:
        city = _name(doc[j + 2])
        if city and city != name:
            return f"{name}, {city}"
    return name


def _conjoined(t: Token) -> list[Token]:
    return [t, *[c for c in t.conjuncts if c.i > t.i]]


# ---- the reader ---------------------------------------------------------------------------------------

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
        self.claims.append({"predicate": predicate, "value": value, "confidence": confidence,
                            "rule": f"parse:{rule}", "ending": ending, "qualifier": qualifier})


def unclaimed_text(doc: Doc) -> str:
    """`doc`'s text with what the speaker does not claim blanked out (same length, so offsets hold):
    quotations, questions, and what someone else is reported to say. The pattern rules read this."""
    chars = list(doc.text)

    def blank(a: int, b: int) -> None:
        for i in range(a, min(b, len(chars))):
            if chars[i] not in "\n":
                chars[i] = " "
    for a, b in _quoted_ranges(doc.text):
        blank(a, b)
    for sent in doc.sents:
        if _question(sent):
            blank(sent.start_char, sent.end_char)
            continue
        for t in sent:
            if t.lemma_ in L.SAY_VERBS:
                subs = _subjects(t)
                if subs and _is_first_person(subs[0]):
                    continue
                for c in t.children:
                    if c.dep_ in ("ccomp", "xcomp", "parataxis"):
                        span = doc[c.left_edge.i:c.right_edge.i + 1]
                        blank(span.start_char, span.end_char)
    return "".join(chars)


def read(doc: Doc, said: date | None = None) -> list[dict]:
    """Claims the speaker makes about themself in `doc` (one message)."""
    out = _Out()
    quoted = _quoted_ranges(doc.text)
    laughs = any(_lower(t) in L.LAUGHS for t in doc) or bool(re.search(r"\b(?:ha){2,}|\blo+l\b", doc.text, re.I))
    for sent in doc.sents:
        if _question(sent):
            continue
        _possessive_statements(sent, out, quoted, laughs)
        _set_phrases(sent, out)
        for v in sent:
            # the small parser tags some gerund clauses as nouns ("..., training for the 10K")
            gerund = v.dep_ in ("advcl", "conj", "xcomp") and _lower(v).endswith("ing")
            if v.pos_ not in ("VERB", "AUX") and v.dep_ != "ROOT" and not gerund:
                continue
            if not _speaker_is_subject(v):
                continue
            if _hypothetical(v) or _reported(v, quoted):
                continue
            goal = _goal(v, out)
            if goal:
                continue
            if _hedged(v) or _future(v):
                continue
            _clause(v, _negated(v), out, laughs)
    _pet_names(doc, out)
    return out.claims


_BLOOD = re.compile(r"\bmy\s+blood\s+(?:group|type)\s+(?:is\s+)?(AB|A|B|O)\s?(\+|-|positive|negative|\+ve|-ve)", re.I)
_MY_X_IS = re.compile(r"\bmy\s+([a-z]{3,})\s+(?:is|was)\s+([A-Z][\w\-]+(?:\s+[A-Z][\w\-]+){0,2})(?=[\s.,!?]|$)")
_LASIK = re.compile(r"\b(?:got|had|did|done\s+with)\s+(?:my\s+|the\s+)?(?:lasik|laser\s+eye)|\blasik\s+(?:done|karwa)", re.I)
_WORK_MODE = re.compile(r"\b(?:I(?:'m|\s+am)|we(?:'re|\s+are)|I)\s+(?:now\s+|mostly\s+|currently\s+)?(?:\w+\s+)?"
                        r"(fully\s+remote|remote|hybrid|wfh|work\s+from\s+home|back\s+to\s+office|work\s+from\s+office)\b",
                        re.I)
_HOME_NOW = re.compile(r"\b([A-Z][\w\-]+(?:\s[A-Z][\w\-]+)?)\s+(?:is|feels\s+like)\s+(?:my\s+)?home\s+now\b")
_HANDED = re.compile(r"\bI(?:'m|\s+am)\s+(?:\w+\s+)?(left|right)[- ]?handed\b", re.I)


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
        if ascii_fold(value.split()[0]).lower() in NOT_NAMES or _REDACTED.search(value):
            continue
        if not any(c["rule"] == "parse:my_attribute" and c["predicate"] == noun for c in out.claims):
            out.add(noun, value, 0.55, "my_attribute")
    if _LASIK.search(sent.text) and not re.search(r"\b(?:if|maybe|might|will|thinking|plan)\b", sent.text, re.I):
        out.add("eyesight", "LASIK", 0.75, "lasik")
    m = _WORK_MODE.search(sent.text)
    if m and not re.search(r"\b(?:not|no longer|if|maybe|might|will|next)\b", sent.text, re.I):
        mode = m.group(1).lower()
        out.add("work_mode", {"wfh": "remote", "work from home": "remote", "fully remote": "remote",
                              "back to office": "from office", "work from office": "from office"}.get(mode, mode),
                0.65, "work_mode")
    m = _HOME_NOW.search(sent.text)  # "Bombay is home now" ("... will always be home" is where one is from)
    if m and ascii_fold(m.group(1)).lower() not in NOT_NAMES:
        out.add("lives_in", m.group(1), 0.7, "home_now")
    m = _HANDED.search(sent.text)
    if m and not re.search(r"\bnot\b", sent.text[:m.end()], re.I):
        out.add("handedness", f"{m.group(1).lower()}-handed", 0.8, "handed")


def _goal(v: Token, out: _Out) -> bool:
    """"I want to run a full marathon", "training for a half marathon", "my aim is ..." (a goal is a fact)."""
    lemma = v.lemma_
    if lemma == "train" or _lower(v) == "training":
        o = _prep_obj(v, "for")
        if o is not None and not _negated(v) and not _hypothetical(v):
            out.add("goal", _phrase(o), 0.75, "train_for")
            return True
    if lemma in ("want", "hope", "aim", "plan", "wish") and not _negated(v):
        x = next((c for c in v.children if c.dep_ == "xcomp" and c.pos_ == "VERB"), None)
        if x is not None and x.lemma_ in L.GOAL_OBJECTS and x.lemma_ not in ("move", "shift", "buy", "get"):
            obj = next((c for c in x.children if c.dep_ in ("dobj", "attr", "prep")), None)
            words = _phrase(x, max_words=8)
            if obj is not None and words:
                out.add("goal", words, 0.7, f"{lemma}_to")
            return True
    return False


def _clause(v: Token, neg: bool, out: _Out, laughs: bool) -> None:
    lemma = v.lemma_.lower()
    dobj = next(iter(_children(v, "dobj")), None)
    # ---- be + complement: identity, diet, allergies, age, status ---------------------------------
    if lemma in ("be", "become") or v.pos_ == "AUX" and v.dep_ == "ROOT":
        _copula(v, neg, out, laughs)
        return
    if lemma == "promote" and not neg:  # "got promoted to staff engineer"
        to = _prep_obj(v, "to", "as")
        if to is not None and _role(to):
            out.add("job", _role(to), 0.8, "promoted")
        return
    if lemma in ("get", "receive", "accept", "have") and dobj is not None and _lower(dobj) == "offer" and not neg:
        frm = _prep_obj(dobj, "from", "at") or _prep_obj(v, "from", "at")
        if frm is not None and _name(frm):
            out.add("offer", _name(frm), 0.65, "offer")
        return
    # ---- home -----------------------------------------------------------------------------------
    if lemma in L.LIVE_VERBS and re.match(r"(?:liv|stay|resid|settl)", _lower(v)):  # the lemmatizer reads "Loving" as live
        o = _prep_obj(v, "in", "at", "near")
        if o is not None and not neg:
            place = _place(o)
            if place:
                out.add("lives_in", place, 0.85, lemma)
            elif re.fullmatch(r"pg|hostel|flat|apartment|studio|house|villa|\d?\s?bhk", _lower(o)):
                out.add("home_type", _phrase(o), 0.7, lemma)
                where = _prep_obj(o, "in", "at")  # "a 1BHK in Aundh"
                if where is not None and _place(where):
                    out.add("lives_in", _place(where), 0.8, lemma)
        w = _prep_obj(v, "with")
        if w is not None and not neg:
            out.add("lives_with", _phrase(w) if w.pos_ != "PROPN" else _name(w), 0.7, f"{lemma}_with")
        if _lower(v) in ("live", "stay") and any(_lower(c) == "alone" for c in v.children) and not neg:
            out.add("lives_with", "alone", 0.7, "live_alone")
        return
    if lemma in L.MOVE_VERBS:
        if neg or dobj is not None:  # "moving the migration to next sprint" moves a thing, not a home
            return
        to = _prep_obj(v, "to", "into")
        frm = _prep_obj(v, "from")
        out_of = _prep_obj(v, "out") if any(_lower(c) == "out" for c in v.children) else None
        if out_of is None:
            p = next((c for c in v.children if _lower(c) == "out"), None)
            if p is not None:
                o = _prep_obj(p, "of")
                out_of = o
        if frm is not None and _name(frm):
            out.add("lives_in", _name(frm), 0.75, "move_from", ending=True)
        if out_of is not None and _name(out_of):
            out.add("lives_in", _name(out_of), 0.75, "move_out", ending=True)
        if to is not None:
            place = _place(to)
            if place:
                out.add("lives_in", place, 0.8, "move_to")
                out.add("moved", place, 0.8, "move_to")
            elif _lower(to) == "team":  # "moved to the payments team"
                out.add("team", _phrase(to), 0.7, "move_team")
            elif _lower(to) in ("pg", "hostel", "flat", "apartment", "house", "bhk", "2bhk", "1bhk", "3bhk", "place"):
                out.add("home_type", _phrase(to), 0.6, "move_into")
        w = _prep_obj(v, "with")
        if w is not None and any(_lower(c) == "in" for c in v.children) and _name(w):
            out.add("lives_with", _name(w), 0.7, "move_in_with")  # "moved in with Naina"
        return
    # ---- work -----------------------------------------------------------------------------------
    if lemma == "work" and not neg:
        at = _prep_obj(v, "at", "for", "with")
        if at is not None and _name(at):
            out.add("employer", _name(at), 0.8, "work_at")
        as_ = _prep_obj(v, "as")
        if as_ is not None and _role(as_):
            out.add("job", _role(as_), 0.8, "work_as")
        on = _prep_obj(v, "on", "in")
        if on is not None and _lower(on) == "team":
            out.add("team", _phrase(on), 0.7, "work_in_team")
        if any(_lower(c) in ("remotely", "remote") for c in v.subtree) or _prep_obj(v, "from") is not None and \
                _lower(_prep_obj(v, "from")) in ("home",):
            out.add("work_mode", "remote", 0.7, "work_from_home")
        return
    if lemma in L.JOIN_VERBS and not neg:
        if dobj is not None and _lower(dobj) in ("class", "classes", "course", "batch") and \
                any(c.dep_ in ("compound", "amod") for c in dobj.children):
            subject = " ".join(c.text for c in dobj.children if c.dep_ in ("compound", "amod"))
            out.add("learning", subject, 0.65, "join_class")
            return
        if dobj is not None and any(_lower(t) in ("gym", "cult", "cult.fit", "batch", "membership") for t in v.sent):
            out.add("habit", "gym (" + (_name(dobj) or _phrase(dobj) or "gym") + ")", 0.6, "join_gym")
            return
        if dobj is not None:
            if _lower(dobj) == "team" or any(_lower(c) == "team" for c in dobj.subtree):
                out.add("team", _phrase(dobj), 0.7, "join_team")
            elif _name(dobj) and _lower(dobj) not in ("gym", "group", "class", "call", "meeting") \
                    and (v.tag_ in ("VBD", "VBN") or any(_lower(c) in ("'ve", "have", "has") for c in v.children)) \
                    and dobj.i - v.i <= 3:  # "joined Flipkart", not "Joining in 20 Standup ..."
                out.add("employer", _name(dobj), 0.75, "join")
                out.add("started_job", _name(dobj), 0.75, "join")
            elif _lower(dobj) in ("gym", "cult", "club", "class", "classes"):
                out.add("habit", "goes to " + (_phrase(dobj) or "the gym"), 0.6, "join_gym")
        as_ = _prep_obj(v, "as")
        if as_ is not None and _role(as_):
            out.add("job", _role(as_), 0.8, "join_as")
        return
    if lemma == "resign" or (lemma in ("hand", "put", "serve", "submit", "give") and _about(v, ("notice", "resignation", "papers"))):
        if not neg:
            org = next((t for t in v.subtree if t.dep_ == "pobj" and _lower(t.head) in ("from", "at", "with")
                        and t.pos_ == "PROPN"), None)
            name = _name(org) if org is not None else None
            out.add("employer", name or "", 0.75, "resign", ending=True)
            if name:
                out.add("left_job", name, 0.7, "resign")
        return
    if lemma in ("quit", "leave") and not neg:
        if dobj is not None and (_lower(dobj) in ("job", "company", "work", "office") or dobj.pos_ == "PROPN"):
            org = _name(dobj) if dobj.pos_ == "PROPN" else None
            if org and _lower(dobj) not in L.MEATS:
                out.add("employer", org, 0.75, "quit", ending=True)
                out.add("left_job", org, 0.7, "quit")
            elif not org:
                out.add("employer", "", 0.7, "quit_job", ending=True)
            return
        if lemma == "quit" and dobj is not None:
            _stop_habit(v, dobj, out)
        return
    # ---- relationships ----------------------------------------------------------------------------
    if lemma in ("engage", "marry", "wed") or (lemma == "get" and any(c.lemma_ in ("engage", "marry") for c in v.children)):
        if neg:
            return
        to = _prep_obj(v, "to", "with")
        for c in v.children:  # "got engaged to Kunal": the preposition hangs off "engaged"
            if to is None and c.lemma_ in ("engage", "marry"):
                to = _prep_obj(c, "to", "with")
        status = "married" if lemma in ("marry", "wed") or any(c.lemma_ == "marry" for c in v.children) else "engaged"
        partner = _name(to) if to is not None else None
        if partner is None:
            subj = next(iter(_subjects(v)), None)
            if subj is not None and not _is_first_person(subj):
                partner = _name(subj)
        if partner is None and dobj is not None:
            partner = _name(dobj)
        if partner is None:  # "Rohan and I got engaged" (often parsed with Rohan as the root)
            m = re.search(r"\b([A-Z][\w\-]+)\s+(?:and|&)\s+(?:I|me)\b", v.sent.text)
            if m and ascii_fold(m.group(1)).lower() not in NOT_NAMES:
                partner = m.group(1)
        out.add("relationship_status", status, 0.85, status)
        if partner:
            out.add("partner", partner, 0.85, status)
        return
    if lemma in ("date", "see") and not neg and dobj is not None and _name(dobj) and v.tag_ == "VBG":
        out.add("partner", _name(dobj), 0.75, "dating")
        return
    if lemma == "break" and any(_lower(c) == "up" for c in v.children) and not neg:
        w = _prep_obj(v, "with")
        out.add("partner", _name(w) if w is not None else "", 0.8, "break_up", ending=True)
        return
    # ---- tastes -----------------------------------------------------------------------------------
    if lemma in L.LIKE_VERBS | L.DISLIKE_VERBS:
        target = dobj or next(iter(_children(v, "xcomp", "ccomp")), None)
        if target is None and v.i + 1 < v.sent.end:  # the small parser sometimes drops "trekking" as punct
            nxt = v.doc[v.i + 1]
            target = nxt if nxt.tag_ in ("VBG", "NN", "NNS", "NNP") and nxt.is_alpha else None
        if target is None:
            return
        dislike = (lemma in L.DISLIKE_VERBS) != neg
        if neg and lemma in L.DISLIKE_VERBS:
            return  # "I don't hate it": no claim either way
        for t in _conjoined(target):
            val = _phrase(t)
            deictic = any(c.dep_ == "det" and _lower(c) in ("this", "that", "these", "those") for c in t.children)
            if val and not _pronoun_value(t) and not deictic:
                if dislike:
                    out.add("dislikes", val, 0.7, lemma)
                else:
                    strength = 0.75 if lemma in ("love", "adore", "enjoy") else 0.65
                    out.add("hobby" if t.pos_ == "VERB" or t.tag_ == "VBG" else "likes", val, strength, lemma)
        return
    # ---- health -----------------------------------------------------------------------------------
    if lemma in ("have", "suffer", "get", "develop", "diagnose") and not neg:
        objs = _conjoined(dobj) if dobj is not None else []
        if lemma in ("suffer",):
            o = _prep_obj(v, "from")
            objs = _conjoined(o) if o is not None else []
        if lemma == "diagnose":
            o = _prep_obj(v, "with")
            objs = _conjoined(o) if o is not None else []
        for o in objs:
            if _lower(o) in ("allergy", "allergies"):
                target = _prep_obj(o, "to") or next((c for c in o.children if c.dep_ in ("compound", "amod", "nmod")), None)
                if target is not None:
                    out.add("allergy", _phrase(target), 0.8, "have_allergy")
                continue
            if _lower(o) in L.CONDITIONS and _lower(o) not in L.ACUTE:
                out.add("condition", _phrase(o), 0.7, f"{lemma}_condition")
                continue
            if _possession(v, o, out, lemma):
                continue
            if _lower(o) in L.PETS:
                continue  # handled by _pet_names (needs the name)
            if lemma == "have" and (_lower(o) in L.SIBLING_NOUNS or _lower(o) in ("sisters", "brothers", "siblings")):
                out.add("family", _phrase(o), 0.7, "have_sibling")
        return
    if lemma in ("buy", "purchase", "own", "upgrade", "switch", "bring", "gift") and not neg:
        for o in (_conjoined(dobj) if dobj is not None else []):
            if not _possession(v, o, out, lemma) and lemma in ("buy", "purchase", "own") and o.pos_ == "NOUN" \
                    and not any(c.dep_ == "nummod" for c in o.children) \
                    and o.lemma_.lower() not in L.CONSUMABLES and not _pronoun_value(o) and v.tag_ in ("VBD", "VBN", "VBP"):
                out.add("possession", _phrase(o), 0.6, f"{lemma}_thing")  # "bought binoculars": a durable thing
        to = _prep_obj(v, "to")
        if lemma in ("upgrade", "switch") and to is not None:
            _possession(v, to, out, lemma)
        return
    if lemma in L.SELL_VERBS and not neg and dobj is not None:
        kind = L.POSSESSIONS.get(_lower(dobj)) or next((L.POSSESSIONS[_lower(c)] for c in dobj.subtree
                                                         if _lower(c) in L.POSSESSIONS), None)
        if kind:
            out.add(kind, _phrase(dobj) or "", 0.75, "sell", ending=True)
        return
    if lemma in ("wear",) and dobj is not None and _lower(dobj) in ("glasses", "specs", "spectacles", "lenses"):
        out.add("eyesight", ("no " if neg else "") + "glasses", 0.7, "wear_glasses")
        return
    # ---- abilities and habits --------------------------------------------------------------------------
    if lemma in L.SKILL_VERBS and any(_lower(c) in ("can", "ca") for c in v.children if c.dep_ == "aux"):
        obj = _phrase(dobj) if dobj is not None and lemma in ("play", "speak", "ride", "drive", "cook") else None
        out.add("skill", ("cannot " if neg else "can ") + lemma + (f" {obj}" if obj else ""), 0.75, "can")
        return
    if lemma == "learn" and dobj is not None and not neg:
        tense_ok = v.tag_ in ("VBG", "VBD", "VBN") or v.dep_ == "xcomp"
        if tense_ok:
            out.add("learning", _phrase(dobj), 0.7, "learn")
        return
    if lemma == "speak" and dobj is not None and not neg:
        for o in _conjoined(dobj):
            if _lower(o) in L.LANGUAGES:
                out.add("language", o.text.capitalize(), 0.75, "speak")
        return
    if lemma == "play" and dobj is not None and not neg and v.tag_ in ("VBP", "VB", "VBZ", "VBG") and not _once(v):
        out.add("hobby", "plays " + (_phrase(dobj) or dobj.text), 0.65, "play")
        return
    if lemma in ("eat", "have") and dobj is not None:
        _diet(v, dobj, neg, out)
        return
    if lemma in L.HABIT_VERBS and not dobj and v.dep_ in ("ROOT", "conj") and _habitual(v):
        out.add("habit", ("doesn't " if neg else "") + lemma, 0.65, "habit")
        return
    if lemma in ("drink", "smoke") and neg:
        out.add("habit", f"doesn't {lemma}", 0.7, "habit")
        return
    if lemma in L.STOP_VERBS | {"start", "begin"} and not neg:
        x = next((c for c in v.children if c.dep_ == "xcomp"), None)
        if x is not None:
            if x.lemma_ in ("eat", "have"):
                xo = next(iter(_children(x, "dobj")), None)
                if xo is not None:
                    _diet(x, xo, lemma in L.STOP_VERBS, out)
                return
            if lemma in L.STOP_VERBS:
                _stop_habit(v, x, out)
            elif x.lemma_ == "learn":
                xo = next(iter(_children(x, "dobj")), None)
                if xo is not None:
                    out.add("learning", _phrase(xo), 0.7, "start_learning")
            else:
                out.add("hobby", _phrase(x), 0.6, "start")
            return
        if dobj is not None and lemma in L.STOP_VERBS:
            _stop_habit(v, dobj, out)
        return
    if lemma == "get" and not neg and _prep_obj(v, "into") is not None:  # "I've gotten really into birding"
        out.add("likes", _phrase(_prep_obj(v, "into")), 0.65, "get_into")
        return
    if lemma == "call" and not neg and v.i + 2 < v.sent.end and _lower(v.doc[v.i + 1]) == "me":
        n = v.doc[v.i + 2]  # "call me Mehu": the name right after "me", in the same sentence
        after = v.doc[v.i + 3] if v.i + 3 < v.sent.end else None
        if n.is_alpha and n.text[:1].isupper() and n.pos_ in ("PROPN", "NOUN") and _name(n) \
                and (after is None or after.is_punct or after.pos_ in ("CCONJ", "PUNCT")):
            out.add("nickname", _name(n), 0.75, "call_me")
        return
    if lemma in ("get", "do", "have") and dobj is not None and _lower(dobj) in L.BODY_MARKS and not neg \
            and v.tag_ in ("VBD", "VBN"):
        out.add("appearance", _phrase(dobj), 0.65, "got_" + _lower(dobj))
        return
    if lemma in ("switch", "move", "get") and not neg:
        to = _prep_obj(v, "to") or dobj
        if to is not None and _lower(to) in L.EYEWEAR:
            out.add("eyesight", L.EYEWEAR[_lower(to)], 0.7, "eyewear")
            return
    if lemma == "do" and dobj is not None and not neg:
        if _lower(dobj) in L.HABIT_NOUNS and _habitual(v) or _lower(dobj) in L.HABIT_NOUNS and v.tag_ == "VBP":
            out.add("habit", _lower(dobj), 0.6, "do_habit")
            return
        if any(_lower(t) in ("certificate", "course", "diploma", "mba", "masters", "phd", "degree")
               for t in dobj.subtree) and v.tag_ == "VBG":
            out.add("learning", _phrase(dobj, max_words=8), 0.65, "doing_course")
            return
    if lemma == "snore" and not neg:
        out.add("habit", "snores", 0.65, "snore")
        return
    # ---- done things --------------------------------------------------------------------------------
    if lemma in L.FINISH_VERBS and not neg and v.tag_ in ("VBD", "VBN") and dobj is not None:
        if any(_lower(t) in L.RACES for t in dobj.subtree):
            out.add("completed", _phrase(dobj, max_words=7), 0.75, lemma)
        return
    if lemma in ("graduate",) and not neg:
        o = _prep_obj(v, "from", "in")
        if o is not None:
            out.add("education", f"graduated from {_name(o) or _phrase(o)}", 0.7, "graduate")
        return
    if lemma == "study" and not neg and v.tag_ in ("VBD", "VBN"):
        o = dobj or _prep_obj(v, "at", "in")
        if o is not None:
            out.add("education", "studied " + (_phrase(o) or o.text), 0.65, "study")
        return
    if lemma in ("wake", "sleep") and not neg and _habitual(v):
        t = _prep_obj(v, "at", "by", "before")
        if t is not None:
            out.add("sleep", f"{'wakes up' if lemma == 'wake' else 'sleeps'} at {t.text}", 0.6, lemma)
        return
    if lemma in ("adopt", "rescue", "foster") and dobj is not None and not neg:
        if _lower(dobj) in L.PETS or any(_lower(c) in L.PETS for c in dobj.subtree):
            out.add("pet", _phrase(dobj), 0.6, "adopt")
        return
    if lemma in ("visit", "go", "travel", "fly", "land") and not neg and v.tag_ in ("VBD", "VBN"):
        o = dobj if lemma == "visit" else _prep_obj(v, "to", "in")
        if o is not None and _name(o) and o.ent_type_ in ("GPE", "LOC", "ORG", "PERSON", "NORP", "FAC", ""):
            if _lower(o) not in ("office", "work", "home", "gym"):
                out.add("trip", _name(o), 0.55, "travel")
        return
    if lemma == "turn" and not neg:
        n = next((c for c in v.children if c.like_num or c.dep_ in ("attr", "oprd", "dobj", "acomp")), None)
        if n is not None and n.like_num and 10 < _int(n.text) < 100:
            out.add("age", n.text, 0.8, "turn")
        return


def _once(v: Token) -> bool:
    """A single occasion ("played tennis yesterday"), not a habit."""
    return v.tag_ == "VBD" or any(_lower(t) in ("yesterday", "today", "tonight", "last") for t in v.subtree)


def _habitual(v: Token) -> bool:
    if v.tag_ not in ("VBP", "VBZ", "VB", "VBG"):
        return False
    return any(_lower(t) in ("every", "daily", "always", "usually", "regularly", "week", "weekly", "times", "days",
                             "mornings", "morning", "religiously", "never", "at") for t in v.subtree) or _negated(v)


def _int(s: str) -> int:
    try:
        return int(float(s))
    except ValueError:
        return -1


def _about(v: Token, words: Iterable[str]) -> bool:
    return any(_lower(t) in words for t in v.subtree)


def _pronoun_value(t: Token) -> bool:
    return t.pos_ == "PRON" or _lower(t) in ("it", "this", "that", "them", "you", "u", "him", "her", "everything")


def _role(t: Token) -> str | None:
    if _lower(t) not in L.ROLE_NOUNS and t.lemma_.lower() not in L.ROLE_NOUNS:
        return None
    return _phrase(t, max_words=5, keep_of=False)


def _possession(v: Token, o: Token, out: _Out, lemma: str) -> bool:
    words = [_lower(x) for x in o.subtree if x.dep_ not in ("relcl",)]
    kind = L.POSSESSIONS.get(_lower(o)) or L.POSSESSIONS.get(o.lemma_.lower())
    if kind is None:
        kind = next((L.POSSESSIONS[w] for w in words[:4] if w in L.POSSESSIONS), None)
    if kind is None:
        return False
    if lemma in ("get", "have") and v.tag_ not in ("VBD", "VBN", "VBP", "VBZ"):
        return False
    if lemma in ("get", "bring", "have") and not any(t.pos_ == "PROPN" or t.like_num for t in o.subtree):
        return False  # "got a new laptop" at work says little; "got an iPhone 13" names the thing
    val = _phrase(o, max_words=6) or o.text
    out.add(kind, val, 0.7, f"{lemma}_{kind}")
    return True


def _diet(v: Token, o: Token, neg_or_stop: bool, out: _Out) -> None:
    words = {_lower(t) for t in o.subtree} | {o.lemma_.lower()}
    if not words & L.MEATS:
        return
    eggs_only = words <= {"egg", "eggs", "now", "again", "too"}
    if neg_or_stop:
        out.add("diet", "vegetarian" if not eggs_only else "vegan", 0.7, "no_meat")
    elif v.tag_ in ("VBP", "VBZ", "VBD", "VBN", "VBG", "VB"):
        started = v.head.lemma_ in ("start", "begin") or any(_lower(t) in ("now", "again", "started") for t in v.subtree)
        if started or _habitual(v) or v.tag_ in ("VBP", "VBZ"):
            out.add("diet", "eggetarian" if eggs_only else "non-vegetarian", 0.65, "eats_meat")


def _stop_habit(v: Token, x: Token, out: _Out) -> None:
    what = _phrase(x, max_words=5)
    if not what:
        return
    verb = "quit" if v.lemma_ == "quit" else "stopped"
    out.add("habit", f"{verb} {what}", 0.7 if x.lemma_ in ("smoke", "drink", "smoking", "drinking") else 0.65, "stop")


def _copula(v: Token, neg: bool, out: _Out, laughs: bool) -> None:
    comps = _children(v, "attr", "acomp", "oprd")
    for c in comps:
        low = _lower(c)
        lemma = c.lemma_.lower()
        # diet
        diet = L.DIETS.get(low) or L.DIETS.get(lemma)
        if diet is None and low == "veg" and any(_lower(g) == "non" for g in c.children):
            diet = "non-vegetarian"
        if diet:
            if any(_lower(g) in ("non", "non-") for g in c.subtree) and diet == "vegetarian":
                diet = "non-vegetarian"
            if not neg:
                out.add("diet", diet, 0.8, "be_diet")
            return
        # allergies and other "be <adj> to/of/with"
        if lemma == "allergic":
            o = _prep_obj(c, "to")
            for t in (_conjoined(o) if o is not None else []):
                if not neg:
                    out.add("allergy", _phrase(t), 0.85, "allergic")
            return
        if lemma in ("asleep", "awake", "up") and not neg:  # "I'm asleep by 11 these days"
            t = _prep_obj(c, "by", "at", "till", "until") or _prep_obj(v, "by", "at", "till", "until")
            if t is not None and (t.like_num or re.match(r"\d", t.text)):
                out.add("sleep", f"{'asleep' if lemma == 'asleep' else 'up'} by {t.text}", 0.6, "asleep_by")
            return
        if lemma in ("afraid", "scared", "terrified") and not neg:
            o = _prep_obj(c, "of")
            if o is not None:
                out.add("condition", f"{c.text.lower()} of {_phrase(o)}", 0.65, "afraid")
            return
        if lemma in ("obsessed", "addicted", "hooked", "into", "crazy", "mad") and not neg:
            o = _prep_obj(c, "with", "to", "on", "about")
            if o is not None:
                out.add("likes", _phrase(o), 0.7, "obsessed")
            return
        if lemma in ("fan",) and not neg:
            o = _prep_obj(c, "of")
            if o is not None:
                out.add("likes", _phrase(o), 0.7, "fan_of")
            return
        if lemma in ("engaged", "married", "single") and not neg:
            out.add("relationship_status", lemma, 0.8, f"be_{lemma}")
            to = _prep_obj(c, "to")
            if to is not None and _name(to):
                out.add("partner", _name(to), 0.8, f"be_{lemma}")
            return
        if lemma in ("left-handed", "right-handed", "lefty", "ambidextrous") and not neg:
            out.add("handedness", lemma.replace("lefty", "left-handed"), 0.8, "hand")
            return
        if low in ("owl", "riser", "person") and not neg:
            phrase = _phrase(c)
            if phrase and any(w in phrase.lower() for w in ("night owl", "early riser", "morning person", "night person")):
                out.add("sleep", phrase.lower(), 0.7, "sleep_type")
            return
        # age: "I'm 28", "I am 28 years old"
        if c.like_num and 10 < _int(c.text) < 100 and not neg:
            out.add("age", c.text, 0.75, "be_age")
            return
        if low in ("years", "yrs") and any(g.like_num for g in c.children) and not neg:
            n = next(g for g in c.children if g.like_num)
            if 10 < _int(n.text) < 100:
                out.add("age", n.text, 0.8, "be_age")
            return
        trait = next((g.lemma_.lower() for g in [c, *c.children] if g.lemma_.lower() in L.PERSONALITY), None)
        if trait and not neg:
            out.add("personality", trait, 0.7, "be_personality")
            return
        doer = L.DOER_NOUNS.get(lemma)
        if doer and not neg and _lower(c) not in ("slow", "bad"):
            pred, val = doer
            mods = [_lower(g) for g in c.children if g.dep_ in ("amod", "compound")]
            if pred == "habit" and "social" in mods:
                val = f"social {lemma}"
            if not any(m in ("slow", "bad", "terrible") for m in mods):
                out.add(pred, val, 0.65, "be_doer")
                return
        # "I'm a Ludhiana girl": where the person is from
        if lemma in ("girl", "boy", "guy", "kid", "lad", "lass") and not neg:
            place = next((g for g in c.children if g.dep_ in ("compound", "amod") and g.pos_ == "PROPN"), None)
            if place is not None and _name(place):
                out.add("hometown", _name(place), 0.7, "place_girl")
            return
        if re.fullmatch(r"\d['’]\d{1,2}\"?|\d(?:\.\d+)?\s*(?:ft|feet)", c.text) and not neg:
            out.add("height", c.text, 0.75, "be_height")
            return
        # profession: "I'm a product designer (at X)"
        if _role(c) and not neg and not laughs:
            out.add("job", _role(c), 0.75, "be_role")
            at = _prep_obj(c, "at", "with", "in", "for")
            if at is not None and _name(at):
                out.add("employer", _name(at), 0.7, "be_role_at")
            return
    if neg:
        return
    # "I'm 5'3": the parse splits the height
    m = re.match(r"\s*(?:i['’]?m|i am)\s+(\d['’]\s?\d{1,2}\"?)(?=[\s,.!]|$)", v.sent.text, re.I)
    if m and _is_first_person(v.sent[0]):
        out.add("height", m.group(1).replace(" ", ""), 0.75, "be_height")
    # "I'm at the Lower Parel office"
    at = _prep_obj(v, "at")
    if at is not None and _lower(at) == "office" and not comps:
        where = " ".join(t.text for t in at.subtree if t.i < at.i and t.dep_ in ("compound", "amod") and t.pos_ == "PROPN")
        if where:
            where = f"{where} office"
            out.add("office", where, 0.65, "at_office")
    # "I'm into birding"
    into = _prep_obj(v, "into")
    if into is not None and not comps:
        out.add("likes", _phrase(into), 0.65, "into")
    # "I'm from Lucknow", "I'm in Bangalore now", "I'm based in Pune"
    frm = _prep_obj(v, "from")
    if frm is not None and _name(frm) and not comps:
        out.add("hometown", _name(frm), 0.8, "be_from")
    for c in comps:
        if c.lemma_ in ("base", "settle", "located"):
            o = _prep_obj(c, "in", "at", "out")
            if o is not None and _place(o):
                out.add("lives_in", _place(o), 0.8, "based_in")
        if c.lemma_ in ("remote", "hybrid"):
            out.add("work_mode", c.lemma_, 0.7, "be_remote")


def _possessive_statements(sent: Span, out: _Out, quoted: list[tuple[int, int]], laughs: bool) -> None:
    """"my birthday is 3 March", "my favourite food is dosa", "dosa is my favourite", "my sister Ria",
    "Naina is my girlfriend", "my dog Bruno"."""
    for t in sent:
        if any(a <= t.idx < b for a, b in quoted):
            continue
        poss = next((c for c in t.children if c.dep_ == "poss" and _lower(c) in ("my", "our")), None)
        if poss is None:
            continue
        low = _lower(t)
        is_fav = any(_lower(c) in L.FAVOURITE_WORDS for c in t.children) or low in L.FAVOURITE_WORDS
        # "my X is Y" (X the subject of a copula)
        if t.dep_ == "nsubj" and t.head.lemma_ == "be" and not _negated(t.head) and not _hypothetical(t.head) \
                and not _hedged(t.head) and not _future(t.head):
            comp = next((c for c in t.head.children if c.dep_ in ("attr", "acomp", "oprd")), None)
            comp = comp or _prep_obj(t.head, "on", "in", "at")
            if comp is None:
                continue
            if is_fav:
                kind = None if low in L.FAVOURITE_WORDS else L.FAVOURITE_KINDS.get(t.lemma_.lower(), t.lemma_.lower())
                for c in _conjoined(comp):
                    out.add(f"favourite_{kind}" if kind else "favourite", _phrase(c), 0.85, "my_favourite")
                continue
            attr = L.ATTRIBUTES.get(low) or L.ATTRIBUTES.get(t.lemma_.lower())
            if attr in ("birthday",):
                out.add("birthday", _date_phrase(t.head), 0.85, "my_birthday")
            elif attr == "blood_group":
                m = re.search(r"\b(A|B|AB|O)\s*(?:\+|-|positive|negative|\+ve|-ve)", sent.text, re.I)
                if m:
                    out.add("blood_group", m.group(0).upper().replace(" ", ""), 0.85, "my_blood_group")
            elif attr in ("goal",):
                out.add("goal", _phrase(comp, max_words=8), 0.8, "my_goal")
            elif attr in ("name", "nickname"):
                if _name(comp):
                    out.add(attr, _name(comp), 0.85, f"my_{attr}")
            elif attr in ("hometown",):
                if _name(comp):
                    out.add("hometown", _name(comp), 0.8, "my_hometown")
            elif attr in ("height", "weight", "age", "rent"):
                out.add(attr if attr != "weight" else "condition", _measure(t.head) if attr != "weight" else
                        "weight " + (_measure(t.head) or ""), 0.7, f"my_{attr}")
            elif attr == "office":
                where = _prep_obj(t.head, "in", "at")
                if where is not None and _place(where):
                    out.add("office", _place(where), 0.7, "my_office")
            elif attr == "internship":
                if _name(comp):
                    out.add("internship", _name(comp), 0.75, "my_internship")
            elif attr in ("team", "job", "employer"):
                val = _name(comp) or _phrase(comp)
                out.add(attr, val, 0.7, f"my_{attr}")
            elif attr in ("likes", "hobby"):
                out.add(attr, _phrase(comp), 0.75, f"my_{low}")
            elif low in L.LANGUAGES and comp.pos_ == "ADJ":  # "my Marathi is very basic"
                out.add("language", f"{comp.text} {t.text}", 0.7, "my_language")
            elif low in L.SIBLING_NOUNS or low in L.PARTNER_NOUNS or low in L.PETS or low in L.PARENT_NOUNS:
                pass  # "my sister is a doctor": a fact about her
            elif t.pos_ == "NOUN" and t.lemma_.lower() not in L.TRANSIENT and t.lemma_.lower() not in L.PREDICATES and comp.pos_ in ("NOUN", "PROPN", "NUM") \
                    and not _pronoun_value(comp) and t.lemma_.isalpha():
                # any other "my <thing> is <value>" ("my manager is Rohit"): filed under the thing's name,
                # below the profile's cut until it is said again
                out.add(t.lemma_.lower(), _name(comp) or _phrase(comp), 0.55, "my_attribute")
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
            if subj is not None and subj.pos_ == "PROPN" and not _negated(t.head) and not _hypothetical(t.head):
                name_tok = subj
        if name_tok is None:
            continue
        name = _name(name_tok)
        if not name:
            continue
        adj = next((_lower(c) for c in t.children if c.dep_ == "amod"
                    and _lower(c) in ("younger", "elder", "older", "little", "big", "baby", "twin", "best")), "")
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
        if t.dep_ in ("attr", "acomp") and t.head.lemma_ == "be" and not _negated(t.head):
            fav = _lower(t) in L.FAVOURITE_WORDS or any(_lower(c) in L.FAVOURITE_WORDS for c in t.children)
            mine = any(c.dep_ == "poss" and _lower(c) == "my" for c in t.children)
            subj = next((c for c in t.head.children if c.dep_ == "nsubj"), None)
            if fav and mine and subj is not None and not _pronoun_value(subj):
                kind = None if _lower(t) in L.FAVOURITE_WORDS else L.FAVOURITE_KINDS.get(t.lemma_.lower())
                out.add(f"favourite_{kind}" if kind else "favourite", _phrase(subj), 0.8, "is_my_favourite")


_MONTHS = ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec")


def _date_phrase(v: Token) -> str | None:
    """--MM-DD from whatever follows "my birthday is" (14th August, Aug 14)."""
    text = v.doc[v.i:v.sent.end].text
    mon_re = r"(?i:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]{0,6}"
    m = re.search(rf"(\d{{1,2}})(?:st|nd|rd|th)?\s+(?:of\s+)?({mon_re})\b|\b({mon_re})\s+(\d{{1,2}})(?:st|nd|rd|th)?", text)
    if not m:
        return None
    d, mon = (m.group(1), m.group(2)) if m.group(1) else (m.group(4), m.group(3))
    k = mon[:3].lower()
    if k not in _MONTHS or not 1 <= int(d) <= 31:
        return None
    return f"--{_MONTHS.index(k) + 1:02d}-{int(d):02d}"  # the stored form; render shows "14 August"


def _measure(v: Token) -> str | None:
    m = re.search(r"\d[\d.,'’\"]*\s*(?:cm|kg|kgs|ft|feet|k|lpa|rs|inr|/month|per month)?(?:\s*\d+\s*(?:in|inches|\"))?",
                  v.doc[v.i:v.sent.end].text)
    return m.group(0).strip() if m else None


def _pet_names(doc: Doc, out: _Out) -> None:
    """A pet adopted or had in this message, named here: "adopted a beagle, his name is Bruno",
    "got a kitten named Mochi", "we have a dog called Simba"."""
    animals = [t for t in doc if _lower(t) in L.PETS and not _question(t.sent) and t.dep_ in ("dobj", "pobj", "attr", "conj", "appos")
               and (t.head.lemma_ in L.ADOPT_VERBS or t.head.dep_ == "prep") and _speaker_is_subject(t.head)
               and not _negated(t.head) and not _hypothetical(t.head) and not _hedged(t.head) and not _future(t.head)]
    if not animals:
        return
    animal = animals[0]
    name = None
    for t in doc:
        if _lower(t) in ("named", "called") and t.i > animal.i:
            n = next((c for c in t.children if c.pos_ == "PROPN" or c.dep_ in ("oprd", "attr", "dobj")), None)
            if n is None and t.i + 1 < len(doc):
                n = doc[t.i + 1]
            name = _name(n) if n is not None else None
        elif _lower(t) == "name" and any(_lower(c) in ("his", "her", "its", "their") for c in t.children) \
                and t.head.lemma_ == "be":
            n = next((c for c in t.head.children if c.dep_ in ("attr", "acomp")), None)
            name = _name(n) if n is not None else None
        if name and _question(t.sent):
            name = None
        if name:
            break
    if name:
        kind = _phrase(animal) or animal.text
        out.claims = [c for c in out.claims if not (c["predicate"] == "pet" and c["rule"] == "parse:adopt")]
        out.add("pet", name, 0.85, "pet_named", qualifier=kind.lower())
