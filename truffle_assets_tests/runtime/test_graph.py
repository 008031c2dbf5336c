"""The turn graph: shape, token budgets (real tokenizer), the bounded recall loop, citations."""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import replace

import pytest
from langgraph.runtime import Runtime

from truffle_assets.retrieval import retrieve
from truffle_assets.runtime.repairs import finalize
from truffle_assets.ids import shown_fact_id
from truffle_assets.runtime.graph import graph
from truffle_assets.runtime.published import fetch_messages
from truffle_assets.runtime.state import Context, RecallIntent, State
from truffle_assets_tests.runtime.conftest import MSG_ID, context_message, shown_ids

Q = {"role": "user", "content": "What did Priya and I talk about, and what plans did we make?"}


def test_graph_shape_and_no_dagster_import():
    assert graph.name == "truffle_chat"
    nodes = set(graph.get_graph().nodes)
    assert {"guard", "refuse", "load_profile", "timeline", "retrieve_summaries", "retrieve_raw", "compose_context",
            "answer_or_request_recall", "recall_retrieve", "finalize"} <= nodes
    code = ("import sys, truffle_assets.runtime.service, truffle_assets.runtime.cli; "
            "assert 'dagster' not in sys.modules, 'runtime imported dagster'")
    subprocess.run([sys.executable, "-c", code], check=True, timeout=120)


def _sections(ctx: str) -> dict[str, str]:
    """Profile / summaries / raw blocks of a context message, as the runtime laid them out."""
    head, raw = ctx.split("Retrieved messages:", 1)
    raw = "Retrieved messages:" + raw
    weak = [ln for ln in head.splitlines() if ln.startswith("Weak matches")]
    if weak:  # the weak-match note belongs to the raw evidence section
        raw = weak[0] + "\n" + raw
        head = head.replace(weak[0] + "\n", "")
    out = {"raw": raw}
    for name, start in (("profile", "User profile"), ("summaries", "Summaries of past conversations:")):
        if start in head:
            block = head[head.index(start):]
            nxt = [block.index(s) for s in ("\nSummaries of past", "\nRetrieved") if s in block[1:]]
            out[name] = block[: min(nxt)] if nxt else block.rstrip("\n")
    return out


@pytest.mark.parametrize("budget", [
    dict(profile=60, summaries=80, raw=300, dialogue=120, answer=64, cap=128_000),   # sections bind
    dict(profile=5_000, summaries=20_000, raw=50_000, dialogue=16_000, answer=64, cap=900),  # the cap binds
])
def test_every_section_within_budget_with_a_corpus_larger_than_it(make_service, llm, qwen_tokens, budget):
    svc = make_service(llm.base_url, budget=budget, k_raw=60)
    long_history = [{"role": "user", "content": "Tell me about the trip " * 40},
                    {"role": "assistant", "content": "It was in Goa. " * 40}]
    turn = svc.ask([*long_history, Q])
    assert turn.fallback is None, turn.trace["fallback_detail"]
    body = llm.bodies[-1]
    ctx = context_message(body)
    sections = _sections(ctx)
    counted = {name: qwen_tokens.count(txt) for name, txt in sections.items()}
    for name in ("profile", "summaries", "raw", "dialogue"):
        assert turn.tokens[name] <= budget[name], (name, turn.tokens)
    for name, n in counted.items():  # recounted from what the endpoint received
        assert n <= budget[name] + 2, (name, n, budget)
    prompt_tokens = qwen_tokens.count_messages(body["messages"])
    assert prompt_tokens == turn.tokens["prompt"]
    assert prompt_tokens + body["max_tokens"] <= budget["cap"]
    assert turn.tokens["total"] <= budget["cap"] and body["max_tokens"] == budget["answer"]
    # the corpus really was larger than the budget: evidence was dropped, lowest score first
    step = [s for s in turn.trace["steps"] if s["step"] == "compose_context"][-1]
    assert step["dropped"]["raw"] > 0
    retrieved = [s for s in turn.trace["steps"] if s["step"] == "retrieve_raw"][0]
    scores = dict(zip(retrieved["items"], retrieved["scores"]))
    shown = shown_ids(body)
    assert shown and min(scores[m] for m in shown) >= max(s for m, s in scores.items() if m not in shown) - 1e-9
    if budget["cap"] == 128_000:
        assert step["dropped"]["dialogue"] >= 1  # the long history did not fit 120 tokens
        assert counted["raw"] <= 300 and counted.get("profile", 0) <= 60 and counted.get("summaries", 0) <= 80


def test_recall_is_a_structured_intent_and_bounded_by_max_recalls(make_service, llm):
    envelope = {"toolCalls": [{"name": "search_memory", "arguments": {
        "query": "Priya dinner plans", "chat": "priya-sharma", "since": "2022-09-13", "until": "2022-09-16", "k": 5}}]}
    llm.responder = lambda body: json.dumps(envelope)  # a model that never stops searching
    svc = make_service(llm.base_url, max_recalls=2)
    turn = svc.ask([Q])
    assert llm.requests == 3  # the question + one answer call after each of the 2 recalls
    assert turn.trace["recall_count"] == 2 and turn.fallback == "recall_limit"
    intents = [RecallIntent.model_validate(i) for i in turn.trace["recalls"]]
    assert len(intents) == 2
    for it in intents:
        assert it.tool == "search_memory" and it.missing == "Priya dinner plans" and it.chat == "priya-sharma"
        assert str(it.since) == "2022-09-13" and str(it.until) == "2022-09-16"
        assert "dinner" in it.keywords and "plans" in it.keywords and it.people == ["Priya Sharma"]
    assert "No more memory searches are available" in context_message(llm.bodies[-1])
    assert "you may search again" in context_message(llm.bodies[0])
    # recall hits honour the intent's range; every quoted citation was shown to the model
    assert set(turn.citations) <= set(turn.trace["context_ids"]) and turn.citations
    recall_ids = {m for s in turn.trace["steps"] if s["step"] == "recall_retrieve" for m in s["new_ids"]}
    for s in turn.sources:
        if s["message_id"] in recall_ids:
            assert "2022-09-13" <= s["ts"][:10] <= "2022-09-16"


def test_recall_then_cited_answer(make_service, llm, memory):
    facts = json.loads((memory / "facts.json").read_text())["facts"]
    fact = next(f for f in facts if f.get("evidence_message_ids"))
    calls = {"n": 0}

    def respond(body):
        calls["n"] += 1
        if calls["n"] == 1:
            # the id as the prompt shows it (its first digits), as a model reading the prompt would ask
            return json.dumps({"toolCalls": [{"name": "get_fact", "arguments": {"fact_id": shown_fact_id(fact["fact_id"])}}]})
        ctx = context_message(body)
        assert f"(fact {shown_fact_id(fact['fact_id'])}, current)" in ctx  # the fact reached the profile section
        ev = fact["evidence_message_ids"][0]
        return f"Yes [msg:{ev}], though [msg:00000000000000000000] is made up."

    llm.responder = respond
    turn = make_service(llm.base_url).ask([Q])
    assert turn.fallback is None and llm.requests == 2
    assert turn.citations == [fact["evidence_message_ids"][0]]
    assert turn.trace["invalid_citations"] == ["00000000000000000000"]
    assert "[msg:00000000000000000000]" not in turn.answer
    assert turn.trace["recalls"][0]["tool"] == "get_fact"
    chat = turn.sources[0]["chat_id"]
    assert f"Memory current to {turn.watermarks[chat]} ({chat})." in turn.answer


def test_get_profile_recall_reads_the_profile(make_service, llm, memory):
    calls = {"n": 0}

    def respond(body):
        calls["n"] += 1
        if calls["n"] == 1:
            return json.dumps({"toolCalls": [{"name": "get_profile", "arguments": {}}]})
        return "Here is your profile."

    llm.responder = respond
    turn = make_service(llm.base_url).ask([Q])
    prof = json.loads((memory / "profile.json").read_text())
    n = sum(len(v) for v in prof["facts"].values()) + len(prof.get("previously") or [])
    step = next(s for s in turn.trace["steps"] if s["step"] == "recall_retrieve")
    assert step["error"] is None and step["intent"]["tool"] == "get_profile"
    assert f"Search 1: get_profile() read the profile again: {n} facts, shown above." in context_message(llm.bodies[-1])


def test_uncertain_evidence_is_labelled(make_service, llm):
    def respond(body):
        ctx = context_message(body)
        weak = [ln for ln in ctx.splitlines() if ln.startswith("Weak matches")]
        ids = MSG_ID.findall(ctx) if not weak else [weak[0].split("msg:")[1].split(",")[0].strip()]
        return f"Something happened [msg:{ids[0]}]."

    llm.responder = respond
    turn = make_service(llm.base_url).ask([{"role": "user", "content": "quantum chromodynamics homework?"}])
    if turn.uncertain:
        assert "Uncertain:" in turn.answer
    assert set(turn.citations) <= set(turn.trace["context_ids"])


def test_runtime_never_opens_the_pipeline_duckdb(make_service, llm, world, monkeypatch):
    import duckdb

    opened = []
    real = duckdb.connect
    monkeypatch.setattr(duckdb, "connect", lambda *a, **k: opened.append(a[0] if a else k.get("database")) or real(*a, **k))
    svc = make_service(llm.base_url, retrieval_log=True, transcripts=True)  # traces are kept with transcripts
    turn = svc.ask([Q])
    svc.evidence(turn.citations[0])
    assert str(world.db) not in {str(p) for p in opened}
    assert opened and all(str(p).endswith("retrieval.duckdb") for p in opened)


def test_trace_steps_follow_the_nodes_in_order(make_service, llm):
    """Each node returns only its own steps; the `trace` reducer appends them in the order the nodes ran."""
    calls = {"n": 0}

    def respond(body):
        calls["n"] += 1
        if calls["n"] == 1:
            return json.dumps({"toolCalls": [{"name": "search_memory", "arguments": {"query": "Priya dinner"}}]})
        return f"Dinner [msg:{shown_ids(body)[0]}]."

    llm.responder = respond
    turn = make_service(llm.base_url).ask([Q])
    steps = turn.trace["steps"]
    assert [s["step"] for s in steps] == [
        "guard", "load_profile", "timeline", "retrieve_summaries", "retrieve_raw", "compose_context", "answer_or_request_recall",
        "recall_retrieve", "compose_context", "answer_or_request_recall", "finalize"]
    assert [s["round"] for s in steps if s["step"] == "compose_context"] == [0, 1]
    assert steps[-1]["citations"] == turn.citations and turn.fallback is None


def test_an_answer_naming_the_user_as_the_relative_asked_about_says_not_in_memory(make_service, llm, memory):
    user = json.loads((memory / "profile.json").read_text())["user"]

    def respond(body):
        ids = shown_ids(body)
        return f"Your daughter: {user} [msg:{ids[0]}]." if ids else f"Your daughter: {user}."

    llm.responder = respond
    turn = make_service(llm.base_url).ask([{"role": "user", "content": "What is my daughter's name?"}])
    assert turn.answer.startswith("That is not in your memory: I couldn't find a message that answers this.")
    assert user not in turn.answer and turn.citations == []
    assert [x.split(" [msg:")[0].rstrip(".") for x in turn.trace["self_named"]] == [f"Your daughter: {user}"]



def test_a_profile_claim_is_cited_to_the_message_its_fact_rests_on(memory):
    # a claim the model read off the profile, cited to an unrelated shown line, is re-pointed to the
    # message the fact was extracted from (never shown as a line), which then is one of the turn's items
    facts = json.loads((memory / "facts.json").read_text())["facts"]
    pointer = memory / "latest.json"
    # a current fact whose message states its value (the fake model's claims cite lines that do not)
    fact, said = next((f, m) for f in facts if f["evidence_message_ids"] and not f.get("valid_to")
                      for m in fetch_messages(pointer, f["evidence_message_ids"][:1])
                      if f["value"].lower() in m["text"].lower())
    value = fact["value"]
    other = next(i.model_dump(mode="json") | {"round": 0} for i in retrieve("plans for the weekend", pointer, k=20).items
                 if value.lower() not in i.text.lower())
    state = State(question="Where do I live now?", items=[other], context_ids=[other["message_id"]],
                  profile_shown=[fact["fact_id"]], raw_output=f"You live in {value} [msg:{other['message_id']}].")
    run = Runtime(context=Context(published_dir=str(memory)))
    out = finalize(state, run)
    assert out["citations"] == [said["message_id"]]
    assert out["trace"][0]["attributed"] == [{"change": "repointed", "from": [other["message_id"]], "to": said["message_id"],
                                  "support": 1.0}]
    cited = next(i for i in out["items"] if i["message_id"] == said["message_id"])
    assert cited["via"] == "profile" and isinstance(cited["ts"], str)
    # with no profile fact shown there is nothing it rests on: the citation stays as written
    kept = finalize(replace(state, profile_shown=[]), run)
    assert kept["citations"] == [other["message_id"]] and kept["trace"][0]["attributed"] == []
