"""Rule-based fact claims and their consolidation into a bitemporal fact table."""

import importlib.util
import sys
from datetime import date, datetime, timedelta
from pathlib import Path

import polars as pl
import pytest

from truffle_assets.memory.facts import (
    CLAIM_COLUMNS,
    FACT_COLUMNS,
    claims_from_text,
    compatible,
    consolidate,
    extract_claims,
    facts_as_of,
)

USER = "Arjun Mehta"
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
    ("I'm a product designer at Lumen Labs", ("job", "product designer at Lumen Labs")),
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
    # Hinglish
    ("Main Indore mein rehta hoon", ("lives_in", "Indore")),
    ("Hum log Chennai shift ho gaye last month", ("lives_in", "Chennai")),
    ("Hum log Chennai shift ho gaye last month", ("moved", "Chennai")),
    ("Acme mein backend developer hoon, kaam bahut hai", ("job", "backend developer at Acme")),
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


def _msgs(rows):
    out = []
    for i, (author, text, ts) in enumerate(rows):
        out.append({"id": f"m{i}", "chat_id": "c1" if i % 2 else "c2", "day": ts.date(), "ts": ts, "author": author,
                    "is_user": author == USER, "normalized_text": text})
    return pl.DataFrame(out, schema={"id": pl.String, "chat_id": pl.String, "day": pl.Date, "ts": pl.Datetime("us"),
                                     "author": pl.String, "is_user": pl.Boolean, "normalized_text": pl.String})


def test_extract_claims_frame():
    t = datetime(2023, 3, 14, 10, 0)
    df = _msgs([(USER, "I live in Pune, love it", t), ("Rohan Verma", "I live in Delhi", t),
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


def test_supersession_keeps_the_past():
    t = datetime(2021, 1, 10, 9)
    df = _msgs([
        (USER, "I live in Pune these days", t),
        (USER, "Pune rains are the best thing about living here", t + timedelta(days=100)),
        (USER, "Hum log Bengaluru shift ho gaye!", datetime(2022, 8, 22, 20)),
        (USER, "I live in HSR Layout, Bengaluru now", datetime(2022, 9, 20, 20)),
        (USER, "We adopted a puppy! His name is Bruno", t + timedelta(days=5)),
        (USER, "My goal this year is to run a half marathon", t + timedelta(days=6)),
        (USER, "New year goal: learn Spanish", t + timedelta(days=7)),
        (USER, "Finished my first half marathon today!", datetime(2023, 1, 21, 8)),
    ])
    f = consolidate(extract_claims(df))
    assert tuple(f.columns) == FACT_COLUMNS
    assert all(len(e) > 0 for e in f["evidence_message_ids"])  # evidence required
    lives = f.filter(pl.col("predicate") == "lives_in").sort("first_seen_at")
    assert lives["value"].to_list() == ["Pune", "HSR Layout, Bengaluru"]
    pune, blr = lives.row(0, named=True), lives.row(1, named=True)
    assert pune["valid_to"] == date(2022, 8, 22) == blr["valid_from"]
    assert pune["superseded_by"] == blr["id"] and blr["valid_to"] is None and blr["superseded_by"] is None
    assert sorted(pune["evidence_message_ids"]) == ["m0", "m1"]
    assert pune["confidence"] > 0.9  # two independent mentions beat one
    assert sorted(blr["evidence_message_ids"]) == ["m2", "m3"]  # "HSR Layout, Bengaluru" refines "Bengaluru"
    # where did I live in 2021? and now?
    then = facts_as_of(f, date(2021, 6, 1)).filter(pl.col("predicate") == "lives_in")
    now = facts_as_of(f, date(2024, 1, 1)).filter(pl.col("predicate") == "lives_in")
    assert then["value"].to_list() == ["Pune"] and now["value"].to_list() == ["HSR Layout, Bengaluru"]
    # multi-valued goals coexist; the completed half marathon closes its goal
    goals = {r["value"]: r for r in f.filter(pl.col("predicate") == "goal").iter_rows(named=True)}
    assert set(goals) == {"run a half marathon", "learn Spanish"}
    assert goals["run a half marathon"]["valid_to"] == date(2023, 1, 21) and goals["learn Spanish"]["valid_to"] is None
    assert f.filter(pl.col("predicate") == "pet")["value"].to_list() == ["Bruno"]
    assert consolidate(extract_claims(df)).equals(f)  # deterministic


def test_breakup_and_diet_change():
    df = _msgs([
        (USER, "Non-veg Friday is sacred", datetime(2020, 2, 14, 20)),
        (USER, "Neha and I broke up yesterday.", datetime(2020, 11, 16, 21)),
        (USER, "I'm dating someone. Her name is Priya", datetime(2021, 5, 20, 21)),
        (USER, "Day 3 of being fully vegetarian", datetime(2023, 1, 3, 9)),
    ])
    f = consolidate(extract_claims(df))
    diet = f.filter(pl.col("predicate") == "diet").sort("first_seen_at")
    assert diet["value"].to_list() == ["non-vegetarian", "vegetarian"]  # opposites, not one fact
    assert diet["superseded_by"][0] == diet["id"][1] and diet["valid_to"][0] == date(2023, 1, 3)
    partner = {r["value"]: r for r in f.filter(pl.col("predicate") == "partner").iter_rows(named=True)}
    assert partner["Neha"]["valid_to"] == date(2020, 11, 16) and partner["Neha"]["valid_from"] is None
    assert partner["Priya"]["valid_to"] is None
    assert facts_as_of(f, date(2020, 6, 1)).filter(pl.col("predicate") == "partner")["value"].to_list() == ["Neha"]


def test_compatible_values():
    assert compatible("HSR Layout", "HSR Layout, Bengaluru")
    assert compatible("run a half marathon", "half marathon")
    assert not compatible("Pune", "Bengaluru")
    assert not compatible("vegetarian", "non-vegetarian")
    assert compatible("1994-05-17", "--05-17") and not compatible("1994-05-17", "--05-18")


def test_empty_inputs():
    empty = _msgs([])
    c = extract_claims(empty)
    assert c.height == 0 and tuple(c.columns) == CLAIM_COLUMNS
    f = consolidate(c)
    assert f.height == 0 and tuple(f.columns) == FACT_COLUMNS


def _bench():
    spec = importlib.util.spec_from_file_location("facts_eval", Path(__file__).resolve().parents[2] / "benchmarks" / "facts_eval.py")
    mod = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("facts_eval", mod)
    spec.loader.exec_module(mod)
    return mod


def test_synthetic_corpus(tmp_path):
    from truffle_assets.synth import write_corpus

    fe = _bench()
    write_corpus(tmp_path, chats=4, tokens=40_000, seed=7)
    gt = __import__("json").loads((tmp_path / "ground_truth.json").read_text(encoding="utf-8"))
    inputs, _ = fe.normalized_messages(fe.load_messages(tmp_path, gt["user"]))
    claims_df, facts = fe.facts_for(inputs)
    s = fe.score(facts, gt)
    assert s["precision"] >= 0.95, s
    assert s["evidence_correct"] == 1.0
    assert s["recall"] >= 0.8
    assert all(ok for _, ok, _ in s["supersession"]), s["supersession"]
    # only the user's own messages produce claims, and every claim cites a real message
    ids = set(inputs["id"])
    assert set(claims_df["message_id"]) <= ids
    user_ids = set(inputs.filter(pl.col("is_user"))["id"])
    assert set(claims_df["message_id"]) <= user_ids
