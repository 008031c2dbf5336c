"""Facts about the user from chat text: rule-based claims, consolidated into a bitemporal fact table.

`extract_claims(msgs)` reads the user's own messages (normalized, redacted text — never raw text)
and emits `fact_claims` rows from generic English and romanized-Hindi (Hinglish) patterns:
"I live in X", "X mein rehta hoon", "X shift ho gaya", "my younger sister X", "X is my weakness",
"my goal this year is to X", ... Every claim keeps its message id as evidence. Questions,
hypotheticals ("if I moved to X", "agar ...") and negations ("I don't live in X anymore") are skipped.

`consolidate(claims)` groups claims into `facts` by (subject, predicate, compatible value) — two
values are compatible when the content words of one contain the other's ("HSR Layout" and
"HSR Layout, Bengaluru"). Single-valued predicates (lives_in, job, partner, diet, ...) form a
timeline: a new incompatible value closes the current fact (valid_to = new valid_from,
superseded_by = new id) instead of deleting it, so `facts_as_of(facts, when)` answers the past.
Multi-valued predicates (trip, goal, pet, sibling, favourite, ...) coexist. A completed event
closes a matching goal; "X and I broke up" closes (or records) the partner fact.

No ground truth, names or places are known here: values come from the text itself.
"""

from __future__ import annotations

import hashlib
import re
import unicodedata
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import date, datetime

import polars as pl

CLAIM_COLUMNS = ("id", "chat_id", "day", "subject", "predicate", "value", "category", "fact_text", "confidence",
                 "message_id", "ts", "source")
FACT_COLUMNS = ("id", "subject", "predicate", "value", "category", "fact_text", "confidence", "first_seen_at",
                "last_seen_at", "valid_from", "valid_to", "superseded_by", "evidence_message_ids", "chat_ids")
CLAIM_SCHEMA = {
    "id": pl.String, "chat_id": pl.String, "day": pl.Date, "subject": pl.String, "predicate": pl.String,
    "value": pl.String, "category": pl.String, "fact_text": pl.String, "confidence": pl.Float64,
    "message_id": pl.String, "ts": pl.Datetime("us"), "source": pl.String,
}
FACT_SCHEMA = {
    "id": pl.String, "subject": pl.String, "predicate": pl.String, "value": pl.String, "category": pl.String,
    "fact_text": pl.String, "confidence": pl.Float64, "first_seen_at": pl.Datetime("us"),
    "last_seen_at": pl.Datetime("us"), "valid_from": pl.Date, "valid_to": pl.Date, "superseded_by": pl.String,
    "evidence_message_ids": pl.List(pl.String), "chat_ids": pl.List(pl.String),
}

# One value at a time: a new, different value supersedes the current one.
SINGLE_VALUED = {"name", "lives_in", "hometown", "birthday", "job", "employer", "partner", "diet"}
# Properties that hold for life (no valid_from from the first mention).
TIMELESS = {"name", "hometown", "birthday"}
# Point-in-time events: valid_from = the day it was said, never closed.
EVENTS = {"moved", "trip", "left_job", "started_job", "completed", "engaged", "married", "broke_up"}
# Claim predicates that end a single-valued fact rather than assert one: claim predicate -> fact predicate.
ENDINGS = {"ex_partner": "partner"}

_STOP = {"a", "an", "the", "my", "our", "to", "for", "of", "at", "in", "on", "and", "as", "with", "is", "mein",
         "me", "ka", "ki", "ke", "se", "hai", "this", "that", "his", "her", "its"}

_NEGATORS = {"non", "not", "no", "ex", "anti", "un", "former"}

# ---------------------------------------------------------------------------------------------
# value helpers
# ---------------------------------------------------------------------------------------------


def _ascii(s: str) -> str:
    return unicodedata.normalize("NFKD", s).encode("ascii", "ignore").decode()


def value_tokens(value: str) -> frozenset[str]:
    """Content words of a value, lower-cased and accent-free: what compatibility compares."""
    words = re.findall(r"[a-z0-9]+", _ascii(value).lower())
    return frozenset(w for w in words if w not in _STOP)


def normalize_value(value: str) -> str:
    if re.fullmatch(r"(\d{4}|-)-\d{2}-\d{2}", value):  # birthdays: month-day is the identity
        return value[-5:]
    return " ".join(sorted(value_tokens(value)))


def compatible(a: str, b: str) -> bool:
    """Same thing said more or less precisely: one value's content words contain the other's."""
    if re.fullmatch(r"(\d{4}|-)-\d{2}-\d{2}", a) or re.fullmatch(r"(\d{4}|-)-\d{2}-\d{2}", b):
        return a[-5:] == b[-5:]
    ta, tb = value_tokens(a), value_tokens(b)
    if (ta ^ tb) & _NEGATORS:  # "vegetarian" vs "non-vegetarian": opposites, not a refinement
        return False
    return bool(ta) and bool(tb) and (ta <= tb or tb <= ta)


def _hash(*parts: object) -> str:
    return hashlib.blake2b("\x1f".join(str(p) for p in parts).encode(), digest_size=10).hexdigest()


# Capitalized words that start sentences or name roles, never a person or a place on their own.
_NOT_NAMES = {
    "i", "im", "we", "he", "she", "they", "it", "you", "this", "that", "the", "my", "our", "his", "her", "their",
    "main", "mera", "meri", "mere", "hum", "ghar", "office", "home", "work", "mummy", "mumma", "mom", "mum", "dad",
    "papa", "bhai", "bhaiya", "didi", "yaar", "bro", "honestly", "okay", "ok", "so", "and", "but", "also", "just",
    "today", "tomorrow", "yesterday", "tonight", "everyone", "someone", "somebody", "nobody", "here", "there",
    "now", "then", "well", "yes", "no", "haan", "nahi", "arre", "accha", "achha", "hi", "hello", "hey", "guys",
    "god", "sir", "madam", "beta", "kal", "aaj", "abhi", "bas", "sab", "what", "who", "where", "why", "how",
    "really", "super", "very", "so", "too", "not", "new", "old", "first", "last", "next", "one", "all",
}
_REDACTED = re.compile(r"[<\[{]|█|\*{2,}|_{2,}|#{2,}")


def _trail_caps(text: str, max_words: int = 3) -> str | None:
    """Trailing run of Capitalized words ("Hum log Mumbai" -> "Mumbai"): names before a keyword."""
    words: list[str] = []
    for raw in reversed(text.split()):
        if _REDACTED.search(raw):
            return None
        w = raw.strip(",.;:!?\"'()’")
        if not w or not w[0].isupper() or len(words) >= max_words or _ascii(w).lower() in _NOT_NAMES:
            break
        words.insert(0, w)
    return " ".join(words) or None


def _lead_caps(text: str, max_words: int = 3) -> str | None:
    """Leading run of Capitalized words ("Ananya Mehta is" -> "Ananya Mehta"); None if it is not a name."""
    words: list[str] = []
    for raw in text.split():
        if _REDACTED.search(raw):
            return None  # a redaction placeholder is no value
        w = raw.strip(",.;:!?\"'()’")
        if not w or not w[0].isupper() or len(words) >= max_words:
            break
        if _ascii(w).lower() in _NOT_NAMES:
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


def _phrase(text: str, max_words: int = 8) -> str | None:
    """A free-text value: cut at punctuation/conjunctions, drop discourse fillers, at most `max_words`."""
    v = _CUT.sub("", text.strip())
    v = _TRAILING_FILLER.sub("", _LEADING_FILLER.sub("", v)).strip(" -'’")
    if not v or _REDACTED.search(v) or not value_tokens(v):
        return None
    words = v.split()
    if len(words) > max_words:
        return None
    if _ascii(words[0]).lower() in {"it", "this", "that", "you", "him", "her", "them", "me", "us", "something",
                                   "anything", "everything", "nothing", "someone", "what", "which"}:
        return None
    return v


_MONTHS = {m: i for i, ms in enumerate((
    ("jan", "january"), ("feb", "february"), ("mar", "march"), ("apr", "april"), ("may",), ("jun", "june"),
    ("jul", "july"), ("aug", "august"), ("sep", "sept", "september"), ("oct", "october"), ("nov", "november"),
    ("dec", "december")), 1) for m in ms}
_MONTH_RE = r"(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|sept?(?:ember)?|" \
            r"oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)"
_DAY_MONTH = rf"(?i:(?P<d>\d{{1,2}})(?:st|nd|rd|th)?\s+(?:of\s+)?(?P<m>{_MONTH_RE})\b|(?P<m2>{_MONTH_RE})\s+(?P<d2>\d{{1,2}})(?:st|nd|rd|th)?\b)"


def _birthday(m: re.Match, said: date) -> str | None:
    day = int(m.group("d") or m.group("d2"))
    month = _MONTHS[(m.group("m") or m.group("m2")).lower()]
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


# ---------------------------------------------------------------------------------------------
# rules
# ---------------------------------------------------------------------------------------------

NAME = r"\b(?P<v>[^\W\d_][\w'’.\-]*(?:\s+[^\W\d_][\w'’\-]*){0,2})"  # trimmed to its Capitalized prefix
PHRASE = r"(?P<v>[^\n]{1,80})"
ROLE_NOUN = (r"(?:engineer|developer|designer|analyst|manager|scientist|consultant|architect|intern|teacher|"
             r"professor|lecturer|doctor|nurse|lawyer|accountant|researcher|founder|product manager|writer|"
             r"journalist|chef|pharmacist|dentist|banker|marketer|recruiter|administrator|admin|specialist|"
             r"technician|officer|associate|executive|lead|director|programmer|tester|editor|photographer)s?")
ROLE = rf"(?P<role>(?i:(?:(?:senior|junior|lead|staff|principal|chief|head|associate|assistant|sr\.?|jr\.?)\s+)?" \
       rf"(?:[a-z]+\s+){{0,2}}?{ROLE_NOUN}))"
ORG = r"(?P<org>[A-Z][\w&.\-]*(?:\s+[A-Z][\w&.\-]*){0,2})"
REL_ADJ = r"(?:(?P<adj>younger|elder|older|little|big|baby|twin|chhoti|chhota|badi|bada|choti|chota)\s+)?"
_SIB = {"sister": "sister", "sis": "sister", "behen": "sister", "bahen": "sister", "didi": "sister",
        "brother": "brother", "bhai": "brother", "bhaiya": "brother"}
_PARTNER = r"(?:girlfriend|boyfriend|partner|wife|husband|fianc[eé]e?|gf|bf)"


@dataclass(frozen=True)
class Rule:
    name: str
    pattern: re.Pattern
    predicate: str
    category: str
    confidence: float
    value: str = "name"  # name | phrase | place | role | birthday | const
    template: str = "{s} {p}: {v}."
    scope: str = "sentence"  # sentence | message
    allow_negation: bool = False
    const: str | None = None
    extra: Callable[[re.Match], str | None] | None = None  # qualifier for fact_text


def _r(name: str, pattern: str, predicate: str, category: str, confidence: float, **kw) -> Rule:
    return Rule(name, re.compile(pattern.replace("'?", "['’]?")), predicate, category, confidence, **kw)


I = r"(?i:\bi\s*(?:'|’)?\s*m|\bi\s+am)"  # I'm / I am
ME = r"(?i:\bmain|\bmai|\bmein)"  # Hinglish first person (main/mai; mein is also "in", only used before verbs)

RULES: list[Rule] = [
    # ---- identity ----------------------------------------------------------------------------
    _r("name_is", rf"(?i:\bmy name is|\bmera naam)\s+{NAME}", "name", "identity", 0.9,
       template="{s}'s name is {v}."),
    _r("intro", rf"^(?i:(?:hi|hello|hey|hola|namaste)\b[^.!?]{{0,30}}?[,!.]?\s*(?:i\s*'?m|i am|this is|myself))\s+{NAME}",
       "name", "identity", 0.75, template="{s}'s name is {v}.", scope="message"),
    _r("live_in", rf"(?i:\bi\s+(?:currently\s+|now\s+|still\s+)?live\s+in|\bi'?m\s+(?:now\s+)?(?:living|based|settled)\s+in|"
       rf"\bi\s+am\s+(?:now\s+)?(?:living|based|settled)\s+in|\bwe\s+(?:now\s+)?live\s+in)\s+{NAME}",
       "lives_in", "identity", 0.9, value="place", template="{s} lives in {v}."),
    _r("rehta", rf"{NAME}\s+(?i:(?:mein|me|main)\s+(?:hi\s+)?(?:rehta|rehti|rehte|reh\s+raha|reh\s+rahi)\s+(?:hoon|hu|hun|hain))",
       "lives_in", "identity", 0.85, value="place", template="{s} lives in {v}."),
    _r("moved_past", rf"(?i:\bi\s+(?:just\s+|finally\s+)?(?:moved|shifted|relocated)\s+to|\bwe\s+(?:just\s+|finally\s+)?(?:moved|shifted|relocated)\s+to)\s+{NAME}",
       "lives_in", "identity", 0.8, value="place", template="{s} lives in {v}."),
    _r("shift_ho_gaya", rf"{NAME}\s+(?i:shift\s+(?:ho\s+gay[aie]|ho\s+gaye|kar\s+(?:liya|gaya|gaye)|hua)\b)",
       "lives_in", "identity", 0.8, value="place", template="{s} lives in {v}."),
    # "<City> pahunch gaya! Flat mil gaya <Area> mein": arrived and found a home.
    _r("found_home", rf"^{NAME}\s+(?i:pahunch\s+gay[aie]|pahuch\s+gay[aie]|reached)\b.*?(?i:\b(?:flat|ghar|room|apartment|house|pg)\b[^.!?\n]*?\bmil\s+gay[aie])"
       rf"(?:\s+(?P<area>[A-Z][\w\-]*(?:\s+[A-Z][\w\-]*){{0,2}})\s+(?i:mein|me)\b)?",
       "lives_in", "identity", 0.8, value="place", template="{s} lives in {v}.", scope="message"),
    _r("living_here", rf"^{NAME}(?:'s)?\s+(?i:rains?|weather|winters?|summers?|traffic|food|people|monsoons?|mornings|evenings|vibes?|streets)\b"
       rf"[^.!?\n]*(?i:\bliving\s+here\b|\blive\s+here\b|\byahan\s+rehna\b)", "lives_in", "identity", 0.6, value="place",
       template="{s} lives in {v}."),
    _r("grew_up", rf"(?i:\bi\s+grew\s+up\s+in|\bi\s+was\s+(?:born\s+and\s+)?(?:raised|born)\s+in|\bi'?m\s+(?:originally\s+)?from|\bi\s+am\s+(?:originally\s+)?from|"
       rf"\bmy\s+home\s*town\s+is|\bmera\s+home\s*town)\s+{NAME}", "hometown", "identity", 0.85,
       value="place", template="{s}'s hometown is {v}."),
    _r("is_home", rf"^{NAME}\s+(?i:is|will\s+always\s+be)\s+(?i:(?:my\s+)?home)\b(?!\s+(?i:now|today|tonight|yet|early|late|alone|by|at|soon))",
       "hometown", "identity", 0.7, value="place", template="{s}'s hometown is {v}."),
    _r("se_hoon", rf"(?i:\bmain)\s+{NAME}\s+(?i:se\s+(?:hoon|hu|hun))\b", "hometown", "identity", 0.8, value="place",
       template="{s}'s hometown is {v}."),
    _r("birthday_turn", rf"(?i:\bi\s+(?:turn|will\s+turn|'ll\s+turn)\s+(?P<age>\d{{2}})\s+on)\s+{_DAY_MONTH}", "birthday",
       "identity", 0.9, value="birthday", template="{s}'s birthday is {v}."),
    _r("birthday_nth", rf"(?i:\b(?:my|mera)\s+(?P<age>\d{{2}})(?:st|nd|rd|th)\s+birthday\s+(?:is\s+on|is|hai|on)?)\s*{_DAY_MONTH}",
       "birthday", "identity", 0.85, value="birthday", template="{s}'s birthday is {v}."),
    _r("birthday_is", rf"(?i:\b(?:my|mera)\s+(?:b'?day|birthday)\s+(?:is\s+on|is|hai|on)?)\s*{_DAY_MONTH}", "birthday",
       "identity", 0.85, value="birthday", template="{s}'s birthday is {v}."),
    _r("job_hoon", rf"{ORG}\s+(?i:mein|me|main)\s+{ROLE}(?:\s+(?i:hoon|hu|hun|ki\s+job|ka\s+offer))?\b", "job", "identity", 0.8,
       value="role", template="{s} works as {v}."),
    _r("job_en", rf"(?i:\bi\s+work\s+as|\bi'?m\s+(?:working\s+as\s+)?(?:a|an)|\bi\s+am\s+(?:working\s+as\s+)?(?:a|an))\s+{ROLE}(?:\s+(?i:at|in|with|for)\s+{ORG})?",
       "job", "identity", 0.85, value="role", template="{s} works as {v}."),
    _r("work_at", rf"(?i:\bi\s+(?:currently\s+)?work\s+(?:at|for|in)|\bi'?m\s+working\s+(?:at|for)|\bi\s+am\s+working\s+(?:at|for))\s+{ORG}",
       "job", "identity", 0.8, value="org", template="{s} works at {v}."),
    _r("joining_as", rf"(?i:\b(?:joining|joined|join\s+kar\s+raha\s+hoon)\s+(?:the\s+)?(?:[\w\-]+\s+){{0,3}}?(?:team\s+)?as\s+(?:a|an))\s+{ROLE}",
       "job", "identity", 0.75, value="role", template="{s} works as {v}."),
    # ---- preference --------------------------------------------------------------------------
    _r("fav_typed", rf"(?i:\b(?:my|mera|meri)\s+(?:all[- ]time\s+)?(?:favou?rite|fav)\s+)(?P<type>(?i:food|dish|sport|game|band|singer|artist|musician|movie|film|show|book|author|team|song|colou?r|drink|place|city|cuisine|snack|dessert))"
       rf"(?i:\s+is|\s+has\s+to\s+be|\s+hai)?\s+{PHRASE}", "favourite", "preference", 0.9, value="phrase",
       template="{s}'s favourite {t} is {v}."),
    _r("is_my_fav_typed", rf"^{PHRASE}?(?i:\s+is\s+(?:definitely\s+|easily\s+|still\s+)?my\s+(?:all[- ]time\s+)?(?:favou?rite|fav)\s+)(?P<type>(?i:food|dish|sport|game|band|singer|artist|musician|movie|film|show|book|author|team|song|colou?r|drink|place|city|cuisine|snack|dessert))\b",
       "favourite", "preference", 0.9, value="phrase", template="{s}'s favourite {t} is {v}."),
    _r("is_my_fav", rf"^{PHRASE}?(?i:\s+(?:is|are)\s+(?:definitely\s+|easily\s+|still\s+)?my\s+(?:all[- ]time\s+|absolute\s+|total\s+)?(?:favou?rite|fav)(?:\s+thing)?)\s*(?:[,.!]|$|(?i:nothing|ever|forever|always|hands down))",
       "favourite", "preference", 0.85, value="phrase", template="{s}'s favourite is {v}."),
    _r("weakness", rf"^{PHRASE}?(?i:\s+(?:is|are)\s+(?:honestly\s+|totally\s+|definitely\s+)?my\s+(?:biggest\s+|big\s+)?(?:weakness|guilty\s+pleasure|jam|comfort\s+food))\b",
       "favourite", "preference", 0.8, value="phrase", template="{s} loves {v}."),
    _r("more_my_thing", rf"^{PHRASE}?(?i:\s+(?:is|are)\s+(?:more|really|totally)\s+my\s+thing)\b", "favourite", "preference", 0.7,
       value="phrase", template="{s} loves {v}."),
    _r("kuch_bhi", rf"^{PHRASE}?(?i:\s+ke\s+liye\s+(?:toh\s+|to\s+)?(?:main|mai)\s+kuch\s+bhi\s+kar\s+(?:sakta|sakti)\s+(?:hoon|hu|hun))",
       "favourite", "preference", 0.75, value="phrase", template="{s} loves {v}."),
    _r("fav_hinglish", rf"^{PHRASE}?(?i:\s+(?:mera|meri)\s+(?:all[- ]time\s+)?(?:favou?rite|fav)\s+(?:\w+\s+)?(?:hai|he))\b",
       "favourite", "preference", 0.8, value="phrase", template="{s}'s favourite is {v}."),
    _r("veg", r"(?i:\b(?:being|i'?m|i\s+am|am|turned|went|became|now|main|ab)\s+(?:a\s+)?(?:fully\s+|pure\s+|strictly\s+|completely\s+|totally\s+|full\s+)?)(?<!non-)(?<!non )vegetarian\b",
       "diet", "preference", 0.8, value="const", const="vegetarian", template="{s} is vegetarian."),
    _r("veg_hinglish", r"(?i:\b(?:main|mai)\s+(?:ab\s+)?(?:pure\s+|pura\s+)?(?:veg|vegetarian)\s+(?:ho\s+gaya|hoon|hu|ban\s+gaya))\b",
       "diet", "preference", 0.8, value="const", const="vegetarian", template="{s} is vegetarian."),
    _r("no_meat", r"(?i:\bi\s+(?:don'?t|do\s+not|no\s+longer|stopped|quit)\s+eat(?:ing)?\s+(?:meat|non[- ]?veg|chicken|fish))\b",
       "diet", "preference", 0.75, value="const", const="vegetarian", template="{s} is vegetarian.", allow_negation=True),
    _r("vegan", r"(?i:\b(?:being|i'?m|i\s+am|turned|went|became)\s+(?:a\s+)?(?:fully\s+|strictly\s+)?vegan)\b",
       "diet", "preference", 0.8, value="const", const="vegan", template="{s} is vegan."),
    _r("nonveg", r"(?i:\b(?:i'?m|i\s+am|main)\s+(?:a\s+)?(?:proper\s+|hardcore\s+|total\s+)?non[- ]?veg(?:etarian)?\b|\bnon[- ]?veg(?:etarian)?\b[^.!?\n]{0,25}\b(?:is\s+sacred|zindabad|for\s+life|forever)\b|\bi\s+(?:love|eat)\s+(?:meat|non[- ]?veg))",
       "diet", "preference", 0.65, value="const", const="non-vegetarian", template="{s} eats meat (non-vegetarian)."),
    # ---- relationships -----------------------------------------------------------------------
    _r("my_sibling", rf"(?i:\b(?:my|meri|mera)\s+){REL_ADJ}(?P<rel>(?i:sister|brother|behen|bahen|didi|bhaiya))\b,?\s+{NAME}",
       "sibling", "relationship", 0.9, template="{v} is {s}'s {a}{r}."),
    _r("is_my_sibling", rf"^{NAME}\s+(?i:is|has\s+been)\s+(?i:my)\s+{REL_ADJ}(?P<rel>(?i:sister|brother))\b", "sibling",
       "relationship", 0.9, template="{v} is {s}'s {a}{r}."),
    _r("sibling_hai", rf"^{NAME}\s+(?i:meri|mera)\s+{REL_ADJ}(?P<rel>(?i:behen|bahen|sister|bhai|brother))\s+(?i:hai|he)\b", "sibling",
       "relationship", 0.85, template="{v} is {s}'s {a}{r}."),
    _r("best_friend_is", rf"^{NAME}\s+(?i:is|has\s+been|'s)\s+(?i:my|mera|meri)\s+(?i:best\s+(?:friend|buddy|pal)|bff)\b", "best_friend",
       "relationship", 0.9, template="{v} is {s}'s best friend."),
    _r("my_best_friend", rf"(?i:\b(?:my|mera|meri)\s+(?:best\s+(?:friend|buddy|pal)|bff)),?\s+{NAME}", "best_friend", "relationship", 0.85,
       template="{v} is {s}'s best friend."),
    _r("best_friend_hai", rf"^{NAME}\s+(?i:mera|meri)\s+(?i:best\s+friend|bff)\s+(?i:hai|he)\b", "best_friend", "relationship", 0.85,
       template="{v} is {s}'s best friend."),
    _r("my_friend", rf"(?i:\b(?:my|mera|meri)\s+(?:close\s+|old\s+|good\s+)?friend),?\s+{NAME}", "friend", "relationship", 0.7,
       template="{v} is {s}'s friend."),
    _r("my_partner", rf"(?i:\b(?:my|meri|mera)\s+{_PARTNER}),?\s+{NAME}", "partner", "relationship", 0.85,
       template="{v} is {s}'s partner."),
    _r("is_my_partner", rf"^{NAME}\s+(?i:is|has\s+been)\s+(?i:my|meri|mera)\s+(?i:{_PARTNER})\b", "partner", "relationship", 0.85,
       template="{v} is {s}'s partner."),
    _r("dating_named", rf"(?i:\bi'?m\s+(?:now\s+)?(?:dating|seeing)|\bi\s+am\s+(?:now\s+)?(?:dating|seeing)|\bi'?m\s+in\s+a\s+relationship\s+with)\s+{NAME}",
       "partner", "relationship", 0.85, template="{v} is {s}'s partner."),
    _r("dating_someone", rf"(?i:\bi'?m\s+(?:now\s+)?(?:dating|seeing)\s+(?:someone|somebody)|\bi\s+am\s+(?:now\s+)?(?:dating|seeing)\s+(?:someone|somebody)|\bi'?m\s+in\s+a\s+relationship)"
       rf"[^\n]*?(?i:\b(?:her|his|their)\s+name\s+is)\s+{NAME}", "partner", "relationship", 0.85,
       template="{v} is {s}'s partner.", scope="message"),
    _r("dating_and_i", rf"^{NAME}\s+(?i:and\s+i\s+(?:are|have\s+been)\s+(?:dating|together|seeing\s+each\s+other))\b", "partner",
       "relationship", 0.85, template="{v} is {s}'s partner."),
    _r("broke_up", rf"^{NAME}\s+(?i:and\s+i\s+(?:broke\s+up|split\s+up|separated|are\s+over))\b",
       "ex_partner", "relationship", 0.85, template="{s} and {v} broke up."),
    _r("broke_up_with", rf"(?i:\bi\s+(?:just\s+)?broke\s+up\s+with)\s+{NAME}",
       "ex_partner", "relationship", 0.85, template="{s} and {v} broke up."),
    _r("pet_adopted", rf"(?i:\b(?:we|i)\s+(?:just\s+|finally\s+)?(?:adopted|got|brought\s+home|rescued)\s+(?:a|an|our|my)\s+)(?P<kind>[\w\s\-]{{0,25}}?)(?P<animal>(?i:puppy|pup|dog|kitten|cat|doggo))\b"
       rf"[^\n]*?(?i:\b(?:his|her|its|their)\s+name\s+is|\bnamed|\bcalled)\s+{NAME}", "pet", "relationship", 0.85,
       template="{s} has a {k} named {v}.", scope="message"),
    _r("my_pet", rf"(?i:\b(?:my|our|mera|meri)\s+(?P<animal>dog|puppy|cat|kitten|pet|doggo))\s+{NAME}", "pet", "relationship", 0.8,
       template="{s} has a {k} named {v}."),
    # ---- events ------------------------------------------------------------------------------
    _r("moving_to", rf"(?i:\b(?:i'?m|i\s+am|we'?re|we\s+are)?\s*(?:moving|shifting|relocating)\s+to)\s+{NAME}", "moved", "event", 0.8,
       value="place", template="{s} moved to {v}."),
    _r("moved_to_ev", rf"(?i:\bi\s+(?:just\s+|finally\s+)?(?:moved|shifted|relocated)\s+to|\bwe\s+(?:just\s+|finally\s+)?(?:moved|shifted|relocated)\s+to)\s+{NAME}",
       "moved", "event", 0.8, value="place", template="{s} moved to {v}."),
    _r("shift_ev", rf"{NAME}\s+(?i:shift\s+(?:ho\s+gay[aie]|ho\s+gaye|kar\s+(?:liya|gaya|gaye)|hua|ho\s+raha\s+hoon|kar\s+raha\s+hoon)\b)",
       "moved", "event", 0.8, value="place", template="{s} moved to {v}."),
    _r("trip", rf"^{NAME}\s+(?i:trip|vacation|holiday)\b(?!\s+(?i:cancel|cancelled|canceled|off|nahi|postponed))(?=\s*(?i:final|booked|confirmed|planned|done|is\s+on|pakka|ho\s+gaya|:|!))",
       "trip", "event", 0.75, value="place", template="{s} took a trip to {v}."),
    _r("trip_to", rf"(?i:\b(?:my|our)\s+(?:trip|vacation|holiday)\s+to|\bi'?m\s+(?:going|flying|travell?ing)\s+to|\bi\s+am\s+(?:going|flying|travell?ing)\s+to|\bjust\s+landed\s+in|\blanded\s+in|\bi\s+(?:just\s+)?landed\s+in)\s+{NAME}",
       "trip", "event", 0.75, value="place", template="{s} took a trip to {v}."),
    _r("years_last_day", rf"(?i:\byears?\s+at|\bmonths?\s+at|\btime\s+at)\s+{ORG}[^\n]*?(?i:\blast\s+day\b)",
       "left_job", "event", 0.8, value="org", template="{s} left {v}.", scope="message"),
    _r("last_day_at", rf"(?i:\blast\s+day\s+at)\s+{ORG}", "left_job", "event", 0.8, value="org", template="{s} left {v}."),
    _r("first_day", rf"(?i:\bfirst\s+day\s+at)\s+{ORG}", "started_job", "event", 0.8, value="org", template="{s} started at {v}."),
    _r("joined_org", rf"(?i:\bi\s+(?:just\s+|finally\s+)?joined|\bi'?ve\s+joined|\bi\s+have\s+joined)\s+{ORG}\b(?!\s+(?i:group|chat|call|meeting))",
       "started_job", "event", 0.7, value="org", template="{s} started at {v}."),
    _r("completed", r"(?i:\b(?:finished|completed|ran|did|cleared|passed)\s+my\s+)(?P<v>(?i:first\s+)[^\n.!?,]{2,40}?|[^\n.!?,]{0,30}?(?i:marathon|half\s+marathon|10k|5k|race|trek|triathlon|course|degree|thesis|certification|exam|ultra))(?=\s*(?i:today|yesterday|this\s+morning|[.!?,]|$))",
       "completed", "event", 0.85, value="phrase", template="{s} completed {v}."),
    _r("engaged_and_i", rf"^{NAME}\s+(?i:and\s+i\s+(?:are|got)\s+engaged)\b", "engaged", "event", 0.9,
       template="{s} got engaged to {v}."),
    _r("engaged_to", rf"(?i:\bi'?m\s+engaged\s+to|\bi\s+am\s+engaged\s+to|\bi\s+got\s+engaged\s+to|\bgot\s+engaged\s+to)\s+{NAME}", "engaged",
       "event", 0.9, template="{s} got engaged to {v}."),
    _r("we_engaged", r"(?i:\bwe\s*(?:'re|are|got|just\s+got)\s+engaged|\bi\s+(?:just\s+)?got\s+engaged|\b(?:meri|humari)\s+(?:engagement|sagai)\s+ho\s+gayi)\b(?!\s+to)",
       "engaged", "event", 0.85, value="const", const="engaged", template="{s} got engaged."),
    # ---- goals -------------------------------------------------------------------------------
    _r("goal_is", rf"(?i:(?:\bmy\s+(?:new\s+year(?:'s)?\s+)?(?:goal|resolution|aim|dream)|\bnew\s+year(?:'s)?\s+(?:goal|resolution)|^(?:goal|resolution))(?:\s+(?:this|for\s+this|for\s+the\s+next|for\s+next|for)\s+[\w\s]{{0,20}}?(?:year|years|month|months))?(?:\s+is\s+to|\s+is|\s*:|\s+hai)\s+)(?:to\s+)?{PHRASE}",
       "goal", "goal", 0.85, value="phrase", template="{s}'s goal: {v}."),
    _r("want_learn", rf"(?i:\bi\s+(?:really\s+)?(?:want|wanna|plan|hope)\s+to\s+)(?P<v>(?i:learn|become|master|study)\s+[^\n]{{1,60}})", "goal", "goal", 0.75,
       value="phrase", template="{s}'s goal: {v}."),
    _r("seekhna", r"(?i:\b(?:mujhe|main)\s+)(?P<v>[^\n]{1,40}?)(?i:\s+seekhn[ai]\s+(?:hai|chahta|chahti))", "goal", "goal", 0.75,
       value="phrase", template="{s}'s goal: learn {v}."),
    _r("saving_for", rf"(?i:\b(?:i'?m|i\s+am|we'?re|we\s+are)\s+saving\s+(?:up\s+)?for\s+)(?:a\s+|an\s+|my\s+|our\s+)?{PHRASE}", "goal", "goal", 0.8,
       value="phrase", template="{s}'s goal: save for {v}."),
    _r("training_for", rf"^(?i:(?:i'?m\s+|i\s+am\s+)?training\s+for\s+)(?:a\s+|an\s+|my\s+|the\s+)?{PHRASE}", "goal", "goal", 0.7, value="phrase",
       template="{s}'s goal: {v}."),
]

# Cheap keyword gates (searched on the lower-cased message) so most messages skip most rules.
_TRIGGERS = {
    "name_is": r"name|naam", "intro": r"i'?m|i am|this is|myself", "live_in": r"live|living|based|settled",
    "rehta": r"reh", "moved_past": r"moved|shifted|relocated", "shift_ho_gaya": r"shift", "found_home": r"mil gay",
    "living_here": r"here|yahan", "grew_up": r"grew|born|raised|from|home ?town", "is_home": r"home",
    "se_hoon": r" se h", "birthday_turn": r"turn", "birthday_nth": r"birthday", "birthday_is": r"birthday|b'?day",
    "job_hoon": ROLE_NOUN, "job_en": ROLE_NOUN, "work_at": r"work", "joining_as": r" as ",
    "fav_typed": r"fav", "is_my_fav_typed": r"fav", "is_my_fav": r"fav", "fav_hinglish": r"fav",
    "weakness": r"weakness|guilty|jam|comfort", "more_my_thing": r"my thing", "kuch_bhi": r"kuch bhi",
    "veg": r"vegetarian", "veg_hinglish": r"veg", "no_meat": r"eat", "vegan": r"vegan", "nonveg": r"non.?veg|meat",
    "my_sibling": r"sister|brother|behen|bahen|didi|bhaiya", "is_my_sibling": r"sister|brother",
    "sibling_hai": r"sister|brother|behen|bahen|bhai", "best_friend_is": r"best|bff", "my_best_friend": r"best|bff",
    "best_friend_hai": r"best|bff", "my_friend": r"friend", "my_partner": r"girl|boy|partner|wife|husband|fianc|gf|bf",
    "is_my_partner": r"girl|boy|partner|wife|husband|fianc|gf|bf", "dating_named": r"dating|seeing|relationship",
    "dating_someone": r"dating|seeing|relationship", "dating_and_i": r"dating|together|seeing",
    "broke_up": r"broke|split|separated|over", "broke_up_with": r"broke", "pet_adopted": r"dog|pup|cat|kitten",
    "my_pet": r"dog|pup|cat|kitten|pet", "moving_to": r"moving|shifting|relocating", "moved_to_ev": r"moved|shifted|relocated",
    "shift_ev": r"shift", "trip": r"trip|vacation|holiday", "trip_to": r"trip|vacation|holiday|going|flying|travel|landed",
    "years_last_day": r"last day", "last_day_at": r"last day", "first_day": r"first day", "joined_org": r"joined",
    "completed": r"finished|completed|ran|did|cleared|passed", "engaged_and_i": r"engaged", "engaged_to": r"engaged",
    "we_engaged": r"engage|sagai", "goal_is": r"goal|resolution|aim|dream", "want_learn": r"learn|become|master|study",
    "seekhna": r"seekh", "saving_for": r"saving", "training_for": r"training",
}
_GATES = {name: re.compile(pat.replace("'?", "['’]?"), re.I) for name, pat in _TRIGGERS.items()}
assert set(_GATES) == {r.name for r in RULES}, set(_GATES) ^ {r.name for r in RULES}

_QUESTION_START = re.compile(r"^(?i:kya|kyun|kab|kahan|kaise|should|would|could|do|does|did|are|is|will|can|shall|have)\b")
_HYPOTHETICAL = re.compile(r"(?i:\b(?:if|agar|unless|suppose|supposing|imagine|wish|would|might|maybe|perhaps|"
                           r"could|should|hypothetically|jab\s+bhi|what\s+if|in\s+case|thinking\s+of|thinking\s+about|"
                           r"considering|planning\s+to\s+move|dream(?:ing)?\s+of)\b)")
_NEGATION = re.compile(r"(?i:\b(?:not|never|no|don'?t|doesn'?t|didn'?t|isn'?t|wasn'?t|aren'?t|haven'?t|hasn'?t|won'?t|can'?t|"
                       r"cannot|no\s+longer|nahi|nahin|nai|mat|na)\b|n['’]t\b|\banymore\b|\bany\s+more\b|\bab\s+nahi\b|\bformer(?:ly)?\b|"
                       r"\bused\s+to\b|\bex[- ])")
_SENT = re.compile(r"[^.!?\n]+(?:[.!?]+|\n|$)")


def _sentences(text: str) -> list[str]:
    return [s.strip() for s in _SENT.findall(text) if s.strip()]


def _build_value(rule: Rule, m: re.Match, said: date) -> tuple[str, str] | None:
    """(value, qualifier for the fact text) or None when the captured text is not a usable value."""
    gd = m.groupdict()
    if rule.value == "const":
        return rule.const, ""
    if rule.value == "birthday":
        v = _birthday(m, said)
        return (v, "") if v else None
    if rule.value == "role":
        role = re.sub(r"\s+", " ", gd["role"]).strip().lower()
        if len(role.split()) > 4:
            return None
        org = _lead_caps(gd["org"]) if gd.get("org") else None
        if gd.get("org") and not org:
            return None
        return (f"{role} at {org}" if org else role), ""
    if rule.value == "org":
        org = _lead_caps(gd.get("org") or "")
        return (org, "") if org else None
    raw = gd.get("v") or ""
    if rule.value in ("name", "place"):
        if rule.name == "found_home":
            city = _lead_caps(raw)
            area = _lead_caps(gd.get("area") or "") if gd.get("area") else None
            if not city:
                return None
            return (f"{area}, {city}" if area and area != city else city), ""
        before = m.start("v") == m.start() and m.end("v") < m.end()  # "<Name> is my brother", "<City> mein rehta"
        v = _trail_caps(raw) if before else _lead_caps(raw)
        if not v:
            return None
        if rule.value == "place" and not before:
            # "HSR Layout, Bengaluru": an area and its city
            rest = m.string[m.start("v") + len(v):]
            more = re.match(r",\s*([A-Z][\w\-]+(?:\s+[A-Z][\w\-]+)?)(?=\s*(?:now|[.!,]|$|\s+(?:now|these|since|for|and)\b))", rest)
            if more and _ascii(more.group(1).split()[0]).lower() not in _NOT_NAMES:
                v = f"{v}, {more.group(1)}"
        qual = ""
        if gd.get("rel"):
            rel = _SIB[gd["rel"].lower()]
            adj = (gd.get("adj") or "").lower()
            adj = {"chhoti": "younger", "chhota": "younger", "choti": "younger", "chota": "younger",
                   "badi": "elder", "bada": "elder", "older": "elder", "little": "younger", "big": "elder",
                   "baby": "younger"}.get(adj, adj)
            qual = (adj + " " if adj else "") + rel
        elif gd.get("animal"):
            qual = " ".join(x for x in ((gd.get("kind") or "").strip(), gd["animal"].lower()) if x)
        return v, qual
    v = _phrase(raw)
    if v is None:
        return None
    if rule.predicate == "favourite" and re.search(r"(?i)\b(you|u|him|her|them|it|this|that|ye|woh|yeh)\b", v):
        return None
    if rule.name == "seekhna":
        v = "learn " + v
    elif rule.name == "saving_for":
        v = "save for " + v
    return v, (gd.get("type") or "").lower()


def _fact_predicate(rule: Rule, m: re.Match) -> str:
    gd = m.groupdict()
    if rule.predicate == "sibling":
        return _SIB[gd["rel"].lower()]
    if rule.predicate == "favourite" and gd.get("type"):
        t = gd["type"].lower().replace("colour", "color")
        t = {"dish": "food", "cuisine": "food", "snack": "food", "dessert": "food", "film": "movie",
             "singer": "music", "band": "music", "artist": "music", "musician": "music", "song": "music",
             "game": "sport"}.get(t, t)
        return f"favourite_{t}"
    return rule.predicate


def _blocked(sentence: str, start: int, end: int, rule: Rule) -> bool:
    """Questions, hypotheticals and negations around a match make it no claim."""
    s = sentence.rstrip()
    if s.endswith("?") or _QUESTION_START.match(s):
        return True
    if _HYPOTHETICAL.search(s[:end]):
        return True
    if not rule.allow_negation:
        window = s[:end]
        if _NEGATION.search(window) or re.search(r"(?i)\b(anymore|any\s+more|ab\s+nahi)\b", s):
            return True
    return False


def _user_first(author: str) -> str:
    return _ascii(author.split()[0]).lower() if author and author.split() else ""


def claims_from_text(text: str, subject: str, said: date) -> list[dict]:
    """All rule matches in one message: dicts with predicate, value, category, fact_text, confidence."""
    out: list[dict] = []
    if not text or not text.strip():
        return out
    sentences = _sentences(text)
    for rule in RULES:
        if not _GATES[rule.name].search(text):
            continue
        units = [text.strip()] if rule.scope == "message" else sentences
        for unit in units:
            for m in rule.pattern.finditer(unit):
                built = _build_value(rule, m, said)
                if built is None:
                    continue
                value, qual = built
                end = m.end()
                if rule.value == "phrase" and m.groupdict().get("v"):
                    pos = unit.find(value, m.start("v"))
                    end = pos + len(value) if pos >= 0 else m.start("v") + len(value)
                if rule.scope == "message":
                    sent = next((s for s in sentences if s in unit[m.start():m.start() + len(s)]), None) or unit
                    if unit.rstrip().endswith("?") and sent.rstrip().endswith("?"):
                        continue
                    if _HYPOTHETICAL.search(unit[:end]) or (
                            not rule.allow_negation and _NEGATION.search(unit[:min(end, m.start() + 60)])):
                        continue
                elif _blocked(unit, m.start(), end, rule):
                    continue
                if rule.predicate == "name":
                    # a self-introduction must agree with how the exporter is saved, or say "my name is"
                    if rule.name == "intro" and _user_first(value) != _user_first(subject):
                        continue
                predicate = _fact_predicate(rule, m)
                if rule.predicate == "sibling":
                    parts = qual.split()
                    a, r = (parts[0] + " ", parts[1]) if len(parts) == 2 else ("", parts[0])
                    fact_text = rule.template.format(s=subject, v=value, a=a, r=r)
                elif rule.predicate == "favourite":
                    fact_text = rule.template.format(s=subject, v=value, t=qual or "thing")
                elif rule.predicate == "pet":
                    fact_text = rule.template.format(s=subject, v=value, k=qual or "pet")
                else:
                    fact_text = rule.template.format(s=subject, v=value, p=predicate)
                out.append({"predicate": predicate, "value": value, "category": rule.category,
                            "fact_text": fact_text, "confidence": rule.confidence, "rule": rule.name})
    # one claim per (predicate, value) per message: the strongest rule wins
    best: dict[tuple[str, str], dict] = {}
    for c in out:
        k = (c["predicate"], normalize_value(c["value"]))
        if k not in best or c["confidence"] > best[k]["confidence"]:
            best[k] = c
    # within a message, a value contained in a longer one of the same predicate is the same claim
    kept = list(best.values())
    return [c for c in kept if not any(
        o is not c and o["predicate"] == c["predicate"] and value_tokens(c["value"]) < value_tokens(o["value"])
        for o in kept)]


def extract_claims(msgs: pl.DataFrame) -> pl.DataFrame:
    """`fact_claims` rows (source 'rules') from the user's messages.

    Input: id, chat_id, day, ts, author, is_user, normalized_text. Only messages written by the user
    (is_user) are read; the subject is the author's name. Ids hash message id, predicate and value.
    """
    rows: list[dict] = []
    need = {"id", "chat_id", "day", "ts", "author", "is_user", "normalized_text"}
    missing = need - set(msgs.columns)
    if missing:
        raise ValueError(f"extract_claims: missing columns {sorted(missing)}")
    mine = msgs.filter(pl.col("is_user").fill_null(False) & pl.col("normalized_text").is_not_null()
                       & pl.col("author").is_not_null())
    for r in mine.select("id", "chat_id", "day", "ts", "author", "normalized_text").iter_rows(named=True):
        said = r["day"] if isinstance(r["day"], date) else r["ts"].date()
        for c in claims_from_text(r["normalized_text"], r["author"], said):
            rows.append({
                "id": _hash(r["id"], c["predicate"], normalize_value(c["value"])),
                "chat_id": r["chat_id"], "day": r["day"], "subject": r["author"], "predicate": c["predicate"],
                "value": c["value"], "category": c["category"], "fact_text": c["fact_text"],
                "confidence": float(c["confidence"]), "message_id": r["id"], "ts": r["ts"], "source": "rules",
            })
    df = pl.DataFrame(rows, schema=CLAIM_SCHEMA) if rows else pl.DataFrame(schema=CLAIM_SCHEMA)
    return df.sort("ts", "id").select(CLAIM_COLUMNS)


# ---------------------------------------------------------------------------------------------
# consolidation
# ---------------------------------------------------------------------------------------------


@dataclass
class _Cluster:
    subject: str
    predicate: str
    category: str
    claims: list[dict]
    valid_from: date | None
    valid_to: date | None = None
    superseded_by: "_Cluster | None" = None
    id: str = ""

    @property
    def values(self) -> list[str]:
        return [c["value"] for c in self.claims if not c.get("_ending")]

    def best(self) -> dict:
        """The most informative claim: most content words, then most repeated, then earliest."""
        asserting = [c for c in self.claims if not c.get("_ending")] or self.claims
        counts: dict[str, int] = {}
        for c in asserting:
            counts[normalize_value(c["value"])] = counts.get(normalize_value(c["value"]), 0) + 1

        def key(c: dict) -> tuple:
            v = c["value"]
            full_date = 1 if re.fullmatch(r"\d{4}-\d{2}-\d{2}", v) else 0
            return (-full_date, -len(value_tokens(v)), -counts[normalize_value(v)], c["ts"], c["id"])
        return min(asserting, key=key)

    def accepts(self, value: str) -> bool:
        return any(compatible(value, v) for v in self.values) or not self.values


def _confidence(claims: list[dict]) -> float:
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
    rows = sorted(claims.to_dicts(), key=lambda c: (c["ts"], c["id"]))
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
        if c["predicate"] in ENDINGS:
            c["predicate"] = ENDINGS[c["predicate"]]
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
    _drop_home_trips(clusters)
    return _to_frame(clusters)


def _timeline(subject: str, predicate: str, cs: list[dict]) -> list[_Cluster]:
    out: list[_Cluster] = []
    current: _Cluster | None = None
    for c in cs:
        day = c["ts"].date()
        if c.get("_ending"):
            # "X and I broke up": close the matching current fact, or record one that ended here
            if current is not None and current.accepts(c["value"]) and current.values:
                current.claims.append(c)
                current.valid_to = day
                current = None
                continue
            past = next((k for k in reversed(out) if any(compatible(c["value"], v) for v in k.values)), None)
            if past is not None:
                past.claims.append(c)
                continue
            out.append(_Cluster(subject, predicate, c["category"], [c], None, day))
            continue
        if current is not None and current.accepts(c["value"]):
            current.claims.append(c)
            continue
        past = next((k for k in reversed(out) if k is not current and k.values
                     and any(compatible(c["value"], v) for v in k.values)), None)
        if past is not None:
            past.claims.append(c)  # a later mention of a past value: evidence, not a move back
            continue
        new = _Cluster(subject, predicate, c["category"], [c], None if predicate in TIMELESS else day)
        if current is not None:
            current.valid_to = new.valid_from or day
            current.superseded_by = new
        out.append(new)
        current = new
    return out


def _coexisting(subject: str, predicate: str, cs: list[dict]) -> list[_Cluster]:
    out: list[_Cluster] = []
    for c in cs:
        day = c["ts"].date()
        home = next((k for k in out if k.accepts(c["value"])), None)
        if home is not None:
            home.claims.append(c)
        else:
            vf = None if predicate in ("sister", "brother", "sibling") else day
            out.append(_Cluster(subject, predicate, c["category"], [c], vf))
    return out


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


def _drop_home_trips(clusters: list[_Cluster]) -> None:
    """Arriving in the city you live in (or come from) is going home, not a trip."""
    homes = [k for k in clusters if k.predicate in ("lives_in", "hometown")]
    for t in [k for k in clusters if k.predicate == "trip"]:
        if any(k.subject == t.subject and any(compatible(t.best()["value"], v) for v in k.values) for k in homes):
            clusters.remove(t)


def _to_frame(clusters: list[_Cluster]) -> pl.DataFrame:
    for k in clusters:
        b = k.best()
        k.id = _hash("fact", k.subject, k.predicate, normalize_value(b["value"]), k.valid_from or "")
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


def iter_evidence(facts: pl.DataFrame) -> Iterable[tuple[str, str]]:
    for fid, ids in facts.select("id", "evidence_message_ids").iter_rows():
        for mid in ids:
            yield fid, mid
