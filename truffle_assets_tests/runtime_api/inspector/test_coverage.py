"""What the published memory covers, on the inspector's two-chat memory: `GET /api/memory/coverage`
(each chat's display name and the day it is current to, when it was published) and the chat page's
header, which shows it on load — before any question — and again after each answer."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

from fastapi.testclient import TestClient

from truffle_assets.ingest.build_status import BuildStatus
from truffle_assets.retrieval import open_index
from truffle_assets.runtime.api import create_app
from truffle_assets_tests.runtime_api.conftest import TOKEN, live_server, needs_chromium
from truffle_assets_tests.runtime_api.inspector.conftest import inspector_service

# the inspector memory's chats: display name (the export's), newest message
EXPECTED = [
    {"chat_id": "mehta-family", "name": "Mehta Family", "watermark": "2023-02-20T19:47:00", "current_to": "2023-02-20"},
    {"chat_id": "priya-sharma", "name": "Priya Sharma", "watermark": "2023-03-05T20:15:00", "current_to": "2023-03-05"},
]


def pointer_of(root: Path) -> dict:
    return json.loads((root / "published" / "latest.json").read_text())


def test_coverage_route(service, inspected, tmp_path):
    pointer = pointer_of(inspected)
    body = TestClient(create_app(service)).get("/api/memory/coverage").json()
    assert body == {"published_at": pointer["published_at"], "current_to": "2023-03-05", "chats": EXPECTED,
                    "building": None}
    # the watermarks are the published index's, the ones `truffle recall` prints
    assert {c["chat_id"]: c["watermark"] for c in body["chats"]} == pointer["watermarks"]

    guarded = TestClient(create_app(service, token=TOKEN))
    assert guarded.get("/api/memory/coverage").status_code == 401
    assert guarded.get("/api/memory/coverage", headers={"Authorization": f"Bearer {TOKEN}"}).json() == body

    empty = TestClient(create_app(inspector_service(tmp_path / "nothing", tmp_path / "runtime")))
    assert empty.get("/api/memory/coverage").json() == {"published_at": None, "current_to": None, "chats": [],
                                                        "building": None}


def building_root(inspected: Path, dest: Path) -> Path:
    """A copy of the inspector's data root whose pointer names one chat (Priya's): a memory still building."""
    (dest / "published").mkdir(parents=True)
    for name in ("profile.json", "facts.json"):
        shutil.copy(inspected / "published" / name, dest / "published" / name)
    shutil.copytree(inspected / "cache", dest / "cache", ignore=shutil.ignore_patterns("llm", "*.lock"))
    full = pointer_of(inspected)  # names the index by its absolute root: the copy reads the same tables
    first = {**full, "watermarks": {"priya-sharma": full["watermarks"]["priya-sharma"]}}
    (dest / "published" / "latest.json").write_text(json.dumps(first))
    return dest


def test_a_build_under_way_is_in_coverage_and_the_model_list(inspected, tmp_path):
    root = building_root(inspected, tmp_path / "root")
    build = BuildStatus(root / "published", ["priya-sharma", "mehta-family"], ["priya-sharma", "mehta-family"])
    build.chat_started("priya-sharma")
    build.chat_ended("priya-sharma", ok=True)
    build.chat_started("mehta-family")
    client = TestClient(create_app(inspector_service(root, tmp_path / "runtime")))
    body = client.get("/api/memory/coverage").json()
    assert body["building"] == {"chats_done": 1, "chats_total": 2, "current": "mehta-family",
                                "current_name": "Mehta Family", "stage": "chats",
                                "started_at": build.doc["started_at"]}
    assert [c["chat_id"] for c in body["chats"]] == ["priya-sharma"]  # what answers already
    model = client.get("/v1/models").json()["data"][0]
    assert model["description"].endswith(". Building memory: 1 of 2 chats, current to 2023-03-05")
    assert model["truffle"]["memory"] == {"chats": 1, "current_to": "2023-03-05", "building": body["building"]}

    build.profile_started()
    assert client.get("/v1/models").json()["data"][0]["description"].endswith(
        ". Building memory: all chats in, writing the profile, current to 2023-03-05")
    build.finished(ok=True)
    assert client.get("/api/memory/coverage").json()["building"] is None
    assert "Building" not in client.get("/v1/models").json()["data"][0]["description"]


@needs_chromium
def test_page_header_shows_coverage_on_load_and_after_an_answer(browser, inspected, tmp_path):
    """A data root whose pointer first names one chat (a memory still building), then both: the page
    shows the first on load and both after the next answer, on a 390 px phone."""
    from playwright.sync_api import expect

    expect.set_options(timeout=20_000)
    root = building_root(inspected, tmp_path / "root")
    full = pointer_of(inspected)
    service = inspector_service(root, tmp_path / "runtime")
    open_index(service.config.pointer).embedder.encode_query("warm up")  # the model loads once per process
    errors: list[str] = []
    with live_server(create_app(service)) as url:
        page = browser.new_page(viewport={"width": 390, "height": 844})
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.goto(url + "/")
        chats = page.get_by_role("list", name="Chats in memory")
        expect(page.locator("#freshness")).to_have_text("memory current to 2023-03-05")
        expect(chats.get_by_role("listitem")).to_have_text(["Priya Sharma · 2023-03-05"])
        expect(page.locator("article")).to_have_count(0)  # nothing asked yet
        assert page.evaluate("document.documentElement.scrollWidth") <= 390

        (root / "published" / "latest.json").write_text(json.dumps(full))  # the second chat is published
        page.get_by_label("Your question").fill("Where do I live now?")
        page.get_by_role("button", name="Send", exact=True).click()
        expect(page.locator("article.answer")).to_have_count(1, timeout=120_000)
        expect(chats.get_by_role("listitem")).to_have_text(
            [f"{c['name']} · {c['current_to']}" for c in EXPECTED])
        expect(page.locator("#freshness")).to_have_text(
            re.compile(r"^memory current to 2023-03-05 \(2 chats, oldest 2023-02-20\)$"))
        assert page.evaluate("document.documentElement.scrollWidth") <= 390
    assert not errors, errors


@needs_chromium
def test_page_follows_a_build_without_a_question(browser, inspected, tmp_path):
    """While memory builds the header says how far it is and asks again every few seconds: when the
    second chat is published and the build ends, the page shows both chats with nothing asked."""
    from playwright.sync_api import expect

    expect.set_options(timeout=20_000)
    root = building_root(inspected, tmp_path / "root")
    build = BuildStatus(root / "published", ["priya-sharma", "mehta-family"], ["priya-sharma", "mehta-family"])
    build.chat_ended("priya-sharma", ok=True)
    errors: list[str] = []
    with live_server(create_app(inspector_service(root, tmp_path / "runtime"))) as url:
        page = browser.new_page(viewport={"width": 390, "height": 844})
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.goto(url + "/")
        expect(page.locator("#freshness")).to_have_text("Building memory: 1 of 2 chats, current to 2023-03-05")
        chats = page.get_by_role("list", name="Chats in memory")
        expect(chats.get_by_role("listitem")).to_have_text(["Priya Sharma · 2023-03-05"])

        (root / "published" / "latest.json").write_text(json.dumps(pointer_of(inspected)))
        build.chat_ended("mehta-family", ok=True)
        build.finished(ok=True)
        expect(page.locator("#freshness")).to_have_text("memory current to 2023-03-05 (2 chats, oldest 2023-02-20)")
        expect(chats.get_by_role("listitem")).to_have_text([f"{c['name']} · {c['current_to']}" for c in EXPECTED])
        expect(page.locator("article")).to_have_count(0)  # nothing was asked
    assert not errors, errors
