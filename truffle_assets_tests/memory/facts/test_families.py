"""Endings close what they end, in every tier: predicate families in consolidation, on claims read
from written messages (the offline reader) and on claims in a model's own words (the LLM tier)."""

from datetime import datetime, timedelta

import polars as pl

from truffle_assets.memory.facts.consolidation import consolidate, one_value_conflicts
from truffle_assets.memory.facts.extraction import extract_claims
from truffle_assets.memory.facts.families import canonical, org_core, same_value, family_of
from truffle_assets.memory.facts.schema import CLAIM_SCHEMA
from truffle_assets.memory.profile import build_profile
from truffle_assets_tests.memory.facts.frames import USER, claims, messages

T = datetime(2023, 3, 1, 9)


def _current(f: pl.DataFrame) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for r in f.filter(pl.col("valid_to").is_null()).sort("predicate", "value").iter_rows(named=True):
        out.setdefault(r["predicate"], []).append(r["value"])
    return out


def _llm(rows: list[tuple[str, str, datetime, str]]) -> pl.DataFrame:
    """Claims as the LLM tier files them: (predicate, value, ts, message id), in the model's vocabulary."""
    return pl.DataFrame([{"id": f"llm{i}", "chat_id": "c1", "day": ts.date(), "subject": USER, "predicate": p,
                          "value": v, "category": "work", "fact_text": f"{USER} {p} {v}", "confidence": 0.8,
                          "message_id": mid, "ts": ts, "source": "llm"} for i, (p, v, ts, mid) in enumerate(rows)],
                        schema=CLAIM_SCHEMA)


def test_a_last_day_closes_the_employer_its_title_and_its_start_whatever_they_were_filed_as():
    """"Last day at Zentrix" is read only as the event "Left: Zentrix"; it still ends "Works at: Zentrix
    Labs" (a shorter name of the same company), the title held there and "Started at: Zentrix Labs"."""
    df = messages([
        (USER, "first day at Zentrix Labs today!", T),
        (USER, "I'm a data engineer at Zentrix Labs", T + timedelta(days=40)),
        (USER, "Last day at Zentrix today", T + timedelta(days=400)),
        (USER, "first day at Brightwave today!", T + timedelta(days=430)),
    ])
    claims = extract_claims(df)
    assert set(claims["predicate"]) >= {"started_job", "employer", "job", "left_job"}
    assert "end:employer" not in set(claims["predicate"])  # the reader says only that he left
    f = consolidate(claims)
    left = (T + timedelta(days=400)).date()
    emp = {r["value"]: r for r in f.filter(pl.col("predicate") == "employer").iter_rows(named=True)}
    assert set(emp) == {"Zentrix Labs", "Brightwave"}
    assert emp["Zentrix Labs"]["valid_to"] == left and emp["Brightwave"]["valid_to"] is None
    assert emp["Zentrix Labs"]["superseded_by"] == emp["Brightwave"]["id"]  # the next job, a month later
    assert sorted(emp["Zentrix Labs"]["evidence_message_ids"]) == ["m0", "m1", "m2"]
    started = {r["value"]: r for r in f.filter(pl.col("predicate") == "started_job").iter_rows(named=True)}
    assert started["Zentrix Labs"]["valid_to"] == left and started["Brightwave"]["valid_to"] is None
    assert f.filter(pl.col("predicate") == "job")["valid_to"].to_list() == [left]
    assert _current(f) == {"employer": ["Brightwave"], "left_job": ["Zentrix"], "started_job": ["Brightwave"]}
    assert one_value_conflicts(f) == []


def test_the_llm_tier_names_the_same_facts_its_own_way_and_its_endings_close_them():
    """A model writes `works_at`, `company`, `quit`, `end:city`: the same employer and home timelines
    as the reader's, and its endings close facts the reader filed."""
    df = messages([
        (USER, "I work at Zentrix Labs", T),
        (USER, "I live in Chennai", T + timedelta(days=1)),
        (USER, "I'm vegetarian", T + timedelta(days=2)),
    ])
    rules = extract_claims(df)
    llm = _llm([
        ("works_at", "Zentrix Labs Pvt Ltd", T + timedelta(days=20), "x1"),
        ("quit", "Zentrix", T + timedelta(days=300), "x2"),  # a generic ending: the employer it names
        ("company", "Northwind Inc", T + timedelta(days=320), "x3"),
        ("end:city", "Chennai", T + timedelta(days=330), "x4"),
        ("quit", "smoking", T + timedelta(days=340), "x5"),  # a habit never stated: one that ended there
        ("end:diet", "vegetarian", T + timedelta(days=350), "x6"),
        ("left", "the party early", T + timedelta(days=360), "x7"),  # no value held: no employer either
    ])
    f = consolidate(pl.concat([rules, llm]))
    emp = {r["value"]: r for r in f.filter(pl.col("predicate") == "employer").iter_rows(named=True)}
    assert set(emp) == {"Zentrix Labs Pvt Ltd", "Northwind Inc"}  # "Zentrix Labs" joined the longer name
    assert emp["Zentrix Labs Pvt Ltd"]["valid_to"] == (T + timedelta(days=300)).date()
    assert sorted(emp["Zentrix Labs Pvt Ltd"]["evidence_message_ids"]) == ["m0", "x1", "x2"]
    assert emp["Zentrix Labs Pvt Ltd"]["superseded_by"] == emp["Northwind Inc"]["id"]
    assert f.filter(pl.col("predicate") == "lives_in")["valid_to"].to_list() == [(T + timedelta(days=330)).date()]
    assert f.filter(pl.col("predicate") == "diet")["valid_to"].to_list() == [(T + timedelta(days=350)).date()]
    assert f.filter(pl.col("predicate") == "habit").select("value", "valid_to").rows() == [
        ("smoking", (T + timedelta(days=340)).date())]
    assert _current(f) == {"employer": ["Northwind Inc"]}


def test_endings_read_from_chat_close_facts_filed_under_another_name_of_the_family():
    """"no more running" (a habit) ends the hobby; "vegan band" ends the diet and the diet before it
    is taken up again; an engagement ends the dating that came before it and names the partner."""
    df = messages([
        (USER, "I love running", T),
        (USER, "I'm vegetarian", T + timedelta(days=1)),
        (USER, "I'm dating someone. Her name is Priya", T + timedelta(days=2)),
        (USER, "I'm vegan now", T + timedelta(days=60)),
        (USER, "knee surgery. no more running for me", T + timedelta(days=90)),
        (USER, "vegan band. wapas vegetarian", T + timedelta(days=120)),
        (USER, "Priya said yes!! I'm engaged", T + timedelta(days=200)),
    ])
    f = consolidate(extract_claims(df))
    hobby = f.filter(pl.col("predicate") == "hobby").row(0, named=True)
    assert hobby["value"] == "running" and hobby["valid_to"] == (T + timedelta(days=90)).date()
    diet = f.filter(pl.col("predicate") == "diet").sort("first_seen_at", "valid_from")
    assert diet.select("value", "valid_to").rows() == [
        ("vegetarian", (T + timedelta(days=60)).date()), ("vegan", (T + timedelta(days=120)).date()),
        ("vegetarian", None)]
    assert diet["superseded_by"][1] == diet["id"][2]  # vegan was followed by vegetarian again
    partner = f.filter(pl.col("predicate") == "partner").row(0, named=True)
    status = f.filter(pl.col("predicate") == "relationship_status").row(0, named=True)
    assert partner["valid_to"] == (T + timedelta(days=200)).date() and partner["superseded_by"] == status["id"]
    assert status["value"] == "engaged to Priya" and status["valid_to"] is None
    assert status["fact_text"] == "Relationship: engaged to Priya"


def test_a_goal_closes_when_it_is_done_or_taken_up():
    df = messages([
        (USER, "My goal this year is to run the Pune 10K in january", T),
        (USER, "2024 resolution: learn Kathak properly", T + timedelta(days=5)),
        (USER, "Pune 10K done!! 1:08", T + timedelta(days=60)),
        (USER, "Kathak classes every Saturday now", T + timedelta(days=90)),
    ])
    f = consolidate(extract_claims(df))
    goals = {r["value"]: r["valid_to"] for r in f.filter(pl.col("predicate") == "goal").iter_rows(named=True)}
    assert len(goals) == 2 and all(v is not None for v in goals.values()), goals


def test_two_tiers_reading_one_message_differently_are_a_conflict_until_a_newer_value():
    rules = extract_claims(messages([(USER, "I live in Pune", T)]))
    llm = _llm([("lives_in", "Mumbai", T, "m0")])  # the model read the same line as Mumbai
    f = consolidate(pl.concat([rules, llm]))
    [conflict] = one_value_conflicts(f)
    assert (conflict["predicate"], conflict["values"]) == ("lives_in", ["Mumbai", "Pune"])
    later = _llm([("lives_in", "Mumbai", T, "m0"), ("lives_in", "Bengaluru", T + timedelta(days=30), "x9")])
    g = consolidate(pl.concat([rules, later]))
    assert one_value_conflicts(g) == [] and _current(g)["lives_in"] == ["Bengaluru"]
    assert set(g.filter(pl.col("valid_to").is_not_null())["value"]) == {"Pune", "Mumbai"}


def test_the_profile_shows_an_ended_value_under_previously_never_as_current():
    df = messages([
        (USER, "I work at Zentrix Labs", T),
        (USER, "Last day at Zentrix today", T + timedelta(days=300)),
        (USER, "I sold my Enfield", T + timedelta(days=310)),
        (USER, "I bought an Enfield Classic 350", T - timedelta(days=100)),
    ])
    f = consolidate(extract_claims(df))
    prof = build_profile(f, USER, datetime(2024, 6, 1))
    shown = {(e["predicate"], e["value"]) for cat in prof["facts"].values() for e in cat}
    assert ("employer", "Zentrix Labs") not in shown
    assert not any(p == "vehicle" for p, _ in shown)
    previously = {(p["predicate"], p["value"]): p["until"] for p in prof["previously"]}
    assert previously[("employer", "Zentrix Labs")] == str((T + timedelta(days=300)).date())
    assert any(p == "vehicle" for p, _ in previously)
    assert ("left_job", "Zentrix") in shown  # the event itself stays true


def test_family_vocabulary():
    assert canonical("works_at") == "employer" and canonical("end:company") == "end:employer"
    assert canonical("city") == "lives_in" and canonical("job") == "job" and canonical("trip") == "trip"
    assert org_core("Zentrix Labs Pvt Ltd") == "Zentrix" and org_core("Labs") == "Labs"
    emp = family_of("employer")
    assert same_value(emp, "Zentrix Technologies", "Zentrix Labs") and not same_value(emp, "Zoho", "Zentrix")
    assert not same_value(family_of("lives_in"), "Pune Labs", "Pune Tech")  # only company names drop suffixes


def test_an_age_ends_on_the_next_birthday_once_the_history_reaches_it():
    claims = extract_claims(messages([
        (USER, "My birthday is on 14 August", datetime(2023, 3, 1, 9)),
        (USER, "I'm 28 now, feeling old", datetime(2023, 8, 20, 9)),
        (USER, "I live in Pune", datetime(2024, 9, 1, 9)),
    ]))
    assert set(claims["predicate"]) == {"birthday", "age", "lives_in"}
    before = consolidate(claims.filter(pl.col("ts") < datetime(2024, 1, 1)))
    assert before.filter(pl.col("predicate") == "age").select("value", "valid_to").rows() == [("28", None)]
    after = consolidate(claims)  # the history now reaches past 14 August 2024
    assert after.filter(pl.col("predicate") == "age")["valid_to"].to_list() == [datetime(2024, 8, 14).date()]


def test_a_flat_described_somewhere_else_is_a_move_that_ends_the_old_home():
    """No "moved" is said: a new place described with its flat ends the flat, the rent and the household
    of the one before, and a flat type lived in before starts again; a bare city refined by a described
    flat is no move."""
    t2 = T + timedelta(days=300)
    f = consolidate(claims([
        ("lives_in", "Indiranagar", T, "a"), ("home_type", "2BHK", T, "a"),
        ("lives_in", "Koramangala", T + timedelta(days=60), "b"), ("home_type", "1BHK", T + timedelta(days=60), "b"),
        ("lives_with", "alone", T + timedelta(days=60), "b"),
        ("lives_in", "Whitefield", t2, "c"), ("home_type", "2BHK", t2, "c"), ("rent", "₹30,000 a month", t2, "c"),
    ]))
    assert _current(f) == {"home_type": ["2BHK"], "lives_in": ["Whitefield"], "rent": ["₹30,000 a month"]}
    alone = f.filter(pl.col("predicate") == "lives_with").row(0, named=True)
    assert alone["valid_to"] == t2.date()
    types = f.filter(pl.col("predicate") == "home_type").sort("first_seen_at")
    assert types["valid_to"].to_list() == [(T + timedelta(days=60)).date(), t2.date(), None]
    refined = consolidate(claims([
        ("lives_in", "Bengaluru", T, "a"), ("lives_with", "two flatmates", T + timedelta(days=5), "b"),
        ("lives_in", "HSR Layout", T + timedelta(days=40), "c"), ("home_type", "2BHK", T + timedelta(days=40), "c"),
    ]))
    assert _current(refined)["lives_with"] == ["two flatmates"]


def test_a_later_opposite_feeling_about_the_same_thing_ends_the_earlier_one():
    f = consolidate(claims([
        ("condition", "scared of dogs", T), ("dislikes", "horror movies", T),
        ("likes", "dog person", T + timedelta(days=400)), ("likes", "movies", T + timedelta(days=400)),
    ]))
    rows = {r["value"]: r for r in f.iter_rows(named=True)}
    assert rows["scared of dogs"]["valid_to"] == (T + timedelta(days=400)).date()
    assert rows["scared of dogs"]["superseded_by"] == rows["dog person"]["id"]
    assert rows["horror movies"]["valid_to"] is None  # "movies" is not the same thing as "horror movies"
    assert rows["dog person"]["valid_to"] is None


def test_endings_said_as_no_longer_anymore_a_layoff_a_split_or_a_death_close_what_they_end():
    d = timedelta(days=60)
    df = messages([
        (USER, "I work at Zoho", T), (USER, "I play the guitar every evening", T), (USER, "I'm dating Naina these days", T),
        (USER, "We adopted a puppy! His name is Bruno", T),
        (USER, "I don't play the guitar anymore", T + d), (USER, "I'm not with Airtel anymore, switched to Jio", T + d),
        (USER, "I'm not with Naina anymore", T + 2 * d), (USER, "got laid off from Zoho today", T + 3 * d),
        (USER, "Bruno passed away last night", T + 4 * d), (USER, "Dadaji passed away this morning", T + 4 * d),
    ])
    f = consolidate(extract_claims(df))
    ended = {(r["predicate"], r["value"]): r["valid_to"] for r in f.iter_rows(named=True)}
    assert ended[("hobby", "guitar")] == (T + d).date()
    assert ended[("partner", "Naina")] == (T + 2 * d).date()
    assert ended[("employer", "Zoho")] == (T + 3 * d).date() and ("left_job", "Zoho") in ended
    assert ended[("pet", "Bruno")] == (T + 4 * d).date()
    # "not with X anymore" and a death end only a value held under that name: nobody new is recorded
    assert not {v for _, v in ended} & {"Airtel", "Dadaji"}


def test_quitting_an_activity_is_no_job_and_giving_away_is_no_stopping():
    got = set(extract_claims(messages([
        (USER, "I quit badminton, my knees", T), (USER, "gave away my cat to my aunt", T),
        (USER, "I stopped going to the gym", T)])).select("predicate", "value").rows())
    assert got == {("habit", "quit badminton"), ("habit", "stopped gym")}


def test_hinglish_and_short_endings_close_the_value_in_force():
    d = timedelta(days=90)
    df = messages([
        (USER, "I'm vegan", T), (USER, "I work at Zoho", T), (USER, "I'm dating Naina these days", T),
        (USER, "got a new iPhone 13", T),
        (USER, "stopped being vegan, paneer jeet gaya", T + d), (USER, "hamara breakup ho gaya", T + d),
        (USER, "naukri chali gayi yaar", T + d), (USER, "mera phone chori ho gaya", T + d),
        (USER, "uska breakup ho gaya", T + d / 2),  # someone else's
    ])
    f = consolidate(extract_claims(df))
    assert _current(f).keys().isdisjoint({"diet", "employer", "partner", "phone"}), _current(f)
    assert set(f.filter(pl.col("valid_to") == (T + d).date())["predicate"]) == {"diet", "employer", "partner", "phone"}


def test_finishing_a_course_ends_learning_it_and_a_level_passed_does_not():
    d = timedelta(days=120)
    f = consolidate(extract_claims(messages([
        (USER, "learning German at Max Mueller Bhavan", T), (USER, "I'm learning Python these days", T),
        (USER, "cleared the German A1 exam", T + d), (USER, "finished my Python course!", T + d),
    ])))
    learning = {r["value"]: r["valid_to"] for r in f.filter(pl.col("predicate") == "learning").iter_rows(named=True)}
    assert learning == {"German": None, "Python": (T + d).date()}, learning
    assert "finished" not in set(f["predicate"])  # the finish ends a fact, it is none itself


def test_a_state_put_in_the_past_is_held_as_ended():
    """"I used to live in Delhi" ends Delhi (known before or not); "was vegetarian till 2019" too."""
    d = timedelta(days=30)
    f = consolidate(extract_claims(messages([
        (USER, "I live in Delhi", T), (USER, "I used to live in Delhi, now it's all Pune", T + d),
        (USER, "I was vegetarian till 2019", T + d), (USER, "I used to work at Infosys", T + d),
    ])))
    rows = {(r["predicate"], r["value"]): r["valid_to"] for r in f.iter_rows(named=True)}
    assert rows[("lives_in", "Delhi")] == (T + d).date()
    assert rows[("diet", "vegetarian")] is not None and rows[("employer", "Infosys")] is not None
    assert "Delhi" not in _current(f).get("lives_in", [])


def test_an_age_without_a_known_birthday_ends_within_the_year():
    said = datetime(2023, 3, 10, 9)
    c = claims([("age", "28", said), ("lives_in", "Pune", said + timedelta(days=200))])
    assert consolidate(c).filter(pl.col("predicate") == "age")["valid_to"].to_list() == [None]  # not a year yet
    later = claims([("age", "28", said), ("lives_in", "Pune", said + timedelta(days=400))])
    f = consolidate(later)
    assert f.filter(pl.col("predicate") == "age")["valid_to"].to_list() == [datetime(2024, 3, 10).date()]


def test_stopping_an_activity_ends_it_and_never_asserts_it():
    """"I stopped playing the guitar" ends "Hobby: guitar" (and is not itself read as playing it);
    giving a pet away ends it; a divorce ends the partner in force."""
    d = timedelta(days=60)
    df = messages([
        (USER, "I play the guitar every evening", T), (USER, "learning German at Max Mueller Bhavan", T),
        (USER, "We adopted a puppy! His name is Bruno", T), (USER, "I married Kabir last year", T),
        (USER, "I stopped playing the guitar", T + d), (USER, "I stopped learning German", T + d),
        (USER, "gave away Bruno to my cousin", T + d), (USER, "I gave away my old clothes", T + d),
        (USER, "got divorced last month", T + 2 * d),
    ])
    claims_ = extract_claims(df)
    assert ("hobby", "guitar") not in set(claims_.filter(pl.col("message_id") == "m4").select("predicate", "value").rows())
    f = consolidate(claims_)
    ended = {(r["predicate"], r["value"]): r["valid_to"] for r in f.iter_rows(named=True)}
    assert ended[("hobby", "guitar")] == ended[("learning", "German")] == ended[("pet", "Bruno")] == (T + d).date()
    assert ended[("partner", "Kabir")] == (T + 2 * d).date()
    assert not any("clothes" in v for _, v in ended)  # giving away what was never held records nothing


def test_not_dating_someone_anymore_ends_that_partner():
    f = consolidate(extract_claims(messages([
        (USER, "I'm dating Naina these days", T), (USER, "I'm not dating Naina anymore", T + timedelta(days=90))])))
    assert f.filter(pl.col("predicate") == "partner")["valid_to"].to_list() == [(T + timedelta(days=90)).date()]


def test_being_able_to_do_it_ends_learning_it():
    f = consolidate(extract_claims(messages([
        (USER, "I'm learning swimming", T), (USER, "I'm learning German", T),
        (USER, "I can swim now!", T + timedelta(days=90)), (USER, "I can't speak German yet", T + timedelta(days=90))])))
    learning = {r["value"]: r["valid_to"] for r in f.filter(pl.col("predicate") == "learning").iter_rows(named=True)}
    assert learning == {"swimming": (T + timedelta(days=90)).date(), "German": None}


def test_an_ending_closes_the_fact_it_names_not_a_looser_one_sharing_a_word():
    """"Five cups of chai a day" ends; liking chai, read from the same message, does not: the ending
    closes the value under the predicate it names, the exact value first."""
    f = consolidate(claims([("habit", "five cups of chai a day", T, "m0"), ("likes", "chai", T, "m0"),
                            ("end:habit", "five cups of chai a day", T + timedelta(days=300), "m1"),
                            ("habit", "one chai a day, green tea otherwise", T + timedelta(days=300), "m1")]))
    assert _current(f) == {"habit": ["one chai a day, green tea otherwise"], "likes": ["chai"]}
    [ended] = f.filter(pl.col("valid_to").is_not_null()).iter_rows(named=True)
    assert (ended["predicate"], ended["value"]) == ("habit", "five cups of chai a day")
    likes = f.filter(pl.col("predicate") == "likes").row(0, named=True)
    assert likes["evidence_message_ids"] == ["m0"]  # the ending is no evidence of liking chai
    # what the ending message says in its place succeeds it; a value said elsewhere does not
    now = f.filter(pl.col("value") == "one chai a day, green tea otherwise").row(0, named=True)
    assert ended["superseded_by"] == now["id"]
    apart = consolidate(claims([("habit", "five cups of chai a day", T, "m0"),
                                ("end:habit", "five cups of chai a day", T + timedelta(days=300), "m1"),
                                ("habit", "green tea", T + timedelta(days=301), "m2")]))
    assert apart.filter(pl.col("valid_to").is_not_null())["superseded_by"].to_list() == [None]
