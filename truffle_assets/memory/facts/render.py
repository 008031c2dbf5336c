"""Fact text as a person would write it in a profile: "Birthday: 3 March", "Favourite food: dosa",
"Pet (beagle): Bruno", "Sister (younger): Ria". The subject is the profile's owner, so it is not
repeated in every line (a small model reading "Arjun has a dog named Bruno" beside the user's
name took the user for the dog).
"""

from __future__ import annotations

import re

from truffle_assets.memory.facts.lexicon import predicate_info

_MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
           "November", "December")


def display_value(predicate: str, value: str) -> str:
    """A stored value as it reads: birthdays ("--08-14", "1994-08-14") as "14 August (1994)"."""
    m = re.fullmatch(r"(\d{4}|-)-(\d{2})-(\d{2})", value or "")
    if predicate == "birthday" and m:
        day = f"{int(m.group(3))} {_MONTHS[int(m.group(2)) - 1]}"
        return day if m.group(1) == "-" else f"{day} {m.group(1)}"
    return value


def fact_text(predicate: str, value: str, qualifier: str = "") -> str:
    if predicate == "skill" and re.match(r"(?i)(?:can|cannot|can't)\b", value or ""):
        return value[0].upper() + value[1:]  # "Can drive", not "Can: can drive"
    label = predicate_info(predicate).label
    if predicate.startswith("end:"):
        label = "No longer: " + predicate_info(predicate[4:]).label.lower()
    qual = f" ({qualifier})" if qualifier and qualifier.lower() not in (value or "").lower() else ""
    return f"{label}{qual}: {display_value(predicate, value)}" if value else f"{label}{qual}"


def restated(claim: dict, predicate: str, value: str) -> dict:
    """`claim` said as `predicate` = `value` ("started at X" is also "works at X"), its category and
    fact text those of the new predicate."""
    return {**claim, "predicate": predicate, "value": value, "category": predicate_info(predicate).category,
            "fact_text": fact_text(predicate, value)}
