"""A memory build as the chat runtime sees it while it runs: `published/build.json`, chat by chat.

A real `ingest_all` on a fresh instance: the chat the user writes to most is built first, and the
moment it ends the published pointer answers for it while the build file says 1 of 3 chats; a
finished build, a crashed one and one whose process is gone all read as not building.
"""

from __future__ import annotations

import json
import subprocess
import sys

import dagster as dg
import pytest

from truffle_assets import faults
from truffle_assets.ingest.build_status import FILE_NAME, BuildStatus, building
from truffle_assets.runtime.coverage_api import coverage, summary_line
from truffle_assets_tests.conftest import write_export

CAROL = [  # the user (Arjun) writes to Carol most: 3 of his messages, against Alice's 2 and Bob's 1
    "10/03/2023, 08:00 - Arjun: leaving now",
    "10/03/2023, 08:05 - Carol: ok",
    "11/03/2023, 19:00 - Arjun: dinner at 8?",
    "11/03/2023, 19:10 - Arjun: I'll book the table",
]


@pytest.fixture
def root(tmp_path, monkeypatch, alice_export, bob_export):
    monkeypatch.setenv("TRUFFLE_HOME", str(tmp_path))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    for k in ("TRUFFLE_LLM_BASE_URL", "TRUFFLE_LLM_MODEL", "TRUFFLE_LLM_API_KEY", "OPENROUTER_API_KEY"):
        monkeypatch.delenv(k, raising=False)
    write_export(tmp_path / "exports", "WhatsApp Chat with Carol.txt", CAROL)
    return tmp_path


def test_a_build_says_how_far_it_is_while_built_chats_answer(root):
    from truffle_assets.defs.ingest.runner import ingest_all

    published = root / "published"
    seen: list[tuple[str, dict | None, list[str]]] = []

    def at_chat_end(p) -> None:
        if p.kind == "chat_end":
            pointer = json.loads((published / "latest.json").read_text())
            seen.append((p.chat, building(published), sorted(pointer["watermarks"])))

    with dg.DagsterInstance.ephemeral() as instance:
        report = ingest_all(root / "exports", root / "memory.duckdb", user_name="Arjun", instance=instance,
                            progress=at_chat_end)
    assert report["status"] == "ok"
    assert [chat for chat, _, _ in seen] == ["carol", "alice", "bob"]  # the user's own messages: 3, 2, 1
    assert seen[0][1] == {"chats_done": 1, "chats_total": 3, "current": None, "stage": "chats",
                          "started_at": seen[0][1]["started_at"]}
    assert seen[0][2] == ["carol"]  # published, so it answers, while two chats are still to build
    assert [b["chats_done"] for _, b, _ in seen] == [1, 2, 3]
    cov = {**coverage(published), "building": seen[0][1]}
    assert summary_line(cov) == "Building memory: 1 of 3 chats, current to 2023-03-13"

    doc = json.loads((published / FILE_NAME).read_text())
    assert doc["state"] == "done" and doc["finished_at"] and [c["state"] for c in doc["chats"]] == ["done"] * 3
    assert building(published) is None and coverage(published)["building"] is None

    # nothing new: no build is recorded, the finished one stays as it was
    with dg.DagsterInstance.ephemeral() as instance:
        ingest_all(root / "exports", root / "memory.duckdb", user_name="Arjun", instance=instance)
    assert json.loads((published / FILE_NAME).read_text()) == doc


def test_a_crashed_build_and_a_gone_process_are_not_building(root):
    from truffle_assets.defs.ingest.runner import ingest_all

    published = root / "published"
    with dg.DagsterInstance.ephemeral() as instance, faults.armed("memory_index:published#2"):
        with pytest.raises(faults.Crash):
            ingest_all(root / "exports", root / "memory.duckdb", user_name="Arjun", instance=instance)
    doc = json.loads((published / FILE_NAME).read_text())
    assert doc["state"] == "failed" and building(published) is None
    assert [c["state"] for c in doc["chats"]] == ["done", "building", "waiting"]

    # a build file left "building" by a process that is gone (killed, the machine restarted)
    gone = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    BuildStatus(published, ["carol", "alice"], ["alice"])
    assert building(published)["chats_done"] == 1  # this process is alive: it is building
    doc = json.loads((published / FILE_NAME).read_text())
    (published / FILE_NAME).write_text(json.dumps({**doc, "pid": int(gone.stdout)}))
    assert building(published) is None


def test_nothing_to_build_writes_nothing(tmp_path):
    with BuildStatus(tmp_path, ["carol"], [], record=False) as status:
        status.finished(ok=True)
    assert not (tmp_path / FILE_NAME).exists()
