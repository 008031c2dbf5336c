"""The web page in headless Chromium against a real uvicorn + ChatService: ask, open the cited
evidence, thumbs down with a note, regenerate — every control found by its accessible name."""

from __future__ import annotations

import json
import re
from pathlib import Path


from truffle_assets.runtime.api import create_app
from truffle_assets.feedback.turns import load_turns
from truffle_assets_tests.runtime.conftest import context_message, shown_ids
from truffle_assets_tests.runtime_api.conftest import QUESTION, TOKEN, feedback_lines, live_server, needs_chromium

NOTE = "It mixed up the dates of the dinner"

pytestmark = needs_chromium


def test_page_ask_cite_feedback_reroll(browser, service, store):
    from playwright.sync_api import expect

    expect.set_options(timeout=20_000)
    errors: list[str] = []
    with live_server(create_app(service, token=TOKEN)) as url:
        page = browser.new_page()
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.goto(url + "/")

        # this server requires a token: the page offers the box; without the token the API refuses
        expect(page.locator("#token-box")).to_be_visible()
        page.get_by_label("Your question").fill(QUESTION)
        page.get_by_role("button", name="Send", exact=True).click()
        expect(page.get_by_role("status").first).to_contain_text("401")
        page.get_by_label("Bearer token").fill(TOKEN)
        page.get_by_role("button", name="Save").click()

        page.get_by_label("Your question").fill(QUESTION)
        page.get_by_role("button", name="Send", exact=True).click()
        answer = page.locator("article.answer").first
        expect(answer).to_contain_text("Here is what I found")
        expect(page.locator("#freshness")).to_have_text(re.compile(r"memory current to \d{4}-\d{2}-\d{2}"))
        # which model answered: the page names the served model as /v1/models lists it, the answer its id
        expect(page.locator("#model-line")).to_have_text(
            re.compile(r"^model: fake-model \(OpenAI-compatible endpoint at 127\.0\.0\.1:\d+/v1\)$"))
        expect(answer.locator(".meta")).to_have_text("answer · fake-model")
        turn_id = answer.get_attribute("data-turn-id")

        # the citation opens its evidence message
        citation = answer.get_by_role("button", name=re.compile(r"^Evidence 1: message "))
        message_id = citation.get_attribute("data-message-id")
        evidence = service.evidence(message_id)
        assert evidence and evidence["text"]
        citation.click()
        panel = page.get_by_role("complementary", name="Evidence")
        expect(panel).to_be_visible()
        expect(panel).to_contain_text(evidence["text"].splitlines()[0][:60])
        expect(panel.locator(".evidence-item.cited")).to_have_attribute("data-message-id", message_id)

        # thumbs down, then say what went wrong
        bad = answer.get_by_role("button", name="Bad answer")
        good = answer.get_by_role("button", name="Good answer")
        expect(answer.get_by_role("textbox", name="What went wrong?")).to_be_hidden()
        bad.click()
        expect(bad).to_have_attribute("aria-pressed", "true")
        expect(good).to_have_attribute("aria-pressed", "false")
        note = answer.get_by_role("textbox", name="What went wrong?")
        expect(note).to_be_visible()
        note.fill(NOTE)
        note.press("Enter")
        expect(answer.get_by_role("status")).to_have_text("Thanks, note sent")
        assert (turn_id, -1, NOTE) in [(f["turn_id"], f["rating"], f["note"]) for f in feedback_lines(store)]

        # regenerate: a second answer appears, the first stays
        answer.get_by_role("button", name="Regenerate answer").click()
        answers = page.locator("article.answer")
        expect(answers).to_have_count(2)
        second = answers.nth(1)
        expect(second).to_contain_text("regenerated answer")
        expect(second).to_contain_text("Here is what I found")
        expect(answers.first).to_contain_text("Here is what I found")
        second_id = second.get_attribute("data-turn-id")
        assert second_id and second_id != turn_id
        turns = {t.turn_id: t for t in load_turns(store)}
        assert turns[second_id].reroll_of == turn_id and turn_id in turns

        # change of mind on the new answer: good, recorded
        second.get_by_role("button", name="Good answer").click()
        expect(second.get_by_role("button", name="Good answer")).to_have_attribute("aria-pressed", "true")
        expect(second.get_by_role("status")).to_have_text("Thanks")
        assert (second_id, 1) in [(f["turn_id"], f["rating"]) for f in feedback_lines(store)]

        # ?token= works once and leaves the address bar
        page2 = browser.new_page()
        page2.goto(f"{url}/?token={TOKEN}")
        expect(page2).to_have_url(url + "/")
        assert page2.evaluate("sessionStorage.getItem('truffle.token')") == TOKEN
        page2.close()
        page.close()
    assert errors == []


def test_page_shows_what_is_kept_and_toggles_it(browser, make_service, llm):
    """Nothing kept by default, said in the header; thumbs and regenerate say they were not kept; the
    settings turn logging on (saved in the store) and the next answer and rating are kept."""
    from playwright.sync_api import expect

    expect.set_options(timeout=20_000)
    svc = make_service(llm.base_url)
    store = Path(svc.config.store_dir)
    errors: list[str] = []
    with live_server(create_app(svc, token=TOKEN)) as url:
        page = browser.new_page()
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.goto(f"{url}/?token={TOKEN}")
        state = page.locator("#keep-state")
        expect(state).to_have_text("Not keeping transcripts or ratings")

        page.get_by_label("Your question").fill(QUESTION)
        page.get_by_role("button", name="Send", exact=True).click()
        answer = page.locator("article.answer").first
        expect(answer).to_contain_text("Here is what I found")
        good = answer.get_by_role("button", name="Good answer")
        good.click()
        expect(answer.get_by_role("status")).to_have_text(
            "Not recorded: ratings are not being kept (turn on “Keep ratings” above)")
        expect(good).to_have_attribute("aria-pressed", "false")
        answer.get_by_role("button", name="Bad answer").click()  # no note box for a rating nobody keeps
        expect(answer.get_by_role("textbox", name="What went wrong?")).to_be_hidden()
        answer.get_by_role("button", name="Regenerate answer").click()
        expect(page.locator("article.answer").nth(1)).to_contain_text(
            "Not kept: transcripts are off, so neither answer is saved.")
        assert not store.exists()

        # turn it on in the settings: saved in the store, the header says what is kept now
        page.locator("#keep-box summary").click()
        transcripts = page.get_by_role("checkbox", name="Keep transcripts")
        text = page.get_by_role("checkbox", name="Keep the text of questions and answers")
        expect(text).to_be_disabled()
        transcripts.check()
        expect(state).to_have_text("Keeping transcripts (without their text) for 90 days; not keeping ratings")
        expect(text).to_be_enabled()
        text.check()
        expect(state).to_have_text(
            "Keeping transcripts (with the text of questions and answers) for 90 days; not keeping ratings")
        page.get_by_role("checkbox", name="Keep ratings").check()
        expect(state).to_have_text("Keeping transcripts (with the text of questions and answers) and ratings for 90 days")
        days = page.get_by_role("spinbutton", name="Days to keep")
        days.fill("30")
        days.press("Enter")
        expect(state).to_have_text(
            "Keeping transcripts (with the text of questions and answers) and ratings for 30 days")
        assert json.loads((store / "settings.json").read_text()) == {
            "transcripts": True, "content": True, "feedback": True, "retention_days": 30}

        page.get_by_label("Your question").fill(QUESTION)
        page.get_by_role("button", name="Send", exact=True).click()
        answers = page.locator("article.answer")
        expect(answers).to_have_count(3)
        third = answers.nth(2)
        third.get_by_role("button", name="Good answer").click()
        expect(third.get_by_role("status")).to_have_text("Thanks")
        [kept] = load_turns(store)
        assert kept.turn_id == third.get_attribute("data-turn-id") and kept.has_content and kept.rating == 1

        # a reload reads the saved choice back
        page.reload()
        expect(state).to_have_text("Keeping transcripts (with the text of questions and answers) and ratings for 30 days")
        page.close()
    assert errors == []


EMOJI_LINE = re.compile("[\U0001F300-\U0001FAFF\u2600-\u27BF]")


def test_page_streams_numbered_citations_evidence_and_a_phone_screen(browser, service, llm):
    """No token configured: no token box. The answer grows in pieces, its citations are numbered links
    (no raw id anywhere in the DOM), emoji show as emoji, a citation opens the message with its
    neighbours and a link to the whole day, the second question carries the first turn, and
    nothing is wider than a 390 px phone."""
    from playwright.sync_api import expect

    expect.set_options(timeout=30_000)

    def respond(body):
        ctx = context_message(body).split("Retrieved messages:", 1)[1]
        ids = shown_ids(body)
        with_emoji = [i for i in ids if EMOJI_LINE.search(next(ln for ln in ctx.splitlines() if i in ln))]
        assert with_emoji, "no message with an emoji was shown to the model"
        first = with_emoji[0]
        return (f"People wished you a happy birthday :cat_face: [msg:{first}] and you planned a small party "
                f"with friends that evening [msg:{ids[-1]}]. " + "They also sent wishes the next day. " * 3).strip()

    llm.responder = respond
    llm.stream_delay_s = 0.04
    errors: list[str] = []
    with live_server(create_app(service)) as url:
        page = browser.new_page(viewport={"width": 390, "height": 844})
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.goto(url + "/")
        expect(page.locator("#keep-state")).to_contain_text("Keeping")  # the page's first API calls are done
        page.wait_for_load_state("networkidle")
        expect(page.locator("#token-box")).to_be_hidden()  # this server needs no token
        page.evaluate("""() => { window.__lens = [];
            new MutationObserver(() => { const t = document.querySelector('article.answer .text');
                                         if (t) window.__lens.push(t.textContent.length); })
              .observe(document.getElementById('conversation'), {subtree: true, childList: true, characterData: true}); }""")

        page.get_by_label("Your question").fill("Who wished me happy birthday?")
        page.get_by_role("button", name="Send", exact=True).click()
        answer = page.locator("article.answer").first
        expect(answer).to_have_attribute("data-turn-id", re.compile(r"\w+"))
        lens = [n for n in page.evaluate("window.__lens") if n]
        assert len(set(lens)) > 2, lens  # the text grew in several steps before the answer was done
        assert int(answer.get_attribute("data-chunks")) > 2

        text = answer.locator(".text")
        expect(text).to_contain_text("🐱")
        expect(text).not_to_contain_text(":cat_face:")
        links = text.get_by_role("link")
        expect(links.first).to_be_visible()
        numbers = links.all_inner_texts()  # an "Uncertain: …" note cites the same messages by the same numbers
        assert numbers[:2] == ["1", "2"] and set(numbers) == {"1", "2"}
        assert "[msg:" not in page.content() and "[msg:" not in page.locator("body").inner_text()

        # a citation opens the message with its neighbours, then the whole day
        source = text.get_by_role("link", name=re.compile(r"^Source 1\b")).first
        cited = source.get_attribute("data-message-id")
        source.click()
        panel = page.get_by_role("complementary", name="Evidence")
        expect(panel).to_be_visible()
        current = panel.locator(".evidence-item.cited")
        expect(current).to_have_attribute("data-message-id", cited)
        expect(current).to_have_attribute("aria-current", "true")
        assert panel.locator(".evidence-item").count() > 1
        assert EMOJI_LINE.search(current.inner_text())  # the person's emoji, not a shortcode
        assert not re.search(r":[a-z0-9]+_[a-z0-9_]+:", panel.inner_text())
        assert page.evaluate("document.documentElement.scrollWidth") <= 390
        box = panel.bounding_box()
        assert box["x"] >= 0 and box["x"] + box["width"] <= 390
        day = panel.get_by_role("link", name=re.compile(r"^Whole day: \d{4}-\d{2}-\d{2}"))
        day.click()
        expect(panel.locator(".evidence-where")).to_contain_text("messages")
        expect(panel.locator(".evidence-item.cited")).to_have_attribute("data-message-id", cited)
        assert panel.locator(".evidence-item").count() >= 2
        assert page.evaluate("document.documentElement.scrollWidth") <= 390
        page.get_by_role("button", name="Close evidence").click()

        # the conversation goes on: the second question carries the first turn
        page.get_by_label("Your question").fill("And what did we plan?")
        page.get_by_role("button", name="Send", exact=True).click()
        expect(page.locator("article.answer")).to_have_count(2)
        expect(page.locator("article.answer").nth(1)).to_have_attribute("data-turn-id", re.compile(r"\w+"))
        sent = llm.bodies[-1]["messages"]
        dialogue = [m for m in sent if m["role"] in ("user", "assistant")]
        assert [m["role"] for m in dialogue] == ["user", "assistant", "user"]
        assert dialogue[0]["content"] == "Who wished me happy birthday?" and "🐱" in dialogue[1]["content"]
        assert page.locator("article.question").count() == 2
        assert page.evaluate("document.documentElement.scrollWidth") <= 390
        page.close()
    assert errors == []
