"""Answers stream as the model writes them, stop where the model starts repeating itself, and show
the person's own words (emoji, not shortcodes) — never a secret, streamed or not."""

from __future__ import annotations

import json
import re

import pytest

from truffle_assets.memory.rosetta import normalize_text
from truffle_assets.runtime.display import emoji_for, emojize
from truffle_assets.runtime.streaming import AnswerStream, trim_loop
from truffle_assets_tests.runtime.conftest import KEEP_ALL, context_message, shown_ids

SHORTCODE = re.compile(r":[a-z0-9]+(?:_[a-z0-9]+)+:")
EMOJI = re.compile("[\U0001F300-\U0001FAFF\u2600-\u27BF]")


# ---- the pieces, on their own ---------------------------------------------------------------------

@pytest.mark.parametrize("raw", [
    "Happy birthday beta! 🎂 party at 8", "Love it 😂😂 see you", "coding 👩\u200d💻 all night",
    "India 🇮🇳 won", "call me at 10:30: ok ❤️", "cat 🐱 and 😺 and 🙏",
])
def test_emojize_undoes_rosetta(raw):
    normalized = normalize_text(raw).text
    assert SHORTCODE.search(normalized)  # the search stream holds shortcodes...
    back = emojize(normalized)
    assert not SHORTCODE.search(back)    # ...the person's text has the emoji again
    assert back.replace("\ufe0f", "") == raw.replace("\ufe0f", "")


def test_emojize_leaves_other_text_and_placeholders_alone():
    for text in ("password is [PASSWORD] :)", "at 10:30:45", "see :not_an_emoji_name: here", "<PHONE_1> [OTP]"):
        assert emojize(text) == text


def test_trim_loop_cuts_repeats_and_keeps_plain_answers():
    ok = "You work at Northwind Analytics [msg:a]. Before that you were at Zentrix Labs [msg:b]."
    assert trim_loop(ok) == (ok, False)
    lines = "You live in Bengaluru [msg:a].\nYou moved there in 2022.\nYou moved there in 2022.\nYou moved"
    assert trim_loop(lines) == ("You live in Bengaluru [msg:a].\nYou moved there in 2022.", True)
    sentences = "I work at Northwind now. I work at Northwind now. I work at"
    assert trim_loop(sentences) == ("I work at Northwind now.", True)
    words = "and then we went to the beach with Priya and Rohan " * 3
    cut, looped = trim_loop(words)
    assert looped and cut == "and then we went to the beach with Priya and Rohan"


def test_answer_stream_emits_only_settled_clean_text():
    out: list[str] = []
    live = AnswerStream({"abc"}, out.append)
    reply = ("You work at Northwind Analytics 😺 :cat_face: [msg:abc] [msg:made_up] and your card "
             "4111 1111 1111 1111 stays private. Some more words so that the held tail moves along.")
    for i in range(0, len(reply), 3):  # three characters a delta: citations and numbers arrive in pieces
        live.feed(reply[i:i + 3])
    sent = "".join(out)
    assert len(out) > 3 and sent.startswith("You work at Northwind Analytics 😺 🐱 [msg:abc] and your card [CARD]")
    assert "4111" not in sent and "made_up" not in sent and ":cat_face:" not in sent
    assert all("[msg" not in p or re.search(r"\[msg:abc\]", p) for p in out)  # never half a citation

    held: list[str] = []
    envelope = AnswerStream(set(), held.append)
    for ch in '{"toolCalls":[{"name":"search_memory","arguments":{"query":"where do I work now and since when"}}]}':
        envelope.feed(ch)
    assert held == []  # a tool call is never shown
    mixed: list[str] = []
    late = AnswerStream(set(), mixed.append)
    for ch in ("Let me look through your chats for that first. "
               '{"toolCalls":[{"name":"search_memory","arguments":{"query":"plans with Priya this year"}}]}'):
        late.feed(ch)
    assert "".join(mixed) == "Let me look through your chats for that first. "  # nor one after prose


# ---- through ChatService and a real OpenAI-compatible server ---------------------------------------

def _stream(svc, question: str) -> tuple[list[str], object]:
    deltas, turn = [], None
    for ev in svc.ask_stream([{"role": "user", "content": question}]):
        if "delta" in ev:
            deltas.append(ev["delta"])
        else:
            turn = ev["turn"]
    return deltas, turn


def test_ask_stream_sends_the_answer_in_pieces(make_service, llm):
    def respond(body):
        ids = shown_ids(body)
        return ("From your chats: you and Priya planned a dinner at Toit on Friday and a trip to Goa later in "
                f"the year [msg:{ids[0]}]. You also talked about her new job :cat_face: [msg:{ids[1]}].")

    llm.responder = respond
    llm.stream_delay_s = 0.01
    svc = make_service(llm.base_url, endpoint={"frequency_penalty": 0.3, "repeat_penalty": 1.15,
                                               "stop": ["<|im_start|>", "\nRetrieved messages:"]})
    deltas, turn = _stream(svc, "What did Priya and I talk about?")
    assert len(deltas) > 3 and turn.fallback is None
    assert turn.answer.startswith("".join(deltas))  # what was streamed is the answer's beginning
    assert "🐱" in turn.answer and ":cat_face:" not in turn.answer and len(turn.citations) == 2
    body = llm.bodies[-1]
    assert body["stream"] is True and body["frequency_penalty"] == 0.3 and body["repeat_penalty"] == 1.15
    assert body["stop"] == ["<|im_start|>", "\nRetrieved messages:"]
    step = [s for s in turn.trace["steps"] if s["step"] == "answer_or_request_recall"][-1]
    assert step["streamed"] and step["finish_reason"] == "stop" and not step["looped"]

    plain = make_service(llm.base_url).ask([{"role": "user", "content": "What did Priya and I talk about?"}])
    assert plain.answer == turn.answer  # the same answer without streaming
    assert "stream" not in llm.bodies[-1] and "frequency_penalty" not in llm.bodies[-1]  # nothing configured, nothing sent


def test_a_looping_model_is_cut_off(make_service, llm):
    def loop(body):
        ids = shown_ids(body)
        return f"You live in Bengaluru [msg:{ids[0]}].\n" + "You moved there from Pune in August 2022.\n" * 60

    llm.responder = loop
    llm.stream_delay_s = 0.01
    svc = make_service(llm.base_url)
    deltas, turn = _stream(svc, "Where do I live?")
    assert turn.answer.count("You moved there from Pune") == 1 and turn.fallback is None
    step = [s for s in turn.trace["steps"] if s["step"] == "answer_or_request_recall"][-1]
    assert step["looped"] and step["finish_reason"] == "loop"
    assert "".join(deltas).count("You moved there") <= 1
    llm.stream_delay_s = 0.0
    done = svc.ask([{"role": "user", "content": "Where do I live?"}])  # not streamed: cut the same way
    assert done.answer.count("You moved there from Pune") == 1
    off = make_service(llm.base_url, endpoint={"loop_guard": False}).ask([{"role": "user", "content": "Where do I live?"}])
    assert off.answer.count("You moved there from Pune") == 60  # the guard is what cut it


def _message_with_emoji(published) -> tuple[str, str]:
    """(message id, its indexed text) of a published message whose words carry an emoji shortcode."""
    from truffle_assets.index.lance import RAW_TABLE
    from truffle_assets.retrieval import open_index

    rows = open_index(published / "latest.json").table(RAW_TABLE).search().select(
        ["message_id", "text"]).limit(None).to_list()
    return next((r["message_id"], r["text"]) for r in rows
                if SHORTCODE.search(r["text"]) and len(SHORTCODE.sub(" ", r["text"]).split()) >= 4)


def test_prompt_has_emoji_and_no_secret_and_so_does_the_stream(make_service, llm, corpus, memory):
    """The real test server receives the person's emoji and only placeholders for secrets, streamed or not."""
    values = corpus.secret_values()
    password = next(s["value"] for s in corpus.truth["secrets"] if s["type"] == "password")

    def leaky(body):  # a model that "remembers" the secret anyway
        ids = shown_ids(body)
        return f"The wifi password is {password} [msg:{ids[0]}], card 4791 5705 2974 3004. Happy birthday 🎂!"

    llm.responder = leaky
    svc = make_service(llm.base_url, policy={"allow_secrets": True}, **KEEP_ALL)
    # a message whose search text holds a shortcode, asked for in its own words
    mid, indexed = _message_with_emoji(memory)
    emoji = [emoji_for(c[1:-1]) for c in SHORTCODE.findall(indexed)]
    streamed: list[str] = []
    for q in ("What's the wifi password I sent Priya?", " ".join(SHORTCODE.sub(" ", indexed).split())):
        deltas, turn = _stream(svc, q)
        streamed += deltas
        assert password not in turn.answer and "[PASSWORD]" in turn.answer
        svc.ask([{"role": "user", "content": q}])
    sent = json.dumps(llm.bodies, ensure_ascii=False)
    assert not [v for v in values if v in sent] and "Wifi password is [PASSWORD]" in sent
    joined = "".join(streamed)
    assert password not in joined and "4791" not in joined and "[PASSWORD]" in joined
    contexts = [context_message(b).split("Retrieved messages:", 1)[1] for b in llm.bodies]
    # the statement reaches the model as the person wrote it: its emoji, not shortcodes
    line = next(ln for c in contexts for ln in c.splitlines() if ln.startswith(f"[msg:{mid}]"))
    assert all(e and e in line for e in emoji) and not SHORTCODE.search(line), (indexed, line)
    assert not any(SHORTCODE.search(c) for c in contexts)
