"""`compose_context` on its own: the prompt layout, each section under its budget, and the order
in which the cap shrinks sections (earlier turns, summaries, profile, raw evidence; never the question).

Counts use the real Qwen2.5 GGUF tokenizer (`qwen_tokens`), the one the runtime serves with.
"""

from __future__ import annotations

import pytest
from langgraph.runtime import Runtime

from truffle_assets.chat_format.prompt import message_lines, system_prompt
from truffle_assets.runtime.config import Budget
from truffle_assets.runtime.context import compose_context
from truffle_assets.runtime.prompts import text
from truffle_assets.runtime.state import Context, State

TODAY = "2022-09-20"
WIDE = dict(profile=5_000, summaries=5_000, raw=5_000, dialogue=5_000, answer=64, cap=128_000)


def _item(n: int, score: float, *, round: int = 0, uncertain: bool = False, chat: str = "priya-sharma") -> dict:
    return {"message_id": f"m{n:03d}", "chat_id": chat, "ts": f"2022-09-{1 + n % 28:02d}T10:00:00",
            "author": "Priya Sharma", "text": f"Message {n}: dinner at the Goa place, table for {n} at eight.",
            "score": score, "uncertain": uncertain, "round": round}


def _summary(n: int, score: float) -> dict:
    return {"episode_id": f"e{n}", "chat_id": "priya-sharma", "start_ts": f"2022-08-{1 + n % 28:02d}T09:00:00",
            "end_ts": f"2022-08-{1 + n % 28:02d}T11:00:00", "score": score,
            "text": f"Summary {n}: Priya and the user planned a weekend trip and split the bills."}


def _profile(n: int) -> dict:
    return {"version": 3, "n_facts": n,
            "facts": {"preferences": [{"fact_id": f"f{i}", "text": f"Likes dish number {i} at the corner cafe",
                                       "confidence": round(i / n, 3)} for i in range(n)]},
            "previously": [{"fact_id": "p0", "text": "Lived in Pune", "until": "2021-05-01"}]}


def _state(**kw) -> State:
    base = dict(question="Where is dinner with Priya?", today=TODAY, max_recalls=2,
                watermarks={"priya-sharma": "2022-09-17T23:59:00"})
    return State(**(base | kw))


def _compose(state: State, tokens, tmp_path, **budget) -> tuple[dict, dict]:
    """(the node's update, its trace step) for `state` under `budget` (WIDE where not given)."""
    ctx = Context(published_dir=str(tmp_path), tokenizer=tokens.source, budget=Budget(**(WIDE | budget)))
    out = compose_context(state, Runtime(context=ctx))
    assert len(out["trace"]) == 1 and out["trace"][0]["step"] == "compose_context"
    return out, out["trace"][0]


def _context(out: dict) -> str:
    return out["prompt"][1]["content"]


def _raw_lines(out: dict) -> list[str]:
    return [ln for ln in _context(out).split("Retrieved messages:", 1)[1].splitlines() if ln.startswith("[msg:")]


def test_the_owners_own_lines_are_marked(qwen_tokens, tmp_path):
    # "which sport do I play?" is answered by the owner's line, and nothing else says who the owner is
    mine = _item(2, 0.5) | {"author": "Arjun Mehta", "is_user": True, "text": "Cricket is my favourite sport"}
    out, _ = _compose(_state(items=[_item(1, 0.9), mine]), qwen_tokens, tmp_path)
    assert _raw_lines(out) == [f"[msg:m001] Priya Sharma (2 September 2022): {_item(1, 0.9)['text']}",
                               "[msg:m002] Arjun Mehta (you) (3 September 2022): Cricket is my favourite sport"]
    # and it reads back like any line (the recorded training rows are parsed with `message_lines`)
    line = _raw_lines(out)[1].replace("m002", "a002")
    assert message_lines(line) == [("a002", "Arjun Mehta (you)", "Cricket is my favourite sport", "3 September 2022")]


def test_layout_when_everything_fits(qwen_tokens, tmp_path):
    items = [_item(3, 0.2), _item(1, 0.9)]
    history = [{"role": "user", "content": "Hi"}, {"role": "assistant", "content": "Hello!"}]
    out, step = _compose(_state(items=items, history=history, profile=_profile(2), summaries=[_summary(1, 0.5)]),
                         qwen_tokens, tmp_path)
    prompt = out["prompt"]
    assert [m["role"] for m in prompt] == ["system", "system", "user", "assistant", "user"]
    assert prompt[0]["content"] == system_prompt() and prompt[2:4] == history
    assert prompt[-1]["content"] == "Where is dinner with Priya?"
    ctx = _context(out)
    assert ctx.startswith("Today is Tuesday, 2022-09-20.\n" + text("data_rule"))
    for line in (text("freshness_context", chat="priya-sharma", date="2022-09-17"), text("recall_available", left=2),
                 text("profile_header"), text("profile_previously"), text("summaries_header")):
        assert line in ctx
    # evidence in time order, as `[msg:<id>] <author> (<day sent>): <text>` lines
    assert _raw_lines(out) == [f"[msg:m001] Priya Sharma (2 September 2022): {items[1]['text']}",
                               f"[msg:m003] Priya Sharma (4 September 2022): {items[0]['text']}"]
    assert out["context_ids"] == step["shown"] == ["m001", "m003"]  # in priority order, best first
    assert out["trace"][0]["dropped"] == {"profile": 0, "summaries": 0, "raw": 0, "dialogue": 0}
    tokens = out["tokens"]
    assert tokens["prompt"] == qwen_tokens.count_messages(prompt)
    assert tokens["total"] == tokens["prompt"] + 64 and tokens["cap"] == 128_000
    assert sum(tokens[s] for s in ("system", "profile", "summaries", "raw", "dialogue")) == tokens["prompt"]
    assert step["limits"] == {k: WIDE[k] for k in ("profile", "summaries", "raw", "dialogue")}


def test_no_evidence_says_none(qwen_tokens, tmp_path):
    out, step = _compose(_state(), qwen_tokens, tmp_path)
    ctx = _context(out)
    assert ctx.endswith("\nRetrieved messages: none")
    assert text("profile_header") not in ctx and text("summaries_header") not in ctx
    assert text("freshness_context", chat="priya-sharma", date="2022-09-17") not in ctx  # no chat was shown
    assert out["tokens"]["raw"] == out["tokens"]["profile"] == out["tokens"]["summaries"] == 0
    assert out["context_ids"] == [] and step["shown"] == []


def test_every_section_within_its_budget_lowest_priority_dropped(qwen_tokens, tmp_path):
    items = [_item(n, score=n / 100) for n in range(60)]
    summaries = [_summary(n, score=n / 10) for n in range(20)]
    history = [{"role": "user", "content": f"Earlier question {n} about the trip"} for n in range(30)]
    budget = dict(profile=60, summaries=80, raw=300, dialogue=120)
    out, step = _compose(_state(items=items, summaries=summaries, profile=_profile(30), history=history),
                         qwen_tokens, tmp_path, **budget)
    for sec, limit in budget.items():
        assert 0 < out["tokens"][sec] <= limit, (sec, out["tokens"])
        assert out["trace"][0]["dropped"][sec] > 0, sec
    ctx = _context(out)
    raw = "Retrieved messages:" + ctx.split("Retrieved messages:", 1)[1]
    assert qwen_tokens.count(raw) == out["tokens"]["raw"] <= 300
    # the best-scored messages are the ones kept
    shown = step["shown"]
    assert shown == [f"m{n:03d}" for n in range(59, 59 - len(shown), -1)]
    # summaries by score, profile facts by confidence; past facts give way first
    assert "Summary 19:" in ctx and "Summary 0:" not in ctx
    assert "dish number 29 " in ctx and "dish number 0 " not in ctx and "Lived in Pune" not in ctx
    # the newest earlier turns are kept, oldest dropped
    kept = [m["content"] for m in out["prompt"][2:-1]]
    assert kept and kept == [f"Earlier question {n} about the trip" for n in range(30 - len(kept), 30)]


def test_latest_recall_round_is_shown_before_better_scored_evidence(qwen_tokens, tmp_path):
    items = [_item(n, score=0.9) for n in range(10)] + [_item(50 + n, score=0.1, round=1) for n in range(3)]
    one = qwen_tokens.count(f"[msg:m000] Priya Sharma: {items[0]['text']}") + 1
    out, step = _compose(_state(items=items, recall_count=1), qwen_tokens, tmp_path, raw=5 * one + 8)
    assert step["shown"][:3] == ["m050", "m051", "m052"]
    assert len(step["shown"]) < len(items) and out["trace"][0]["dropped"]["raw"] == len(items) - len(step["shown"])
    assert text("recall_available", left=1) in _context(out)


def test_recalled_facts_come_first_in_the_profile(qwen_tokens, tmp_path):
    fact = {"fact_id": "f99", "fact_text": "Allergic to peanuts", "valid_to": None}
    out, _ = _compose(_state(profile=_profile(30), facts=[fact]), qwen_tokens, tmp_path, profile=40)
    ctx = _context(out)
    assert "- Allergic to peanuts (fact f99, current)" in ctx
    assert out["tokens"]["profile"] <= 40 and out["trace"][0]["dropped"]["profile"] > 0


def test_weak_matches_are_noted_inside_the_raw_budget(qwen_tokens, tmp_path):
    items = [_item(1, 0.9), _item(2, 0.4, uncertain=True)]
    out, _ = _compose(_state(items=items), qwen_tokens, tmp_path)
    ctx = _context(out)
    note = text("uncertain_note", ids="msg:m002")
    assert note + "\nRetrieved messages:" in ctx
    raw = note + "\n" + "Retrieved messages:" + ctx.split("Retrieved messages:", 1)[1]
    assert qwen_tokens.count(raw) == out["tokens"]["raw"]


def test_no_recalls_left_says_so(qwen_tokens, tmp_path):
    out, _ = _compose(_state(max_recalls=1, recall_count=1), qwen_tokens, tmp_path)
    ctx = _context(out)
    assert text("recall_exhausted") in ctx and "you may search again" not in ctx


def _full(qwen_tokens, tmp_path, **kw) -> tuple[State, dict]:
    """A state whose sections all fit WIDE, and its prompt tokens there."""
    state = _state(items=[_item(n, n / 100) for n in range(20)], summaries=[_summary(n, n / 10) for n in range(8)],
                   profile=_profile(8), **kw)
    out, _ = _compose(state, qwen_tokens, tmp_path)
    assert out["trace"][0]["dropped"] == {"profile": 0, "summaries": 0, "raw": 0, "dialogue": 0}
    return state, out["tokens"]


def test_cap_takes_earlier_turns_first(qwen_tokens, tmp_path):
    history = [{"role": "user", "content": "Tell me about the trip " * 20},
               {"role": "assistant", "content": "It was in Goa. " * 20}]
    state, full = _full(qwen_tokens, tmp_path, history=history)
    cap = full["total"] - 50  # dropping the earlier turns alone is enough
    out, step = _compose(state, qwen_tokens, tmp_path, cap=cap)
    assert out["tokens"]["total"] <= cap
    assert step["limits"]["dialogue"] < WIDE["dialogue"]
    assert {k: step["limits"][k] for k in ("profile", "summaries", "raw")} == {k: WIDE[k] for k in ("profile", "summaries", "raw")}
    assert out["trace"][0]["dropped"]["dialogue"] >= 1 and out["trace"][0]["dropped"]["raw"] == out["trace"][0]["dropped"]["profile"] == 0
    assert out["prompt"][-1]["content"] == state.question


def test_cap_then_takes_summaries_then_profile_then_raw(qwen_tokens, tmp_path):
    state, full = _full(qwen_tokens, tmp_path)
    # a little over: only the summaries give way
    out, step = _compose(state, qwen_tokens, tmp_path, cap=full["total"] - full["summaries"] // 2)
    assert out["tokens"]["total"] <= full["total"] - full["summaries"] // 2
    assert step["limits"]["summaries"] < WIDE["summaries"] and out["trace"][0]["dropped"]["summaries"] > 0
    assert step["limits"]["profile"] == WIDE["profile"] and step["limits"]["raw"] == WIDE["raw"]
    assert out["trace"][0]["dropped"]["raw"] == out["trace"][0]["dropped"]["profile"] == 0
    # more than the summaries hold: the profile goes next, the raw evidence still whole
    cap = full["total"] - full["summaries"] - full["profile"] // 2
    out, step = _compose(state, qwen_tokens, tmp_path, cap=cap)
    assert out["tokens"]["total"] <= cap
    assert out["tokens"]["summaries"] == 0 and step["limits"]["profile"] < WIDE["profile"]
    assert step["limits"]["raw"] == WIDE["raw"] and out["trace"][0]["dropped"]["raw"] == 0
    # more than summaries and profile hold: the raw evidence gives way last, best-scored kept
    cap = full["total"] - full["summaries"] - full["profile"] - full["raw"] // 2
    out, step = _compose(state, qwen_tokens, tmp_path, cap=cap)
    assert out["tokens"]["total"] <= cap
    assert out["tokens"]["summaries"] == out["tokens"]["profile"] == 0
    assert 0 < out["tokens"]["raw"] < full["raw"] and out["trace"][0]["dropped"]["raw"] > 0
    assert step["shown"] == [f"m{n:03d}" for n in range(19, 19 - len(step["shown"]), -1)]


def test_question_is_never_cut_to_meet_the_cap(qwen_tokens, tmp_path):
    question = "What did Priya say about the dinner plans for Saturday and who is coming along? " * 6
    history = [{"role": "user", "content": "Earlier question"}]
    state, full = _full(qwen_tokens, tmp_path, question=question, history=history)
    cap = 256  # less than the system prompt and the question alone
    assert full["system"] + full["dialogue"] + 64 > cap
    out, _ = _compose(state, qwen_tokens, tmp_path, cap=cap)
    assert out["prompt"][-1] == {"role": "user", "content": question}
    assert [m["role"] for m in out["prompt"]] == ["system", "system", "user"]  # earlier turns gone
    assert out["tokens"]["profile"] == out["tokens"]["summaries"] == out["tokens"]["raw"] == 0
    assert _context(out).endswith("Retrieved messages: none")
    # still over the cap: left for `answer_or_request_recall` to report as context_overflow
    assert out["tokens"]["total"] > cap


@pytest.mark.parametrize("dialogue", [24, 40])
def test_question_over_the_dialogue_budget_is_truncated_after_the_history(qwen_tokens, tmp_path, dialogue):
    question = "Remind me what Priya said about the trip to Goa and the hotel booking, and the dates. " * 4
    history = [{"role": "user", "content": "Short"}, {"role": "assistant", "content": "Sure"}]
    out, _ = _compose(_state(question=question, history=history), qwen_tokens, tmp_path, dialogue=dialogue)
    asked = out["prompt"][-1]["content"]
    assert [m["role"] for m in out["prompt"]] == ["system", "system", "user"]
    assert out["trace"][0]["dropped"]["dialogue"] == 2
    assert asked and question.startswith(asked) and len(asked) < len(question)
    assert out["tokens"]["dialogue"] == qwen_tokens.message_overhead("user") + qwen_tokens.count(asked) <= dialogue


def test_who_the_user_is_now_comes_first(qwen_tokens, tmp_path):
    # a low-confidence employer marked as what it is: a core fact outranks 30 confident ones; a hobby
    # as unsure as it is does not
    profile = _profile(30)
    profile["facts"]["work"] = [{"fact_id": "w1", "text": "Works at: Northwind", "predicate": "employer", "confidence": 0.6}]
    profile["facts"]["hobby"] = [{"fact_id": "h1", "text": "Hobby: chess", "predicate": "hobby", "confidence": 0.6}]
    out, _ = _compose(_state(profile=profile), qwen_tokens, tmp_path, profile=60)
    assert "- Works at: Northwind (work, fact w1)" in _context(out) and "Hobby: chess" not in _context(out)
    assert out["trace"][0]["dropped"]["profile"] > 0


def test_profile_lines_show_a_short_fact_id(qwen_tokens, tmp_path):
    """A published fact id (20 hex digits, ~20 tokens) costs more than its fact: the prompt shows its
    first digits, so the same budget holds more facts, and `get_fact` resolves what was shown."""
    long_ids = {"version": 3, "n_facts": 20, "previously": [],
                "facts": {"work": [{"fact_id": f"{i:02d}3f9c1d0e8b7a6f5e4d3c", "text": f"Team: squad {i}",
                                    "confidence": 1 - i / 100} for i in range(20)]}}
    out, _ = _compose(_state(profile=long_ids), qwen_tokens, tmp_path, profile=250)
    ctx = _context(out)
    assert "- Team: squad 0 (work, fact 003f9c)" in ctx and "003f9c1d" not in ctx
    shown = 20 - out["trace"][0]["dropped"]["profile"]
    full = sum(qwen_tokens.count(f"- Team: squad {i} (work, fact {i:02d}3f9c1d0e8b7a6f5e4d3c)") + 1 for i in range(20))
    assert shown > 250 // (full / 20) + 2  # more lines than whole ids would leave room for


def test_get_fact_resolves_the_shown_id():
    from truffle_assets.runtime.published import find_fact

    facts = {"ab12cd0000": {"t": 1}, "ab12cd9999": {"t": 2}, "ff00110000": {"t": 3}}
    assert find_fact(facts, "ff00110000") == ("ff00110000", {"t": 3})  # the full id
    assert find_fact(facts, "ff0011") == ("ff00110000", {"t": 3})  # the shown prefix
    assert find_fact(facts, "ab12cd") is None  # two facts begin so, neither in the profile
    assert find_fact(facts, "ab12cd", prefer={"ab12cd9999"}) == ("ab12cd9999", {"t": 2})
    assert find_fact(facts, "") is None and find_fact(facts, "zz") is None
