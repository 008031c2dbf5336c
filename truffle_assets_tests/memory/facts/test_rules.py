"""The rule table: which English and Hinglish sentences state a fact, and which do not."""

from datetime import date

import pytest

from truffle_assets.memory.facts.extraction import claims_from_text
from truffle_assets.memory.facts.rules import GATES, RULES
from truffle_assets_tests.memory.facts.frames import USER

SAID = date(2024, 5, 11)


def claims(text: str, subject: str = USER) -> set[tuple[str, str]]:
    return {(c["predicate"], c["value"]) for c in claims_from_text(text, subject, SAID)}


@pytest.mark.parametrize("text, expected", [
    # English
    ("I live in Lisbon now, come visit", ("lives_in", "Lisbon")),
    ("We moved to Toronto last spring", ("lives_in", "Toronto")),
    ("I grew up in Kochi, came here for college", ("hometown", "Kochi")),
    ("I turn 30 on 4 June, keep the evening free", ("birthday", "1994-06-04")),
    ("I turn 30 on 4 March, keep the evening free", ("birthday", "1995-03-04")),  # next March
    ("My birthday is on 9th October", ("birthday", "--10-09")),
    ("I'm a product designer at Lumen Labs", ("job", "product designer")),
    ("I'm a product designer at Lumen Labs", ("employer", "Lumen Labs")),
    ("Joining the payments team as a staff engineer next week", ("job", "staff engineer")),
    ("My favourite band is Radiohead", ("favourite_music", "Radiohead")),
    ("Sushi is my weakness honestly", ("favourite", "Sushi")),
    ("Chess is my favourite game, I play daily", ("favourite_sport", "Chess")),
    ("Three weeks of being fully vegetarian now", ("diet", "vegetarian")),
    ("My elder sister Meera is visiting", ("sister", "Meera")),
    ("Tarun is my younger brother", ("brother", "Tarun")),
    ("Ishaan has been my best friend since college", ("best_friend", "Ishaan")),
    ("I'm seeing someone! His name is Dev", ("partner", "Dev")),
    ("We adopted a kitten today. Her name is Mochi", ("pet", "Mochi")),
    ("Finished my first marathon today, legs are dead", ("completed", "first marathon")),
    ("Meher and I are engaged!!", ("engaged", "Meher")),
    ("Landed in Kyoto! Jet lag is real", ("trip", "Kyoto")),
    ("Last day at Acme Corp today, feeling emotional", ("left_job", "Acme Corp")),
    ("My goal this year is to learn the piano", ("goal", "learn the piano")),
    ("I want to learn Japanese", ("goal", "learn Japanese")),
    ("We're saving for a new car", ("goal", "save for new car")),
    ("Took the Freshworks offer, joining in May", ("offer", "Freshworks")),
    ("first day today, I'm officially a data analyst", ("started_unnamed_job", "a new job")),  # named by consolidation
    ("job ka pehla din tha aaj, sab log acche hain", ("started_unnamed_job", "a new job")),
    # Hinglish
    ("Main Indore mein rehta hoon", ("lives_in", "Indore")),
    ("Hum log Chennai shift ho gaye last month", ("lives_in", "Chennai")),
    ("Hum log Chennai shift ho gaye last month", ("moved", "Chennai")),
    ("Acme mein backend developer hoon, kaam bahut hai", ("job", "backend developer")),
    ("Acme mein backend developer hoon, kaam bahut hai", ("employer", "Acme")),
    ("Momos ke liye toh main kuch bhi kar sakta hoon", ("favourite", "Momos")),
    ("Surat pahunch gaya! Flat bhi mil gaya Adajan mein", ("lives_in", "Adajan, Surat")),
    ("Mujhe guitar seekhna hai", ("goal", "learn guitar")),
    ("Ria meri chhoti behen hai", ("sister", "Ria")),
    ("Main ab pure vegetarian ho gaya", ("diet", "vegetarian")),
])
def test_positive_patterns(text, expected):
    assert expected in claims(text)


@pytest.mark.parametrize("text", [
    "Do you live in Delhi?",  # question
    "Kya tum Mumbai shift ho gaye?",  # Hinglish question
    "If I moved to Delhi I'd take the metro everywhere",  # hypothetical
    "Agar main Delhi shift ho gaya toh sab badal jayega",  # Hinglish hypothetical
    "I don't live in Pune anymore",  # negation
    "I'm not vegetarian",  # negation
    "Rohan lives in Delhi",  # third person
    "She moved to Mumbai last year",  # third person
    "I'm so tired today",  # not a fact
    "I finally finished Succession, the ending was wild",  # a show is no achievement
    "Ghar pahunch gaya",  # arriving home is no trip
    "Mummy is home now",  # not a hometown
    "The goal is to ship the migration by Friday",  # a work goal, not the user's
])
def test_negative_patterns(text):
    got = {p for p, _ in claims(text)}
    assert not got & {"lives_in", "moved", "diet", "hometown", "completed", "trip", "goal"}, got


@pytest.mark.parametrize("text", [
    "First day of school for the little one!",
    "first day at the gym, I'm a wreck",
    "new job, first day is tomorrow, I'm an analyst there",
    "Is it your first day as a manager?",
])
def test_a_first_day_that_is_no_new_job(text):
    assert "started_unnamed_job" not in {p for p, _ in claims(text)}


def test_every_rule_has_a_gate_and_a_unique_name():
    names = [r.name for r in RULES]
    assert len(names) == len(set(names))
    assert set(GATES) == set(names)


@pytest.mark.parametrize("rule", RULES, ids=lambda r: r.name)
def test_rule_fields_are_consistent(rule):
    assert rule.value in {"name", "phrase", "place", "role", "org", "birthday", "const"}
    assert rule.scope in {"sentence", "message"}
    assert 0.5 <= rule.confidence <= 0.95  # one rule is never certain: repetition is what raises confidence
    assert (rule.const is not None) == (rule.value == "const")
    # the capture group the value kind reads is in the pattern
    group = {"role": "role", "org": "org", "birthday": "d", "const": None}.get(rule.value, "v")
    assert group is None or group in rule.pattern.groupindex


def test_curly_apostrophes_match_like_straight_ones():
    assert claims("I’m a product designer at Lumen Labs") == claims("I'm a product designer at Lumen Labs") == {
        ("job", "product designer"), ("employer", "Lumen Labs")}
    assert ("lives_in", "Goa") in claims("I’m based in Goa")


def test_one_sentence_can_state_a_home_and_a_move():
    assert claims("I moved to Pune last year") == {("lives_in", "Pune"), ("moved", "Pune")}
