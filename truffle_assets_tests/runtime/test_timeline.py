""""Before X" / "after X" questions: the facts' order decides what the turn shows (runtime.timeline)."""

from __future__ import annotations

import json
import shutil
from datetime import date

import polars as pl
import pytest

from truffle_assets.ids import shown_fact_id
from truffle_assets.index.lance import RAW_TABLE, MemoryIndex
from truffle_assets.runtime.timeline import anchor_of, resolve
from truffle_assets_tests.runtime.conftest import context_message, shown_ids

FACTS = {
    "f-zen": {"predicate": "employer", "value": "Zentrix", "fact_text": "Works at: Zentrix", "confidence": 0.7,
              "valid_from": "2019-03-14", "valid_to": "2022-07-11", "superseded_by": "f-nw",
              "evidence_message_ids": ["m-zen"]},
    "f-nw": {"predicate": "employer", "value": "Northwind", "fact_text": "Works at: Northwind", "confidence": 0.8,
             "valid_from": "2022-07-11", "valid_to": None, "superseded_by": None, "evidence_message_ids": ["m-nw"]},
    "f-job": {"predicate": "job", "value": "senior data engineer at Northwind Analytics", "confidence": 0.6,
              "valid_from": "2022-06-17", "valid_to": None, "superseded_by": None},
    # no supersession link: the partner that ended before Priya began is found by date
    "f-neha": {"predicate": "partner", "value": "Neha", "confidence": 0.7, "valid_from": None,
               "valid_to": "2020-11-19", "superseded_by": None},
    "f-priya": {"predicate": "partner", "value": "Priya", "confidence": 0.8, "valid_from": "2021-06-10",
                "valid_to": None, "superseded_by": None},
    "f-pune": {"predicate": "lives_in", "value": "Pune", "confidence": 0.7, "valid_from": "2019-01-02",
               "valid_to": "2022-08-24", "superseded_by": "f-hsr"},
    "f-hsr": {"predicate": "lives_in", "value": "HSR Layout, Bengaluru", "confidence": 0.7,
              "valid_from": "2022-08-24", "valid_to": None, "superseded_by": None},
}


@pytest.mark.parametrize("question, direction, phrase, rest", [
    ("Where did I work before Northwind Analytics?", "before", "Northwind Analytics", "Where did I work"),
    ("Where did I live before I moved to Bengaluru?", "before", "Bengaluru", "Where did I live"),
    ("Where did I live after Pune", "after", "Pune", "Where did I live"),
])
def test_the_anchor_clause_is_read_off_the_question(question, direction, phrase, rest):
    a = anchor_of(question)
    assert (a.direction, a.phrase, a.rest) == (direction, phrase, rest)


def test_before_follows_the_supersession_link_and_ends_where_the_anchor_began():
    r = resolve("Where did I work before Northwind Analytics?", FACTS)
    # the employer and the title both name the anchor; only the employer has a predecessor
    assert [i for i, _ in r.neighbours] == ["f-zen"]
    assert r.anchor_fact == "f-nw" and r.bound == date(2022, 7, 11)


def test_before_without_a_link_takes_the_same_kind_of_fact_that_ended_before_the_anchor_began():
    r = resolve("Who did I date before Priya?", FACTS)
    assert [i for i, _ in r.neighbours] == ["f-neha"] and r.bound == date(2021, 6, 10)


def test_after_follows_the_link_forward_and_starts_where_the_anchor_ended():
    r = resolve("Where did I live after Pune?", FACTS)
    assert [i for i, _ in r.neighbours] == ["f-hsr"] and r.bound == date(2022, 8, 24)


def test_an_anchor_without_a_predecessor_still_bounds_the_search():
    r = resolve("What was my title before Northwind Analytics?", {k: FACTS[k] for k in ("f-job",)})
    assert r.neighbours == [] and r.bound == date(2022, 6, 17)


@pytest.mark.parametrize("question", ["Where do I work?", "What did I say before the meeting?",
                                      "Which city did I live in before Hyderabad?"])
def test_questions_whose_anchor_no_fact_names_are_left_to_retrieval(question):
    assert resolve(question, FACTS) is None


# ---- through the turn, on the real published memory ---------------------------------------------

@pytest.fixture
def chained(memory, tmp_path):
    """A copy of the published memory's files whose facts say the user worked at Zentrix until the
    middle of the indexed month and at Acme since, each resting on one real indexed message."""
    pub = tmp_path / "published"
    shutil.copytree(memory, pub)
    raw = pl.from_arrow(MemoryIndex.open(pub / "latest.json").table(RAW_TABLE).to_arrow()).sort("ts")
    early, late = raw.row(0, named=True), raw.row(len(raw) * 3 // 4, named=True)
    switch = str(late["ts"])[:10]
    facts = json.loads((pub / "facts.json").read_text())
    facts["facts"] += [
        {"fact_id": "f0zentrix", "subject": "me", "predicate": "employer", "value": "Zentrix", "category": "work",
         "fact_text": "Works at: Zentrix", "confidence": 0.7, "valid_from": str(early["ts"])[:10],
         "valid_to": switch, "superseded_by": "f0acme", "evidence_message_ids": [early["message_id"]]},
        {"fact_id": "f0acme", "subject": "me", "predicate": "employer", "value": "Acme", "category": "work",
         "fact_text": "Works at: Acme", "confidence": 0.8, "valid_from": switch, "valid_to": None,
         "superseded_by": None, "evidence_message_ids": [late["message_id"]]}]
    (pub / "facts.json").write_text(json.dumps(facts))
    return pub, early["message_id"], switch, {r["message_id"]: str(r["ts"])[:10] for r in raw.iter_rows(named=True)}


@pytest.mark.parametrize("on", [True, False])
def test_a_before_question_shows_the_earlier_fact_its_message_first_and_nothing_after_the_anchor(
        make_service, llm, chained, on):
    pub, said, switch, day_of = chained
    seen = {}

    def respond(body):
        seen["ctx"], seen["ids"] = context_message(body), shown_ids(body)
        return "You worked at Zentrix [msg:" + said + "]."

    llm.responder = respond
    turn = make_service(llm.base_url, published_dir=pub, timeline=on).ask(
        [{"role": "user", "content": "Where did I work before Acme?"}])
    step = next(s for s in turn.trace["steps"] if s["step"] == "timeline")
    if not on:  # the switch off: plain retrieval, no timeline in the trace
        assert "timeline" not in step and f"fact {shown_fact_id('f0zentrix')}" not in seen["ctx"]
        return
    assert step["timeline"] == {"direction": "before", "anchor_fact": "f0acme", "facts": ["f0zentrix"],
                                "bound": switch}
    assert f"Works at: Zentrix (fact {shown_fact_id('f0zentrix')}, until {switch}" in seen["ctx"]
    # and said outright, with the message to cite
    assert "What held before Acme: Works at: Zentrix (" in seen["ctx"] and f"to {switch}, fact" in seen["ctx"]
    assert f"fact {shown_fact_id('f0zentrix')}) [msg:{said}]." in seen["ctx"]
    assert seen["ids"][0] == said  # the earlier fact's message leads the evidence
    assert seen["ids"] and all(day_of[m] < switch for m in seen["ids"])
    assert turn.citations == [said]
