"""Messages -> claims: only the user's own statements, one claim per value per message, with evidence."""

from datetime import date, datetime, timedelta

import polars as pl
import pytest

from truffle_assets.memory.facts.extraction import claims_from_text, extract_claims
from truffle_assets.memory.facts.schema import CLAIM_COLUMNS
from truffle_assets_tests.memory.facts.frames import USER, messages

SAID = date(2024, 5, 11)


def claims(text: str, subject: str = USER) -> list[tuple[str, str, str]]:
    return sorted((c["predicate"], c["value"], c["rule"]) for c in claims_from_text(text, subject, SAID))


def test_extract_claims_frame():
    t = datetime(2023, 3, 14, 10, 0)
    df = messages([(USER, "I live in Pune, love it", t), ("Rohan Verma", "I live in Delhi", t),
                   (USER, "Kabir is my elder brother", t + timedelta(days=1)), (USER, None, t)])
    c = extract_claims(df)
    assert tuple(c.columns) == CLAIM_COLUMNS
    assert set(c["source"]) == {"rules"}
    assert set(zip(c["predicate"], c["value"])) == {("lives_in", "Pune"), ("brother", "Kabir")}  # only the user
    assert set(c["subject"]) == {USER}
    assert c.filter(pl.col("predicate") == "lives_in")["message_id"].to_list() == ["m0"]
    assert extract_claims(df).equals(c)  # deterministic ids and order
    assert c["id"].n_unique() == c.height
    with pytest.raises(ValueError):
        extract_claims(df.drop("normalized_text"))


def test_empty_inputs():
    c = extract_claims(messages([]))
    assert c.height == 0 and tuple(c.columns) == CLAIM_COLUMNS
    assert claims_from_text("", USER, SAID) == [] and claims_from_text("  \n", USER, SAID) == []


def test_claim_ids_depend_on_message_and_value_not_wording():
    t = datetime(2023, 3, 14, 10, 0)
    a = extract_claims(messages([(USER, "I live in Pune", t)]))
    b = extract_claims(messages([(USER, "Main Pune mein rehta hoon", t)]))
    assert a["id"].to_list() == b["id"].to_list()  # same message id, predicate and value


def pv(text: str, subject: str = USER) -> list[tuple[str, str]]:
    return sorted((p, v) for p, v, _ in claims(text, subject))


def test_one_claim_per_value_within_a_message():
    # "vegetarian" and "don't eat meat" say the same: one claim
    assert pv("I'm a vegetarian, I don't eat meat") == [("diet", "vegetarian")]
    assert pv("I don't eat meat") == [("diet", "vegetarian")]
    assert pv("I live in Pune. I live in Pune") == [("lives_in", "Pune")]


def test_a_value_inside_a_longer_one_is_the_same_claim():
    got = pv("Bengaluru shift ho gaye! I live in HSR Layout, Bengaluru now")
    assert ("lives_in", "HSR Layout, Bengaluru") in got and ("lives_in", "Bengaluru") not in got


def test_self_introduction_must_agree_with_the_exporter():
    assert pv("Hi all, I'm Arjun here") == [("name", "Arjun")]
    assert pv("Hi all, I'm Arjun here", subject="Rohan Verma") == []
    assert pv("My name is Arjun Mehta", subject="Rohan Verma") == [("name", "Arjun Mehta")]


def test_a_pet_named_in_the_next_sentence_unless_asked_or_supposed():
    assert pv("We adopted a kitten! Her name is Mochi") == [("pet", "Mochi")]
    assert pv("Did you hear? We adopted a kitten! Her name is Mochi") == [("pet", "Mochi")]
    assert pv("We adopted a kitten, her name is Mochi?") == []
    assert pv("If we adopted a kitten, her name is Mochi") == []


@pytest.mark.parametrize("text, expected", [
    ("My younger sister Priya", "Sister (younger): Priya"),
    ("Meri chhoti behen Ria", "Sister (younger): Ria"),  # Hinglish age word -> younger
    ("Chess is my favourite game", "Favourite sport: Chess"),
    ("We got a puppy! His name is Bruno", "Pet (puppy): Bruno"),
    ("My dog Bruno", "Pet (dog): Bruno"),
    ("I live in Pune", "Lives in: Pune"),
    ("I can drive now", "Can drive"),  # not "Can: can drive"
])
def test_fact_text_names_the_qualifier(text, expected):
    assert [c["fact_text"] for c in claims_from_text(text, USER, SAID)] == [expected]


def test_an_arrangement_bounded_in_time_is_no_standing_fact():
    def modes(text: str) -> set[str]:
        return {v for p, v, _ in claims(text) if p == "work_mode"}

    assert modes("I'm WFH tomorrow, the plumber is coming") == set()
    assert modes("working from home till next week, doctor's orders") == set()
    assert modes("I work from home for two weeks after the surgery") == set()
    assert modes("I'm fully remote now") == {"remote"}
    assert modes("from today I'm fully remote") == {"remote"}  # a start, not a bound


def test_my_thing_is_a_name_says_which_one_and_a_description_says_nothing():
    def got(text: str) -> set[tuple[str, str]]:
        return {(p, v) for p, v, _ in claims(text)}

    assert got("my manager is Rohit") == {("manager", "Rohit")}
    assert got("my team is Payments") == {("team", "Payments")}
    assert got("my boss is a nightmare") == set()
    assert got("my flat is just a storage unit for my clothes") == set()
    assert got("my team is amazing") == set()


def test_forwarded_text_is_someone_elses_and_a_bounded_inability_is_no_skill():
    assert claims("Forwarded: I am a doctor at AIIMS with 20 years experience") == []
    assert claims("I am a cardiologist at AIIMS. Please share with everyone") == []
    assert claims("I can't drive today, car's at the garage") == []
    assert {(p, v) for p, v, _ in claims("I can't drive, never learnt")} == {("skill", "cannot drive")}
