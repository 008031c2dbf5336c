"""Whose claim a clause is, and whether it claims anything: the speaker as subject (or chat's dropped
"I"), negation, modality and tense, hedges, suppositions, questions, quotations and reported speech.
"""

from __future__ import annotations

import re

from typing import TYPE_CHECKING

if TYPE_CHECKING:  # annotations only: spaCy loads with the pipeline (truffle_assets.nlp)
    from spacy.tokens import Doc, Span, Token

from truffle_assets.memory.facts import lexicon as L
from truffle_assets.memory.facts import spans


SUBJ = {"nsubj", "nsubjpass", "csubj", "expl"}


MODALS = {"would", "could", "might", "may", "should", "must", "'d", "d"}


def is_first_person(t: Token) -> bool:
    return spans.lower(t) in ("i", "we", "me", "us", "i'm", "im", "myself")


def subjects(v: Token) -> list[Token]:
    subs = [c for c in v.children if c.dep_ in SUBJ]
    if not subs and (v.dep_ in ("conj", "xcomp") or v.dep_ == "advcl" and v.i > v.head.i) and v.head.i != v.i:
        return subjects(v.head)  # "I quit Zoho and joined Swiggy": the conjunct shares the subject
    return subs


def speaker_is_subject(v: Token) -> bool:
    subs = subjects(v)
    if not subs:
        # chat ellipsis: "Moved to Pune last week", "Handed in my notice" (a sentence-initial verb)
        if v.dep_ in ("ROOT", "advcl", "ccomp") and v.tag_ in ("VBD", "VBN", "VBG", "VB", "VBP", "VBZ"):
            first = next((t for t in v.sent if not t.is_punct
                          and t.dep_ not in ("intj", "advmod", "discourse", "aux", "auxpass", "neg")), v)
            return first.i >= v.i and not v.sent.text.rstrip().endswith("?")
        return False
    s = subs[0]
    if is_first_person(s):
        return True
    # "Naina and I got engaged"
    return any(is_first_person(c) for c in s.conjuncts)


# Verbs of a change one makes (joining, buying, adopting, moving, starting, quitting): with no subject and in
# the base form they advise or invite ("join Cult, it's great", "buy the Pixel 8, trust me", "adopt a dog!",
# "start running with me"); the speaker's own change is told in the past ("joined Cult", "bought a Pixel").
# ("quit" is its own past: "quit smoking last month" is the speaker's)
_CHANGE_VERBS = {"join", "buy", "purchase", "adopt", "rescue", "move", "shift", "relocate", "start", "begin",
                 "switch", "sell", "get", "take", "try", "learn", "enroll", "enrol", "sign", "book", "download",
                 "install", "upgrade", "go", "become", "marry", "leave", "resign", "stop"}


def imperative(v: Token) -> bool:
    """`v` is a bare command or invitation: a base-form change verb with no subject ("adopt a dog!")."""
    return v.tag_ == "VB" and v.lemma_.lower() in _CHANGE_VERBS and not subjects(v) \
        and not any(c.dep_ in ("aux", "neg") for c in v.children) and v.dep_ in ("ROOT", "conj", "advcl")


def negated(v: Token) -> bool:
    for t in [v, *[c for c in v.children if c.dep_ in ("aux", "auxpass")]]:
        for c in t.children:
            if c.dep_ == "neg" or spans.lower(c) in ("never", "nahi", "nahin"):
                return True
            if spans.lower(c) == "longer" and any(spans.lower(g) == "no" for g in c.children):
                return True
    return any(spans.lower(c) in ("never",) for c in v.children)


# A habit or diet bounded to an occasion is no standing one: a negation so bounded says the opposite holds
# at other times ("I don't eat meat on Tuesdays", "not drinking tonight", "never drink before a run", "don't
# smoke when I'm with family"), and so does a state ("vegetarian on Tuesdays", "vegan for January").
# Words that bound nothing: "at all", "in years", "since 2019", "anymore", "these days".
_OCCASION_PREPS = {"on", "during", "after", "before", "at", "in", "with", "around", "till", "until", "except"}
_NO_BOUND = {"all", "years", "year", "months", "month", "ages", "decades", "life", "while", "long", "forever"}
_OCCASION_WORDS = {"tonight", "today", "tomorrow", "weekdays", "weekends", "sometimes", "occasionally"}
_OCCASION_MARKS = {"when", "while", "if", "unless", "before", "after", "until", "till", "whenever"}
# "for" bounds a state to a named stretch ("for January", "for Lent"), not to a length ("for five years")
_NAMED_STRETCHES = {"january", "february", "march", "april", "may", "june", "july", "august", "september",
                    "october", "november", "december", "lent", "navratri", "ramzan", "ramadan", "shravan", "sawan",
                    "diwali", "christmas"}


def occasional(v: Token, obj: Token | None = None) -> bool:
    """`v` (or its object or complement `obj`) holds only on some occasion: a day, a time, a place, a
    company, a condition, a named stretch of the year."""
    for t in [v] + ([obj] if obj is not None else []):
        for c in t.children:
            low = spans.lower(c)
            o = next((g for g in c.children if g.dep_ in ("pobj", "pcomp")), None) if c.dep_ == "prep" else None
            if o is not None and low in _OCCASION_PREPS and spans.lower(o) not in _NO_BOUND:
                return True
            if o is not None and low == "for" and spans.lower(o) in _NAMED_STRETCHES:
                return True
            if c.dep_ in ("npadvmod", "advmod") and low in _OCCASION_WORDS:
                return True
            if c.dep_ == "advcl" and any(spans.lower(m) in _OCCASION_MARKS for m in c.children
                                         if m.dep_ in ("mark", "advmod")):
                return True
    return False


def modal(v: Token) -> str | None:
    for c in v.children:
        if c.dep_ == "aux" and spans.lower(c) in MODALS | {"will", "'ll", "shall", "wo", "ll"}:
            return spans.lower(c)
    return None


def future(v: Token) -> bool:
    """A plan, not yet true: "I'll join", "I'm going to move", "moving next month", "joining on Monday"."""
    if modal(v) in ("will", "'ll", "shall", "wo", "ll"):
        return True
    h = v.head
    if v.dep_ == "xcomp" and h.lemma_ == "go" and h.tag_ == "VBG":  # going to move
        return True
    if spans.lower(v) == "gonna" or any(spans.lower(c) == "gonna" for c in v.children):
        return True
    if v.tag_ == "VBG" and any(c.dep_ == "aux" for c in v.children) and not any(
            spans.lower(c) in ("been",) for c in v.children):
        # progressive with a future time: "I'm moving to Pune next month", "joining Swiggy on Monday"
        for t in v.subtree:
            if spans.lower(t) in L.FUTURE_WORDS or spans.lower(t) in ("monday", "tuesday", "wednesday", "thursday",
                                                             "friday", "saturday", "sunday"):
                return True
            # "moving to Hyderabad in June", "joining from March": a month ahead
            if spans.lower(t) in _MONTHS and t.head.lemma_.lower() in ("in", "from", "by", "after", "end", "till") \
                    and v.lemma_.lower() in ("move", "shift", "relocate", "join", "start", "begin"):
                return True
        # "I'm quitting my job to do an MBA": quitting or resigning in the progressive announces it
        if v.lemma_.lower() in ("quit", "resign") and not any(spans.lower(t) in ("today", "now", "officially")
                                                             for t in v.subtree):
            return True
    return False


_MONTHS = {"january", "february", "march", "april", "may", "june", "july", "august", "september", "october",
           "november", "december", "jan", "feb", "mar", "apr", "jun", "jul", "aug", "sep", "sept", "oct", "nov", "dec"}


def hedged(v: Token) -> bool:
    """Thinking of / planning to / might / maybe / hoping to ... anywhere above the clause."""
    if modal(v) in MODALS:
        return True
    for c in v.children:
        if c.dep_ == "advmod" and spans.lower(c) in ("maybe", "probably", "perhaps", "shayad", "possibly"):
            return True
    t = v
    while t.head.i != t.i:
        t = t.head
        if t.lemma_ in L.HEDGE_HEADS or spans.lower(t) in ("thinking", "planning", "considering", "wondering"):
            return True
    return any(spans.lower(x) in ("maybe", "shayad", "perhaps", "probably") for x in v.sent[:3])


def hypothetical(v: Token) -> bool:
    t = v
    while True:
        if any(c.dep_ == "mark" and spans.lower(c) in ("if", "unless", "whether", "agar", "once", "when", "till", "until")
               for c in t.children):
            return True
        if t.head.i == t.i:
            break
        t = t.head
    first = spans.lower(v.sent[0])
    return first in ("if", "agar", "imagine", "suppose", "hypothetically", "unless")


def reported(v: Token, quoted: list[tuple[int, int]]) -> bool:
    """Someone else's words: inside quotation marks, or under "she said ..."."""
    if any(a <= v.idx < b for a, b in quoted):
        return True
    t = v
    while t.head.i != t.i:
        p = t.head
        if p.lemma_ in L.SAY_VERBS and t.dep_ in ("ccomp", "xcomp", "parataxis", "dobj"):
            subs = subjects(p)
            if not subs or not is_first_person(subs[0]):
                return True
        t = p
    return False


def quoted_ranges(text: str) -> list[tuple[int, int]]:
    # single quotes only around words: "I'm in ... I'm" is two apostrophes, not a quotation
    return [(m.start(), m.end()) for m in re.finditer(
        r"\"[^\"\n]{3,}\"|“[^”]{3,}”|(?:^|(?<=\s))['‘][^'’\n]{3,}['’](?=[\s.,!?]|$)", text)]


def question(sent: Span) -> bool:
    txt = sent.text.strip()
    if txt.endswith("?"):
        return True
    first = spans.lower(sent[0])
    return first in ("do", "does", "did", "are", "is", "should", "would", "could", "can", "will", "shall",
                     "have", "kya", "what", "where", "why", "how", "who", "when", "which") and sent[0].dep_ in (
        "aux", "advmod", "ROOT", "attr", "nsubj", "dobj", "auxpass", "det")


def unclaimed_text(doc: Doc) -> str:
    """`doc`'s text with what the speaker does not claim blanked out (same length, so offsets hold):
    quotations, questions, and what someone else is reported to say. The pattern rules read this."""
    chars = list(doc.text)

    def blank(a: int, b: int) -> None:
        for i in range(a, min(b, len(chars))):
            if chars[i] not in "\n":
                chars[i] = " "
    for a, b in quoted_ranges(doc.text):
        blank(a, b)
    for sent in doc.sents:
        if question(sent):
            blank(sent.start_char, sent.end_char)
            continue
        for t in sent:
            if t.lemma_ in L.SAY_VERBS:
                subs = subjects(t)
                if subs and is_first_person(subs[0]):
                    continue
                for c in t.children:
                    if c.dep_ in ("ccomp", "xcomp", "parataxis"):
                        span = doc[c.left_edge.i:c.right_edge.i + 1]
                        blank(span.start_char, span.end_char)
    return "".join(chars)


# A time bound on the arrangement said: "WFH tomorrow", "working from home till next week", "WFH le liya
# hai 2 hafte". "From today", "aaj se" and "2 days a week" start or pattern one and are no bound.
_BOUNDED = re.compile(
    r"(?i)\b(?:till|until|untill)\s+(?:next|this|the\s+end|end|mon|tue|wed|thu|fri|sat|sun|tomorrow|\d)"
    r"|(?<!from\s)(?<!starting\s)(?<!since\s)(?<!as\sof\s)\b(?:today|tomorrow|tonight|aaj|kal)\b(?!\s+se\b)"
    r"|\bfor\s+(?:the\s+)?(?:next\s+)?(?:a|one|two|three|few|couple\s+of|\d+)?\s*(?:days?|weeks?)\b(?!\s+(?:a|per|every)\b)"
    r"|\bthis\s+week\b|\b\d+\s+(?:hafte|hafton|hafta|din)\s*(?:ke\s+liye\b|$|[.!,;])")
# arrangements that are often for a while only: with a time bound they are no standing fact
ARRANGEMENTS = frozenset({"work_mode", "lives_with"})


def temporary(text: str) -> bool:
    """`text` bounds what it says in time ("WFH tomorrow"): an arrangement for a while, not a standing one."""
    return bool(_BOUNDED.search(text))


# A stop taken back in the same message: "quit smoking in 2020 but started again", "sharab chhod di thi
# par phir shuru kar di"
_RESUMED = re.compile(r"(?i)\b(?:start(?:ed)?|began|resumed|picked\s+it\s+up)\s+(?:\w+\s+)?again\b"
                      r"|\b(?:phir|fir|dobara)\s+(?:se\s+)?shuru\b")


def resumed(text: str) -> bool:
    """`text` says a habit it stops was taken up again."""
    return bool(_RESUMED.search(text))


# Text the user passes on rather than writes: its "I" is someone else's
_FORWARDED = re.compile(r"(?i)^\W*(?:fwd?|forwarded(?:\s+message)?)\s*:|\bforwarded\s+as\s+received\b|\bshared\s+as\s+received\b"
                        r"|\bcopy\s*-?\s*pasted?\b|\b(?:please\s+)?(?:share|forward)\s+(?:this\s+)?(?:with|to)\s+(?:all|everyone)\b")


def forwarded(text: str) -> bool:
    """`text` is a forward ("Forwarded: ...", "forwarded as received", "share with everyone")."""
    return bool(_FORWARDED.search(text))


# verbs whose complement is wanted, tried or pretended, not done: "I need to stop drinking", "tried to
# quit smoking", "pretend I'm vegan", "can't wait to move"; "would love/like to" wants it too
_UNREAL_HEADS = {"want", "need", "try", "attempt", "pretend", "imagine", "suppose", "wait", "long", "wish", "hope",
                 "dream", "aim", "intend", "mean"}
_WOULD = {"would", "'d", "d"}
_SUPPOSING = {"pretend", "imagine", "suppose", "wish", "dream"}


def unreal(v: Token) -> bool:
    """The clause under `v` is wanted, tried, pretended or nearly done ("almost quit my job"), not true."""
    if any(c.dep_ == "advmod" and spans.lower(c) in ("almost", "nearly") for c in v.children):
        return True
    if v.lemma_.lower() == "learn" and v.head.lemma_.lower() in L.GOAL_VERBS:
        return False  # "want to learn the violin": read as learning it, beside the goal
    t = v
    while t.dep_ in ("xcomp", "ccomp") and t.head.i < t.i:
        h = t.head
        # "to ..." under a wanting verb; a whole clause only under a supposing one ("pretend I'm vegan")
        if h.lemma_.lower() in (_UNREAL_HEADS if t.dep_ == "xcomp" else _SUPPOSING):
            return True
        if h.lemma_.lower() in ("love", "like", "prefer") and any(
                c.dep_ == "aux" and spans.lower(c) in _WOULD for c in h.children):
            return True
        t = h
    return False
