"""The claim's confidence from the model's own token probabilities, and "not in memory" below a threshold."""

from __future__ import annotations

import math

import pytest

from truffle_assets.runtime.confidence import claim_confidence, claim_tokens
from truffle_assets.runtime.prompts import text
from truffle_assets_tests.runtime.conftest import shown_ids


def _lp(*pairs):
    return [(t, math.log(p)) for t, p in pairs]


def test_the_claim_ends_at_its_first_citation_or_line_break():
    toks = _lp(("Your", 0.99), (" colour", 0.9), (" is", 0.95), (" Pani", 0.2), (" puri", 0.9), (" [", 0.5),
               ("msg", 0.99), (":", 0.99), ("ab12", 0.01))
    assert [t for t, _ in claim_tokens(toks)] == ["Your", " colour", " is", " Pani", " puri"]
    conf = claim_confidence(toks)
    assert conf["weakest"] == " Pani" and conf["min_p"] == pytest.approx(0.2) and conf["tokens"] == 5
    assert conf["mean_p"] == pytest.approx((0.99 * 0.9 * 0.95 * 0.2 * 0.9) ** (1 / 5), abs=1e-4)
    # a line break ends it too, and blank tokens say nothing about the value
    toks = _lp(("Yes", 0.6), (" ", 0.01), (",", 0.9), ("\n\n", 0.3), ("Uncertain", 0.001))
    assert [t for t, _ in claim_tokens(toks)] == ["Yes", ","]
    assert claim_confidence(_lp(("\n", 0.5))) is None and claim_confidence([]) is None


def _ask(make_service, llm, question, **cfg):
    def respond(body):
        return f"You work at Northwind [msg:{shown_ids(body)[0]}]."

    llm.responder = respond
    return make_service(llm.base_url, **cfg).ask([{"role": "user", "content": question}])


@pytest.mark.parametrize("stream", [False, True])
def test_a_claim_under_the_threshold_says_not_in_memory(make_service, llm, stream):
    # the weakest claim token is the value the model chose: "Northwind " at p 0.1
    llm.token_p = lambda piece: 0.1 if piece.startswith("Northwind") else 0.95
    q = "Where do I work now?"
    kept = _ask(make_service, llm, q, endpoint={"logprobs": True})
    step = next(s for s in kept.trace["steps"] if s["step"] == "answer_or_request_recall")
    assert step["confidence"] == kept.trace["confidence"]
    assert kept.trace["confidence"]["weakest"].strip() == "Northwind"
    assert kept.trace["confidence"]["min_p"] == pytest.approx(0.1) and not kept.trace["abstained"]
    assert kept.body.startswith("You work at Northwind") and kept.citations  # no threshold: the claim stands

    svc = make_service(llm.base_url, endpoint={"logprobs": True}, abstain_below=0.2)
    if stream:
        turn = list(svc.ask_stream([{"role": "user", "content": q}]))[-1]["turn"]
    else:
        turn = svc.ask([{"role": "user", "content": q}])
    assert turn.body == text("low_confidence") and turn.citations == [] and turn.trace["abstained"]
    assert "Northwind" not in turn.answer
    # a surer claim stands under the same threshold
    llm.token_p = lambda piece: 0.5 if piece.startswith("Northwind") else 0.95
    sure = svc.ask([{"role": "user", "content": q}])
    assert sure.body.startswith("You work at Northwind") and sure.citations and not sure.trace["abstained"]


def test_without_logprobs_the_threshold_withholds_nothing(make_service, llm):
    # no threshold, no logprobs asked (the default: +4 s a turn on the embedded model)
    llm.token_p = lambda piece: 0.01
    turn = _ask(make_service, llm, "Where do I work now?")
    assert "logprobs" not in llm.bodies[-1] and turn.trace["confidence"] is None
    # a threshold asks for them; an endpoint that serves none withholds nothing: every claim stands
    llm.token_p = None
    turn = _ask(make_service, llm, "Where do I work now?", abstain_below=0.5)
    assert llm.bodies[-1]["logprobs"] is True
    assert turn.trace["confidence"] is None and not turn.trace["abstained"]
    assert turn.body.startswith("You work at Northwind") and turn.citations
