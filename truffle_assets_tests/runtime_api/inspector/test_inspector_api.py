"""The memory inspector's read API over a real published memory (`conftest.build_memory`)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import duckdb
import pytest
from fastapi.testclient import TestClient

from truffle_assets.runtime.api import create_app
from truffle_assets.runtime.inspector_api import MAX_SEARCH_K
from truffle_assets_tests.runtime_api.conftest import TOKEN
from truffle_assets_tests.runtime_api.inspector.conftest import CHATS, PASSWORD, SECRETS, inspector_service

AUTH = {"Authorization": f"Bearer {TOKEN}"}


@pytest.fixture
def client(service) -> TestClient:
    return TestClient(create_app(service))


def published_facts(root: Path) -> dict[str, dict]:
    return {f["fact_id"]: f for f in json.loads((root / "published" / "facts.json").read_text())["facts"]}


def fact_with(facts: dict[str, dict], predicate: str, value: str) -> dict:
    (f,) = [f for f in facts.values() if f["predicate"] == predicate and f["value"] == value]
    return f


def assert_no_secret(text: str) -> None:
    for secret in SECRETS:
        assert secret not in text


def test_profile_is_grouped_by_category_with_history(client, inspected):
    r = client.get("/api/memory/profile")
    assert r.status_code == 200, r.text
    got = r.json()
    profile = json.loads((inspected / "published" / "profile.json").read_text())
    assert [c["category"] for c in got["categories"]] == list(profile["facts"])
    assert {c["category"] for c in got["categories"]} >= {"home", "relationship", "preference"}
    by_cat = {c["category"]: {f["fact_id"]: f for f in c["facts"]} for c in got["categories"]}
    for cat, entries in profile["facts"].items():
        assert set(by_cat[cat]) == {e["fact_id"] for e in entries}
    facts = published_facts(inspected)
    pune, bangalore = fact_with(facts, "lives_in", "Pune"), fact_with(facts, "lives_in", "Bangalore")
    here = by_cat["home"][bangalore["fact_id"]]
    assert here["text"] == bangalore["fact_text"] and here["since"] == bangalore["valid_from"]
    assert here["evidence_count"] == len(bangalore["evidence_message_ids"]) and 0 < here["confidence"] <= 1
    assert pune["fact_id"] not in {f for fs in by_cat.values() for f in fs}  # no longer holds
    (before,) = [p for p in got["previously"] if p["fact_id"] == pune["fact_id"]]
    assert before["until"] == bangalore["valid_from"] and before["superseded_by"] == bangalore["fact_id"]
    assert got["user"] == profile["user"] and got["version"] == profile["version"]


def test_facts_carry_validity_confidence_evidence_and_superseded_history(client, inspected):
    facts = published_facts(inspected)
    got = client.get("/api/memory/facts").json()
    listed = {f["fact_id"]: f for f in got["facts"]}
    history = {h["fact_id"]: (top, h) for top in got["facts"] for h in top["history"]}
    assert set(listed) | set(history) == set(facts) and not set(listed) & set(history)  # each fact once
    assert got["total"] == len(listed) and got["superseded"] == len(history)
    pune, bangalore = fact_with(facts, "lives_in", "Pune"), fact_with(facts, "lives_in", "Bangalore")
    top, old = history[pune["fact_id"]]
    assert top["fact_id"] == bangalore["fact_id"] and top["status"] == "current" and top["valid_to"] is None
    assert old["status"] == "superseded" and old["superseded_by"] == bangalore["fact_id"]
    assert (old["valid_from"], old["valid_to"]) == (pune["valid_from"], bangalore["valid_from"])
    for fid, f in listed.items():
        src = facts[fid]
        assert f["fact_text"] == src["fact_text"] and f["confidence"] == src["confidence"]
        assert f["evidence_message_ids"] == src["evidence_message_ids"] and f["chat_ids"] == src["chat_ids"]
        assert f["valid_from"] == (src["valid_from"] or None)
    cats = [f["category"] for f in got["facts"]]
    assert got["categories"] == list(dict.fromkeys(cats))  # listed in profile order, grouped
    # filtering and paging
    rel = client.get("/api/memory/facts", params={"category": "relationship"}).json()
    assert rel["facts"] and {f["category"] for f in rel["facts"]} == {"relationship"}
    page = client.get("/api/memory/facts", params={"limit": 2, "offset": 1}).json()
    assert [f["fact_id"] for f in page["facts"]] == [f["fact_id"] for f in got["facts"][1:3]]
    for bad in ({"limit": 0}, {"limit": 100_000}, {"offset": -1}):
        r = client.get("/api/memory/facts", params=bad)
        assert r.status_code == 422 and r.json()["error"]["type"] == "invalid_request_error"


def test_fact_evidence_is_redacted(client, inspected):
    facts = published_facts(inspected)
    bangalore = fact_with(facts, "lives_in", "Bangalore")
    (msg_id,) = bangalore["evidence_message_ids"]
    with duckdb.connect(str(inspected / "memory.duckdb"), read_only=True) as con:
        (raw,) = con.execute("SELECT raw_text FROM messages WHERE id = ?", [msg_id]).fetchone()
    assert PASSWORD in raw  # the store holds the secret; the inspector must not show it
    r = client.get(f"/api/memory/facts/{bangalore['fact_id']}")
    assert r.status_code == 200, r.text
    got = r.json()
    (ev,) = got["evidence"]
    assert ev["message_id"] == msg_id and ev["chat_id"] == "priya-sharma" and ev["author"] == "Arjun Mehta"
    assert "[PASSWORD]" in ev["text"] and "moved to Bangalore" in ev["text"]
    assert got["missing_evidence"] == [] and got["chat_ids"] == ["priya-sharma"]
    assert_no_secret(r.text)
    short = bangalore["fact_id"][:8]  # a fact id as the chat prompt shows it resolves to the same fact
    assert sum(fid.startswith(short) for fid in facts) == 1
    assert client.get(f"/api/memory/facts/{short}").json() == got
    missing = client.get("/api/memory/facts/nope")
    assert missing.status_code == 404 and missing.json()["error"]["code"] == "fact_not_found"


def test_a_secret_that_reached_the_published_files_is_still_redacted(inspected, tmp_path):
    """Defence in depth: even a fact text holding a raw card number (a pipeline bug) leaves as [CARD]."""
    pub = tmp_path / "published"
    shutil.copytree(inspected / "published", pub)  # latest.json names the index by absolute path: still found
    blob = json.loads((pub / "facts.json").read_text())
    card = "4111 1111 1111 1111"
    blob["facts"].append({"fact_id": "leaky", "fact_text": f"My card is {card}", "category": "identity",
                          "subject": "Arjun Mehta", "predicate": "card", "value": card, "confidence": 0.9,
                          "valid_from": "2023-01-01", "valid_to": None, "superseded_by": None,
                          "evidence_message_ids": [], "chat_ids": []})
    (pub / "facts.json").write_text(json.dumps(blob))
    client = TestClient(create_app(inspector_service(tmp_path)))
    for path in ("/api/memory/facts", "/api/memory/facts/leaky", "/api/memory/search?q=card", "/api/facts/leaky"):
        r = client.get(path)
        assert r.status_code == 200 and "[CARD]" in r.text, path
        assert card not in r.text and card.replace(" ", "") not in r.text


def test_search_uses_the_runtime_retrieval_and_is_bounded(client, inspected):
    r = client.get("/api/memory/search", params={"q": "where do I live"})
    assert r.status_code == 200, r.text
    got = r.json()
    texts = [m["text"] for m in got["messages"]]
    assert any("I live in Pune" in t for t in texts[:3]), texts
    assert len(got["messages"]) <= got["k"] == 20
    assert {m["chat_id"] for m in got["messages"]} <= set(CHATS)
    assert all(m["message_id"] and m["ts"] and isinstance(m["score"], float) for m in got["messages"])
    assert {f["value"] for f in got["facts"] if f["predicate"] == "lives_in"} == {"Pune", "Bangalore"}
    assert {f["status"] for f in got["facts"] if f["value"] == "Pune"} == {"superseded"}
    # the message holding the password is found by it, but only as its placeholder
    secret = client.get("/api/memory/search", params={"q": "wifi password for the new flat", "k": 5})
    assert any("[PASSWORD]" in m["text"] for m in secret.json()["messages"])
    assert_no_secret(secret.text)
    # one chat only, and bounds
    family = client.get("/api/memory/search", params={"q": "electricity bill", "chat": "mehta-family"}).json()
    assert family["messages"] and {m["chat_id"] for m in family["messages"]} == {"mehta-family"}
    few = client.get("/api/memory/search", params={"q": "trek", "k": 2}).json()
    assert 0 < len(few["messages"]) <= 2
    for params, status, code in (({"q": "x", "k": MAX_SEARCH_K + 1}, 422, "invalid_request"),
                                 ({"q": "x", "k": 0}, 422, "invalid_request"),
                                 ({}, 422, "invalid_request"),
                                 ({"q": "   "}, 400, "empty_query"),
                                 ({"q": "a" * 32_001}, 400, "question_too_long")):
        r = client.get("/api/memory/search", params=params)
        assert r.status_code == status and r.json()["error"]["code"] == code, (params, r.text[:300])
        assert "a" * 100 not in r.text  # never echoed


def test_search_takes_a_date_range_and_shows_score_parts(client):
    later = client.get("/api/memory/search", params={"q": "where do I live", "since": "2023-03-01"}).json()
    assert later["messages"] and all(m["day"] >= "2023-03-01" for m in later["messages"])
    assert all(set(m["parts"]) >= {"semantic", "lexical", "recency"} for m in later["messages"])
    january = client.get("/api/memory/search", params={"q": "trek", "since": "2023-01-01", "until": "2023-01-31"}).json()
    assert january["messages"] and all(m["day"][:7] == "2023-01" for m in january["messages"])
    for params in ({"q": "trek", "since": "yesterday"}, {"q": "trek", "since": "2023-02-01", "until": "2023-01-01"}):
        r = client.get("/api/memory/search", params=params)
        assert r.status_code == 422 and r.json()["error"]["code"] == "invalid_request", r.text


def test_chats_list_watermarks_and_counts(client, inspected):
    got = client.get("/api/memory/chats").json()
    pointer = json.loads((inspected / "published" / "latest.json").read_text())
    assert [c["chat_id"] for c in got["chats"]] == sorted(CHATS)
    assert got["index_versions"] == pointer["tables"] and got["published_at"] == pointer["published_at"]
    with duckdb.connect(str(inspected / "memory.duckdb"), read_only=True) as con:
        stored = {c: (n, str(a), str(b)) for c, n, a, b in con.execute(
            "SELECT chat_id, count(*), min(day), max(day) FROM messages GROUP BY chat_id").fetchall()}
    for c in got["chats"]:
        assert c["watermark"] == pointer["watermarks"][c["chat_id"]]
        assert (c["messages"], c["first_day"], c["last_day"]) == stored[c["chat_id"]]
        assert c["messages"] == len(CHATS[c["chat_id"]][1])
        assert c["watermark"][:10] == c["last_day"]


def test_every_inspector_route_needs_the_token_but_the_page(service):
    client = TestClient(create_app(service, token=TOKEN))
    paths = ["/api/memory/profile", "/api/memory/facts", "/api/memory/facts/x", "/api/memory/search?q=pune",
             "/api/memory/chats"]
    for path in paths:
        for headers in ({}, {"Authorization": "Bearer wrong"}):
            r = client.get(path, headers=headers)
            assert r.status_code == 401 and r.json()["error"]["type"] == "authentication_error", path
    assert all(client.get(p, headers=AUTH).status_code in (200, 404) for p in paths)
    assert client.get("/api/memory/facts/x", headers=AUTH).status_code == 404  # past auth: just unknown
    page = client.get("/inspector")  # public: it holds no data and asks for the token itself
    assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
    assert "Arjun" not in page.text and 'for="search-q"' in page.text
    for path in ("/static/inspector.js", "/static/inspector.css"):
        r = client.get(path)
        assert r.status_code == 200 and "http://" not in r.text and "https://" not in r.text
    assert "http" not in page.text  # no external resources
    assert 'href="/inspector"' in client.get("/").text  # the chat page links to it


def test_no_published_memory_is_a_clear_404(tmp_path):
    client = TestClient(create_app(inspector_service(tmp_path / "empty")))
    for path in ("/api/memory/profile", "/api/memory/facts", "/api/memory/chats", "/api/memory/search?q=pune"):
        r = client.get(path)
        assert r.status_code == 404, (path, r.text)
        assert r.json()["error"]["code"] == "memory_not_published" and "truffle ingest" in r.text
