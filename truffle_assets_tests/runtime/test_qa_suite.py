"""The QA suite and the grounded training rows on a real published memory (the package's world).

Questions come from the world's ground truth; the runtime (guard, retrieval, budgets, citation
checks, scrubbing) is the real one, the chat model a scripted FakeLLM.
"""

from __future__ import annotations

from truffle_assets.chat_format.prompt import OWN_LINE_MARK, message_lines
from truffle_assets.evals.qa import ask_questions, precise_in_reach, summarize_rows
from truffle_assets.evals.questions import REFUSAL, Question, key_matches, synthetic_questions
from truffle_assets.runtime.service import EMBEDDED_BUDGET
from truffle_assets.training.grounded import context_lines, not_found, profile_lines, rows_for
from truffle_assets_tests.runtime.conftest import MSG_ID, context_message

TODAY = "2024-12-31"


def test_grounded_rows_answer_from_what_the_prompt_shows(world, make_service):
    truth = world.corpus.truth
    svc = make_service(budget={**EMBEDDED_BUDGET, "cap": 16_384})
    rows, counts = rows_for(svc, truth, today=TODAY, seed=24)
    asked = synthetic_questions(truth, "train", 24)
    secrets = [q for q in asked if q.kind == "secret"]
    assert counts["guard_refused"] == len(secrets) > 0  # the guard answers those; the model never sees them
    assert len(rows) == len(asked) - len(secrets) - counts["not_shown"]
    cited = [r for r in rows if MSG_ID.search(r["chosen"])]
    assert counts["cited"] == len(cited) >= 1 and counts["absent"] >= 4  # a 2-chat world plants few facts
    by_id = {f"runtime/24/{q.id}": q for q in asked}
    for r in rows:
        q, lines = by_id[r["source_id"]], context_lines(r["prompt"])
        assert r["prompt"][0]["role"] == "system" and r["prompt"][-1] == {"role": "user", "content": q.question}
        assert r["chosen"] != r["rejected"]
        ids = MSG_ID.findall(r["chosen"])
        shown = {i: t for i, _, t in lines}
        ctx = "\n".join(m["content"] for m in r["prompt"] if m["role"] == "system")
        days = [day for *_, day in message_lines(ctx) if day]
        assert len(days) == len(lines) == ctx.count("\n[msg:")  # each line shows the day it was sent
        # and the parse keeps it out of the author, which only the owner's "(you)" mark follows
        assert not any(a.removesuffix(OWN_LINE_MARK).endswith(")") for _, a, _ in lines)
        assert set(ids) <= set(shown), "a grounded answer cites only messages its prompt shows"
        if ids:  # the cited message is the planted one or states the value
            assert r["answered_from"] == "message"
            assert all(i in q.evidence or any(key_matches(k, shown[i]) for k in q.keys) for i in ids)
        elif q.answerable:  # no shown message states it: the answer is read off a shown profile line
            assert r["answered_from"] == "profile" and r["chosen"] == q.answer
            assert any(key_matches(k, t) for k in q.keys for t in profile_lines(r["prompt"]))
        else:  # "not in memory" only where nothing was planted: a retrieval miss makes no row
            assert r["chosen"] in (not_found(q), REFUSAL)
    assert counts["profile"] == sum(r["answered_from"] == "profile" for r in rows)
    authors = {a for r in rows for _, a, _ in context_lines(r["prompt"])}
    assert f"{truth['user']}{OWN_LINE_MARK}" in authors and truth["user"] not in authors


def test_the_suite_scores_answers_through_the_whole_turn(world, make_service, llm):
    truth = world.corpus.truth
    qs = synthetic_questions(truth, "train")
    secrets = [s["value"] for s in truth["secrets"]]

    def grounded(body: dict) -> str:  # answers with the first shown line holding a key, else "not in memory"
        q = next(q for q in qs if q.question == body["messages"][-1]["content"])
        for mid, _, text in context_lines([{"role": "system", "content": context_message(body)}]):
            if q.keys and any(key_matches(k, text) for k in q.keys):
                return f"{q.keys[0]} [msg:{mid}]."
        return "That is not in your memory."

    llm.responder = grounded
    rows = ask_questions(make_service(llm.base_url), qs, TODAY, secrets)
    s = summarize_rows(rows)
    assert s["questions"] == len(qs) and s["leaks"] == 0 and s["fallbacks"] == 0
    for r in rows:
        if r["kind"] == "secret":
            assert r["refused"] and r["correct"]
        elif r["kind"] == "none":
            assert r["correct"] and not r["cited"]
        elif r["cited"]:
            assert r["correct"] and r["precise_citations"] == 1
        # a precise citation needs a precise message within reach; an unanswerable question has none
        assert r["precise_in_reach"] >= (r["precise_citations"] > 0)
        assert not (r["precise_in_reach"] and r["kind"] in ("none", "secret"))
    assert s["cited_share"] > 0 and s["citation_precision"] == 1.0
    assert sum(r["cited"] for r in rows) <= s["precise_in_reach"] <= sum(r["kind"] not in ("none", "secret") for r in rows)

    card = next(s["value"] for s in truth["secrets"] if s["type"] == "card_number")
    llm.responder = lambda body: "Your card number is " + card  # scrubbed by the runtime: no leak
    leaky = ask_questions(make_service(llm.base_url), [q for q in qs if q.kind != "secret"][:2], TODAY, secrets)
    assert not any(r["leak"] for r in leaky), leaky
    assert not any(r["correct"] for r in leaky if r["kind"] != "none")


def test_a_precise_citation_is_within_reach_through_a_shown_message_or_a_shown_profile_fact():
    q = Question(id="job", kind="current", question="Where do I work?", keys=["Tata Projects"], evidence=["m1"])
    assert precise_in_reach(q, {"m1": "first day today!"}, {})  # named for the fact, whatever it says
    assert precise_in_reach(q, {"m9": "Joined Tata Projects as a planner"}, {})  # holds the key
    assert precise_in_reach(q, {"m9": "the office has a coffee machine"}, {"m2": "Tata Projects it is"})
    assert not precise_in_reach(q, {"m9": "the office has a coffee machine"}, {"m3": "Tata Steel called"})
