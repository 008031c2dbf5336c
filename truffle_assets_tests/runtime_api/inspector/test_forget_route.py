"""`/api/forget` hands its work to the `Forgetter` the app was built with: the pipeline's
(`defs.forget.forgetter.PipelineForgetter`, as `truffle serve` wires it) on a real memory, and a
clear 503 when none was given. Dry runs only: the shared memory stays as it is (the inspector page
test forgets for real on a memory of its own)."""

from __future__ import annotations

import json

from fastapi.testclient import TestClient

from truffle_assets.defs.forget.forgetter import PipelineForgetter
from truffle_assets.runtime.api import create_app
from truffle_assets.runtime.forget_api import Forgetter


def _message_id(root) -> str:
    facts = json.loads((root / "published" / "facts.json").read_text())["facts"]
    (fact,) = [f for f in facts if f["predicate"] == "lives_in" and f["value"] == "Bangalore"]
    return fact["evidence_message_ids"][0]


def test_without_a_forgetter_the_routes_say_forget_runs_through_the_pipeline(service):
    client = TestClient(create_app(service))
    for resp in (client.get("/api/forget"),
                 client.post("/api/forget", json={"kind": "message", "id": "m1", "dry_run": True})):
        assert resp.status_code == 503
        error = resp.json()["error"]
        assert error["code"] == "forget_not_wired" and "pipeline" in error["message"]


def test_the_pipeline_forgetter_answers_the_routes(service, inspected):
    forgetter = PipelineForgetter(inspected)
    assert isinstance(forgetter, Forgetter)
    client = TestClient(create_app(service, forgetter=forgetter))
    msg_id = _message_id(inspected)
    before = (inspected / "memory.duckdb").stat().st_mtime_ns

    dry = client.post("/api/forget", json={"kind": "message", "id": msg_id, "dry_run": True})
    assert dry.status_code == 200, dry.text
    body = dry.json()
    assert body["dry_run"] is True and body["kind"] == "message" and body["id"] == msg_id
    assert body["removed"]["messages"] == 1 and "audit" not in body
    assert client.get(f"/api/evidence/{msg_id}").status_code == 200  # a dry run removes nothing
    assert (inspected / "memory.duckdb").stat().st_mtime_ns == before

    missing = client.post("/api/forget", json={"kind": "message", "id": "no-such-message", "dry_run": True})
    assert missing.status_code == 404 and missing.json()["error"]["code"] == "not_found"
    invalid = client.post("/api/forget", json={"kind": "before", "id": "not a date", "dry_run": True})
    assert invalid.status_code == 400 and invalid.json()["error"]["code"] == "invalid_forget"
    assert client.get("/api/forget").json() == {"tombstones": []}
