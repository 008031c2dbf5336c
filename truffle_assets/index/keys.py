"""Extra retrieval keys per message: the entities it names and the kinds of answer it can give.

A chat line answers "When did Caroline go to the support group?" with "I went yesterday": the
question's content words are half in the line, and its "when" is answered by a date the line
names. The `keys` column of the message table holds, per message, the lower-cased entities spaCy's
NER finds in its (redacted) text, plus one tag per kind of answer it holds (`kdate`, `kplace`, ...)
from those entities and from a few time-expression rules the small NER misses. BM25 over `keys`
is entity-weighted matching (a line whose entities are the question's scores high even when its
other words do not match); a question's wh-word maps to the tag it wants (rule-based expansion).

Only NER runs (no tagger, parser or lemmatizer): about 2-4 ms per message on one core.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

# NER label -> answer-kind tag. Tags are single alphanumeric words (the FTS tokenizer keeps them whole)
# that no chat line spells.
LABEL_TAG = {
    "DATE": "kdate", "TIME": "kdate", "GPE": "kplace", "LOC": "kplace", "FAC": "kplace",
    "PERSON": "kperson", "ORG": "korg", "NORP": "kgroup", "EVENT": "kevent", "WORK_OF_ART": "kwork",
    "PRODUCT": "kproduct", "MONEY": "kmoney", "CARDINAL": "knumber", "QUANTITY": "knumber",
    "LANGUAGE": "klanguage",
}
TAGS = frozenset(LABEL_TAG.values())

# time expressions en_core_web_sm leaves untagged in chat text ("last weekend", "a few days ago")
_TIME = re.compile(
    r"\b(yesterday|tomorrow|tonight|today|ago|weekend|last (?:week|month|year|night|summer|winter|spring|fall)"
    r"|next (?:week|month|year)|(?:mon|tues|wednes|thurs|fri|satur|sun)day"
    r"|january|february|march|april|june|july|august|september|october|november|december|(?:19|20)\d\d)\b", re.I)
_WORD = re.compile(r"[^\W_]+", re.UNICODE)

# question wording -> the tag of the answer it asks for
_WANTS = (
    (re.compile(r"\bwhen\b|\bwhat (?:year|month|day|date|time)\b|\bhow long ago\b|\bwhich (?:year|month|day)\b", re.I), "kdate"),
    (re.compile(r"\bwhere\b|\b(?:which|what) (?:city|country|place|state|town|countries|cities|places)\b", re.I), "kplace"),
    (re.compile(r"\bwho(?:m|se)?\b", re.I), "kperson"),
    (re.compile(r"\bhow many\b", re.I), "knumber"),
    (re.compile(r"\bhow much\b", re.I), "kmoney"),
    (re.compile(r"\b(?:which|what) (?:company|companies|organi[sz]ation|band|team|school|brand)\b", re.I), "korg"),
    (re.compile(r"\b(?:which|what) (?:books?|movies?|films?|songs?|shows?|novels?|albums?|series)\b", re.I), "kwork"),
    (re.compile(r"\b(?:which|what) languages?\b", re.I), "klanguage"),
)


def _nlp():
    from truffle_assets.nlp import english

    return english()


_NER_ONLY = ["tagger", "parser", "attribute_ruler", "lemmatizer"]


def message_keys(texts: Sequence[str], batch_size: int = 256) -> list[str]:
    """One key string per text: entity words and answer tags, space-separated, each once."""
    texts = [t or "" for t in texts]
    if not texts:
        return []
    nlp = _nlp()
    out = []
    for text, doc in zip(texts, nlp.pipe(texts, batch_size=batch_size, disable=_NER_ONLY)):
        keys: list[str] = []
        for ent in doc.ents:
            keys += [w.lower() for w in _WORD.findall(ent.text)]
            if ent.label_ in LABEL_TAG:
                keys.append(LABEL_TAG[ent.label_])
        if _TIME.search(text):
            keys.append("kdate")
        out.append(" ".join(dict.fromkeys(keys)))
    return out


def text_tags(text: str | None) -> set[str]:
    """Answer tags the time-expression rules alone read off a text (no NER): what retrieval can
    know of a line whose `keys` were never computed (`entity_keys` off)."""
    return {"kdate"} if text and _TIME.search(text) else set()


def wanted_tags(question: str) -> list[str]:
    """Answer tags the question's wording asks for ("When ..." -> kdate)."""
    return [tag for pat, tag in _WANTS if pat.search(question)]


def tags_of(keys: str | None) -> set[str]:
    return {k for k in (keys or "").split() if k in TAGS}
