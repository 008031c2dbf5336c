"""Scoring extracted facts against the frozen held-out annotations (benchmarks/heldout/).

The annotators used their own vocabulary (`category.attribute`, free-text values such as "Senior
Software Engineer (Swiggy)"), written without looking at the extractor. This module decides, for
each predicted fact, which annotated fact (if any) it states, using only two things: the attribute
map below and value normalization. It never looks at evidence lines to decide whether a prediction
counts; evidence is scored separately, after matching.

Matching (a predicted fact P matches an annotated fact A when all hold):
- same person: P's subject is A's speaker (the natural set: the exporting user);
- attribute: P's predicate is one of `ATTRIBUTE_PREDICATES[A.category.attribute]`, or, for an attribute
  the map does not name, one its category gives every attribute (`predicates_for`: a pastime under any
  name is a hobby or a liking unless the name says it is over; a language level is passed or learnt).
  Other annotated attributes with no entry cannot be matched: the extractor has no predicate for
  them, and they stay in the recall denominator;
- value: after `tokens` (lower-case, accents stripped, punctuation split, stop words dropped, a few
  spelling aliases, light plural/-ing stemming), P's content words are contained in A's whole value,
  or A's core (A without its parenthesised remarks) is contained in P's; P must say something besides
  numbers and month names; and a negation or ending word ("stopped", "cannot", "non", "sold", ...) on
  one side only blocks the match ("badminton" never matches "stopped playing badminton"). A value
  joining statements with ";" is also compared statement by statement (the negation in "stopped
  Cult.fit; does yoga at home" is not yoga's), an initialism ("K&R") stands for the annotated words
  whose initials it spells ("Kothari & Rao"), and where both sides are negated the verbs that only carry
  the negation ("go", "do") are left out ("doesn't go to gym" is "no gym"). Birthdays compare day and month.
- when P matches several annotated facts, the one sharing most words wins (|P ∩ A| / |P ∪ A.core|);
  a tie goes to the one in force when P was first said (latest valid_from on or before it), then the
  nearest valid_from.

Scores (`score`):
- a prediction that cites a listed distractor line (a hypothetical, a plan, a joke, another person's
  fact, ...) is a false positive when it states that line's wrong claim (the same matcher, against the
  claim's attribute and value) or when it matches no annotated fact. A line can hold a real fact and a
  distractor at once ("not allergic to X, I'm vegetarian"); a prediction of the real fact stays right;
- precision = matched predictions / all predicted facts about the subject(s), current and past alike;
- lenient precision also counts as right the unmatched predictions whose predicate no annotated
  attribute maps to (e.g. `friend`: the annotators did not annotate friendships, so the set cannot
  say they are wrong); every other unmatched prediction is wrong, since the annotators read every
  message and recorded every first-person fact;
- recall = annotated facts matched by at least one (non-distractor) prediction / all annotated facts
  (a prediction credits only its best match; `found_any` also counts facts a prediction matched less
  well than another, e.g. an annotated restatement);
- evidence = share of matched predictions whose evidence ids include the annotated message or one of
  its restatements (`also_stated`); evidence_ids = share of all evidence ids of matched predictions
  that are such lines;
- supersession: for every annotated fact with a valid_to (it ended) that was found, was it closed
  (valid_to set on a matching prediction)? and, when an annotated fact supersedes it and that was
  found too, does superseded_by name a prediction matching the successor? A found, ended fact left
  open is "stale" (the profile would still show it as current); `stale_current` counts the
  predictions themselves: facts the store shows as current (no valid_to) whose best match is an
  annotated fact that ended. A current prediction that states nothing the ending ended is neither:
  a thing done ("passed Goethe A1" stays true after A2, a trip stays taken), or a value the ended fact's successor
  states too ("runs" after "3 days a week" became "4 days a week", "likes chai" after five cups
  became one); it counts only as a match.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass, field
from datetime import date, datetime

# ---- attribute map: annotators' `category.attribute` -> the extractor's predicates ------------------
# Written from the annotation vocabulary and the extractor's predicate list; a predicate maps where
# it says the same kind of thing (a hobby the user loves is a generic `favourite`).
_FAV = ("favourite",)
ATTRIBUTE_PREDICATES: dict[str, tuple[str, ...]] = {
    # identity, places
    "identity.name": ("name",),
    "identity.nickname": ("name",),
    "identity.hometown": ("hometown",),
    "identity.birthplace": ("hometown",),
    "identity.birthday": ("birthday",),
    "location.city": ("lives_in", "moved"),
    "location.neighbourhood": ("lives_in", "moved"),
    "home.home_type": ("lives_in",),
    # work and study
    "work.employer": ("job", "started_job"),
    "work.job_title": ("job",),
    "work.profession": ("job",),
    "work.first_job": ("job", "started_job"),
    "work.internship": ("job",),
    "work.job_offer": ("job", "started_job"),
    "work.job_change": ("left_job", "started_job"),
    "work.employment": ("job",),
    "work.research": ("job",),
    "work.work_event": ("completed",),
    "education.degree": ("completed",),
    "education.certification": ("completed",),
    "education.class12": ("completed",),
    "education.current": ("goal",),
    "education.current_course": ("goal",),
    "achievements.race": ("completed",),
    "achievements.reading": ("completed",),
    "achievements.talk": ("completed",),
    "achievements.longest_run": ("completed",),
    "goals.goal": ("goal",),
    "languages.learning": ("goal",),
    "work.skill": ("goal",),  # "learning Rust"
    # people
    "relationships.partner": ("partner", "relationship_status"),  # "engaged to X", "married to X"
    "relationships.status": ("partner", "engaged"),
    "relationships.dating_since": ("partner",),
    "family.sister": ("sister",),
    "family.brother": ("brother",),
    "pets.dog": ("pet",),
    "pets.cat": ("pet",),
    # tastes and pastimes
    "diet.diet": ("diet",),
    "preferences.favourite_food": ("favourite_food",) + _FAV,
    "preferences.favourite_dessert": ("favourite_food",) + _FAV,
    "preferences.favourite_cuisine": ("favourite_food",) + _FAV,
    "preferences.favourite_movie": ("favourite_movie",) + _FAV,
    "preferences.favourite_show": ("favourite_show",) + _FAV,
    "preferences.favourite_author": ("favourite_author", "favourite_book") + _FAV,
    "preferences.favourite_band": ("favourite_music",) + _FAV,
    "preferences.favourite_song": ("favourite_music",) + _FAV,
    "preferences.favourite_place": ("favourite_place", "favourite_city") + _FAV,
    "preferences.favourite_season": _FAV,
    "preferences.favourite_cricketer": ("favourite_sport",) + _FAV,
    "preferences.cricket_team": ("favourite_team", "favourite_sport") + _FAV,
    "preferences.football_club": ("favourite_team", "favourite_sport") + _FAV,
    "preferences.drink": ("favourite_drink",) + _FAV,
    "preferences.likes": _FAV,
    "hobbies.hobby": ("favourite_sport",) + _FAV,
    "hobbies.gaming": ("favourite_sport",) + _FAV,
    "hobbies.activity": _FAV,
    "hobbies.cooking_speciality": ("favourite_food",) + _FAV,
    "hobbies.volunteering": _FAV,
    "hobbies.gym": _FAV,
    # travel
    "travel.past_trip": ("trip",),
    "travel.international": ("trip",),
    "travel.trip": ("trip",),
}
# The parse-based reader's vocabulary: the same attribute names, mapped by what they mean.
_PARSED: dict[str, tuple[str, ...]] = {
    "identity.age": ("age",), "identity.height": ("height",), "identity.handedness": ("handedness",),
    "identity.full_name": ("name",), "identity.nickname": ("nickname", "name"),
    "health.blood_group": ("blood_group",), "health.allergy": ("allergy",),
    "health.condition": ("condition",), "health.injury": ("condition",), "health.deficiency": ("condition",),
    "health.phobia": ("condition",), "health.blood_phobia": ("condition",), "preferences.fears": ("condition",),
    "health.eyesight": ("eyesight",), "health.smoking": ("habit",), "health.weight": ("condition",),
    "health.weight_change": ("condition",), "appearance.weight": ("condition",),
    "location.city": ("lives_in", "moved"), "location.neighbourhood": ("lives_in", "moved"),
    "home.type": ("home_type",), "home.home_type": ("home_type", "lives_in"), "home.lives_with": ("lives_with",),
    "home.flatmate": ("lives_with",), "home.rent": ("rent",), "home.rent_share": ("rent",),
    "work.employer": ("employer", "job", "started_job"), "work.job_title": ("job",), "work.profession": ("job",),
    "work.first_job": ("employer", "job", "started_job"),
    "work.job_offer": ("employer", "job", "started_job"), "work.job_change": ("left_job", "started_job", "employer"),
    "work.team": ("team",), "work.work_mode": ("work_mode",), "work.mode": ("work_mode",),
    "work.notice": ("left_job",), "work.employment": ("job", "employer"),
    "education.degree": ("completed", "education"), "education.school": ("education",),
    "education.certification": ("completed", "education"), "education.current_course": ("goal", "learning", "education"),
    "education.current": ("goal", "learning", "education"), "education.graduation_year": ("education",),
    "languages.learning": ("goal", "learning"), "goals.learning": ("goal", "learning"),
    "languages.spoken": ("language",), "languages.native": ("language",), "languages.marathi": ("language",),
    "languages.punjabi": ("language",), "languages.german_level": ("learning", "language"),
    "work.skill": ("goal", "learning", "skill"), "skills.swimming": ("skill",), "skills.driving": ("skill",),
    "skills.cooking": ("skill", "hobby", "likes"),
    "relationships.partner": ("partner",), "relationships.status": ("partner", "engaged", "relationship_status"),
    "relationships.ex": ("partner",),
    "family.sister": ("sister",), "family.brother": ("brother",), "family.niece": ("family",),
    "family.nephew": ("family",), "family.grandmother": ("family",),
    "pets.dog": ("pet",), "pets.cat": ("pet",),
    "diet.diet": ("diet",), "diet.habit": ("habit", "diet"), "diet.fasting": ("habit",),
    "habits.alcohol": ("habit",), "habits.drinking": ("habit",), "habits.smoking": ("habit",),
    "habits.meditation": ("habit", "hobby"), "habits.journaling": ("habit", "hobby"), "habits.gym": ("habit", "hobby"),
    "habits.running": ("habit", "hobby"), "habits.sleep": ("sleep",), "preferences.sleep": ("sleep",),
    "habits.late_night_snack": ("habit",), "habits.religious": ("habit",), "hobbies.gym": ("habit", "hobby"),
    "preferences.dislikes": ("dislikes",), "preferences.music": ("likes", "favourite_music"),
    "preferences.favourite_music": ("favourite_music", "favourite", "likes"),
    "possessions.phone": ("phone", "possession"), "possessions.laptop": ("possession",),
    "possessions.camera": ("possession",), "possessions.console": ("possession",), "possessions.ereader": ("possession",),
    "possessions.instrument": ("possession",), "possessions.running_shoes": ("possession",),
    "possessions.device": ("possession", "phone"), "possessions.gear": ("possession",),
    "possessions.bicycle": ("vehicle", "possession"), "vehicles.car": ("vehicle",), "vehicles.motorbike": ("vehicle",),
    "vehicles.scooter": ("vehicle",), "vehicles.two_wheeler": ("vehicle",),
    "achievements.race": ("completed",), "achievements.trek": ("completed",), "achievements.reading": ("completed",),
    "achievements.talk": ("completed",), "achievements.longest_run": ("completed",),
    "travel.past_trip": ("trip",), "travel.international": ("trip",),
    "identity.personality": ("personality",), "work.office": ("office",), "work.office_location": ("office",),
    "work.internship": ("internship", "job", "employer"), "appearance.tattoo": ("appearance",),
    "appearance.hair": ("appearance",), "family.sibling_order": ("family",), "family.birth_order": ("family",),
    "habits.snoring": ("habit",),
    # the second dev set's annotator (benchmarks/devset2) named some attributes differently
    "home.living_with": ("lives_with",), "preferences.favourite_team": ("favourite_team", "favourite_sport", "favourite"),
    "hobbies.cricket": ("hobby", "likes"), "hobbies.badminton": ("hobby", "likes", "habit"),
    "hobbies.photography": ("hobby", "likes"), "hobbies.cooking": ("hobby", "likes", "skill"),
    "hobbies.cricket_role": ("hobby", "skill"), "education.college": ("education", "completed"),
    "appearance.height": ("height",), "work.resigned": ("left_job", "employer"),
    "achievements.certification": ("completed", "education"), "achievements.milestone": ("completed",),
    "health.symptom": ("condition",), "health.treatment": ("condition",),
    "languages.telugu": ("language", "learning"), "languages.gujarati": ("language", "learning"),
    "skills.batting": ("skill",), "skills.software": ("skill",), "skills.power_bi": ("skill", "learning"),
    "habits.fasting": ("habit",), "habits.tea": ("habit", "likes"), "possessions.passport": ("possession",),
    "preferences.books": ("likes", "favourite_book", "favourite_author"), "travel.abroad": ("trip",),
    "preferences.dogs": ("likes", "dislikes", "condition"),
    # the money predicates, under the names the annotators used for them
    "finance.salary": ("salary",), "finance.investing": ("investment",), "finance.investment": ("investment",),
    "finance.insurance": ("insurance",), "finance.health_insurance": ("insurance",), "finance.loan": ("loan",),
}
for _attr, _preds in _PARSED.items():
    ATTRIBUTE_PREDICATES[_attr] = tuple(dict.fromkeys(ATTRIBUTE_PREDICATES.get(_attr, ()) + _preds))
# hobbies and likes: the reader files a loved activity as `hobby` and a loved thing as `likes`
for _attr, _preds in list(ATTRIBUTE_PREDICATES.items()):
    if _attr.startswith(("hobbies.", "preferences.")) and "favourite" in _preds:
        ATTRIBUTE_PREDICATES[_attr] = tuple(dict.fromkeys(_preds + ("likes", "hobby", "learning")))
MAPPED_PREDICATES = frozenset(p for ps in ATTRIBUTE_PREDICATES.values() for p in ps)
# An annotated attribute the map does not name, by its category: any pastime ("hobbies.dance") is a hobby
# or a liking unless its name says it is over; any language level ("languages.french_level") is passed
# or being learnt.
_PAST = frozenset({"past", "former", "previous", "childhood", "old", "ex"})
_FOND_PREDICATES = _FAV + ("likes", "hobby", "learning")
_LEVEL_PREDICATES = ("completed", "learning", "language")

# ---- value normalization ---------------------------------------------------------------------------
_STOP = frozenset("""
a an the my our your his her their its this that these those it i me we he she they you
to for of at in on and or as with by from into about is are was were be been am has have had
mein me ka ki ke se hai hain hoon hu hun toh to bhi wala wali wale aur ko ne
""".split())
# A negation or ending on one side only means the opposite fact ("stopped playing badminton").
_NEGATORS = frozenset({"not", "no", "non", "never", "cannot", "cant", "dont", "stopped", "stop", "quit",
                       "sold", "cancelled", "canceled", "ex", "former", "nahi", "nahin"})
_MONTHS = {m: i for i, ms in enumerate((
    ("jan", "january"), ("feb", "february"), ("mar", "march"), ("apr", "april"), ("may",), ("jun", "june"),
    ("jul", "july"), ("aug", "august"), ("sep", "sept", "september"), ("oct", "october"), ("nov", "november"),
    ("dec", "december")), 1) for m in ms}
# Spellings of one thing: phrase-level rewrites before tokenizing, then word aliases.
_PHRASES = ((re.compile(r"\bnon[\s\-]*veg(?:etarian)?\b"), "nonvegetarian"), (re.compile(r"\bveg\b"), "vegetarian"),
            # a contracted negation is a negation: "doesn't smoke" is "does not smoke", "can't" is "cannot"
            (re.compile(r"\bcan't\b"), "cannot"), (re.compile(r"\bwon't\b"), "will not"), (re.compile(r"n't\b"), " not"),
            (re.compile(r"\bb\.?\s?tech\b"), "btech"), (re.compile(r"\bplay\s?station\s?(\d)\b"), r"ps\1"), (re.compile(r"['’]s\b"), ""), (re.compile(r"&"), " and "))
_ALIASES = {"bengaluru": "bangalore", "blr": "bangalore", "bombay": "mumbai", "madras": "chennai",
            "gf": "girlfriend", "bf": "boyfriend", "fiance": "fiancee", "colour": "color", "favorite": "favourite",
            "bicycle": "cycle", "specs": "glasses", "spectacles": "glasses"}
_GENERIC = frozenset({"first", "new", "old", "big", "good", "best", "one", "two", "three"}) | frozenset(_MONTHS)


def _fold(s: str) -> str:
    """Lower-case ASCII; punctuation and symbols outside ASCII become spaces, so a range ("2–2:30", "Tue–Thu")
    keeps its two ends apart, and a curly apostrophe is a straight one."""
    s = s.replace("’", "'").replace("‘", "'")
    s = "".join(" " if ord(ch) > 127 and unicodedata.category(ch)[0] in "PSZ" else ch for ch in s)
    return unicodedata.normalize("NFKD", s).encode("ascii", "ignore").decode().lower()


_SUFFIXES = ("ations", "ation", "ates", "ate", "ing", "ers", "er", "es", "ed", "s", "e")


def _stem(w: str) -> str:
    """A crude suffix stripper, the same on both sides: meditates/meditation -> medit, snores/snore -> snor,
    smoking/smoker -> smok, running -> run."""
    if w.isdigit() or w.endswith("ss"):
        return w
    for suf in _SUFFIXES:
        if w.endswith(suf) and len(w) - len(suf) >= 3:
            w = w[: -len(suf)]
            if suf in ("ing", "ed", "er", "ers") and len(w) > 2 and w[-1] == w[-2]:  # running -> run
                w = w[:-1]
            break
    return w


def _words(value: str) -> list[str]:
    """The value's words in order, folded, with its phrases joined and stop words dropped."""
    s = _fold(value)
    for pat, rep in _PHRASES:
        s = pat.sub(rep, s)
    return [w for w in re.findall(r"[a-z0-9]+", s) if w not in _STOP]


def tokens(value: str) -> frozenset[str]:
    """Content words of a value, comparable across spellings."""
    out = set()
    for w in _words(value):
        w = _ALIASES.get(w, w)
        out.add(w if w in _NEGATORS else _stem(w))
    return frozenset(out)


def core(value: str) -> str:
    """The value without its parenthesised remarks: 'Naina (girlfriend)' -> 'Naina'."""
    return re.sub(r"\s*\([^)]*\)", "", value).strip() or value


def _month_day(value: str) -> tuple[int, int] | None:
    """(month, day) of '--08-14', '1995-08-14', '14 August', 'August 14th'."""
    m = re.fullmatch(r"(?:\d{4}|-)-(\d{2})-(\d{2})", value.strip())
    if m:
        return int(m.group(1)), int(m.group(2))
    s = _fold(value)
    m = re.search(r"\b(\d{1,2})(?:st|nd|rd|th)?\s+(?:of\s+)?([a-z]+)", s)
    if m and m.group(2) in _MONTHS:
        return _MONTHS[m.group(2)], int(m.group(1))
    m = re.search(r"\b([a-z]+)\s+(\d{1,2})(?:st|nd|rd|th)?\b", s)
    if m and m.group(1) in _MONTHS:
        return _MONTHS[m.group(1)], int(m.group(2))
    return None


def value_score(predicate: str, predicted: str, annotated: str, ended: bool = False) -> float | None:
    """How well a predicted value states an annotated one: None when it does not, else in (0, 1].

    `ended`: the prediction has a valid_to, so it also states its own ending ("MacBook Air" until
    2023-02 states "sold her MacBook Air"); the annotation's ending words are then not held against it.
    An annotated value joining statements with ";" ("stopped Cult.fit; does yoga at home") is also
    compared statement by statement, so the negation of one does not negate the other; an initialism
    ("K&R", "TCS") states the run of annotated words whose initials it spells ("Kothari & Rao")."""
    if predicate == "birthday":
        a, b = _month_day(predicted), _month_day(annotated)
        return 1.0 if a is not None and a == b else None
    if predicate in ("age", "height"):  # only numbers: compare the numbers (not those of a remark's date)
        a, b = re.findall(r"\d+", predicted), re.findall(r"\d+", core(annotated))
        return 1.0 if a and b and a[:2] == b[:2] else None
    said = [predicted] + [w for w in [spelled_out(predicted, annotated)] if w]
    scores = [x for p in said for a in statements(annotated) if (x := _words_score(p, a, ended)) is not None]
    return max(scores) if scores else None


def _words_score(predicted: str, annotated: str, ended: bool) -> float | None:
    p, whole, c = tokens(predicted), tokens(annotated), tokens(core(annotated))
    if not (p - _GENERIC) or not any(not w.isdigit() for w in p - _GENERIC):
        return None  # only numbers or month names: says nothing on its own
    if ended and (c & _NEGATORS) and not (p & _NEGATORS):
        whole, c = whole - _NEGATORS, c - _NEGATORS
    if bool(p & _NEGATORS) != bool(c & _NEGATORS):
        return None
    if p & _NEGATORS and c & _NEGATORS:  # "doesn't go to gym" is "no gym": what is not done, not how
        p, whole, c = p - _LIGHT_VERBS, whole - _LIGHT_VERBS, c - _LIGHT_VERBS
    if not (p <= whole or (c and c <= p)):
        return None
    return len(p & whole) / len(p | c)


# verbs that only carry a negation ("does not go to", "didn't do"), as `tokens` stems them
_LIGHT_VERBS = frozenset({"go", "goe", "going", "went", "do", "doe", "did", "doing"})


def statements(annotated: str) -> list[str]:
    """The annotated value, then each of the statements it joins with ";" outside parentheses."""
    parts, depth, start = [], 0, 0
    for i, ch in enumerate(annotated):
        depth += (ch == "(") - (ch == ")")
        if ch == ";" and depth == 0:
            parts.append(annotated[start:i])
            start = i + 1
    parts.append(annotated[start:])
    parts = [x.strip() for x in parts if x.strip()]
    return [annotated] + (parts if len(parts) > 1 else [])


_INITIALISM = re.compile(r"\s*((?:[A-Z][\s&.]*){2,5})\s*")


def spelled_out(predicted: str, annotated: str) -> str | None:
    """The annotated words an initialism stands for: 'K&R' -> 'Kothari Rao' in 'Kothari & Rao (Mumbai)'."""
    m = _INITIALISM.fullmatch(core(predicted))
    if not m:
        return None
    letters = re.sub(r"[^A-Z]", "", m.group(1)).lower()
    words = _words(annotated)
    for i in range(len(words) - len(letters) + 1):
        run = words[i:i + len(letters)]
        if "".join(w[0] for w in run) == letters:
            return " ".join(run)
    return None


# ---- annotated facts and predictions as plain records ----------------------------------------------

@dataclass
class Annotated:
    id: str
    subject: str  # who states it about themself
    attribute: str  # "category.attribute"
    value: str
    evidence: frozenset[str]  # message ids of the stating line and its restatements
    valid_from: date | None = None
    valid_to: date | None = None
    supersedes: str | None = None
    language: str = ""
    strength: str = "clear"


@dataclass
class Predicted:
    id: str
    subject: str
    predicate: str
    value: str
    evidence: tuple[str, ...]
    first_seen: date | None = None
    valid_to: date | None = None
    superseded_by: str | None = None
    extra: dict = field(default_factory=dict)


def _as_date(v) -> date | None:
    if v is None or v == "":
        return None
    if isinstance(v, datetime):
        return v.date()
    if isinstance(v, date):
        return v
    return date.fromisoformat(str(v)[:10])


def predicted_from_rows(rows) -> list[Predicted]:
    """`facts` rows (dicts with the FACT_COLUMNS) as Predicted records."""
    return [Predicted(r["id"], r["subject"], r["predicate"], r["value"], tuple(r["evidence_message_ids"] or ()),
                      _as_date(r.get("first_seen_at")), _as_date(r.get("valid_to")), r.get("superseded_by"))
            for r in rows]


# ---- matching and scoring ----------------------------------------------------------------------------

def predicates_for(attribute: str) -> tuple[str, ...]:
    """The predicates that state an annotated attribute: the map's, or its category's (`_FOND_PREDICATES`...)."""
    category, _, name = attribute.partition(".")
    preds = ATTRIBUTE_PREDICATES.get(attribute, ())
    if category == "hobbies" and not preds and not _PAST & set(name.split("_")):
        return _FOND_PREDICATES
    if category == "languages" and name.endswith("level"):
        return tuple(dict.fromkeys(preds + _LEVEL_PREDICATES))
    return preds


def attribute_ok(predicate: str, attribute: str) -> bool:
    """The map above, or, for a predicate the map does not know, the attribute's own name: a generic
    `manager` ("my manager is Rohit") states `work.manager`, `rent` states `home.rent_share`."""
    if predicate in predicates_for(attribute):
        return True
    category, _, name = attribute.partition(".")
    if predicate.startswith("favourite_") and attribute.startswith("preferences.favourite"):
        return True
    if predicate in MAPPED_PREDICATES:
        return False
    return predicate == name or predicate in name.split("_")


def best_match(p: Predicted, annotated: list[Annotated]) -> Annotated | None:
    """The annotated fact `p` states, by attribute map and value alone (see the module doc)."""
    cands = []
    for a in annotated:
        if a.subject != p.subject or not attribute_ok(p.predicate, a.attribute):
            continue
        s = value_score(p.predicate, p.value, a.value, ended=p.valid_to is not None)
        if s is None:
            continue
        in_force = (p.first_seen is not None and (a.valid_from is None or a.valid_from <= p.first_seen)
                    and (a.valid_to is None or p.first_seen < a.valid_to))
        gap = abs((a.valid_from - p.first_seen).days) if a.valid_from and p.first_seen else 10**6
        cands.append((-s, not in_force, gap, a.id, a))
    return min(cands, key=lambda c: c[:4])[4] if cands else None


@dataclass
class Score:
    predicted: int
    matched: int
    distractor_hits: int
    unannotated: int  # unmatched, predicate outside the attribute map, not a distractor
    wrong: int
    annotated: int
    found: int
    found_any: int  # annotated facts some prediction matches, credited or not (a prediction credits one)
    evidence_ok: int
    evidence_ids_ok: int
    evidence_ids: int
    ended_found: int
    closed: int
    linked: int
    link_cases: int
    stale: list[str]
    stale_current: list[str]  # predicted ids: current in the store, matched to an annotated fact that ended
    matches: dict[str, str | None]  # predicted id -> annotated id
    verdict: dict[str, str]  # predicted id -> matched | distractor | unannotated | wrong
    found_ids: set[str]
    by_group: dict[str, tuple[int, int]]  # "language:en" / "strength:clear" / "mappable" -> (found, total)

    @property
    def precision(self) -> float:
        return self.matched / self.predicted if self.predicted else 0.0

    @property
    def lenient_precision(self) -> float:
        return (self.matched + self.unannotated) / self.predicted if self.predicted else 0.0

    @property
    def recall(self) -> float:
        return self.found / self.annotated if self.annotated else 0.0

    @property
    def evidence_correct(self) -> float:
        return self.evidence_ok / self.matched if self.matched else 0.0

    @property
    def evidence_ids_correct(self) -> float:
        return self.evidence_ids_ok / self.evidence_ids if self.evidence_ids else 0.0


@dataclass(frozen=True)
class Claim:
    """A distractor line's wrong user fact: the attributes it would be filed under and its value."""
    attributes: tuple[str, ...]
    value: str


def parse_claims(claim: str) -> list[Claim]:
    """'location.city = Pune; employer = Microsoft' -> claims; a bare name ('employer', 'diet') stands
    for every mapped attribute of that category or with that attribute name (none: unmappable)."""
    out = []
    for part in claim.split(";"):
        lhs, sep, rhs = part.partition("=")
        lhs, rhs = lhs.strip(), rhs.strip()
        if not sep or not rhs:
            continue
        if "." in lhs:
            attrs = (lhs,)
        else:
            attrs = tuple(k for k in ATTRIBUTE_PREDICATES if lhs in k.split("."))
        out.append(Claim(attrs, rhs))
    return out


def states_claim(p: Predicted, claim: Claim) -> bool:
    return any(p.predicate in predicates_for(a) for a in claim.attributes) and \
        value_score(p.predicate, p.value, claim.value) is not None


# Things done, each on its day: never a state that ends (a start, "Moved to: Pune", holds with its value).
_DONE = frozenset({"completed", "trip"})


def score(predicted: list[Predicted], annotated: list[Annotated],
          distractors: dict[str, list[Claim]] | None = None) -> Score:
    """Precision, recall, evidence and supersession of `predicted` against `annotated` (module doc).
    `distractors`: message id of each distractor line -> the wrong claims it invites."""
    distractors = distractors or {}
    matches: dict[str, str | None] = {}
    verdict: dict[str, str] = {}
    hits: dict[str, list[Predicted]] = {}
    ev_ok = ev_ids_ok = ev_ids = 0
    for p in predicted:
        a = best_match(p, annotated)
        matches[p.id] = a.id if a else None
        cited = [c for e in p.evidence for c in distractors.get(e, [])]
        if any(e in distractors for e in p.evidence) and (a is None or any(states_claim(p, c) for c in cited)):
            verdict[p.id] = "distractor"
        elif a is not None:
            verdict[p.id] = "matched"
            hits.setdefault(a.id, []).append(p)
            good = [e for e in p.evidence if e in a.evidence]
            ev_ok += bool(good)
            ev_ids_ok += len(good)
            ev_ids += len(p.evidence)
        elif p.predicate not in MAPPED_PREDICATES:
            verdict[p.id] = "unannotated"
        else:
            verdict[p.id] = "wrong"
    # supersession over the annotated facts that ended and were found
    successor = {a.supersedes: a for a in annotated if a.supersedes}
    ended_found = closed = linked = link_cases = 0
    stale = []
    by_id = {a.id: a for a in annotated}

    def still_holds(p: Predicted, a: Annotated) -> bool:
        """`p` is current and states no value `a`'s ending ended (module doc)."""
        if p.valid_to is not None:
            return False
        if p.predicate in _DONE:
            return True
        nxt, seen = successor.get(a.id), set()
        while nxt is not None and nxt.id not in seen:
            seen.add(nxt.id)
            if attribute_ok(p.predicate, nxt.attribute) and value_score(p.predicate, p.value, nxt.value) is not None:
                return True
            nxt = successor.get(nxt.id)
        return False

    stale_current = [p.id for p in predicted if verdict[p.id] == "matched" and p.valid_to is None
                     and by_id[matches[p.id]].valid_to is not None and not still_holds(p, by_id[matches[p.id]])]
    for a in annotated:
        if a.valid_to is None or a.id not in hits:
            continue
        ps = [p for p in hits[a.id] if not still_holds(p, a)]
        if not ps:  # what was found of it still holds: the ended value itself was never stored
            continue
        ended_found += 1
        if any(p.valid_to is not None for p in ps):
            closed += 1
        else:
            stale.append(a.id)
        nxt = successor.get(a.id)
        if nxt is not None and nxt.id in hits:
            link_cases += 1
            nxt_ids = {p.id for p in hits[nxt.id]}
            linked += any(p.superseded_by in nxt_ids for p in ps)
    credible = [p for p in predicted if verdict[p.id] != "distractor"]
    found_any = sum(1 for a in annotated if any(
        p.subject == a.subject and p.predicate in predicates_for(a.attribute)
        and value_score(p.predicate, p.value, a.value) is not None for p in credible))
    groups: dict[str, list[int]] = {}
    for a in annotated:
        keys = [f"language:{a.language}"] if a.language else []
        keys += [f"strength:{a.strength}", "mappable" if predicates_for(a.attribute) else "unmappable"]
        for k in keys:
            g = groups.setdefault(k, [0, 0])
            g[0] += a.id in hits
            g[1] += 1
    counts = {v: sum(1 for x in verdict.values() if x == v) for v in ("matched", "distractor", "unannotated", "wrong")}
    return Score(
        predicted=len(predicted), matched=counts["matched"], distractor_hits=counts["distractor"],
        unannotated=counts["unannotated"], wrong=counts["wrong"], annotated=len(annotated), found=len(hits), found_any=found_any,
        evidence_ok=ev_ok, evidence_ids_ok=ev_ids_ok, evidence_ids=ev_ids, ended_found=ended_found, closed=closed,
        linked=linked, link_cases=link_cases, stale=stale, stale_current=stale_current, matches=matches, verdict=verdict, found_ids=set(hits),
        by_group={k: (v[0], v[1]) for k, v in sorted(groups.items())},
    )


# ---- the annotation files ----------------------------------------------------------------------------

def natural_annotations(ann: dict, line_ids: dict[tuple[str, int], str]) -> tuple[list[Annotated], dict[str, list[Claim]]]:
    """natural/annotations.json -> (annotated facts about the user, distractor message id -> claims).

    `line_ids` maps (export file name, header line) to the pipeline's message id; a line it lacks is
    an error (the freeze test checks every line parses, so this means the pipeline lost a message)."""
    def mid(chat_file: str, line: int) -> str:
        try:
            return line_ids[(chat_file, line)]
        except KeyError:
            raise ValueError(f"{chat_file}:{line}: annotated line has no message in the pipeline's rows") from None

    facts = []
    for f in ann["facts"]:
        ev = {mid(f["chat_file"], f["line"])} | {mid(s["chat_file"], s["line"]) for s in f.get("also_stated", [])}
        facts.append(Annotated(
            id=f["id"], subject=f["speaker"], attribute=f"{f['category']}.{f['attribute']}", value=f["value"],
            evidence=frozenset(ev), valid_from=_as_date(f.get("valid_from")), valid_to=_as_date(f.get("valid_to")),
            supersedes=f.get("supersedes"), language=f.get("language", "")))
    distractors: dict[str, list[Claim]] = {}
    for d in ann.get("distractors", []):
        distractors.setdefault(mid(d["chat_file"], d["line"]), []).extend(parse_claims(d["claim"]))
    return facts, distractors


def fixture_annotations(ann: dict, line_ids: dict[tuple[str, int], str], subject_of) -> list[Annotated]:
    """fixtures/annotations.json -> annotated facts; `subject_of(file, speaker)` is the subject key the
    predictions of that file use (a speaker is only the same person within one file)."""
    out = []
    for f in ann["facts"]:
        key = (f["file"], f["line"])
        if key not in line_ids:
            raise ValueError(f"{f['file']}:{f['line']}: annotated line has no message in the pipeline's rows")
        out.append(Annotated(
            id=f["id"], subject=subject_of(f["file"], f["speaker"]), attribute=f"{f['category']}.{f['attribute']}",
            value=f["value"], evidence=frozenset({line_ids[key]}), strength=f.get("strength", "clear")))
    return out
