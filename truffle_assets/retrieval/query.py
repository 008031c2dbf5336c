"""Query-side text handling for BM25: keep the content words of a question.

LanceDB's English tokenizer already drops classic stopwords and stems; what it keeps from a
question ("likely", "recently", "kind") matches chat lines that merely share the phrasing. Those
question-frame words are dropped here. Participant names are handled separately: every passage
is "Author: text", so the speaker's name is in half the chat and scores as noise for BM25 while
still helping the dense model through the author prefix.
"""

from __future__ import annotations

import contextlib
import re
from dataclasses import dataclass

from truffle_assets.index.keys import wanted_tags
from datetime import date, timedelta

_WORD = re.compile(r"[\w']+", re.UNICODE)

QUESTION_FRAME = frozenset("""
what when where which who whom whose why how did does do done doing is are was were be been being
would could should might may can will shall has have had ever recently recent lately likely
kind kinds type types sort thing things something anything one ones some any much many
the a an of to in on at for with about from by as and or not no it its it's this that these those
there their they them he she his her him hers i me my you your we our us
time times date day year years month week ago last first
mention mentioned say said tell told talk talked think thought consider considered
""".split())


def words(text: str) -> list[str]:
    return _WORD.findall(text)


def strip_possessive(word: str) -> str:
    return re.sub(r"'s?$", "", word)


def first_name(participant: str) -> str:
    """How a question names a participant: "Caroline" for "Caroline Smith" ("" for a blank name)."""
    return participant.split()[0] if participant.split() else ""


def names_in(query: str, participants: list[str]) -> list[str]:
    """Participants (by first name, case-insensitive) mentioned in the query."""
    q = {strip_possessive(w).lower() for w in words(query)}
    found = []
    for p in participants:
        first = first_name(p).lower()
        if first and first in q:
            found.append(p)
    return found


def without_names(query: str, named: list[str]) -> str:
    """The query with the participants it names (first name, possessive too) said as "they": what
    the dense side embeds. A name in the embedding pulls toward lines that *address* that person,
    which are the other speaker's; whose lines they are is the speaker signal's job."""
    for p in named:
        first = first_name(p)
        if first:
            query = re.sub(rf"\b{re.escape(first)}(?:'s)?\b", "they", query, flags=re.I)
    return query


def bm25_query(query: str, drop: set[str] | None = None) -> str:
    """Content words only, punctuation-free (FTS query syntax never sees user characters)."""
    drop = {d.lower() for d in (drop or set())}
    kept = []
    for w in words(query):
        base = strip_possessive(w).lower()
        if len(base) < 2 or base in QUESTION_FRAME or base in drop:
            continue
        kept.append(base)
    return " ".join(dict.fromkeys(kept))


_MONTHS = {m: i + 1 for i, m in enumerate(
    "january february march april may june july august september october november december".split())}
_MONTHS.update({m[:3]: i for m, i in list(_MONTHS.items())})
_MON = r"(" + "|".join(sorted(_MONTHS, key=len, reverse=True)) + r")\.?"
_DAY_MONTH_YEAR = re.compile(r"\b(\d{1,2})(?:st|nd|rd|th)?\s+(?:of\s+)?" + _MON + r",?\s+(\d{4})\b", re.I)
_MONTH_DAY_YEAR = re.compile(r"\b" + _MON + r"\s+(\d{1,2})(?:st|nd|rd|th)?,?\s+(\d{4})\b", re.I)
_ISO_DATE = re.compile(r"\b(\d{4})-(\d{2})-(\d{2})\b")
_MONTH_YEAR = re.compile(r"\b" + _MON + r",?\s+(\d{4})\b", re.I)


def dates_in(query: str) -> list[tuple[date, date]]:
    """Absolute calendar dates named in a query, as inclusive (first, last) day ranges.

    "on 3 June, 2023" / "June 3, 2023" / "2023-06-03" -> that day; "in August 2023" -> the month
    (only when no full date is named). Relative phrases ("last week") are left alone: they are
    relative to when the question is asked, which retrieval does not know.
    """
    out: list[tuple[date, date]] = []

    def day(y: str, m: int, d: str) -> None:
        with contextlib.suppress(ValueError):
            x = date(int(y), m, int(d))
            out.append((x, x))

    for m in _DAY_MONTH_YEAR.finditer(query):
        day(m[3], _MONTHS[m[2].lower()], m[1])
    for m in _MONTH_DAY_YEAR.finditer(query):
        day(m[3], _MONTHS[m[1].lower()], m[2])
    for m in _ISO_DATE.finditer(query):
        day(m[1], int(m[2]), m[3])
    if not out:
        for m in _MONTH_YEAR.finditer(query):
            y, mo = int(m[2]), _MONTHS[m[1].lower()]
            with contextlib.suppress(ValueError):
                nxt = date(y + (mo == 12), mo % 12 + 1, 1)
                out.append((date(y, mo, 1), nxt - timedelta(days=1)))
    return out


_FIRST_PERSON = frozenset({"i", "my", "mine", "myself", "i'm", "i've", "i'd", "i'll"})


@dataclass(frozen=True)
class QueryTerms:
    """What retrieval reads off a query besides its embedding."""

    people: list[str]  # participants of the chats searched
    named: list[str]  # those of them the query names
    bm25: str  # full-text query; "" when nothing is left
    dates: list[tuple[date, date]]
    wanted: tuple[str, ...] = ()  # answer tags its wording asks for (index.keys.wanted_tags)
    about_self: bool = False  # asks about the person asking ("my", "I"): the memory owner's own lines

    @property
    def keys(self) -> str:
        """Full-text query on the `keys` column: the content words and the wanted answer tags."""
        return " ".join(([self.bm25] if self.bm25 else []) + list(self.wanted))


def query_terms(query: str, people: list[str]) -> QueryTerms:
    named = names_in(query, people)
    # Speaker names sit in every "Author: ..." passage: noise for BM25, kept for the dense side
    # (unless the query is nothing but names).
    bm25 = bm25_query(query, drop={first_name(n) for n in named}) or bm25_query(query)
    return QueryTerms(people=people, named=named, bm25=bm25, dates=dates_in(query),
                      wanted=tuple(wanted_tags(query)),
                      about_self=not named and any(w.lower() in _FIRST_PERSON for w in words(query)))
