"""The memory inspector page in headless Chromium against a real uvicorn + ChatService on a real
memory: reached from the chat page, profile by category, a fact's evidence with its secret as a
placeholder, the superseded value under "Previously", search, per-chat watermarks, keyboard use,
a 390 px screen, and forgetting behind a dry-run confirmation. Controls are found by accessible name."""

from __future__ import annotations

import json
import re
from pathlib import Path

from fastapi.testclient import TestClient

from truffle_assets.defs.forget.forgetter import PipelineForgetter
from truffle_assets.retrieval import open_index
from truffle_assets.runtime.api import create_app
from truffle_assets_tests.runtime_api.conftest import TOKEN, live_server, needs_chromium
from truffle_assets_tests.runtime_api.inspector.conftest import (
    CHATS, SECRETS, build_memory, inspector_service)

SEARCH_TIMEOUT_MS = 120_000  # the first query loads the embedding model, on a shared 2-core machine

pytestmark = needs_chromium


def published(root: Path, name: str) -> dict:
    return json.loads((root / "published" / name).read_text())


def fact_with(root: Path, predicate: str, value: str) -> dict:
    (f,) = [f for f in published(root, "facts.json")["facts"] if f["predicate"] == predicate and f["value"] == value]
    return f


def focused(page) -> dict:
    return page.evaluate("""() => { const e = document.activeElement;
        return {tag: e.tagName, id: e.id, label: e.getAttribute('aria-label') || '', text: (e.textContent || '').trim(),
                expanded: e.getAttribute('aria-expanded')}; }""")


def tab_to(page, match, limit: int = 120) -> dict:
    """Press Tab until the focused element satisfies `match`; fails if it is never reached."""
    for _ in range(limit):
        page.keyboard.press("Tab")
        f = focused(page)
        if match(f):
            return f
    raise AssertionError("never reached by Tab")


def test_inspector_page(browser, service, inspected):
    from playwright.sync_api import expect

    expect.set_options(timeout=20_000)
    open_index(service.config.pointer).embedder.encode_query("warm up")  # the model loads once per process
    profile = published(inspected, "profile.json")
    pointer = published(inspected, "latest.json")
    pune, bangalore = fact_with(inspected, "lives_in", "Pune"), fact_with(inspected, "lives_in", "Bangalore")
    errors: list[str] = []
    with live_server(create_app(service, token=TOKEN)) as url:
        page = browser.new_page(viewport={"width": 1200, "height": 900})
        page.on("pageerror", lambda e: errors.append(f"{page.url}: {e}"))

        # from the chat page; without the token the inspector asks for it
        page.goto(url + "/")
        page.get_by_role("link", name="Memory inspector").click()
        expect(page).to_have_url(url + "/inspector")
        expect(page.get_by_role("status").first).to_have_text("Enter the access token to see the memory.")
        page.get_by_label("Bearer token").fill(TOKEN)
        page.get_by_role("button", name="Save").click()

        # the profile, by category
        prof = page.get_by_role("region", name="Profile")
        for category, entries in profile["facts"].items():
            region = prof.get_by_role("region", name=re.compile(f"^{category}$", re.I))
            for e in entries:
                expect(region).to_contain_text(e["text"])
        expect(prof.get_by_role("region", name="Previously")).to_contain_text(pune["fact_text"])

        # a fact: validity, confidence, its superseded value, and its evidence with the secret redacted
        row = page.locator(f'tr[data-fact-id="{bangalore["fact_id"]}"]')
        expect(row).to_contain_text(f"{bangalore['valid_from']} → now")
        expect(row).to_contain_text(f"{round(bangalore['confidence'] * 100)} %")
        row.get_by_text("Previously (1)").click()
        old = row.locator(f'li[data-fact-id="{pune["fact_id"]}"]')
        expect(old).to_contain_text(pune["fact_text"])
        expect(old).to_contain_text(f"{pune['valid_from']} → {bangalore['valid_from']}")
        evidence = page.get_by_role("button", name=f"Evidence for: {bangalore['fact_text']} (1 message)")
        expect(evidence).to_have_attribute("aria-expanded", "false")
        evidence.click()
        expect(evidence).to_have_attribute("aria-expanded", "true")
        box = page.locator("#" + evidence.get_attribute("aria-controls"))
        expect(box).to_be_visible()
        expect(box).to_contain_text("wifi password is [PASSWORD]")
        expect(box).to_contain_text(bangalore["evidence_message_ids"][0])
        expect(box.get_by_role("button", name=re.compile("^Forget message "))).to_be_visible()

        # search
        page.get_by_label("Search text").fill("where do I live")
        page.get_by_label("Search text").press("Enter")
        results = page.locator("#search-results")
        expect(results).to_contain_text("I live in Pune now", timeout=SEARCH_TIMEOUT_MS)
        expect(results).to_contain_text(bangalore["fact_text"])  # matching facts too
        page.get_by_label("Search text").fill("new flat wifi password")
        page.get_by_role("button", name="Search", exact=True).click()
        expect(results).to_contain_text("[PASSWORD]", timeout=SEARCH_TIMEOUT_MS)

        # chats with their watermarks
        chats = page.get_by_role("region", name="Chats")
        for chat, (_, rows) in CHATS.items():
            line = chats.locator(f'tr[data-chat-id="{chat}"]')
            expect(line).to_contain_text(pointer["watermarks"][chat][:16].replace("T", " "))
            expect(line).to_contain_text(str(len(rows)))
            expect(line.get_by_role("button", name=f"Forget chat {chat}")).to_be_visible()

        html = page.content()
        for secret in SECRETS:
            assert secret not in html

        # keyboard only: every kind of control is reached by Tab and works from the keyboard
        page.goto(url + "/inspector")  # same tab: the token is still in sessionStorage
        expect(page.locator("body[data-loaded]")).to_have_count(1)
        page.locator("body").focus()
        reached = [tab_to(page, lambda f: f["id"] == "search-q")]
        page.keyboard.type("misal pav")
        page.keyboard.press("Enter")
        expect(results).to_contain_text("misal pav", timeout=SEARCH_TIMEOUT_MS)
        reached.append(tab_to(page, lambda f: f["id"] == "facts-category"))
        food = fact_with(inspected, "favourite_food", "misal pav")
        ev = tab_to(page, lambda f: f["label"] == f"Evidence for: {food['fact_text']} (1 message)")
        page.keyboard.press("Enter")
        assert focused(page)["expanded"] == "true"
        forget = tab_to(page, lambda f: f["label"] == f"Forget fact: {food['fact_text']}")
        page.keyboard.press("Enter")
        dialog = page.get_by_role("dialog", name="Forget this fact?")
        expect(dialog).to_be_visible()
        expect(dialog).to_contain_text(food["fact_text"])
        assert focused(page)["id"] == "forget-cancel"  # the safe choice has the focus
        page.keyboard.press("Escape")
        expect(dialog).to_be_hidden()
        assert focused(page)["label"] == forget["label"]  # back where the person was
        reached.append(tab_to(page, lambda f: f["label"].startswith("Forget chat ")))
        assert [f["tag"] for f in reached] == ["INPUT", "SELECT", "BUTTON"] and ev["tag"] == "BUTTON"
        page.close()

        # a phone: nothing wider than the screen, the controls on it
        phone = browser.new_page(viewport={"width": 390, "height": 844})
        phone.on("pageerror", lambda e: errors.append(f"{phone.url}: {e}"))
        phone.goto(f"{url}/inspector?token={TOKEN}")
        expect(phone).to_have_url(url + "/inspector")
        expect(phone.locator(f'tr[data-fact-id="{bangalore["fact_id"]}"]')).to_be_visible()
        assert phone.evaluate("document.scrollingElement.scrollWidth") <= 390
        for control in (phone.get_by_label("Search text"), phone.get_by_role("button", name="Forget chat priya-sharma"),
                        phone.get_by_role("button", name=f"Forget fact: {bangalore['fact_text']}")):
            control.scroll_into_view_if_needed()
            box_ = control.bounding_box()
            assert box_ and box_["x"] >= 0 and box_["x"] + box_["width"] <= 390
        phone.close()
    assert [e for e in errors if "/inspector" in e] == []


def test_forget_from_the_inspector(browser, tmp_path):
    from playwright.sync_api import expect

    root = build_memory(tmp_path / "root")  # its own memory: this one is changed
    service = inspector_service(root)
    bangalore = fact_with(root, "lives_in", "Bangalore")
    (msg_id,) = bangalore["evidence_message_ids"]
    expect.set_options(timeout=20_000)
    errors: list[str] = []
    with live_server(create_app(service, token=TOKEN, forgetter=PipelineForgetter(root))) as url:
        page = browser.new_page(viewport={"width": 1200, "height": 900})
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.goto(f"{url}/inspector?token={TOKEN}")
        page.get_by_role("button", name=f"Evidence for: {bangalore['fact_text']} (1 message)").click()
        page.get_by_role("button", name=f"Forget message {msg_id} from priya-sharma").click()
        dialog = page.get_by_role("dialog", name="Forget this message?")
        expect(dialog).to_contain_text("[PASSWORD]")
        # the dry run first: what would go, nothing gone yet
        expect(dialog.locator('li[data-store="messages"]')).to_have_text("messages: 1")
        confirm = dialog.get_by_role("button", name="Forget permanently")
        expect(confirm).to_be_enabled()
        client = TestClient(create_app(service, token=TOKEN))
        auth = {"Authorization": f"Bearer {TOKEN}"}
        assert client.get(f"/api/evidence/{msg_id}", headers=auth).status_code == 200
        confirm.click()
        # running: progress shown, nothing to click, Escape does not hide it
        expect(dialog.get_by_role("status")).to_contain_text("Forgetting…")
        expect(confirm).to_be_disabled()
        expect(dialog.get_by_role("button", name="Cancel")).to_be_disabled()
        page.keyboard.press("Escape")
        expect(dialog).to_be_visible()
        expect(dialog).to_contain_text("Forgotten.", timeout=600_000)
        expect(dialog.get_by_role("status")).to_contain_text(re.compile(r"Done in \d+ s"))
        dialog.get_by_role("button", name="Close").click()
        expect(dialog).to_be_hidden()
        # the page shows the memory without it
        expect(page.locator(f'tr[data-fact-id="{bangalore["fact_id"]}"]')).to_have_count(0)
        priya = page.locator('tr[data-chat-id="priya-sharma"]')
        expect(priya.locator("td").first).to_have_text(str(len(CHATS["priya-sharma"][1]) - 1))
        assert client.get(f"/api/evidence/{msg_id}", headers=auth).status_code == 404
        page.close()
    assert errors == []
