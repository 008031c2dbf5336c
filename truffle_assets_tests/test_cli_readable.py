"""What `truffle forget`, `recall`, `parse` and `ingest` print for a person, run as the real console
script: what a forget covers in plain words (the store counts only under --json/--verbose), chats
named by display name or id, an unknown chat refused with the list of those there, counts in
correct plurals, a folder passed to `parse`. One small memory (two chats) is ingested per module;
the one real forget works on a copy of it."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import duckdb
import pytest

from truffle_assets_tests.conftest import TWO_CHATS, newcomer_env, write_export

pytestmark = pytest.mark.subprocess

TRUFFLE = str(Path(sys.executable).with_name("truffle"))
MEERA = "WhatsApp Chat with Meera Iyer.txt"  # id meera-iyer: its display name is not its id
EXPORTS = {MEERA: TWO_CHATS["WhatsApp Chat with Priya.txt"], "WhatsApp Chat with Rahul.txt": TWO_CHATS[
    "WhatsApp Chat with Rahul.txt"]}
STORE_COUNTERS = ("runtime_torn_lines", "lance_old_versions", "message_pii", "message_streams", "dataset_sft")


def truffle(env: dict | None, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([TRUFFLE, *args], env=env, capture_output=True, text=True, timeout=600)


@pytest.fixture(scope="module")
def memory(tmp_path_factory) -> dict:
    root = tmp_path_factory.mktemp("memory")
    for name, lines in EXPORTS.items():
        write_export(root / "exports", name, lines)
    env = newcomer_env(root)
    proc = truffle(env, "ingest", "--instance", "ephemeral")
    assert proc.returncode == 0, proc.stderr[-3000:]
    return {"root": root, "env": env}


def _messages(root: Path) -> int:
    with duckdb.connect(str(root / "memory.duckdb"), read_only=True) as con:
        return con.execute("SELECT count(*) FROM messages").fetchall()[0][0]


def test_a_dry_run_lists_the_messages_and_facts_with_totals_and_no_store_counters(memory):
    env, before = memory["env"], _messages(memory["root"])
    proc = truffle(env, "forget", "--chat", "meera iyer", "--dry-run")
    assert proc.returncode == 0, proc.stderr[-3000:]
    out = proc.stdout
    assert out.startswith("Would forget chat meera-iyer (Meera Iyer): 7 messages on 4 days in 1 chat, and ")
    assert "  Meera Iyer (meera-iyer): 7 messages on 4 days: 2024-01-12, 2024-01-13, 2024-02-02, 2024-04-20" in out
    assert "  2024-01-12 09:02  Meera Iyer  Arjun: Morning! Yes, I live in Pune now so it is a short ride" in out
    assert "Facts learned only from these messages:" in out and "Lives in: Pune" in out
    assert "Nothing changed (dry run)" in out
    assert not any(name in out for name in STORE_COUNTERS), out
    assert _messages(memory["root"]) == before
    verbose = truffle(env, "forget", "--chat", "meera iyer", "--dry-run", "--verbose").stdout
    assert "runtime_torn_lines" in verbose and "lance_old_versions" in verbose


def test_the_json_of_a_dry_run_carries_the_selection_and_every_store_count(memory):
    proc = truffle(memory["env"], "forget", "--chat", "RAHUL", "--dry-run", "--json")
    assert proc.returncode == 0, proc.stderr[-3000:]
    out = json.loads(proc.stdout)
    assert out["dry_run"] is True and out["id"] == "rahul" and out["what"] == "chat rahul"
    assert set(STORE_COUNTERS) <= set(out["removed"]) and out["removed"]["messages"] == 4
    sel = out["selection"]
    assert sel["totals"] == {"chats": 1, "days": 2, "messages": 4, "facts": sel["totals"]["facts"]}
    assert sel["chats"] == [{"id": "rahul", "name": "Rahul", "messages": 4, "days": ["2024-03-02", "2024-03-03"]}]
    first = sel["messages"][0]
    assert (first["ts"], first["author"], first["text"]) == ("2024-03-02T10:00:00", "Rahul", "hey, cricket on Sunday?")


def test_contains_and_a_fact_read_as_words(memory):
    env = memory["env"]
    out = truffle(env, "forget", "--contains", "Saturday", "--in-chat", "Meera Iyer", "--dry-run").stdout
    assert out.splitlines()[0] == ("Would forget messages containing the text given (8 characters) in chat meera-iyer: "
                                   "2 messages on 2 days in 1 chat.")
    assert "contains contains" not in out
    none = truffle(env, "forget", "--contains", "pottery", "--dry-run").stdout
    assert "no stored message or fact matches now" in none
    with duckdb.connect(str(memory["root"] / "memory.duckdb"), read_only=True) as con:
        fact, text = con.execute("SELECT id, fact_text FROM facts ORDER BY id LIMIT 1").fetchall()[0]
    out = truffle(env, "forget", "--fact", fact, "--dry-run").stdout
    assert out.splitlines()[:3] == [f"Would forget fact {fact}: 1 fact.", "Fact:", f"  {text}  (fact {fact})"]


def test_an_unknown_chat_is_refused_with_the_chats_there(memory):
    env = memory["env"]
    for args in (("forget", "--chat", "Meera", "--dry-run"), ("forget", "--contains", "cricket", "--in-chat", "Meera"),
                 ("recall", "cricket", "--chat", "Meera"), ("ingest", "--chat", "Meera")):
        proc = truffle(env, *args)
        assert proc.returncode == 2, (args, proc.stdout, proc.stderr[-2000:])
        assert "no chat 'Meera'" in proc.stderr, proc.stderr[-2000:]
        assert re.search(r"\n  meera-iyer +Meera Iyer\n  rahul +Rahul", proc.stderr), proc.stderr


def test_recall_by_display_name_reads_as_words(memory):
    proc = truffle(memory["env"], "recall", "where do I live", "--chat", "MEERA IYER", "-k", "4")
    assert proc.returncode == 0, proc.stderr[-3000:]
    lines = proc.stdout.splitlines()
    hits = [ln for ln in lines if re.match(r" ?\d+\. ", ln)]
    assert len(hits) == 4 and all(" meera-iyer " in h for h in hits)
    assert "via raw" not in proc.stdout and "found by searching the messages" in proc.stdout
    assert lines[-1] == "memory current to: meera-iyer 2024-04-20"  # the chat asked only, by day
    if "(uncertain)" in proc.stdout:
        assert any(ln.startswith("(uncertain): weak support") for ln in lines)
    both = truffle(memory["env"], "recall", "cricket", "-k", "2").stdout.splitlines()[-1]
    assert both == "memory current to: meera-iyer 2024-04-20, rahul 2024-03-03"
    pack = json.loads(truffle(memory["env"], "recall", "cricket", "--chat", "rahul", "--json").stdout)
    assert {i["chat_id"] for i in pack["items"]} == {"rahul"} and "watermarks" in pack


def test_a_real_forget_prints_what_went_then_the_tombstone(memory, tmp_path):
    root = tmp_path / "copy"
    shutil.copytree(memory["root"], root)
    pointer = root / "published" / "latest.json"  # names its index by absolute path: the copy's own
    pointer.write_text(json.dumps({**json.loads(pointer.read_text()), "root": str(root / "index")}))
    env = newcomer_env(root)
    proc = truffle(env, "forget", "--contains", "saturday", "--instance", "ephemeral")
    assert proc.returncode == 0, proc.stderr[-3000:]
    lines = proc.stdout.splitlines()
    assert lines[0] == "Forgot messages containing the text given (8 characters): 2 messages on 2 days in 1 chat."
    assert "  2024-02-02 21:15  Meera Iyer  Priya: See you on Saturday at 10" in lines
    tomb = json.loads(truffle(env, "forget", "--list", "--json").stdout)[0]["tombstone"]
    assert lines[-1].startswith(f"Tombstone {tomb} keeps this out of later ingests (undo: truffle forget --undo {tomb})")
    assert not any(name in proc.stdout for name in STORE_COUNTERS)
    assert _messages(root) == _messages(memory["root"]) - 2


def test_parse_names_a_folder_and_counts_in_plurals(tmp_path):
    one = write_export(tmp_path / "exports", "WhatsApp Chat with Nia.txt", ["12/01/2024, 09:00 - Nia: hi", "there"])
    proc = truffle(None, "parse", str(one))
    assert proc.returncode == 0 and proc.stderr.strip() == (
        f"{one}: 1 entry (1 authored) from 2 lines = 1 header + 1 continuation + 0 system + 0 quarantined")
    folder = truffle(None, "parse", str(tmp_path / "exports"))  # a folder: every export in it
    assert folder.returncode == 0 and folder.stderr.startswith(f"{one}: 1 entry")
    (tmp_path / "empty").mkdir()
    empty = truffle(None, "parse", str(tmp_path / "empty"))
    assert empty.returncode == 2 and "a directory with no WhatsApp export in it" in empty.stderr
    assert "no such file" not in empty.stderr
