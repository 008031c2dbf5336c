"""Grounded rows: which annotated facts become questions, and what answer each prompt gets."""

from __future__ import annotations

from dataclasses import replace

from truffle_assets.training.grounded import (NOT_FOUND_WORDINGS, fact_questions, from_profile, misread_profile,
                                             not_found, profile_lines, target)

ANN = {"facts": [
    {"id": "emp1", "chat_file": "a.txt", "line": 3, "subject": "user", "attribute": "employer",
     "value": "Kothari & Rao", "valid_to": "2023-05-31"},
    {"id": "emp2", "chat_file": "a.txt", "line": 9, "subject": "user", "attribute": "employer",
     "value": "Bajaj Finserv, in Pune", "valid_to": None, "also_stated": [{"chat_file": "b.txt", "line": 2}]},
    {"id": "h1", "chat_file": "b.txt", "line": 5, "subject": "user", "attribute": "hobby", "value": "pottery"},
    {"id": "h2", "chat_file": "b.txt", "line": 7, "subject": "user", "attribute": "hobby", "value": "birding"},
    {"id": "food", "chat_file": "b.txt", "line": 8, "subject": "user", "attribute": "favourite_food",
     "value": "rajma chawal (Sundays)"},
]}
IDS = {("a.txt", 3): "m3", ("a.txt", 9): "m9", ("b.txt", 2): "n2", ("b.txt", 5): "n5", ("b.txt", 7): "n7",
       ("b.txt", 8): "n8"}


def test_one_question_per_current_fact_whose_attribute_has_one_value():
    qs = {q.id: q for q in fact_questions(ANN, IDS)}
    # the ended employer is not current, and two current hobbies would make either answer half right
    assert set(qs) == {"fact-emp2", "fact-food"}
    work, food = qs["fact-emp2"], qs["fact-food"]
    assert work.question == "Where do I work?" and work.evidence == ["m9", "n2"]  # restatements count
    assert work.keys == ["Bajaj Finserv, in Pune"] and work.answer == "Your employer: Bajaj Finserv, in Pune"
    assert food.question == "What's my favourite food?" and food.keys == ["rajma chawal"]


def test_the_answer_cites_the_shown_statement():
    q = {q.id: q for q in fact_questions(ANN, IDS)}["fact-emp2"]
    shown = [("x1", "Mehak", "lol"), ("n2", "Mehak", "Bajaj Finserv it is, Pune here I come")]
    assert target(q, shown) == ("Your employer: Bajaj Finserv, in Pune [msg:n2].", ["n2"])
    assert target(q, [("x1", "Mehak", "lol")]) == (not_found(q), [])


def test_every_not_in_memory_wording_is_scored_as_one_and_they_open_differently():
    from truffle_assets.evals.markdown import check_markdown
    from truffle_assets.evals.qa import says_absent

    for text in NOT_FOUND_WORDINGS:
        assert says_absent(text), text
        verdict = check_markdown(text)
        assert verdict.ok and verdict.shape == "not_found", (text, verdict.problems)
    assert len({t.split()[0] for t in NOT_FOUND_WORDINGS}) == len(NOT_FOUND_WORDINGS)
    q = fact_questions(ANN, IDS)[0]
    qs = [replace(q, id=f"absent/train/{n}") for n in range(40)]
    assert {not_found(q) for q in qs} == set(NOT_FOUND_WORDINGS)  # the question's id picks; all are used
    assert not_found(qs[0]) == not_found(replace(qs[0], question="Asked another way?"))


def test_a_value_only_the_profile_shows_is_answered_from_it_uncited():
    q = {q.id: q for q in fact_questions(ANN, IDS)}["fact-emp2"]
    ctx = ("Today is 2025-01-10.\nUser profile (facts, with fact ids):\n"
           "- Name: Mehak (identity, fact 1a2b3c)\n"
           "- Works at: Bajaj Finserv, Pune (work, fact 4d5e6f, since 2024-06-01)\n"
           "- Writes to most: Kabir (210 messages)\nPreviously (no longer true):\n"
           "- Works at: Kothari & Rao (until 2023-05-31, fact 0a0b0c)\n"
           "Summaries of past conversations:\n- kabir, 2024-06-01: new job (maybe)\n"
           "Retrieved messages:\n[msg:x1] Mehak (you) (2024-06-02): lol (fact 123abc)")
    prompt = [{"role": "system", "content": "You are Truffle."}, {"role": "system", "content": ctx},
              {"role": "user", "content": q.question}]
    assert profile_lines(prompt) == ["Name: Mehak", "Works at: Bajaj Finserv, Pune", "Works at: Kothari & Rao"]
    assert from_profile(q, profile_lines(prompt)) == "Your employer: Bajaj Finserv, in Pune"
    # the profile holds another value, or the question is yes/no: no answer is read off it
    assert from_profile(q, ["Works at: Kothari & Rao"]) is None
    assert from_profile(replace(q, kind="yesno"), profile_lines(prompt)) is None
    # what a model that ignores the profile says instead: "not in memory", or another fact cited to a shown line
    food = {q.id: q for q in fact_questions(ANN, IDS)}["fact-food"]
    lines = [("x1", "Mehak", "lol")]
    assert misread_profile(q, lines, 0, [q, food]) == not_found(q)
    assert misread_profile(q, lines, 1, [q, food]) == "Your favourite food: rajma chawal (Sundays) [msg:x1]."
    assert misread_profile(q, lines, 1, [q]) == not_found(q)  # nothing else to misread it as
