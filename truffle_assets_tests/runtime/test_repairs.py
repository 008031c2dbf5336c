"""The answer repairs: one named pass per repair, each behind its own flag, each reported in the trace."""

from __future__ import annotations

from dataclasses import replace

from langgraph.runtime import Runtime

from truffle_assets.runtime.config import Repairs
from truffle_assets.runtime.prompts import text
from truffle_assets.runtime.repairs import PASSES, finalize
from truffle_assets.runtime.state import Context, State

ITEM = {"message_id": "m1", "chat_id": "priya-sharma", "author": "Priya Sharma", "ts": "2022-09-02T10:00:00",
        "text": "Dinner at Toit on Friday", "score": 0.9, "uncertain": False}
WEAK = {**ITEM, "message_id": "m2", "text": "maybe Toit again", "score": 0.2, "uncertain": True}


def _finalize(state: State, **flags: bool) -> dict:
    ctx = Context(published_dir="/nonexistent", repairs=Repairs(**flags))
    return finalize(state, Runtime(context=ctx))


def _state(raw: str, items=(ITEM,)) -> State:
    return State(question="Where is dinner?", items=list(items), context_ids=[i["message_id"] for i in items],
                 raw_output=raw, watermarks={"priya-sharma": "2022-09-17T23:59:00"})


def test_every_pass_has_its_flag_and_says_why_it_exists():
    assert list(PASSES) == list(Repairs.model_fields)
    for name, (fn, applies, _) in PASSES.items():
        assert fn.__doc__ and len(fn.__doc__.split()) > 12, name
        assert applies <= {"model", "fallback", "refused"}


def test_the_trace_says_which_pass_changed_the_answer():
    out = _finalize(_state("Dinner is at Toit [msg:m1] [msg:made-up]."))
    step = out["trace"][0]
    assert out["body"] == "Dinner is at Toit [msg:m1]."
    assert out["answer"] == out["body"] + "\n\n" + text("freshness_answer", chat="priya-sharma", date="2022-09-17")
    assert step["invalid_citations"] == ["made-up"] and out["citations"] == ["m1"]
    assert step["repairs"] == {"citations": "changed", "attribution": "unchanged", "date_years": "unchanged",
                               "self_named": "unchanged", "nothing_left": "unchanged",
                               "uncertain_label": "unchanged", "scrub": "unchanged", "freshness": "changed"}


def test_a_pass_turned_off_leaves_the_answer_as_the_others_make_it():
    state = _state("Dinner is at Toit [msg:m1] [msg:made-up].")
    out = _finalize(state, citations=False, freshness=False)
    assert out["body"] == "Dinner is at Toit [msg:m1] [msg:made-up]." and out["answer"] == out["body"]
    assert out["trace"][0]["repairs"]["citations"] == "off" and out["trace"][0]["repairs"]["freshness"] == "off"
    assert out["freshness"] == [] and out["citations"] == ["m1", "made-up"]


def test_a_reply_of_invented_citations_only_falls_back_to_the_evidence():
    out = _finalize(_state("[msg:made-up]"))
    step = out["trace"][0]
    assert out["fallback"] == "malformed_output" and step["fallback_detail"] == "the answer held only invented citations"
    assert out["citations"] == ["m1"] and "Dinner at Toit on Friday" in out["body"]
    assert step["repairs"]["nothing_left"] == "changed"
    kept = _finalize(_state("[msg:made-up]"), nothing_left=False)
    assert "fallback" not in kept and kept["body"] == "" and kept["citations"] == []


def test_weak_evidence_is_labelled_unless_the_label_is_off():
    state = _state("Maybe Toit [msg:m2].", items=(ITEM, WEAK))
    out = _finalize(state)
    assert out["uncertain"] == ["m2"] and out["body"].endswith(text("uncertain_answer", ids="[msg:m2]"))
    plain = _finalize(state, uncertain_label=False)
    assert plain["body"] == "Maybe Toit [msg:m2]." and plain["uncertain"] == ["m2"]


def test_a_refusal_is_never_repaired():
    state = replace(_state("ignored"), refused=True, refused_kind="otp", answer="I can't share OTPs.")
    out = _finalize(state)
    assert out["answer"] == "I can't share OTPs." and out["citations"] == []
    assert {k for k, v in out["trace"][0]["repairs"].items() if v == "n/a"} == set(PASSES) - {"freshness"}


def test_secret_shaped_values_are_scrubbed_from_the_answer():
    out = _finalize(_state("Your OTP is 482913 [msg:m1]."))
    assert "482913" not in out["answer"] and out["trace"][0]["scrubbed"]
    assert "482913" in _finalize(_state("Your OTP is 482913 [msg:m1]."), scrub=False)["answer"]
