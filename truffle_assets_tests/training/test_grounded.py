"""Grounded rows: which annotated facts become questions, and what answer each prompt gets."""

from __future__ import annotations

from dataclasses import replace

from truffle_assets.training.grounded import (NOT_FOUND_WORDINGS, context_lines, fact_questions, from_profile,
                                             misread_profile, missed_variant, not_found, profile_lines, target)

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
    from truffle_assets.evals.questions import says_absent

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


def _prompt(profile: str, messages: str, weak: str = "") -> list[dict]:
    ctx = (f"Today is 2025-01-10.\nUser profile (facts, with fact ids):\n{profile}"
           f"Summaries of past conversations:\n- kabir, 2024-06-01: new job\n{weak}Retrieved messages:\n{messages}")
    return [{"role": "system", "content": "You are Truffle."}, {"role": "system", "content": ctx},
            {"role": "user", "content": "Where do I work?"}]


def test_a_shown_fact_also_makes_the_row_its_retrieval_miss_would():
    # message ids are hex, as the runtime shows them
    q = replace({q.id: q for q in fact_questions(ANN, IDS)}["fact-emp2"], evidence=["c2"])
    work = "- Works at: Bajaj Finserv, Pune (work, fact 4d5e6f, since 2024-06-01)\n"
    msgs = ("[msg:c2] Mehak (you) (2 June 2024): Bajaj Finserv it is, Pune here I come\n"
            "[msg:b1] Kabir (2 June 2024): lol\n"
            "[msg:b2] Mehak (you) (3 June 2024): first week at bajaj finserv done")
    prompt = _prompt(work, msgs, weak="Weak matches (say \"uncertain\" if you rely on them): msg:c2, msg:b1\n")
    missed = missed_variant(q, prompt, context_lines(prompt))
    # every shown line stating the value goes (the evidence and the restatement), and its weak-match mention
    assert [i for i, _, _ in context_lines(missed)] == ["b1"]
    assert 'rely on them): msg:b1\nRetrieved' in missed[1]["content"] and "c2" not in missed[1]["content"]
    assert profile_lines(missed) == profile_lines(prompt) and missed[0] == prompt[0] and missed[2] == prompt[2]
    assert target(q, context_lines(missed)) == (not_found(q), [])
    assert from_profile(q, profile_lines(missed)) == "Your employer: Bajaj Finserv, in Pune"
    # nothing left to show: the runtime's "none" line; a weak-match line left empty goes
    only = _prompt(work, msgs.split("\n")[0], weak="Weak matches (say \"uncertain\" if you rely on them): msg:c2\n")
    content = missed_variant(q, only, context_lines(only))[1]["content"]
    assert content.endswith("Retrieved messages: none") and "Weak matches" not in content
    # no profile line states it: no such row (it would teach "not in memory" for a fact in memory)
    other = _prompt("- Works at: Kothari & Rao (work, fact 0a0b0c)\n", msgs)
    assert missed_variant(q, other, context_lines(other)) is None
