"""ChatService: the runtime store per toggle, feedback, re-rolls, the memory inspector, retention, CLI."""

from __future__ import annotations

import argparse
import json
from datetime import date, timedelta

import pytest

from truffle_assets.runtime.cli import add_runtime_commands, ask_main, chat_main
from truffle_assets.feedback.turns import load_turns, read_store
from truffle_assets_tests.runtime.conftest import KEEP_ALL

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
    svc = make_service(llm.base_url, **KEEP_ALL)
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
    again = make_service(llm.base_url, **KEEP_ALL).reroll(first.turn_id)
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
    assert set(ev) == {"message_id", "chat_id", "ts", "day", "author", "text"} and ev["text"] and ev["day"] == ev["ts"][:10]
    assert svc.evidence(ev["message_id"]) == ev
    assert svc.evidence("0" * 20) is None and svc.evidence("x' OR '1'='1") is None
    assert svc.fact("no-such-fact") is None


def test_prune_deletes_day_files_past_retention(make_service, llm):
    svc = make_service(llm.base_url, retention_days=30, **KEEP_ALL)
    svc.ask(Q)
    store = svc.config.store_dir
    today = date.today()
    old, kept = today - timedelta(days=31), today - timedelta(days=30)
    for stream in ("turns", "content", "feedback"):
        (store / stream).mkdir(parents=True, exist_ok=True)
        for d in (old, kept):
            (store / stream / f"{d.isoformat()}.jsonl").write_text("")
    report = svc.prune()
    assert sorted(p.name for p in report.deleted) == [f"{old.isoformat()}.jsonl"] * 3
    assert report.days_removed == [old.isoformat()] and report.cutoff == kept
    assert all((store / s / f"{kept.isoformat()}.jsonl").exists() for s in ("turns", "content", "feedback"))
    assert read_store(store).turns  # today's turn is still there


def _args(argv, memory, tmp_path, base_url):
    p = argparse.ArgumentParser()
    add_runtime_commands(p.add_subparsers(dest="cmd"))
    return p.parse_args([*argv, "--published", str(memory), "--store", str(tmp_path / "cli-store"),
                         "--base-url", base_url, "--model", "fake-model"])


def test_cli_ask_json(memory, tmp_path, llm, qwen_tokens, capsys, monkeypatch):
    monkeypatch.setattr("truffle_assets.runtime.model_lease.ModelLease.tokenizer_source",
                        lambda self: (qwen_tokens.source, None))
    args = _args(["ask", "Where does Arjun live now?", "--json"], memory, tmp_path, llm.base_url)
    assert args.func is ask_main and args.func(args) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["answer"] and out["citations"] and out["trace"]["steps"]
    assert {"profile", "summaries", "raw", "dialogue", "answer", "total"} <= set(out["tokens"])


def test_cli_chat_repl(memory, tmp_path, llm, qwen_tokens, capsys, monkeypatch):
    monkeypatch.setattr("truffle_assets.runtime.model_lease.ModelLease.tokenizer_source",
                        lambda self: (qwen_tokens.source, None))
    lines = iter(["Where does Arjun live now?", ":up", ":down too short", ":reroll", "and Priya?", ":quit"])
    args = _args(["chat", "--log"], memory, tmp_path, llm.base_url)
    assert args.func is chat_main
    assert chat_main(args, read=lambda prompt: next(lines)) == 0
    out = capsys.readouterr().out
    assert out.count("truffle> ") == 3 and out.count("thanks, noted") == 2
    turns = load_turns(tmp_path / "cli-store")
    assert len(turns) == 3 and turns[1].reroll_of == turns[0].turn_id
    assert [f.rating for f in turns[0].feedback] == [1, -1] and turns[0].rating == -1
    assert turns[2].conversation_id == turns[0].conversation_id
    assert [m["role"] for m in turns[2].messages][-3:] == ["user", "assistant", "user"]


def test_defaults_keep_nothing_anywhere(make_service, llm):
    svc = make_service(llm.base_url, retrieval_log=True)  # even with the trace log switched on
    keep = svc.keeping()
    assert not keep.keeps_anything and keep.describe() == "Not keeping transcripts or ratings"
    turn = svc.ask(Q)
    assert turn.answer and not turn.kept
    assert svc.feedback(turn.turn_id, -1, "wrong") is False
    again = svc.reroll(turn.turn_id)  # this process still remembers the turn; nothing is stored
    assert again.reroll_of == turn.turn_id and not again.kept
    assert not svc.config.store_dir.exists()  # no turns, content, feedback or retrieval trace: not even a folder


def test_saved_choice_is_followed_by_every_service_on_the_store(make_service, llm):
    page, cli = make_service(llm.base_url), make_service(llm.base_url)
    assert not cli.ask(Q).kept
    page.save_settings({"transcripts": True, "feedback": True})  # what PUT /api/settings does
    turn = cli.ask(Q)  # another service on the same store follows from its next turn
    assert turn.kept and cli.feedback(turn.turn_id, 1) is True
    [t] = load_turns(cli.config.store_dir)
    assert t.turn_id == turn.turn_id and not t.has_content  # content was not turned on
    # a session override beats the saved choice in its own process only, until that process saves one
    session = make_service(llm.base_url, transcripts=False)
    assert not session.ask(Q).kept and cli.keeping().transcripts
    session.save_settings({"transcripts": True, "content": True})
    assert session.ask(Q).kept and session.config.transcripts is None
    assert [x.has_content for x in load_turns(cli.config.store_dir)] == [False, True]
    # an unreadable saved choice keeps nothing (never guesses "on")
    (cli.config.store_dir / "settings.json").write_text("{broken")
    assert not cli.ask(Q).kept and cli.feedback(turn.turn_id, -1) is False
    assert len(load_turns(cli.config.store_dir)) == 2


def test_retrieval_trace_follows_the_choice(make_service, llm):
    import duckdb

    svc = make_service(llm.base_url, retrieval_log=True, transcripts=True)  # transcripts without their text
    svc.ask(Q)
    log = svc.config.store_dir / "retrieval.duckdb"
    with duckdb.connect(str(log), read_only=True) as con:
        assert con.execute("SELECT query, query_hash IS NOT NULL FROM retrieval_logs").fetchall() == [(None, True)]
    make_service(llm.base_url, retrieval_log=True, transcripts=True, content=True).ask(Q)
    with duckdb.connect(str(log), read_only=True) as con:
        assert [r[0] for r in con.execute("SELECT query FROM retrieval_logs ORDER BY logged_at").fetchall()] == [
            None, Q[0]["content"]]


def test_cli_chat_says_what_is_not_kept(memory, tmp_path, llm, qwen_tokens, capsys, monkeypatch):
    monkeypatch.setattr("truffle_assets.runtime.model_lease.ModelLease.tokenizer_source",
                        lambda self: (qwen_tokens.source, None))
    lines = iter(["Where does Arjun live now?", ":up", ":reroll", ":quit"])
    assert chat_main(_args(["chat"], memory, tmp_path, llm.base_url), read=lambda prompt: next(lines)) == 0
    out = capsys.readouterr().out
    assert "Not keeping transcripts or ratings (turn it on with `truffle logging on`" in out
    assert "not recorded: ratings are not being kept" in out and "thanks, noted" not in out
    assert "(not kept: transcripts are off, so this pair of answers is not saved)" in out
    assert not (tmp_path / "cli-store").exists()


def test_cli_logging_saves_the_choice_for_every_command(memory, tmp_path, llm, qwen_tokens, capsys, monkeypatch):
    monkeypatch.setattr("truffle_assets.runtime.model_lease.ModelLease.tokenizer_source",
                        lambda self: (qwen_tokens.source, None))
    p = argparse.ArgumentParser()
    add_runtime_commands(p.add_subparsers(dest="cmd"))
    store = tmp_path / "cli-store"

    def logging(*argv):
        args = p.parse_args(["logging", *argv, "--store", str(store)])
        return args.func(args), capsys.readouterr().out

    code, out = logging()
    assert code == 0 and out.startswith("Not keeping transcripts or ratings.\n")
    assert "nothing saved yet: off until turned on" in out and not (store / "settings.json").exists()
    code, out = logging("on", "--no-content", "--days", "30")
    assert code == 0 and out.startswith("Keeping transcripts (without their text) and ratings for 30 days.\n")
    assert f"saved in {store / 'settings.json'}" in out

    args = _args(["ask", "Where does Arjun live now?", "--json"], memory, tmp_path, llm.base_url)
    assert ask_main(args) == 0
    assert json.loads(capsys.readouterr().out)["kept"] is True
    [t] = load_turns(store)
    assert not t.has_content

    code, out = logging("off")
    assert code == 0 and "Not keeping transcripts or ratings." in out and "stays until it is 30 days old" in out
    assert ask_main(args) == 0 and json.loads(capsys.readouterr().out)["kept"] is False
    assert len(load_turns(store)) == 1

    args = p.parse_args(["logging", "set", "--days", "0", "--store", str(store)])
    assert args.func(args) == 2
    assert capsys.readouterr().err == "error: retention days must be at least 1, got 0\n"
    (store / "settings.json").write_text('{"transcripts": 1.5}')
    assert ask_main(_args(["ask", "x"], memory, tmp_path, llm.base_url)) == 2
    assert f"error: {store / 'settings.json'}: transcripts must be true or false, got 1.5" in capsys.readouterr().err
