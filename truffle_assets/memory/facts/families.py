"""Predicate families: the names one kind of fact is filed under, and the predicate that holds its value.

Each tier names things its own way: the offline reader writes `employer`, `job`, `started_job`,
`left_job`; a model may write `works_at`, `company` or `quit`. A family gathers them around one
canonical predicate, so consolidation reads every claim the same way and an ending closes the value
in force whatever name the old fact was filed under:

- `aliases`: other names for the canonical predicate; their claims are renamed to it;
- `starts`: events that begin a value ("Started at: Razorpay", "Moved to: Pune"); they stay events,
  also state the canonical value, and close with it;
- `endings`: claims that end a value ("Left: Zentrix", "sold", "broke up with"); they end the
  canonical value, and the ones the lexicon knows (`left_job`) also stay events;
- `members`: predicates that hold only while the value does (the title, team and office of a job).

One-at-a-time families (employer, home city, diet, partner) keep one current value; the others
(possessions, pastimes) let values coexist, and an ending closes the value it names.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from truffle_assets.memory.facts.lexicon import PREDICATES
from truffle_assets.memory.facts.schema import ENDING_PREFIX
from truffle_assets.memory.facts.values import compatible, value_tokens


@dataclass(frozen=True)
class Family:
    name: str
    canonical: str
    aliases: frozenset[str] = frozenset()
    starts: frozenset[str] = frozenset()
    endings: frozenset[str] = frozenset()
    members: frozenset[str] = frozenset()
    also: frozenset[str] = frozenset()  # other predicates whose values an ending may name (multi-valued families)


def _f(name: str, canonical: str, aliases: str = "", starts: str = "", endings: str = "", members: str = "",
       also: str = "") -> Family:
    return Family(name, canonical, *(frozenset(s.split()) for s in (aliases, starts, endings, members, also)))


FAMILIES: tuple[Family, ...] = (
    _f("employer", "employer",
       aliases="works_at work_at works_for work_for company workplace current_employer current_company employed_at "
               "employed_by organisation organization firm employer_name",
       starts="started_job joined joined_company new_job new_employer started_at",
       endings="left_job left quit_job resigned resigned_from left_company former_employer previous_employer "
               "ex_employer past_employer worked_at last_day_at",
       members="job team office work_mode"),
    _f("home", "lives_in",
       aliases="city current_city lives lives_at resides_in residence based_in home_city current_location "
               "neighbourhood neighborhood",
       starts="moved moved_to relocated relocated_to shifted_to",
       endings="moved_out moved_out_of moved_from left_city former_city previous_city used_to_live_in lived_in",
       members="home_type lives_with rent"),
    _f("diet", "diet",
       aliases="diet_type dietary_preference dietary_choice eating_habits",
       endings="stopped_diet quit_diet gave_up_diet former_diet previous_diet ex_diet"),
    _f("partner", "partner",
       aliases="girlfriend boyfriend spouse wife husband fiance fiancee dating significant_other "
               "in_relationship_with married_to engaged_to",
       endings="ex_partner ex broke_up broke_up_with ex_girlfriend ex_boyfriend divorced divorced_from separated_from",
       members="relationship_status"),
    _f("possession", "possession",
       aliases="owns owned has_item",
       endings="sold sold_possession gave_away no_longer_owns got_rid_of died passed_away",
       also="vehicle phone pet"),
    _f("pastime", "habit",
       aliases="habits",
       endings="quit stopped gave_up quit_habit stopped_habit no_longer",
       also="hobby likes favourite learning"),
)

_BY_ALIAS = {a: f for f in FAMILIES for a in f.aliases | {f.canonical}}
_BY_START = {s: f for f in FAMILIES for s in f.starts}
_BY_ENDING = {e: f for f in FAMILIES for e in f.endings}
SINGLE_FAMILIES = {f.canonical: f for f in FAMILIES if PREDICATES[f.canonical].single}


def family_of(predicate: str) -> Family | None:
    """The family a (canonical, alias, start, ending or member) predicate belongs to."""
    p = predicate.removeprefix(ENDING_PREFIX)
    return _BY_ALIAS.get(p) or _BY_START.get(p) or _BY_ENDING.get(p) or next(
        (f for f in FAMILIES if p in f.members or p in f.also), None)


def canonical(predicate: str) -> str:
    """A claim predicate under its family's canonical name: `works_at` -> `employer`,
    `end:works_at` -> `end:employer`; starts, endings and unknown names are left as they are."""
    ending = predicate.startswith(ENDING_PREFIX)
    p = predicate.removeprefix(ENDING_PREFIX)
    f = _BY_ALIAS.get(p)
    if f is None or p in PREDICATES and p != f.canonical:
        return predicate
    return (ENDING_PREFIX if ending else "") + f.canonical


def start_of(predicate: str) -> Family | None:
    """The family whose value an event starts ("started_job" starts an employer)."""
    return _BY_START.get(predicate)


def ending_of(predicate: str) -> Family | None:
    """The family whose value a claim predicate ends ("left_job", "broke_up_with", "sold")."""
    return _BY_ENDING.get(predicate)


# Words a company's name may carry or drop: "Zentrix" is "Zentrix Labs" is "Zentrix Labs Pvt Ltd".
_ORG_SUFFIXES = frozenset("""labs lab inc incorporated ltd limited pvt private llc llp corp corporation co company
technologies technology tech solutions systems software services group india global""".split())


@lru_cache(maxsize=1 << 16)
def org_core(value: str) -> str:
    """A company name without its legal and trade suffixes."""
    words = re.findall(r"[\w&'’.-]+", value)
    while len(words) > 1 and value_tokens(words[-1]) <= _ORG_SUFFIXES:
        words.pop()
    return " ".join(words)


def same_value(family: Family | None, a: str, b: str) -> bool:
    """`a` and `b` name the same value of `family` (company names compare without their suffixes)."""
    if compatible(a, b):
        return True
    return family is not None and family.name == "employer" and compatible(org_core(a), org_core(b))
