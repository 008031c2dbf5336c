"""`GET/PUT /api/settings` over a real ChatService: nothing kept by default, the person's choice saved
in the store and followed at once, thumbs and re-rolls that say they were not kept, and `truffle
serve` saying what it keeps when it starts."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

import pytest
from fastapi.testclient import TestClient

from truffle_assets.feedback.turns import load_turns
from truffle_assets.llm.server import free_port
from truffle_assets.runtime.api import create_app
from truffle_assets_tests.runtime_api.conftest import QUESTION, TOKEN, feedback_lines
from truffle_assets_tests.runtime_api.test_serve import ENV_ENDPOINT, RUN_SERVE

AUTH = {"Authorization": f"Bearer {TOKEN}"}


def ask(client: TestClient, **headers) -> dict:
    r = client.post("/v1/chat/completions", json={"messages": [{"role": "user", "content": QUESTION}]},
                    headers=headers)
    assert r.status_code == 200, r.text
    return r.json()["truffle"]


def test_defaults_keep_nothing_and_say_so(make_service, llm):
    svc = make_service(llm.base_url)
    client = TestClient(create_app(svc))
    got = client.get("/api/settings").json()
    assert got == {"transcripts": False, "content": False, "feedback": False, "retention_days": 90,
                   "summary": "Not keeping transcripts or ratings",
                   "sources": dict.fromkeys(("transcripts", "content", "feedback", "retention_days"), "default")}
    turn_id = ask(client)["turn_id"]
    r = client.post("/api/feedback", json={"turn_id": turn_id, "rating": 1})
    assert r.status_code == 200 and r.json()["recorded"] is False
    r = client.post("/api/reroll", json={"turn_id": turn_id})
    assert r.status_code == 200 and r.json()["kept"] is False and r.json()["reroll_of"] == turn_id
    assert not svc.config.store_dir.exists()


def test_put_saves_the_choice_for_every_service_on_the_store(make_service, llm):
    svc = make_service(llm.base_url)
    client = TestClient(create_app(svc, token=TOKEN))
    assert client.get("/api/settings").status_code == 401
    assert client.put("/api/settings", json={"transcripts": True}).status_code == 401

    r = client.put("/api/settings", json={"transcripts": True, "feedback": True, "retention_days": 30}, headers=AUTH)
    assert r.status_code == 200, r.text
    body = r.json()
    assert (body["transcripts"], body["content"], body["feedback"], body["retention_days"]) == (True, False, True, 30)
    assert body["summary"] == "Keeping transcripts (without their text) and ratings for 30 days"
    assert body["sources"] == {"transcripts": "saved", "content": "default", "feedback": "saved",
                               "retention_days": "saved"}
    saved = json.loads((svc.config.store_dir / "settings.json").read_text())
    assert saved == {"transcripts": True, "feedback": True, "retention_days": 30}

    turn_id = ask(client, **AUTH)["turn_id"]
    assert client.post("/api/feedback", json={"turn_id": turn_id, "rating": -1, "note": "no"},
                       headers=AUTH).json()["recorded"] is True
    [t] = load_turns(svc.config.store_dir)
    assert t.turn_id == turn_id and not t.has_content and [f["rating"] for f in feedback_lines(svc.config.store_dir)] == [-1]
    # another process on the same store (`truffle chat`) reads the same choice
    assert make_service(llm.base_url).keeping().describe() == body["summary"]

    assert client.put("/api/settings", json={"content": True}, headers=AUTH).json()["summary"] == \
        "Keeping transcripts (with the text of questions and answers) and ratings for 30 days"
    off = client.put("/api/settings", json={"transcripts": False, "feedback": False}, headers=AUTH).json()
    assert off["summary"] == "Not keeping transcripts or ratings"
    ask(client, **AUTH)
    assert len(load_turns(svc.config.store_dir)) == 1


def test_put_rejects_bad_values_without_saving(make_service, llm):
    svc = make_service(llm.base_url)
    client = TestClient(create_app(svc))
    for body in ({}, {"transcripts": None}, {"retention_days": 0}, {"retention_days": 100_000},
                 {"transcripts": "maybe"}, {"keep_forever": True}):
        r = client.put("/api/settings", json=body)
        assert r.status_code == 422, (body, r.text)
        assert r.json()["error"]["type"] == "invalid_request_error"
    assert not (svc.config.store_dir / "settings.json").exists()


def test_unreadable_choice_is_an_error_naming_the_file(make_service, llm):
    svc = make_service(llm.base_url)
    svc.config.store_dir.mkdir(parents=True)
    path = svc.config.store_dir / "settings.json"
    path.write_text('{\n"transcripts": yes\n}')
    client = TestClient(create_app(svc))
    for r in (client.get("/api/settings"), client.put("/api/settings", json={"feedback": True})):
        assert r.status_code == 500
        err = r.json()["error"]
        assert err["code"] == "settings_unreadable" and err["message"].startswith(f"{path}:2: not valid JSON")
    assert not ask(client).get("kept") and len(list(svc.config.store_dir.iterdir())) == 1  # still nothing kept


@pytest.mark.subprocess
def test_serve_prints_what_it_keeps(memory, llm, tmp_path):
    store = tmp_path / "runtime"
    store.mkdir()
    (store / "settings.json").write_text('{"transcripts": true, "content": true, "retention_days": 30}')
    env = {k: v for k, v in os.environ.items() if k not in ENV_ENDPOINT} | {
        "HF_HUB_OFFLINE": "1", "TRUFFLE_HOME": str(tmp_path / "home")}
    cmd = [sys.executable, "-c", RUN_SERVE, "serve", "--port", str(free_port()), "--published", str(memory),
           "--store", str(store), "--base-url", llm.base_url, "--model", "fake-model"]
    log = tmp_path / "serve.log"
    with open(log, "wb") as out:
        proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, env=env)
    line = f"truffle: Keeping transcripts (with the text of questions and answers) for 30 days; not keeping ratings (in {store}"
    try:
        deadline = time.monotonic() + 60
        while line not in log.read_text():
            assert proc.poll() is None and time.monotonic() < deadline, log.read_text()[-3000:]
            time.sleep(0.2)
    finally:
        proc.terminate()
        proc.wait(20)
    # an unreadable choice stops `truffle serve` before it starts, naming the file and line
    (store / "settings.json").write_text("{oops")
    done = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 2 and f"error: {store / 'settings.json'}:1: not valid JSON" in done.stderr
