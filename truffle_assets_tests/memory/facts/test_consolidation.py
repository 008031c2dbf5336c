"""Claims -> facts: timelines for single-valued predicates, coexistence for the rest, and the past kept."""

from datetime import date, datetime, timedelta

import polars as pl

from truffle_assets.memory.facts.consolidation import consolidate, facts_as_of
from truffle_assets.memory.facts.extraction import extract_claims
from truffle_assets.memory.facts.schema import CLAIM_SCHEMA, FACT_COLUMNS
from truffle_assets_tests.memory.facts.frames import USER, claims, messages


def test_empty_claims():
    f = consolidate(pl.DataFrame(schema=CLAIM_SCHEMA))
    assert f.height == 0 and tuple(f.columns) == FACT_COLUMNS


def test_supersession_keeps_the_past():
    t = datetime(2021, 1, 10, 9)
    df = messages([
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
    df = messages([
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


def _by(f: pl.DataFrame, predicate: str) -> dict[str, dict]:
    return {r["value"]: r for r in f.filter(pl.col("predicate") == predicate).iter_rows(named=True)}


D1, D2, D3 = datetime(2020, 1, 5, 9), datetime(2021, 3, 7, 9), datetime(2022, 8, 9, 9)


def test_a_past_value_said_again_is_evidence_not_a_move_back():
    f = consolidate(claims([("lives_in", "Pune", D1), ("lives_in", "Bengaluru", D2), ("lives_in", "Pune", D3)]))
    lives = _by(f, "lives_in")
    assert set(lives) == {"Pune", "Bengaluru"}
    pune, blr = lives["Pune"], lives["Bengaluru"]
    assert pune["evidence_message_ids"] == ["m0", "m2"] and pune["last_seen_at"] == D3
    assert pune["valid_to"] == D2.date() and pune["superseded_by"] == blr["id"]
    assert blr["valid_to"] is None  # still current


def test_a_refinement_joins_the_current_fact_and_names_it():
    f = consolidate(claims([("lives_in", "Bengaluru", D1), ("lives_in", "HSR Layout, Bengaluru", D2),
                            ("lives_in", "Bengaluru", D3)]))
    [row] = f.filter(pl.col("predicate") == "lives_in").iter_rows(named=True)
    assert row["value"] == "HSR Layout, Bengaluru"  # most content words
    assert row["valid_from"] == D1.date() and row["first_seen_at"] == D1 and row["last_seen_at"] == D3


def test_an_ending_without_a_known_start_is_recorded():
    f = consolidate(claims([("ex_partner", "Neha", D2)]))
    [row] = f.iter_rows(named=True)
    assert (row["predicate"], row["value"]) == ("partner", "Neha")
    assert row["valid_from"] is None and row["valid_to"] == D2.date() and row["superseded_by"] is None


def test_an_ending_of_a_superseded_partner_is_evidence_only():
    f = consolidate(claims([("partner", "Neha", D1), ("partner", "Priya", D2), ("ex_partner", "Neha", D3)]))
    partner = _by(f, "partner")
    assert set(partner) == {"Neha", "Priya"}
    assert partner["Neha"]["evidence_message_ids"] == ["m0", "m2"]
    assert partner["Neha"]["valid_to"] == D2.date() and partner["Neha"]["superseded_by"] == partner["Priya"]["id"]
    assert partner["Priya"]["valid_to"] is None  # ending Neha does not end Priya


def test_an_ending_closes_the_current_partner_without_successor():
    f = consolidate(claims([("partner", "Neha Kapoor", D1), ("ex_partner", "Neha", D2), ("partner", "Priya", D3)]))
    partner = _by(f, "partner")
    assert partner["Neha Kapoor"]["valid_to"] == D2.date() and partner["Neha Kapoor"]["superseded_by"] is None
    assert partner["Priya"]["valid_from"] == D3.date() and partner["Priya"]["valid_to"] is None


def test_timeless_predicates_have_no_valid_from():
    f = consolidate(claims([("hometown", "Kochi", D1), ("hometown", "Jaipur", D2), ("birthday", "--05-17", D1)]))
    home = _by(f, "hometown")
    assert home["Kochi"]["valid_from"] is None and home["Jaipur"]["valid_from"] is None
    assert home["Kochi"]["valid_to"] == D2.date() and home["Kochi"]["superseded_by"] == home["Jaipur"]["id"]
    assert _by(f, "birthday")["--05-17"]["valid_from"] is None


def test_a_full_birthday_outranks_a_month_day():
    f = consolidate(claims([("birthday", "--05-17", D1), ("birthday", "--05-17", D2), ("birthday", "1994-05-17", D3)]))
    assert f["value"].to_list() == ["1994-05-17"] and f["evidence_message_ids"][0].to_list() == ["m0", "m1", "m2"]


def test_multi_valued_predicates_coexist():
    f = consolidate(claims([("trip", "Goa", D1), ("trip", "Kyoto", D2), ("sister", "Meera", D2), ("sister", "Ria", D3)]))
    trips, sisters = _by(f, "trip"), _by(f, "sister")
    assert {v: r["valid_from"] for v, r in trips.items()} == {"Goa": D1.date(), "Kyoto": D2.date()}
    assert all(r["valid_to"] is None for r in trips.values())
    assert {r["valid_from"] for r in sisters.values()} == {None}  # siblings are for life


def test_a_generic_favourite_joins_its_typed_twin():
    f = consolidate(claims([("favourite", "Chess", D1), ("favourite_sport", "chess", D2), ("favourite", "Sushi", D3)]))
    assert set(zip(f["predicate"], f["value"])) == {("favourite_sport", "Chess"), ("favourite", "Sushi")}  # earliest wording
    assert _by(f, "favourite_sport")["Chess"]["evidence_message_ids"] == ["m0", "m1"]


def test_a_trip_home_is_no_trip():
    f = consolidate(claims([("lives_in", "HSR Layout, Bengaluru", D1), ("hometown", "Kochi", D1),
                            ("trip", "Bengaluru", D2), ("trip", "Kochi", D2), ("trip", "Goa", D3)]))
    assert list(_by(f, "trip")) == ["Goa"]
    other = consolidate(claims([("lives_in", "Pune", D1)], subject="Rohan").vstack(claims([("trip", "Pune", D2)])))
    assert list(_by(other, "trip")) == ["Pune"]  # someone else's home


def test_only_a_later_completion_closes_a_goal():
    early = consolidate(claims([("completed", "first half marathon", D1), ("goal", "run a half marathon", D2)]))
    assert _by(early, "goal")["run a half marathon"]["valid_to"] is None
    late = consolidate(claims([("goal", "run a half marathon", D1), ("completed", "first half marathon", D3),
                               ("goal", "learn Spanish", D2)]))
    goals, done = _by(late, "goal"), _by(late, "completed")
    assert goals["run a half marathon"]["valid_to"] == D3.date()
    assert goals["run a half marathon"]["superseded_by"] == done["first half marathon"]["id"]
    assert goals["learn Spanish"]["valid_to"] is None


def test_confidence_counts_each_message_once():
    one_msg = consolidate(claims([("pet", "Bruno", D1, "m0", 0.8), ("pet", "Bruno", D1, "m0", 0.9)]))
    assert one_msg["confidence"].to_list() == [0.9]
    two_msgs = consolidate(claims([("pet", "Bruno", D1, "m0", 0.8), ("pet", "Bruno", D2, "m1", 0.5)]))
    assert two_msgs["confidence"].to_list() == [0.9]  # 1 - 0.2 * 0.5
    many = consolidate(claims([("pet", "Bruno", D1, f"m{i}", 1.0) for i in range(5)]))
    assert many["confidence"].to_list() == [0.99]  # never certain


def test_facts_do_not_depend_on_claim_order():
    c = claims([("lives_in", "Pune", D1), ("lives_in", "Bengaluru", D2), ("goal", "learn Spanish", D1),
                ("ex_partner", "Neha", D3), ("partner", "Neha", D1)])
    f = consolidate(c)
    assert consolidate(c.reverse()).equals(f)
    assert set(f["superseded_by"].drop_nulls()) <= set(f["id"])


def test_facts_as_of_edges():
    f = consolidate(claims([("lives_in", "Pune", D1), ("lives_in", "Bengaluru", D2), ("hometown", "Kochi", D3)]))

    def held(when):
        return sorted(facts_as_of(f, when)["value"].to_list())

    assert held(date(2019, 1, 1)) == ["Kochi"]  # timeless: true before it was first said
    assert held(D1.date()) == ["Kochi", "Pune"]  # valid_from is inclusive
    assert held(D2.date()) == ["Bengaluru", "Kochi"]  # valid_to is exclusive: the successor holds that day
    assert held(D2) == held(D2.date())  # a datetime means its day


def test_an_ending_closes_the_fact_and_links_what_replaced_it():
    t = datetime(2023, 3, 1, 9)
    df = messages([
        (USER, "I work at Infosys", t),
        (USER, "Handed in my notice today", t + timedelta(days=30)),
        (USER, "Joined Flipkart today, new laptop and all", t + timedelta(days=90)),
        (USER, "We relocated from Kochi to Hyderabad", t + timedelta(days=95)),
    ])
    f = consolidate(extract_claims(df))
    emp = f.filter(pl.col("predicate") == "employer").sort("first_seen_at")
    assert emp["value"].to_list() == ["Infosys", "Flipkart"]
    old, new = emp.row(0, named=True), emp.row(1, named=True)
    assert old["valid_to"] == (t + timedelta(days=30)).date()  # the notice, not the new job, ended it
    assert old["superseded_by"] == new["id"] and new["valid_to"] is None
    assert sorted(old["evidence_message_ids"]) == ["m0", "m1"]
    lives = f.filter(pl.col("predicate") == "lives_in").sort("first_seen_at")
    kochi = lives.filter(pl.col("value") == "Kochi").row(0, named=True)
    hyd = lives.filter(pl.col("value") == "Hyderabad").row(0, named=True)
    assert kochi["valid_to"] == hyd["valid_from"] == (t + timedelta(days=95)).date()
    assert kochi["superseded_by"] == hyd["id"] and hyd["valid_to"] is None


def test_the_opposite_state_supersedes():
    t = datetime(2022, 1, 1, 9)
    df = messages([(USER, "I can't swim", t), (USER, "finally I can swim now!", t + timedelta(days=200))])
    f = consolidate(extract_claims(df)).filter(pl.col("predicate") == "skill").sort("first_seen_at")
    assert f["value"].to_list() == ["cannot swim", "can swim"]
    assert f["valid_to"].to_list() == [(t + timedelta(days=200)).date(), None]
    assert f["superseded_by"][0] == f["id"][1]


def test_stopping_a_habit_ends_the_habit_it_names():
    """An ending names the activity, not its every detail: "stopped drinking" ends "drinks beer on
    Fridays", "quit smoking" ends "occasional smoker"; an unrelated habit stays current."""
    t = datetime(2022, 1, 1, 9)
    f = consolidate(claims([
        ("habit", "drinks beer on Fridays", t), ("habit", "occasional smoker", t + timedelta(days=1)),
        ("habit", "journals every night", t + timedelta(days=2)),
        ("habit", "stopped drinking", t + timedelta(days=90)), ("habit", "quit smoking", t + timedelta(days=120)),
    ])).sort("first_seen_at")
    ended = dict(zip(f["value"], f["valid_to"]))
    assert ended == {"drinks beer on Fridays": (t + timedelta(days=90)).date(),
                     "occasional smoker": (t + timedelta(days=120)).date(),
                     "journals every night": None, "stopped drinking": None, "quit smoking": None}
    by_value = dict(zip(f["value"], f["id"]))
    assert dict(zip(f["value"], f["superseded_by"]))["occasional smoker"] == by_value["quit smoking"]
    # the negative side must name less, not more: "no sugar in coffee" is a detail, not the end of coffee
    g = consolidate(claims([("likes", "coffee", t), ("likes", "no sugar in coffee", t + timedelta(days=30))]))
    assert dict(zip(g["value"], g["valid_to"])) == {"coffee": None, "no sugar in coffee": None}
    # a skill learnt ends its lack, whichever side names the detail
    s = consolidate(claims([("skill", "cannot ride a scooter", t), ("skill", "can ride", t + timedelta(days=60))]))
    assert dict(zip(s["value"], s["valid_to"])) == {"cannot ride a scooter": (t + timedelta(days=60)).date(), "can ride": None}


def test_leaving_a_job_ends_its_title_team_and_office():
    t = datetime(2022, 1, 10, 9)
    df = messages([
        (USER, "I work at Infosys", t),
        (USER, "I'm a senior analyst, in the risk team", t + timedelta(days=2)),
        (USER, "my office is in Whitefield", t + timedelta(days=3)),
        (USER, "Handed in my notice today", t + timedelta(days=300)),
        (USER, "Joined Flipkart today", t + timedelta(days=330)),
    ])
    f = consolidate(extract_claims(df))
    current = f.filter(pl.col("valid_to").is_null())
    assert set(current["predicate"]) >= {"employer"}
    assert current.filter(pl.col("predicate") == "employer")["value"].to_list() == ["Flipkart"]
    for pred in ("job", "office"):
        old = f.filter(pl.col("predicate") == pred)
        assert old.height == 1 and old["valid_to"][0] == (t + timedelta(days=300)).date(), pred


def test_a_title_named_with_the_next_employer_outlives_the_old_one():
    """The offer names the new title while the old job still holds: it belongs to the new employer."""
    t = datetime(2022, 1, 10, 9)
    df = messages([
        (USER, "I work at Infosys", t),
        (USER, "I'm a business analyst at Infosys", t + timedelta(days=1)),
        (USER, "Offer letter aa gaya! Flipkart mein senior analyst. March se join karunga", t + timedelta(days=280)),
        (USER, "Last day at Infosys today", t + timedelta(days=300)),
        (USER, "Joined Flipkart today", t + timedelta(days=310)),
    ])
    f = consolidate(extract_claims(df))
    jobs = {r["value"]: r["valid_to"] for r in f.filter(pl.col("predicate") == "job").iter_rows(named=True)}
    assert jobs.get("senior analyst at Flipkart", date.min) is None, jobs  # still the title now
    assert jobs.get("business analyst") is not None, jobs  # the Infosys one ended


def test_a_first_day_without_a_company_is_at_the_accepted_offer():
    """The company is named with the offer and not on the first day; an offer accepted long before, or
    none at all, names nothing."""
    t = datetime(2022, 1, 10, 9)
    df = messages([
        (USER, "I work at Wipro", t),
        (USER, "Accepted the Deloitte offer 🎉", t + timedelta(days=200)),
        (USER, "Handed in my notice today", t + timedelta(days=210)),
        (USER, "first day done! I'm a consultant now, the new office is huge", t + timedelta(days=240)),
    ])
    f = consolidate(extract_claims(df))
    emp = {r["value"]: r for r in f.filter(pl.col("predicate") == "employer").iter_rows(named=True)}
    assert set(emp) == {"Wipro", "Deloitte"}, emp
    assert emp["Deloitte"]["valid_to"] is None and emp["Deloitte"]["valid_from"] == (t + timedelta(days=240)).date()
    assert emp["Deloitte"]["evidence_message_ids"] == ["m3"]  # the first day, not the offer
    assert emp["Wipro"]["superseded_by"] == emp["Deloitte"]["id"]
    offer = f.filter(pl.col("predicate") == "offer").row(0, named=True)
    assert offer["valid_to"] == (t + timedelta(days=240)).date() and offer["superseded_by"] == emp["Deloitte"]["id"]

    for rows in ([(USER, "first day done! I'm a consultant now", t)],
                 [(USER, "Accepted the Deloitte offer", t), (USER, "first day done! I'm a consultant now", t + timedelta(days=400))]):
        f = consolidate(extract_claims(messages(rows)))
        assert f.filter(pl.col("predicate").is_in(["employer", "started_job", "started_unnamed_job"])).height == 0, f


def test_a_habit_and_its_negation_are_two_states_not_one_fact():
    """"I don't go to the gym" then "I go every morning now" (or the other way round): the later state
    ends the earlier one; neither swallows the other as a restatement."""
    t = datetime(2022, 1, 10, 9)
    for first, then, was, now in (
            ("I don't go to the gym, no time", "I go to the gym every morning now", "doesn't go to gym", "gym"),
            ("I go to the gym every morning", "I don't go to the gym anymore", "gym", "stopped gym"),
            ("I smoke a lot these days", "I don't smoke", "smoke", "doesn't smoke")):
        f = consolidate(extract_claims(messages([(USER, first, t), (USER, then, t + timedelta(days=60))])))
        habits = {r["value"]: r for r in f.filter(pl.col("predicate") == "habit").iter_rows(named=True)}
        assert set(habits) == {was, now}, habits
        assert habits[was]["valid_to"] == (t + timedelta(days=60)).date() and habits[now]["valid_to"] is None
        assert habits[was]["evidence_message_ids"] == ["m0"] and habits[now]["evidence_message_ids"] == ["m1"]


def test_cancelling_a_membership_ends_the_habit_it_paid_for():
    t = datetime(2022, 1, 10, 9)
    for first, then, was in (("joined Cult in Aundh, 6 am batch", "cancelled my Cult membership last week", "gym (Cult)"),
                             ("I go to Gold's Gym every evening", "cancelled my gym membership, too expensive", "Gym")):
        f = consolidate(extract_claims(messages([(USER, first, t), (USER, then, t + timedelta(days=60))])))
        habits = {r["value"]: r for r in f.filter(pl.col("predicate") == "habit").iter_rows(named=True)}
        assert habits[was]["valid_to"] == (t + timedelta(days=60)).date(), habits
        assert [v for v, r in habits.items() if r["valid_to"] is None] == [next(v for v in habits if v != was)]
