"""The held-out fact scorer (`evals.fact_scoring`) on small hand-made cases, and the frozen natural
set's annotations resolved against the pipeline's own message rows."""

import json
from datetime import date
from pathlib import Path

import polars as pl

from truffle_assets.evals import fact_scoring as hf
from truffle_assets.ingest.exports import load_chat, scan_exports

NATURAL = Path(__file__).resolve().parents[2] / "benchmarks" / "heldout" / "natural"

USER = "Asha Rao"


def ann(id, attribute, value, evidence, **kw):
    return hf.Annotated(id=id, subject=USER, attribute=attribute, value=value, evidence=frozenset(evidence), **kw)


def pred(id, predicate, value, evidence, first_seen=date(2023, 1, 1), **kw):
    return hf.Predicted(id=id, subject=USER, predicate=predicate, value=value, evidence=tuple(evidence),
                        first_seen=first_seen, **kw)


ANNOTATED = [
    ann("emp", "work.employer", "Acme Corp (since 2020)", {"m1", "m2"}),
    ann("city_pune", "location.city", "Pune", {"m5"}, valid_from=date(2021, 1, 1), valid_to=date(2023, 6, 1)),
    ann("city_mumbai", "location.city", "Mumbai (moved for work)", {"m6"}, valid_from=date(2023, 6, 1),
        supersedes="city_pune"),
    ann("visa", "travel.visa", "US tourist visa", {"m7"}),  # no predicate maps here: only ever missed
    ann("diet", "diet.diet", "vegetarian", {"m8"}),  # its line also holds a distractor
]
DISTRACTORS = {"m9": hf.parse_claims("location.city = Delhi"), "m8": hf.parse_claims("health.allergy = prawns"),
               "m10": hf.parse_claims("location.city = Mumbai")}


def test_scores_a_match_a_distractor_and_wrong_evidence():
    preds = [
        pred("p_emp", "job", "Acme Corp", ["m1"]),  # matched, cites its line
        pred("p_delhi", "lives_in", "Delhi", ["m9"]),  # the distractor's claim: a false positive
        pred("p_pune", "lives_in", "Pune", ["m3"], first_seen=date(2021, 2, 1), valid_to=date(2023, 6, 1),
             superseded_by="p_mumbai"),  # matched, but cites a line that does not state it
        pred("p_mumbai", "lives_in", "Bombay", ["m6"], first_seen=date(2023, 6, 2)),  # alias of Mumbai
        pred("p_friend", "friend", "Ravi", ["m4"]),  # nothing annotated could say it is wrong
        pred("p_cat", "pet", "Whiskers", ["m4"]),  # a mapped predicate with no such annotation: wrong
        pred("p_diet", "diet", "vegetarian", ["m8"]),  # the real fact on a line that also holds a distractor
    ]
    s = hf.score(preds, ANNOTATED, DISTRACTORS)
    assert s.verdict == {"p_emp": "matched", "p_delhi": "distractor", "p_pune": "matched", "p_mumbai": "matched",
                         "p_friend": "unannotated", "p_cat": "wrong", "p_diet": "matched"}
    assert s.matches["p_pune"] == "city_pune" and s.matches["p_mumbai"] == "city_mumbai"
    assert (s.matched, s.predicted) == (4, 7) and abs(s.precision - 4 / 7) < 1e-9
    assert abs(s.lenient_precision - 5 / 7) < 1e-9
    assert (s.found, s.annotated) == (4, 5)  # the visa has no predicate
    assert s.by_group["mappable"] == (4, 4) and s.by_group["unmappable"] == (0, 1)
    assert (s.evidence_ok, s.matched) == (3, 4)  # p_pune cites m3, not m5
    assert (s.closed, s.ended_found, s.linked, s.link_cases, s.stale) == (1, 1, 1, 1, [])


def test_a_prediction_of_a_distractor_claim_that_is_also_true_later_is_still_a_false_positive():
    # "moving to Mumbai next year" (m10) merged into the real move: it cites the plan
    preds = [pred("p", "lives_in", "Mumbai", ["m10", "m6"])]
    s = hf.score(preds, ANNOTATED, DISTRACTORS)
    assert s.verdict == {"p": "distractor"} and s.found == 0 and s.precision == 0.0


def test_an_ended_fact_left_open_is_stale_and_an_unlinked_close_is_counted():
    preds = [pred("p_pune", "lives_in", "Pune", ["m5"], first_seen=date(2021, 2, 1)),
             pred("p_mumbai", "lives_in", "Mumbai", ["m6"], first_seen=date(2023, 6, 2))]
    s = hf.score(preds, ANNOTATED)
    assert (s.closed, s.ended_found, s.stale) == (0, 1, ["city_pune"])
    assert (s.linked, s.link_cases) == (0, 1)
    assert s.stale_current == ["p_pune"]  # the store shows Pune as current: one stale fact
    preds[0].valid_to = date(2023, 6, 2)  # closed, but superseded_by names nothing
    s = hf.score(preds, ANNOTATED)
    assert (s.closed, s.linked, s.stale, s.stale_current) == (1, 0, [], [])


def test_a_closed_fact_beside_an_open_restatement_still_leaves_one_current_fact_stale():
    # the ended value filed twice ("Lives in: Pune" closed, "Moved to: Pune" left open): the annotated
    # fact counts as closed, but the store still shows Pune as current through the second fact
    preds = [pred("p_pune", "lives_in", "Pune", ["m5"], first_seen=date(2021, 2, 1), valid_to=date(2023, 6, 1)),
             pred("p_moved", "moved", "Pune", ["m5"], first_seen=date(2021, 2, 1))]
    s = hf.score(preds, ANNOTATED)
    assert (s.closed, s.ended_found, s.stale, s.stale_current) == (1, 1, [], ["p_moved"])


def test_value_matching():
    vs = hf.value_score
    assert vs("favourite", "badminton", "badminton (Saturdays)") is not None
    assert vs("favourite", "badminton", "stopped playing badminton (since 2022)") is None  # negation on one side
    assert vs("diet", "vegetarian", "non-vegetarian (eats chicken)") is None
    assert vs("diet", "non veg", "non-vegetarian (eats chicken)") is not None
    assert vs("birthday", "--08-14", "14 August") == 1.0 and vs("birthday", "1995-08-14", "August 14th") == 1.0
    assert vs("birthday", "--08-15", "14 August") is None
    assert vs("job", "2022", "Zoho (joined 2022)") is None  # numbers alone say nothing
    assert vs("job", "lead engineer at Swiggy", "Lead Engineer (Swiggy, promoted Apr 2023)") is not None
    assert vs("job", "Swiggy", "Senior Software Engineer (Swiggy)") < vs("job", "Swiggy", "Swiggy")
    assert vs("lives_in", "Bengaluru", "Bangalore") == 1.0
    assert vs("goal", "learn Rust", "learning Rust (since Jan 2024)") is not None
    assert vs("lives_in", "Pune", "Mumbai") is None


def test_attribute_map_decides_what_can_match():
    a = [ann("pet_bday", "pets.dog_birthday", "1 September", {"m1"}), ann("bday", "identity.birthday", "14 August", {"m2"})]
    s = hf.score([pred("p", "birthday", "--09-01", ["m1"])], a)
    assert s.verdict == {"p": "wrong"}  # the dog's birthday is not the user's
    s = hf.score([pred("p", "birthday", "--08-14", ["m1"])], a)
    assert s.matches == {"p": "bday"} and s.evidence_ok == 0


def test_parse_claims():
    assert hf.parse_claims("location.city = Hyderabad; employer = Microsoft") == [
        hf.Claim(("location.city",), "Hyderabad"), hf.Claim(("work.employer",), "Microsoft")]
    assert hf.parse_claims("wealth = as rich as Ambani") == [hf.Claim((), "as rich as Ambani")]


def test_every_natural_annotation_resolves_to_a_pipeline_message():
    ann = json.loads((NATURAL / "annotations.json").read_text(encoding="utf-8"))
    chats = scan_exports(NATURAL)
    messages = pl.concat([load_chat(cid, paths, user=ann["user"]).rows for cid, paths in sorted(chats.items())])
    line_ids = {(Path(r["source_file"]).name, r["line_start"]): r["id"]
                for r in messages.select("id", "source_file", "line_start").iter_rows(named=True)}
    annotated, distractors = hf.natural_annotations(ann, line_ids)
    assert len(annotated) == 167  # every annotated line has its message
    assert all(a.subject == ann["user"] and a.evidence for a in annotated)
    assert sum(len(c) for c in distractors.values()) >= len(distractors) > 0


def test_a_closed_fact_states_its_ending_and_stems_compare_alike():
    sold = ann("sold", "vehicles.motorbike", "sold the Enfield", {"m1"})
    # open: "Enfield" is not "sold the Enfield"; closed (valid_to set): it is
    assert hf.best_match(pred("p", "vehicle", "Enfield", ["m1"]), [sold]) is None
    assert hf.best_match(pred("p", "vehicle", "Enfield", ["m1"], valid_to=date(2023, 2, 1)), [sold]) is sold
    medit = ann("med", "habits.meditation", "meditates every morning", {"m2"})
    assert hf.best_match(pred("p", "habit", "meditation", ["m2"]), [medit]) is medit
    assert hf.value_score("age", "29", "29 (turned in March)") == 1.0 and hf.value_score("age", "28", "29") is None
    assert hf.value_score("age", "27", "27 (on 14 Aug 2022; born 1995)") == 1.0  # the remark's date is no age


def test_a_predicate_the_map_does_not_know_matches_by_the_attribute_name():
    boss = ann("boss", "work.manager", "Rohit (head of legal)", {"m3"})
    assert hf.best_match(pred("p", "manager", "Rohit", ["m3"]), [boss]) is boss
    assert hf.best_match(pred("p", "landlord", "Rohit", ["m3"]), [boss]) is None
    assert hf.best_match(pred("p", "job", "Rohit", ["m3"]), [boss]) is None  # a mapped predicate keeps its map


def test_a_range_keeps_its_ends_apart():
    assert hf.tokens("sleeps around 2–2:30 am") == hf.tokens("sleeps around 2 - 2:30 am")
    assert hf.value_score("sleep", "sleeps at 2", "sleeps around 2–2:30 am (law-firm hours)") is not None
    assert hf.tokens("Rohan’s biryani") == hf.tokens("Rohan's biryani") and hf.tokens("Café") == hf.tokens("Cafe")


def test_a_contracted_negation_is_a_negation():
    assert hf.tokens("can't swim") == hf.tokens("cannot swim")
    assert hf.value_score("habit", "doesn't smoke", "does not smoke") is not None
    assert hf.value_score("habit", "smokes", "doesn't smoke") is None  # the negation on one side only


def test_a_negation_belongs_to_its_own_statement():
    both = "stopped Cult.fit; does yoga at home"
    assert hf.statements(both) == [both, "stopped Cult.fit", "does yoga at home"]
    assert hf.statements("Kathak (Saturdays; Aundh)") == ["Kathak (Saturdays; Aundh)"]  # not inside a remark
    assert hf.value_score("habit", "yoga", both) is not None
    assert hf.value_score("habit", "Cult", both) is None  # that statement is the stopped one
    assert hf.value_score("habit", "stopped Cult.fit", both) is not None


def test_an_initialism_stands_for_the_words_it_spells():
    assert hf.spelled_out("K&R", "Kothari & Rao (law firm, Mumbai)") == "kothari rao"
    assert hf.value_score("employer", "K&R", "Kothari & Rao (law firm, Mumbai)") is not None
    assert hf.value_score("employer", "TCS", "Tata Consultancy Services") is not None
    assert hf.value_score("employer", "K&R", "Kapoor Sons") is None
    assert hf.spelled_out("Kothari", "Kothari & Rao") is None  # a word is no initialism


def test_an_unnamed_attribute_takes_its_categorys_predicates():
    dance = ann("dance", "hobbies.dance", "Kathak classes every Saturday", {"m1"})
    past = ann("past", "hobbies.past", "learnt Kathak as a child", {"m2"})
    assert hf.best_match(pred("p", "hobby", "kathak", ["m1"]), [dance, past]) is dance
    assert hf.best_match(pred("p", "hobby", "kathak", ["m2"]), [past]) is None  # over: not a current hobby
    a1 = ann("a1", "languages.french_level", "passed DELF A1 French (2023)", {"m3"})
    assert hf.best_match(pred("p", "completed", "A1", ["m3"]), [a1]) is a1
    assert hf.best_match(pred("p", "completed", "B2", ["m3"]), [a1]) is None
    wed = ann("wed", "relationships.partner", "married to Ishaan (February 2025)", {"m4"})
    assert hf.best_match(pred("p", "relationship_status", "married to Ishaan", ["m4"]), [wed]) is wed


def test_a_current_fact_that_the_successor_still_states_or_a_thing_done_is_not_stale():
    annotated = [
        ann("run1", "habits.running", "runs 3 days a week", {"m1"}, valid_to=date(2024, 3, 16)),
        ann("run2", "habits.running", "runs 4 days a week", {"m2"}, valid_from=date(2024, 3, 16), supersedes="run1"),
        ann("a1", "languages.german_level", "passed Goethe A1 German", {"m3"}, valid_to=date(2023, 12, 16)),
        ann("a2", "languages.german_level", "passed Goethe A2", {"m4"}, supersedes="a1"),
        ann("job1", "work.employer", "Zentrix Labs", {"m5"}, valid_to=date(2024, 1, 1)),
        ann("job2", "work.employer", "Brightwave", {"m6"}, supersedes="job1"),
    ]
    still = [pred("p_run", "habit", "run", ["m1"]), pred("p_a1", "completed", "Goethe A1", ["m3"])]
    s = hf.score(still, annotated)
    assert s.matches == {"p_run": "run1", "p_a1": "a1"} and s.matched == 2  # still matches
    assert (s.stale_current, s.stale, s.ended_found) == ([], [], 0)  # but nothing that ended is shown
    # the ended value itself, left open, is stale; a value only the old fact states is stale too
    stale = [pred("p_run3", "habit", "runs 3 days a week", ["m1"]), pred("p_zen", "employer", "Zentrix", ["m5"])]
    s = hf.score(stale, annotated)
    assert sorted(s.stale_current) == ["p_run3", "p_zen"] and (s.ended_found, s.closed) == (2, 0)


def test_a_negated_habit_compares_without_its_light_verb():
    assert hf.value_score("habit", "doesn't go to gym", "does not exercise / no gym") is not None
    assert hf.value_score("habit", "doesn't do yoga", "does not practise yoga at home") is not None
    assert hf.value_score("habit", "doesn't go to gym", "does not go to the office") is None
    assert hf.value_score("trip", "going to Goa", "Goa trip (2022)") is None  # only where both sides are negated
