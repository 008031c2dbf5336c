"""Fact values: cut from the text a rule captured, and compared to tell "the same thing" apart.

Two values are compatible when the content words of one contain the other's ("HSR Layout" and
"HSR Layout, Bengaluru"); birthdays compare by month and day.
"""

from __future__ import annotations

import re
import unicodedata
from datetime import date
from functools import lru_cache

from truffle_assets.memory.facts.lexicon import ROLE_NOUNS

_STOP = {"a", "an", "the", "my", "our", "to", "for", "of", "at", "in", "on", "and", "as", "with", "is", "mein",
         "me", "ka", "ki", "ke", "se", "hai", "this", "that", "his", "her", "its"}

_NEGATORS = {"non", "not", "no", "ex", "anti", "un", "former"}
# Words that make a value the opposite state ("doesn't go to gym", "stopped gym", "can't drive"): a value
# with one is never the same as one without.
_POLARITY = {"not", "no", "never", "cannot", "cant", "doesnt", "dont", "didnt", "isnt", "wasnt", "wont", "stopped",
             "quit", "without"}
# A contracted negation is a negation: "doesn't smoke" is "does not smoke", "can't" is "cannot".
_CONTRACTIONS = ((re.compile(r"\bcan't\b"), "cannot"), (re.compile(r"\bwon't\b"), "will not"),
                 (re.compile(r"n't\b"), " not"))
_RANKS = {"senior", "junior", "lead", "staff", "principal", "chief", "head", "associate", "assistant", "sr", "jr",
          "intern", "trainee", "deputy", "vp", "director"}

_BIRTHDAY = r"(\d{4}|-)-\d{2}-\d{2}"  # 1994-05-17, or --05-17 when the year is unknown
_IS_BIRTHDAY = re.compile(_BIRTHDAY)


def ascii_fold(s: str) -> str:
    return unicodedata.normalize("NFKD", s).encode("ascii", "ignore").decode()


@lru_cache(maxsize=1 << 16)  # consolidation compares the same values many times over
def value_tokens(value: str) -> frozenset[str]:
    """Content words of a value, lower-cased and accent-free: what compatibility compares."""
    low = ascii_fold(value.replace("’", "'")).lower()
    for pat, rep in _CONTRACTIONS:
        low = pat.sub(rep, low)
    words = re.findall(r"[a-z0-9]+", low)
    return frozenset(w for w in words if w not in _STOP)


def negative(tokens: frozenset[str]) -> bool:
    """The value's words say the opposite state: not, never, stopped, quit, ..."""
    return bool(tokens & _POLARITY)


def normalize_value(value: str) -> str:
    if _IS_BIRTHDAY.fullmatch(value):  # birthdays: month-day is the identity
        return value[-5:]
    return " ".join(sorted(value_tokens(value)))


@lru_cache(maxsize=1 << 18)
def compatible(a: str, b: str) -> bool:
    """Same thing said more or less precisely: one value's content words contain the other's."""
    if _IS_BIRTHDAY.fullmatch(a) or _IS_BIRTHDAY.fullmatch(b):
        return a[-5:] == b[-5:]
    ta, tb = value_tokens(a), value_tokens(b)
    if (ta ^ tb) & _NEGATORS:  # "vegetarian" vs "non-vegetarian": opposites, not a refinement
        return False
    if negative(ta) != negative(tb):  # "gym" vs "doesn't go to gym" / "stopped gym": opposites too
        return False
    if (ta ^ tb) & _RANKS and ta & tb & ROLE_NOUNS:  # "data engineer" -> "senior data engineer" is a promotion
        return False
    return bool(ta) and bool(tb) and (ta <= tb or tb <= ta)


# Capitalized words that start sentences or name roles, never a person or a place on their own.
NOT_NAMES = {
    "i", "im", "we", "he", "she", "they", "it", "you", "this", "that", "the", "my", "our", "his", "her", "their",
    "main", "mera", "meri", "mere", "hum", "ghar", "office", "home", "work", "mummy", "mumma", "mom", "mum", "dad",
    "papa", "bhai", "bhaiya", "didi", "yaar", "bro", "honestly", "okay", "ok", "so", "and", "but", "also", "just",
    "today", "tomorrow", "yesterday", "tonight", "everyone", "someone", "somebody", "nobody", "here", "there",
    "now", "then", "well", "yes", "no", "haan", "nahi", "arre", "accha", "achha", "hi", "hello", "hey", "guys",
    "god", "sir", "madam", "beta", "kal", "aaj", "abhi", "bas", "sab", "what", "who", "where", "why", "how",
    "really", "super", "very", "too", "not", "new", "old", "first", "last", "next", "one", "all",
    # festivals and holidays: "stopped drinking at Holi", "quit before Diwali" date a change, they are no employer
    "holi", "diwali", "deepavali", "navratri", "dussehra", "eid", "christmas", "xmas", "pongal", "onam", "lohri",
    "rakhi", "raksha", "bandhan", "ganpati", "janmashtami", "karva", "chauth", "bihu", "ugadi", "easter", "ramzan",
    "ramadan", "baisakhi", "vaisakhi", "sankranti", "makar", "durga", "puja", "pooja",
}
_REDACTED = re.compile(r"[<\[{]|█|\*{2,}|_{2,}|#{2,}")


def trailing_name(text: str, max_words: int = 3) -> str | None:
    """Trailing run of Capitalized words ("Hum log Mumbai" -> "Mumbai"): names before a keyword."""
    words: list[str] = []
    for raw in reversed(text.split()):
        if _REDACTED.search(raw):
            return None
        w = raw.strip(",.;:!?\"'()’")
        if not w or not w[0].isupper() or len(words) >= max_words or ascii_fold(w).lower() in NOT_NAMES:
            break
        words.insert(0, w)
    return " ".join(words) or None


def leading_name(text: str, max_words: int = 3) -> str | None:
    """Leading run of Capitalized words ("Ananya Mehta is" -> "Ananya Mehta"); None if it is not a name."""
    words: list[str] = []
    for raw in text.split():
        if _REDACTED.search(raw):
            return None  # a redaction placeholder is no value
        w = raw.strip(",.;:!?\"'()’")
        if not w or not w[0].isupper() or len(words) >= max_words:
            break
        if ascii_fold(w).lower() in NOT_NAMES:
            if words:
                break
            continue  # "Main Pune mein ...", "Honestly Goa ...": skip leading non-names
        words.append(w)
        if raw[-1] in ",.;:!?":
            break
    return " ".join(words) or None


_LEADING_FILLER = re.compile(
    r"^(?:(?:honestly|tbh|frankly|seriously|actually|really|finally|ok|okay|so|and|but|bro|yaar|bhai|"
    r"arre|well|lol|haha|also|just|basically|literally|totally|to|the)\b[\s,]*)+", re.I)
_TRAILING_FILLER = re.compile(
    r"(?:[\s,]+(?:this time|this year|next year|now|finally|honestly|for real|please|yaar|bro|lol|haha|"
    r"for sure|again|too|already|soon|inshallah|hopefully)\b)+$", re.I)
_CUT = re.compile(r"\s+(?:so|but|because|coz|cause|kyunki|par|lekin|though|since|until|till|when|and then)\b.*$"
                  r"|[.,;:!?()\"“”…].*$|\s+[^\w\s'’&/-].*$", re.I)
_PRONOUNS = {"it", "this", "that", "you", "him", "her", "them", "me", "us", "something", "anything", "everything",
             "nothing", "someone", "what", "which"}


def phrase_value(text: str, max_words: int = 8) -> str | None:
    """A free-text value: cut at punctuation/conjunctions, drop discourse fillers, at most `max_words`."""
    v = _CUT.sub("", text.strip())
    v = _TRAILING_FILLER.sub("", _LEADING_FILLER.sub("", v)).strip(" -'’")
    if not v or _REDACTED.search(v) or not value_tokens(v):
        return None
    words = v.split()
    if len(words) > max_words:
        return None
    if ascii_fold(words[0]).lower() in _PRONOUNS:
        return None
    return v


MONTHS = {m: i for i, ms in enumerate((
    ("jan", "january"), ("feb", "february"), ("mar", "march"), ("apr", "april"), ("may",), ("jun", "june"),
    ("jul", "july"), ("aug", "august"), ("sep", "sept", "september"), ("oct", "october"), ("nov", "november"),
    ("dec", "december")), 1) for m in ms}


def birthday_value(m: re.Match, said: date) -> str | None:
    """ISO date when an age fixes the year, else --MM-DD; reads the groups of `rules.DAY_MONTH` (+ age)."""
    day = int(m.group("d") or m.group("d2"))
    month = MONTHS[(m.group("m") or m.group("m2")).lower()]
    try:
        date(2000, month, day)
    except ValueError:
        return None
    age = m.groupdict().get("age")
    if age:
        # "I turn 30 on 17 May": the next 17 May on or after the message is the 30th birthday.
        year = said.year if (month, day) >= (said.month, said.day) else said.year + 1
        try:
            return date(year - int(age), month, day).isoformat()
        except ValueError:
            return None
    return f"--{month:02d}-{day:02d}"
