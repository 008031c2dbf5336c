"""The HTTP API and web page over a real ChatService on a real published memory.

The memory, the chat FakeLLM (`llm`, answering in prose and citing the first message shown to it)
and the `make_service` factory come from the runtime tests' conftest (which builds the memory
through the real Dagster chain); they are imported so they are package-scoped here too.
`live_server` runs the app under a real uvicorn on a free port in a thread; `serve_process` runs
a `truffle serve` command line as its own process group.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from truffle_assets.runtime.api import create_app
from truffle_assets.runtime.serve import in_thread
from truffle_assets_tests.runtime.conftest import (  # noqa: F401 - fixtures
    KEEP_ALL, _no_llm_env, chat_llm, corpus, fake_llm, llm, make_service, memory, qwen_tokens, world)

QUESTION = "What did Priya and I talk about, and what plans did we make?"
TOKEN = "tT7-kq3xZp9LmV2rW8bN4yHc"  # strong enough for `truffle serve` (runtime.limits.weak_token_reason)


def live_server(app, timeout: float = 20.0, lifespan: str = "off"):
    """The app under a real uvicorn on a free port in a thread (`runtime.serve.in_thread`); lifespan off
    unless asked, as most tests here need no MCP sessions."""
    return in_thread(app, lifespan=lifespan, timeout=timeout)


@contextlib.contextmanager
def serve_process(argv: list[str], env: dict[str, str], log: Path) -> Iterator[subprocess.Popen]:
    """`argv` (a `truffle serve` command line) in its own session, output to `log`. On the way out a
    process still running gets SIGTERM, which lets serve stop its llama.cpp servers too, then SIGKILL
    for the whole group if it does not stop."""
    with open(log, "wb") as out:
        proc = subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT, env=env, start_new_session=True)
    try:
        yield proc
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(20)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait(10)


@pytest.fixture
def service(make_service, llm):
    """A service whose store keeps everything (the tests read it); defaults keep nothing."""
    return make_service(llm.base_url, **KEEP_ALL)


@pytest.fixture
def client(service) -> TestClient:
    return TestClient(create_app(service))


@pytest.fixture
def store(service) -> Path:
    return Path(service.config.store_dir)


def feedback_lines(store: Path) -> list[dict]:
    return [json.loads(line) for p in sorted((store / "feedback").glob("*.jsonl"))
            for line in p.read_text().splitlines() if line.strip()]


CHROMIUM = Path("/usr/bin/chromium")  # Debian's, installed by scripts/test.sh; Playwright never downloads one
needs_chromium = pytest.mark.skipif(not CHROMIUM.is_file(),
                                    reason=f"{CHROMIUM} is not installed (apt-get install chromium)")


@pytest.fixture(scope="module")
def browser():
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=str(CHROMIUM), args=["--no-sandbox", "--headless=new"])
        yield b
        b.close()
