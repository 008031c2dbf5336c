"""The API through FastAPI's TestClient and, for streaming, a real uvicorn with the openai client."""

from __future__ import annotations

import json
import time

import openai
import pytest
from fastapi.testclient import TestClient

from truffle_assets.runtime import ChatService
from truffle_assets.runtime.api import create_app
from truffle_assets.feedback.turns import load_turns
from truffle_assets_tests.fake_llm import closed_port_url
from truffle_assets_tests.runtime.conftest import shown_ids
from truffle_assets_tests.runtime_api.conftest import QUESTION, TOKEN, feedback_lines, live_server


def ask(client: TestClient, question: str = QUESTION, **extra) -> dict:
    r = client.post("/v1/chat/completions", json={"model": "truffle", "messages": [
        {"role": "user", "content": question}], **extra})
    assert r.status_code == 200, r.text
    return r.json()


def test_chat_completion_is_openai_shaped_with_citations(client, store, llm):
    data = ask(client)
    assert data["object"] == "chat.completion" and data["id"].startswith("chatcmpl-")
    choice = data["choices"][0]
    assert choice["finish_reason"] == "stop" and choice["message"]["role"] == "assistant"
    t = data["truffle"]
    assert {"turn_id", "citations", "uncertain", "watermarks", "tokens", "fallback"} <= set(t)
    assert t["fallback"] is None and llm.requests >= 1
    assert "Here is what I found" in choice["message"]["content"]
    assert t["citations"] and t["watermarks"] and t["tokens"]["raw"] > 0
    assert data["usage"]["prompt_tokens"] > 0 and data["usage"]["completion_tokens"] > 0
    # the cited message opens as evidence, and the turn is in the runtime store
    ev = client.get(f"/api/evidence/{t['citations'][0]}").json()
    assert ev["message_id"] == t["citations"][0] and ev["text"] and ev["chat_id"] in t["watermarks"]
    assert [turn.turn_id for turn in load_turns(store)] == [t["turn_id"]]
    # a follow-up in the same conversation keeps its id
    again = ask(client, "And when was that?", conversation_id=t["conversation_id"])
    assert again["truffle"]["conversation_id"] == t["conversation_id"]


def test_models_page_and_validation(client):
    models = client.get("/v1/models").json()
    assert models["object"] == "list" and [m["id"] for m in models["data"]] == ["fake-model"]  # the endpoint's
    listed = models["data"][0]
    assert listed["owned_by"] == "truffle" and listed["truffle"]["model"]["source"] == "endpoint"
    assert listed["description"].startswith("fake-model (OpenAI-compatible endpoint at 127.0.0.1:")
    page = client.get("/")
    assert page.status_code == 200 and 'aria-label="Bad answer"' in page.text
    assert "http" not in page.text.replace('http-equiv', '')  # no external resources
    for path in ("/static/app.js", "/static/app.css"):
        r = client.get(path)
        assert r.status_code == 200 and "http://" not in r.text and "https://" not in r.text
    bad = [
        ("/v1/chat/completions", {"model": "x"}),                                              # no messages
        ("/v1/chat/completions", {"messages": []}),
        ("/v1/chat/completions", {"messages": [{"role": "system", "content": "only a system prompt"}]}),
        ("/v1/chat/completions", {"messages": [{"role": "wizard", "content": "hi"}]}),
        ("/api/feedback", {"turn_id": "t", "rating": 2}),
        ("/api/feedback", {"rating": 1}),
        ("/api/reroll", {}),
    ]
    for path, body in bad:
        r = client.post(path, json=body)
        assert r.status_code == 422, (path, body, r.text)
        assert r.json()["error"]["type"] == "invalid_request_error"
    r = client.post("/api/feedback", content=b"{not json", headers={"Content-Type": "application/json"})
    assert r.status_code == 422


def test_token_required_everywhere_but_the_page(service):
    client = TestClient(create_app(service, token=TOKEN))
    calls = [("GET", "/v1/models", None),
             ("POST", "/v1/chat/completions", {"messages": [{"role": "user", "content": QUESTION}]}),
             ("POST", "/api/feedback", {"turn_id": "x", "rating": 1}),
             ("POST", "/api/reroll", {"turn_id": "x"}),
             ("GET", "/api/evidence/x", None), ("GET", "/api/facts/x", None)]
    for method, path, body in calls:
        for headers in ({}, {"Authorization": "Bearer wrong"}, {"Authorization": TOKEN}):
            r = client.request(method, path, json=body, headers=headers)
            assert r.status_code == 401, (path, headers, r.text)
            assert r.json()["error"]["type"] == "authentication_error"
    for path in ("/", "/static/app.js", "/static/app.css", "/static/index.html"):
        assert client.get(path).status_code == 200
    auth = {"Authorization": f"Bearer {TOKEN}"}
    assert client.get("/v1/models", headers=auth).status_code == 200
    assert client.get("/api/evidence/x", headers=auth).status_code == 404  # past auth: just unknown


def test_feedback_change_of_mind_is_appended(client, store):
    turn_id = ask(client)["truffle"]["turn_id"]
    assert client.post("/api/feedback", json={"turn_id": turn_id, "rating": 1}).json()["recorded"] is True
    r = client.post("/api/feedback", json={"turn_id": turn_id, "rating": -1, "note": "wrong date, it was March"})
    assert r.status_code == 200
    lines = feedback_lines(store)
    assert [(f["turn_id"], f["rating"], f["note"]) for f in lines] == [
        (turn_id, 1, ""), (turn_id, -1, "wrong date, it was March")]
    (turn,) = load_turns(store)
    assert [f.rating for f in turn.feedback] == [1, -1]  # both kept, the latest last


def test_feedback_toggle_off_records_nothing(make_service, llm):
    svc = make_service(llm.base_url, feedback=False)
    client = TestClient(create_app(svc))
    turn_id = ask(client)["truffle"]["turn_id"]
    r = client.post("/api/feedback", json={"turn_id": turn_id, "rating": -1, "note": "meh"})
    assert r.status_code == 200 and r.json()["recorded"] is False
    assert not (svc.config.store_dir / "feedback").exists()


def test_reroll_keeps_both_turns(client, store):
    first = ask(client)["truffle"]
    r = client.post("/api/reroll", json={"turn_id": first["turn_id"]})
    assert r.status_code == 200, r.text
    second = r.json()
    assert second["turn_id"] != first["turn_id"] and second["reroll_of"] == first["turn_id"]
    assert second["conversation_id"] == first["conversation_id"] and second["answer"] and "trace" not in second
    turns = {t.turn_id: t for t in load_turns(store)}
    assert set(turns) == {first["turn_id"], second["turn_id"]}
    assert turns[second["turn_id"]].reroll_of == first["turn_id"]
    missing = client.post("/api/reroll", json={"turn_id": "0" * 32})
    assert missing.status_code == 404 and "unknown turn" in missing.json()["error"]["message"]


def test_evidence_and_fact_lookups(client, memory):
    r = client.get("/api/evidence/doesnotexist")
    assert r.status_code == 404
    assert r.json()["error"] == {"message": "no evidence message with id 'doesnotexist' in the published memory",
                                 "type": "not_found_error", "param": None, "code": "message_not_found"}
    assert client.get("/api/facts/doesnotexist").status_code == 404
    facts = json.loads((memory / "facts.json").read_text())["facts"]
    fact = next((f for f in facts if f.get("evidence_message_ids")), facts[0])
    got = client.get(f"/api/facts/{fact['fact_id']}").json()
    assert got["fact_id"] == str(fact["fact_id"]) and got["fact_text"] == fact["fact_text"]
    assert [m["message_id"] for m in got["evidence"]] == [
        m for m in fact.get("evidence_message_ids") or [] if m in {e["message_id"] for e in got["evidence"]}]
    assert all(m["text"] for m in got["evidence"])
    assert got["status"] in ("current", "superseded", "ended") and "missing_evidence" in got
    # a shortened id, as the chat prompt shows it, names the same fact
    short = next(fact["fact_id"][:n] for n in range(6, 40) if sum(f["fact_id"].startswith(fact["fact_id"][:n])
                                                                   for f in facts) == 1)
    assert len(short) < len(fact["fact_id"]) and client.get(f"/api/facts/{short}").json() == got


def test_down_endpoint_degrades_and_service_errors_are_json(make_service, tmp_path):
    down = TestClient(create_app(make_service(closed_port_url())))
    data = ask(down)
    assert data["truffle"]["fallback"] == "endpoint_down" and data["choices"][0]["message"]["content"]
    # a service that cannot run at all (its tokenizer is missing): a JSON error, never a 500 trace
    cfg = make_service(closed_port_url()).config
    broken = ChatService(cfg.model_copy(update={"tokenizer": str(tmp_path / "missing.gguf")}))
    client = TestClient(create_app(broken))  # raise_server_exceptions: an unhandled error would raise here
    for stream in (False, True):
        r = client.post("/v1/chat/completions",
                        json={"stream": stream, "messages": [{"role": "user", "content": QUESTION}]})
        assert r.status_code == 503 and r.headers["content-type"] == "application/json", r.text
        err = r.json()["error"]
        assert err["type"] == "service_unavailable" and "FileNotFoundError" in err["message"]
        assert "Traceback" not in r.text


def test_streaming_through_uvicorn_with_the_openai_client(service):
    with live_server(create_app(service, token=TOKEN)) as url:
        client = openai.OpenAI(base_url=f"{url}/v1", api_key=TOKEN, max_retries=0, timeout=60)
        assert [m.id for m in client.models.list()] == ["fake-model"]  # the model that answers, not an alias
        full = client.chat.completions.create(model="truffle", messages=[{"role": "user", "content": QUESTION}])
        assert full.model == "fake-model"
        extra = full.model_extra["truffle"]
        stream = client.chat.completions.create(model="truffle", messages=[{"role": "user", "content": QUESTION}],
                                                stream=True)
        chunks = list(stream)
        pieces = [c.choices[0].delta.content for c in chunks if c.choices and c.choices[0].delta.content]
        assert len(pieces) > 1  # really streamed in pieces
        assert "".join(pieces) == full.choices[0].message.content  # temperature 0, same memory: same answer
        assert chunks[0].choices[0].delta.role == "assistant"
        last = chunks[-1]
        assert last.choices[0].finish_reason == "stop" and {c.model for c in chunks} == {"fake-model"}
        assert last.model_extra["truffle"]["citations"] == extra["citations"]
        assert last.model_extra["truffle"]["turn_id"] != extra["turn_id"]
        with pytest.raises(openai.AuthenticationError):
            openai.OpenAI(base_url=f"{url}/v1", api_key="wrong", max_retries=0).models.list()


def test_the_stream_arrives_while_the_model_writes(service, llm):
    """Over a real socket: content events arrive in several reads, spread over the model's time."""
    import httpx

    def long_answer(body):
        ids = shown_ids(body)
        return " ".join(f"Point {i} about your plans with Priya [msg:{ids[i % len(ids)]}]." for i in range(12))

    llm.responder = long_answer
    llm.stream_delay_s = 0.05
    with live_server(create_app(service)) as url:
        arrivals: list[tuple[float, str]] = []
        t0 = time.perf_counter()
        with httpx.stream("POST", f"{url}/v1/chat/completions", timeout=60,
                          json={"stream": True, "messages": [{"role": "user", "content": QUESTION}]}) as r:
            assert r.status_code == 200 and r.headers["content-type"].startswith("text/event-stream")
            for line in r.iter_lines():
                if line.startswith("data: ") and line != "data: [DONE]":
                    arrivals.append((time.perf_counter() - t0, line[6:]))
    events = [json.loads(d) for _, d in arrivals]
    content = [(t, e["choices"][0]["delta"].get("content")) for (t, _), e in zip(arrivals, events)
               if e.get("choices") and e["choices"][0]["delta"].get("content")]
    assert len(content) > 5
    assert content[-1][0] - content[0][0] > 0.2  # not one burst at the end: pieces came as they were written
    final = events[-1]["truffle"]
    assert final["answer"] == "".join(c for _, c in content) and not final["replaced"]
    assert len(final["citations"]) >= 2


def test_evidence_with_neighbours_and_the_day(client, service, llm):
    data = ask(client)
    cited = data["truffle"]["citations"][0]
    ev = client.get(f"/api/evidence/{cited}", params={"around": 3}).json()
    near = ev["neighbours"]
    assert [m["message_id"] for m in near if m["cited"]] == [cited] and 1 < len(near) <= 7
    assert all(m["chat_id"] == ev["chat_id"] and m["day"] == ev["day"] for m in near)
    assert [m["ts"] for m in near] == sorted(m["ts"] for m in near)
    day = client.get(f"/api/day/{ev['chat_id']}/{ev['day']}").json()
    ids = [m["message_id"] for m in day["messages"]]
    assert cited in ids and [m["message_id"] for m in near] == ids[ids.index(near[0]["message_id"]):][:len(near)]
    assert "neighbours" not in client.get(f"/api/evidence/{cited}").json()
    assert client.get(f"/api/evidence/{cited}", params={"around": 99}).status_code == 422
    bad = client.get(f"/api/day/{ev['chat_id']}/yesterday")
    assert bad.status_code == 422 and bad.json()["error"]["param"] == "day"
    assert client.get(f"/api/day/nochat/{ev['day']}").json()["messages"] == []


def test_a_stream_that_falls_back_after_prose_says_replaced(client, llm):
    """Prose was streamed, then the reply turned into a broken tool call: the retrieval-only answer
    follows after a blank line and the last chunk says the answer replaced what was shown."""
    llm.responder = lambda body: ("Let me look through your chats with Priya for the plans you made together first. "
                                  '{"toolCalls":[{"name":"search_memory","arguments":{"query":')
    r = client.post("/v1/chat/completions", json={"stream": True, "messages": [{"role": "user", "content": QUESTION}]})
    events = [json.loads(line[6:]) for line in r.text.splitlines() if line.startswith("data: {")]
    content = "".join(e["choices"][0]["delta"].get("content") or "" for e in events if e.get("choices"))
    final = events[-1]["truffle"]
    assert final["fallback"] == "malformed_output" and final["replaced"]
    assert content.startswith("Let me look through your chats") and content.endswith("\n\n" + final["answer"])
    assert '{"toolCalls"' not in content
