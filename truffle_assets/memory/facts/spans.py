"""Values cut from a dependency parse: a noun phrase without its determiners and time words ("a new
Pixel 7" -> "Pixel 7"), a name or place as its proper-noun run ("HSR Layout, Bengaluru"), a role, a
date, a measure. PII placeholders ("[AADHAAR]", "<PHONE_1>") are never a value.
"""

from __future__ import annotations

import re

from typing import TYPE_CHECKING

if TYPE_CHECKING:  # annotations only: spaCy loads with the pipeline (truffle_assets.nlp)
    from spacy.tokens import Token

from truffle_assets.memory.facts import lexicon as L
from truffle_assets.memory.facts.values import NOT_NAMES, ascii_fold


TIMEWORDS = {"today", "yesterday", "now", "tonight", "again", "already", "finally", "officially", "recently",
              "ago", "last", "this", "since", "week", "month", "year", "morning", "evening", "weekend", "also",
              "too", "just", "still", "anymore", "yet", "currently", "ever", "onwards", "lol", "haha", "yaar",
              "bro", "btw", "tbh", "actually", "honestly", "really", "back"}


REDACTED = re.compile(r"[<\[{]|█")
# A title of respect written after a name ("Kishore da", "Lata ji", "Rafi saab", "Suresh sir") is how the
# speaker addresses the person, not part of who they are.
HONORIFICS = {"ji", "jee", "da", "di", "dada", "didi", "bhai", "bhaiya", "saab", "sahab", "sahib", "sir", "madam",
              "maam", "ma'am", "uncle", "aunty", "auntie"}


def lower(t: Token) -> str:
    return t.lower_.replace("’", "'")


def children(t: Token, *deps: str) -> list[Token]:
    return [c for c in t.children if c.dep_ in deps]


def prep_obj(v: Token, *preps: str) -> Token | None:
    for p in v.children:
        if p.dep_ in ("prep", "dative", "agent") and lower(p) in preps:
            o = next((c for c in p.children if c.dep_ in ("pobj", "pcomp")), None)
            if o is not None:
                return o
    return None


def phrase(head: Token, max_words: int = 6, keep_of: bool = True) -> str | None:
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
                if c.dep_ == "amod" and lower(c) in ("new", "old", "own", "current", "latest", "whole",
                                                       "little", "big", "dear", "sweet", "favourite", "favorite",
                                                       "proper", "good", "nice", "great", "cheap", "fancy", "real"):
                    if not (c.dep_ == "amod" and head.pos_ == "PROPN"):
                        continue
                if lower(c) in TIMEWORDS:
                    continue
                keep.add(c.i)
                stack.append(c)
            elif c.dep_ == "prep" and keep_of and lower(c) == "of" and t.i == head.i:
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
    doc = head.doc
    if head.pos_ == "PROPN":  # a model name runs on past the parse: "X-T30", "Redmi Note 12"
        while hi + 1 < len(doc) and hi - lo < max_words and (
                (doc[hi].whitespace_ == "" and re.fullmatch(r"[\w\-]+", doc[hi + 1].text))
                or (doc[hi + 1].like_num and (hi + 2 >= len(doc) or doc[hi + 2].pos_ not in ("NOUN", "PROPN", "NUM")))):
            hi += 1
            keep.add(hi)
    toks = [doc[i] for i in range(lo, hi + 1)]
    if any(placeholder(t) for t in toks):
        return None
    # drop determiners/possessives/punctuation that sit inside the range
    kept = [t for t in toks if not (t.dep_ in ("det", "poss", "punct", "case") and t.i != head.i and t.text != "-")
            and lower(t) not in ("my", "our", "a", "an", "the") and (t.i in keep or t.dep_ not in ("amod",))]
    kept = [t for t in kept if not honorific(t)]
    if not kept or len(kept) > max_words:
        return None
    # the words as written ("10K" stays one word though the tokenizer split it)
    v = "".join(t.text_with_ws if i + 1 < len(kept) and kept[i + 1].i == t.i + 1 else t.text + " "
                for i, t in enumerate(kept)).strip(" -,.'’")
    v = re.sub(r"\s+([’']s)\b", r"\1", v)
    if not v or REDACTED.search(v) or vague(head):
        return None
    return v


_VAGUE = {"it", "this", "that", "something", "one", "everything", "anything", "nothing", "lot", "bit", "lots", "all"}


def vague(t: Token) -> bool:
    """`t` names nothing on its own: a pronoun, a quantity ("a lot"), a word that is never a name."""
    return lower(t) in NOT_NAMES | _VAGUE or t.pos_ == "PRON"


def phrase_or_word(t: Token) -> str | None:
    """`phrase(t)`, or the word itself when the phrase runs too long, never a vague word ("play a lot")."""
    return phrase(t) or (None if vague(t) or placeholder(t) else t.text)


def honorific(t: Token) -> bool:
    """A lower-case title of respect right after a Capitalized name: "da" in "Kishore da"."""
    return t.text in HONORIFICS and t.i > 0 and t.doc[t.i - 1].text[:1].isupper()


def placeholder(t: Token) -> bool:
    """Part of a PII placeholder ("[AADHAAR]", "<PHONE_1>"): never a value."""
    doc = t.doc
    return (t.i > 0 and doc[t.i - 1].text[-1:] in "[<{") or (t.i + 1 < len(doc) and doc[t.i + 1].text[:1] in "]>}") \
        or bool(REDACTED.search(t.text))


def proper_name(head: Token) -> str | None:
    """A person's or a place's name: the proper-noun run around `head` ("HSR Layout", "Naina Kapoor")."""
    if not (head.pos_ == "PROPN" or head.text[:1].isupper()) or placeholder(head):
        return None
    if ascii_fold(head.text).lower() in NOT_NAMES or REDACTED.search(head.text):
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


def place_name(head: Token) -> str | None:
    """A place name, with the city after a comma when one follows ("HSR Layout, Bengaluru")."""
    name = proper_name(head)
    if not name:
        return None
    doc, j = head.doc, head.i
    while j + 1 < head.sent.end and doc[j + 1].text[:1].isupper() and doc[j + 1].pos_ == "PROPN":
        j += 1
    if j + 2 < head.sent.end and doc[j + 1].text == "," and doc[j + 2].pos_ == "PROPN" \
            and ascii_fold(doc[j + 2].text).lower() not in NOT_NAMES:
        city = proper_name(doc[j + 2])
        if city and city != name:
            return f"{name}, {city}"
    return name


def conjoined(t: Token) -> list[Token]:
    return [t, *[c for c in t.conjuncts if c.i > t.i]]


def pronoun_value(t: Token) -> bool:
    return t.pos_ == "PRON" or lower(t) in ("it", "this", "that", "them", "you", "u", "him", "her", "everything")


def role(t: Token) -> str | None:
    if lower(t) not in L.ROLE_NOUNS and t.lemma_.lower() not in L.ROLE_NOUNS:
        return None
    return phrase(t, max_words=5, keep_of=False)


def to_int(s: str) -> int:
    try:
        return int(float(s))
    except ValueError:
        return -1


MONTHS = ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec")


def date_phrase(v: Token) -> str | None:
    """--MM-DD from whatever follows "my birthday is" (14th August, Aug 14)."""
    text = v.doc[v.i:v.sent.end].text
    mon_re = r"(?i:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]{0,6}"
    m = re.search(rf"(\d{{1,2}})(?:st|nd|rd|th)?\s+(?:of\s+)?({mon_re})\b|\b({mon_re})\s+(\d{{1,2}})(?:st|nd|rd|th)?", text)
    if not m:
        return None
    d, mon = (m.group(1), m.group(2)) if m.group(1) else (m.group(4), m.group(3))
    k = mon[:3].lower()
    if k not in MONTHS or not 1 <= int(d) <= 31:
        return None
    return f"--{MONTHS.index(k) + 1:02d}-{int(d):02d}"  # the stored form; render shows "14 August"


def measure(v: Token) -> str | None:
    m = re.search(r"\d[\d.,'’\"]*\s*(?:cm|kg|kgs|ft|feet|k|lpa|rs|inr|/month|per month)?(?:\s*\d+\s*(?:in|inches|\"))?",
                  v.doc[v.i:v.sent.end].text)
    return m.group(0).strip() if m else None
