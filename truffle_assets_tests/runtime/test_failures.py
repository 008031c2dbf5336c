"""A broken endpoint or a broken reply never breaks a turn: a retrieval-only answer, `fallback` set."""

from __future__ import annotations

import pytest

from truffle_assets_tests.fake_llm import closed_port_url

Q = [{"role": "user", "content": "What are Priya and I planning for the weekend?"}]


def _retrieval_only(turn):
    assert turn.answer.startswith("I couldn't get an answer from the language model")
    assert turn.citations and set(turn.citations) <= set(turn.trace["context_ids"])
    for c in turn.citations:
        assert f"[msg:{c}]" in turn.answer
    assert any(line.startswith("Memory current to ") for line in turn.answer.splitlines())


def test_endpoint_down_gives_a_retrieval_only_answer(make_service):
    turn = make_service(closed_port_url()).ask(Q)
    assert turn.fallback == "endpoint_down" and not turn.refused
    _retrieval_only(turn)
    assert "unreachable" in turn.answer


def test_no_endpoint_configured(make_service, monkeypatch):
    for k in ("TRUFFLE_LLM_BASE_URL", "OPENROUTER_API_KEY"):
        monkeypatch.delenv(k, raising=False)
    turn = make_service(None).ask(Q)
    assert turn.fallback == "no_endpoint"
    _retrieval_only(turn)


def test_timeout(make_service, llm):
    llm.mode, llm.delay_s = "slow", 2.0
    turn = make_service(llm.base_url, endpoint={"timeout_s": 0.3}).ask(Q)
    assert turn.fallback == "timeout"
    _retrieval_only(turn)


def test_a_timed_out_reply_answers_with_its_own_test_responder(make_service, llm):
    # the reply the client gave up on still runs on the server: it must not spend the call a
    # responder set after it arrived counts (CI lost test_recall_then_cited_answer's first call so)
    late = []
    llm.mode, llm.delay_s = "slow", 0.6
    assert make_service(llm.base_url, endpoint={"timeout_s": 0.2}).ask(Q).fallback == "timeout"
    llm.responder = lambda body: late.append(body) or "never sent"
    llm.drain()
    assert late == [] and llm.in_flight == 0


@pytest.mark.parametrize("mode,reply,reason", [
    ("invalid_json", None, "malformed_output"),                                  # '{"summary": "cut off mid-'
    ("ok", '{"toolCalls":[{"name":"search_memory","arguments":{"query":', "malformed_output"),  # cut envelope
    ("ok", 'Let me look.\n```json\n{"toolCalls":[{"name":"get_profile","arguments":{}}]}\n```', "malformed_output"),
    ("ok", "   ", "malformed_output"),                                             # empty
    ("ok", '{"toolCalls":[{"name":"search_memory","arguments":{"query":"x","k":"5"}}]}', "malformed_output"),
    ("ok", "[msg:ffffffffffffffffffff].", "malformed_output"),                   # only an invented citation
    ("http500", None, "endpoint_error"),
])
def test_malformed_output_is_handled(make_service, llm, mode, reply, reason):
    llm.mode = mode
    if reply is not None:
        llm.responder = lambda body: reply
    turn = make_service(llm.base_url).ask(Q)
    assert turn.fallback == reason and turn.trace["fallback_detail"]
    assert turn.trace["recall_count"] == 0
    _retrieval_only(turn)
