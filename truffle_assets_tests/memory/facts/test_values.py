"""Values: cut from captured text, and compared by their content words."""

from datetime import date

import pytest

from truffle_assets.memory.facts.rules import RULES
from truffle_assets.memory.facts.values import (
    birthday_value,
    compatible,
    leading_name,
    normalize_value,
    phrase_value,
    trailing_name,
    value_tokens,
)


def test_compatible_values():
    assert compatible("HSR Layout", "HSR Layout, Bengaluru")
    assert compatible("run a half marathon", "half marathon")
    assert not compatible("Pune", "Bengaluru")
    assert not compatible("vegetarian", "non-vegetarian")
    assert compatible("1994-05-17", "--05-17") and not compatible("1994-05-17", "--05-18")


def test_compatible_is_symmetric_and_needs_content_words():
    assert compatible("HSR Layout, Bengaluru", "HSR Layout")
    assert not compatible("the", "the")  # stopwords only: nothing to compare
    assert not compatible("former partner", "partner")  # a negator on one side only


def test_a_negated_or_ended_value_is_never_the_same_as_the_plain_one():
    assert not compatible("gym", "doesn't go to gym") and not compatible("gym", "stopped gym")
    assert not compatible("smoke", "doesn’t smoke") and not compatible("drive", "can't drive")
    assert not compatible("smoking", "quit smoking") and not compatible("sleeps with the AC", "can't sleep without AC")
    assert compatible("doesn't smoke", "does not smoke") and compatible("can't drive", "cannot drive")


def test_value_tokens_and_normal_form():
    assert value_tokens("The Café at Mumbai") == {"cafe", "mumbai"}  # accents folded, stopwords dropped
    assert normalize_value("HSR Layout, Bengaluru") == normalize_value("bengaluru hsr layout") == "bengaluru hsr layout"
    assert normalize_value("1994-05-17") == normalize_value("--05-17") == "05-17"  # a birthday is its month-day


@pytest.mark.parametrize("text, expected", [
    ("Ananya Mehta is", "Ananya Mehta"),
    ("Main Pune mein rehta", "Pune"),  # leading non-names are skipped
    ("Goa, then Delhi", "Goa"),  # punctuation ends the name
    ("Ananya Mehta Kapoor Singh", "Ananya Mehta Kapoor"),  # at most three words
    ("[NAME] is my brother", None),  # a redaction placeholder is no name
    ("lisbon", None),
])
def test_leading_name(text, expected):
    assert leading_name(text) == expected


@pytest.mark.parametrize("text, expected", [
    ("Hum log Mumbai", "Mumbai"),
    ("we moved to Navi Mumbai", "Navi Mumbai"),
    ("I love My", None),  # "My" starts sentences, it names nothing
    ("Main", None),
    ("from <PLACE>", None),
])
def test_trailing_name(text, expected):
    assert trailing_name(text) == expected


@pytest.mark.parametrize("text, expected", [
    ("honestly learn the piano this year, because why not", "learn the piano"),
    ("it is the best", None),  # a pronoun is no value
    ("one two three four five six seven eight nine", None),  # longer than 8 words
    ("[PHONE]", None),
    ("the", None),  # no content word
])
def test_phrase_value(text, expected):
    assert phrase_value(text) == expected


def _birthday(rule_name: str, text: str, said: date) -> str | None:
    m = next(r for r in RULES if r.name == rule_name).pattern.search(text)
    return birthday_value(m, said)


def test_birthday_value():
    assert _birthday("birthday_is", "my birthday is 17 may", date(2024, 1, 1)) == "--05-17"
    assert _birthday("birthday_is", "my birthday is on May 17th", date(2024, 1, 1)) == "--05-17"
    assert _birthday("birthday_is", "my birthday is 31 feb", date(2024, 1, 1)) is None
    # with an age the year follows: the next 17 May on or after the message is the 30th birthday
    assert _birthday("birthday_turn", "I turn 30 on 17 May", date(2024, 5, 17)) == "1994-05-17"
    assert _birthday("birthday_turn", "I turn 30 on 17 May", date(2024, 5, 18)) == "1995-05-17"
    assert _birthday("birthday_turn", "I turn 30 on 29 Feb", date(2024, 1, 1)) is None  # 1994 had no 29 Feb
