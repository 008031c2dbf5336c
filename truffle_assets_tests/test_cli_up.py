"""`truffle up` on a fresh data root, as a newcomer runs it: the chat opens while memory builds.

The real console script writes a three-chat sample set, ingests it on a fresh SQLite instance and
serves the chat and the Dagster UI. The chat server starts once the first chat is in: its `Chat:`
line comes before the ingest's summary, says how far the build is, and the official `openai` client
gets an answer from the memory that is there while the other chats build.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import openai

from truffle_assets.paths import PROJECT_ROOT

TRUFFLE = str(Path(sys.executable).with_name("truffle"))


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def answers(url: str, within_s: float) -> bool:
    """Whether `url` answers, trying for `within_s` seconds (once when 0)."""
    deadline = time.monotonic() + within_s
    while True:
        try:
            with urllib.request.urlopen(url, timeout=5):
                return True
        except OSError:
            if time.monotonic() >= deadline:
                return False
            time.sleep(1)


def test_the_chat_answers_while_the_rest_of_memory_builds(tmp_path):
    (tmp_path / "dagster").mkdir()
    shutil.copy(PROJECT_ROOT / "dagster.yaml", tmp_path / "dagster" / "dagster.yaml")
    env = {**os.environ, "TRUFFLE_HOME": str(tmp_path), "DAGSTER_HOME": str(tmp_path / "dagster"), "HF_HUB_OFFLINE": "1"}
    for var in ("TRUFFLE_LLM_BASE_URL", "TRUFFLE_LLM_MODEL", "TRUFFLE_LLM_API_KEY", "OPENROUTER_API_KEY"):
        env.pop(var, None)
    ui, chat = free_port(), free_port()
    # started as a shell starts a background job (`truffle up &`): SIGINT ignored, so `kill` must stop it
    proc = subprocess.Popen([TRUFFLE, "up", "--sample-chats", "3", "--sample-tokens", "100000", "--port", str(ui),
                             "--chat-port", str(chat)], env=env, cwd=tmp_path, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True, start_new_session=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_IGN))
    lines: list[str] = []
    coverage = answer = None
    deadline = time.monotonic() + 1200
    try:
        for line in proc.stdout:
            lines.append(line.rstrip("\n"))
            if line.startswith("Chat: http") and coverage is None:  # what the page would show right now
                with urllib.request.urlopen(f"http://127.0.0.1:{chat}/api/memory/coverage", timeout=30) as r:
                    coverage = json.load(r)
                client = openai.OpenAI(base_url=f"http://127.0.0.1:{chat}/v1", api_key="unused", timeout=600)
                answer = client.chat.completions.create(
                    model=client.models.list().data[0].id,
                    messages=[{"role": "user", "content": "when is the birthday party?"}])
            if line.startswith("Dagster UI: http") or time.monotonic() > deadline:
                answers(f"http://127.0.0.1:{ui}/server_info", within_s=180)  # the webserver is up
                break
    finally:
        proc.terminate()  # `kill`: up stops the chat server and the UI
        try:
            stopped = proc.wait(timeout=90)
        except subprocess.TimeoutExpired:
            stopped = None
            os.killpg(proc.pid, signal.SIGKILL)
    text = "\n".join(lines)
    assert stopped is not None, "truffle up did not stop on SIGTERM"
    # the chat server and the whole UI (dagster dev and its webserver) went with it
    assert not answers(f"http://127.0.0.1:{chat}/v1/models", within_s=0)
    assert not answers(f"http://127.0.0.1:{ui}/server_info", within_s=0)
    at = next(i for i, s in enumerate(lines) if s.startswith("Chat: http"))
    summary = next(i for i, s in enumerate(lines) if s.startswith("Ingested 3 chats"))
    assert at < summary, text  # the chat opened before the build ended
    assert lines[at + 1].startswith("  Building memory: ") and " of 3 chats, current to " in lines[at + 1], text
    building = coverage["building"]
    assert building is not None and 1 <= building["chats_done"] < 3
    assert 1 <= len(coverage["chats"]) <= building["chats_done"]  # the chats in answer already
    assert answer.choices[0].message.content.strip()
    assert any(s.startswith("Dagster UI: http") for s in lines[summary:]), text
    doc = json.loads(Path(tmp_path / "published" / "build.json").read_text())
    assert doc["state"] == "done" and [c["state"] for c in doc["chats"]] == ["done"] * 3
