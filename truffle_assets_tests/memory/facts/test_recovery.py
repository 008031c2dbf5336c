"""Recoveries end the conditions they name, from the user's words or the question they answer; they
assert nothing themselves."""

from datetime import datetime, timedelta

import polars as pl

from truffle_assets.memory.facts.consolidation import consolidate
from truffle_assets.memory.facts.extraction import extract_claims
from truffle_assets.memory.facts.recovery import ends, recovery_claims
from truffle_assets_tests.memory.facts.frames import USER, chat, claims

T = datetime(2024, 1, 1, 9)


def test_what_recovered_is_named_by_the_message_or_the_question_it_answers():
    df = chat([
        ("Mummy", "Ghutna kaisa hai ab?"), (USER, "ekdum theek. aaj walk bhi kiya 💪"),
        ("Riya", "did the iron report come?"), (USER, "yes, iron is back to normal :party_popper:"),
        (USER, "my shoulder has healed, finally"),
    ])
    got = {c["row"]["id"]: c["value"] for c in recovery_claims(df)}
    assert got == {"c1-1": "ghutna", "c1-3": "iron", "c1-4": "shoulder"}


def test_questions_wishes_futures_and_plain_wellbeing_are_no_recovery():
    df = chat([
        (USER, "is my back healed yet?"), (USER, "hope my knee heals soon"), (USER, "ankle theek ho jayega"),
        ("Mummy", "Main aa jaun?"), (USER, "nahi mummy, main theek hu"), (USER, "I'm fine, just tired"),
    ])
    assert recovery_claims(df) == []


def test_a_recovery_ends_the_condition_it_names_or_the_one_in_that_part_of_the_body():
    assert ends("ldl", "borderline high LDL cholesterol") and ends("back", "slipped disc")
    assert ends("pair", "sprained ankle") and ends("vitamin", "Vitamin D deficiency")
    assert not ends("ldl", "borderline high blood pressure") and not ends("back", "migraine")


def test_consolidation_closes_the_named_condition_and_keeps_the_rest():
    df = chat([
        (USER, "doctor says slipped disc, L4 L5. 6 weeks no gym"), (USER, "I also have mild asthma since school"),
        ("Ravi", "welcome back!"), (USER, "back feels fine now. physio was worth it"),
    ], gap=timedelta(days=30))
    f = consolidate(extract_claims(df))
    conditions = {r["value"]: r for r in f.filter(pl.col("predicate") == "condition").iter_rows(named=True)}
    assert conditions["slipped disc"]["valid_to"] == (T + timedelta(days=90)).date()
    assert "c1-3" in conditions["slipped disc"]["evidence_message_ids"]  # the recovery is its evidence
    assert all(r["valid_to"] is None for v, r in conditions.items() if v != "slipped disc")
    assert "recovered" not in set(f["predicate"])  # a recovery is no fact


def test_a_recovery_the_same_day_does_not_end_what_was_just_said():
    f = consolidate(claims([("condition", "sprained ankle", T, "a"), ("recovered", "ankle", T + timedelta(hours=3), "b")]))
    assert f["valid_to"].to_list() == [None] and f.height == 1
