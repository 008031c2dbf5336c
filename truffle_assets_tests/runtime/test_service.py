"""ChatService: the runtime store per toggle, feedback, re-rolls, the memory inspector, retention, CLI."""

from __future__ import annotations

import argparse
import json
from datetime import date, timedelta

import pytest

from truffle_assets.runtime.cli import add_runtime_commands, ask_main, chat_main
from truffle_assets.feedback.turns import load_turns, read_store

Q = [{"role": "user", "content": "Where does Arjun live now?"}]


def _files(store, stream):
    return sorted((store / stream).glob("*.jsonl")) if (store / stream).is_dir() else []


@pytest.mark.parametrize("transcripts,content,feedback", [
    (True, True, True), (True, False, True), (False, False, False)])
def test_store_follows_the_toggles(make_service, llm, transcripts, content, feedback):
    svc = make_service(llm.base_url, transcripts=transcripts, content=content, feedback=feedback)
    turn = svc.ask(Q, conversation_id="conv-1")
    assert svc.feedback(turn.turn_id, 1, "great, my pin is 4821") is feedback
    store = svc.config.store_dir
    assert bool(_files(store, "turns")) is transcripts
    assert bool(_files(store, "content")) is (transcripts and content)
    assert bool(_files(store, "feedback")) is feedback
    if not transcripts:
        return
    [t] = load_turns(store)
    assert t.turn_id == turn.turn_id and t.conversation_id == "conv-1" and t.reroll_of is None
    assert t.meta["model"] == "fake-model" and t.meta["retrieval_ids"] == turn.trace["context_ids"]
    assert t.meta["tokens"] == turn.tokens and t.meta["template_version"]
    if content:
        assert t.has_content and t.answer == turn.body
        assert t.messages[-1] == {"role": "user", "content": Q[0]["content"]}
        assert t.messages[1]["content"].count("[msg:") >= len(turn.citations)
        assert t.rating == 1 and t.feedback[0].note == "great, my pin is [PIN]"
    else:
        assert t.messages is None and t.answer is None


def test_reroll_keeps_both_answers(make_service, llm):
    svc = make_service(llm.base_url)
    first = svc.ask(Q)
    second = svc.reroll(first.turn_id)
    assert second.reroll_of == first.turn_id and second.turn_id != first.turn_id
    assert second.conversation_id == first.conversation_id
    temps = [b["temperature"] for b in llm.bodies]
    assert temps[0] == 0.0 and temps[-1] > 0
    assert llm.bodies[0]["messages"] == llm.bodies[-1]["messages"]  # the same prompt
    turns = {t.turn_id: t for t in load_turns(svc.config.store_dir)}
    assert set(turns) == {first.turn_id, second.turn_id}
    assert turns[second.turn_id].reroll_of == first.turn_id and turns[first.turn_id].has_content
    # a new process (no memory of the turn) re-rolls from the stored content
    again = make_service(llm.base_url).reroll(first.turn_id)
    assert again.reroll_of == first.turn_id
    with pytest.raises(KeyError):
        svc.reroll("no-such-turn")


def test_evidence_and_fact_lookups(make_service, memory):
    svc = make_service(None)
    facts = json.loads((memory / "facts.json").read_text())["facts"]
    f = next(x for x in facts if x.get("evidence_message_ids"))
    got = svc.fact(f["fact_id"])
    assert got["fact_id"] == f["fact_id"] and got["fact_text"] == f["fact_text"]
    assert [e["message_id"] for e in got["evidence"]] == f["evidence_message_ids"]
    ev = got["evidence"][0]
    assert set(ev) == {"message_id", "chat_id", "ts", "author", "text"} and ev["text"]
    assert svc.evidence(ev["message_id"]) == ev
    assert svc.evidence("0" * 20) is None and svc.evidence("x' OR '1'='1") is None
    assert svc.fact("no-such-fact") is None


def test_prune_deletes_day_files_past_retention(make_service, llm):
    svc = make_service(llm.base_url, retention_days=30)
    svc.ask(Q)
    store = svc.config.store_dir
    today = date.today()
    old, kept = today - timedelta(days=31), today - timedelta(days=30)
    for stream in ("turns", "content", "feedback"):
        (store / stream).mkdir(parents=True, exist_ok=True)
        for d in (old, kept):
            (store / stream / f"{d.isoformat()}.jsonl").write_text("")
    deleted = svc.prune()
    assert sorted(p.name for p in deleted) == [f"{old.isoformat()}.jsonl"] * 3
    assert all((store / s / f"{kept.isoformat()}.jsonl").exists() for s in ("turns", "content", "feedback"))
    assert read_store(store).turns  # today's turn is still there


def _args(argv, memory, tmp_path, base_url):
    p = argparse.ArgumentParser()
    add_runtime_commands(p.add_subparsers(dest="cmd"))
    return p.parse_args([*argv, "--published", str(memory), "--store", str(tmp_path / "cli-store"),
                         "--base-url", base_url, "--model", "fake-model"])


def test_cli_ask_json(memory, tmp_path, llm, qwen_tokens, capsys, monkeypatch):
    monkeypatch.setattr("truffle_assets.runtime.service.ChatService.tokenizer_source",
                        lambda self: (qwen_tokens.source, None))
    args = _args(["ask", "Where does Arjun live now?", "--json"], memory, tmp_path, llm.base_url)
    assert args.func is ask_main and args.func(args) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["answer"] and out["citations"] and out["trace"]["steps"]
    assert {"profile", "summaries", "raw", "dialogue", "answer", "total"} <= set(out["tokens"])


def test_cli_chat_repl(memory, tmp_path, llm, qwen_tokens, capsys, monkeypatch):
    monkeypatch.setattr("truffle_assets.runtime.service.ChatService.tokenizer_source",
                        lambda self: (qwen_tokens.source, None))
    lines = iter(["Where does Arjun live now?", ":up", ":down too short", ":reroll", "and Priya?", ":quit"])
    args = _args(["chat"], memory, tmp_path, llm.base_url)
    assert args.func is chat_main
    assert chat_main(args, read=lambda prompt: next(lines)) == 0
    out = capsys.readouterr().out
    assert out.count("truffle> ") == 3 and out.count("thanks, noted") == 2
    turns = load_turns(tmp_path / "cli-store")
    assert len(turns) == 3 and turns[1].reroll_of == turns[0].turn_id
    assert [f.rating for f in turns[0].feedback] == [1, -1] and turns[0].rating == -1
    assert turns[2].conversation_id == turns[0].conversation_id
    assert [m["role"] for m in turns[2].messages][-3:] == ["user", "assistant", "user"]
