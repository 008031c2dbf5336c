"""A real published memory for the runtime tests, built once per package.

The memory is the Dagster world of `truffle_assets_tests/defs/conftest.py` (synthetic corpus seed
24 → messages … memory_index + profile through real DuckDB, LanceDB and a FakeLLM), imported here
so its fixtures are package-scoped for this package too. The runtime reads only what that run
published: `published/latest.json` (LanceDB versions + watermarks), `profile.json`, `facts.json`.
Chat-model calls go to a second FakeLLM whose replies each test scripts through `responder`.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")

import pytest

from truffle_assets.runtime import ChatService, RuntimeConfig
from truffle_assets.runtime.tokens import TokenCounter
from truffle_assets.llm.gguf import qwen_gguf
from truffle_assets_tests.defs.conftest import _no_llm_env, corpus, fake_llm, world  # noqa: F401 - fixtures
from truffle_assets_tests.fake_llm import FakeLLM

MSG_ID = re.compile(r"\[msg:(\w+)\]")
# the store keeps nothing until the person turns it on: tests that read the store say so explicitly
KEEP_ALL = {"transcripts": True, "content": True, "feedback": True}


def context_message(body: dict) -> str:
    """The second system message of a chat request: the runtime's context block."""
    return [m["content"] for m in body["messages"] if m["role"] == "system"][1]


def shown_ids(body: dict) -> list[str]:
    ctx = context_message(body)
    return MSG_ID.findall(ctx.split("Retrieved messages:", 1)[1]) if "Retrieved messages:" in ctx else []


def cite_first(answer: str = "Here is what I found {cite}.") -> Callable[[dict], str]:
    """A responder answering in prose and citing the first message shown to it."""
    def respond(body: dict) -> str:
        ids = shown_ids(body)
        return answer.format(cite=f"[msg:{ids[0]}]" if ids else "")
    return respond


@pytest.fixture(scope="package")
def qwen_tokens() -> TokenCounter:
    return TokenCounter.load(qwen_gguf())


@pytest.fixture(scope="package")
def memory(world) -> Path:
    """The published dir of the world: latest.json, profile.json and facts.json (the profile asset's)."""
    pub = world.published
    assert all((pub / name).is_file() for name in ("latest.json", "profile.json", "facts.json"))
    return pub


@pytest.fixture(scope="package")
def chat_llm():
    with FakeLLM() as fake:
        yield fake


@pytest.fixture
def llm(chat_llm):
    """The chat FakeLLM, reset, answering with `cite_first()` unless a test sets `responder`/`mode`."""
    chat_llm.reset()
    chat_llm.mode = "ok"
    chat_llm.responder = cite_first()
    yield chat_llm
    chat_llm.drain()  # a timed-out slow reply finishes inside its own test
    chat_llm.responder = None
    chat_llm.mode = "ok"


@pytest.fixture
def make_service(memory, tmp_path, qwen_tokens):
    """ChatService factory on the published memory: config overrides as keyword arguments."""
    def make(base_url: str | None = None, **overrides) -> ChatService:
        endpoint = {"base_url": base_url, "model": "fake-model", "timeout_s": 5.0} | overrides.pop("endpoint", {})
        cfg = RuntimeConfig(**{"published_dir": memory, "store_dir": tmp_path / "runtime",
                               "registry_dir": tmp_path / "registry", "tokenizer": str(qwen_tokens.source),
                               "endpoint": endpoint, **overrides})
        return ChatService(cfg)
    return make
