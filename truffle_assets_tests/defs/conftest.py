"""Shared, package-scoped world for the Dagster memory-asset tests.

One tiny synthetic corpus, one temp Dagster instance and one ranged run of the whole chat × month
chain (messages → … → memory_index, then profile), against real DuckDB, LanceDB and a real local
OpenAI-compatible server (FakeLLM). Tests that mutate the store work on a copy of the DuckDB file.
"""

from __future__ import annotations

import json
import os
import shutil
import time
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")  # before anything imports huggingface_hub

import dagster as dg
import duckdb
import polars as pl
import pytest

from truffle_assets.defs.memory.assets import profile
from truffle_assets.defs.partitions import add_chat_months, chat_range_tags
from truffle_assets.defs.pipeline import CHAT_MONTH_ASSETS
from truffle_assets.ingest.months import months_between
from truffle_assets.defs.resources import (
    DuckDBStore, ExportsResource, IndexResource, LLMResource, ModelsResource, PublishedResource,
)
from truffle_assets.synth import write_corpus
from truffle_assets_tests.fake_llm import FakeLLM

# seed 24, 2 chats, ~8k tokens: priya-sharma's September 2022 (the one month the world's run covers)
# holds a planted password and a rule fact stated by the user; some days are silent.
CHAT = "priya-sharma"
FIRST, LAST = date(2022, 9, 1), date(2022, 9, 30)
MEMORY_NODES = ["message_pii", "message_streams", "episodes", "summaries", "facts", "memory_index"]
CHAIN_NODES = ["messages", *MEMORY_NODES]


@dataclass
class Corpus:
    exports: Path
    truth: dict

    def secret_values(self, min_len: int = 6) -> list[str]:
        """Planted secrets long enough to search for anywhere (a 3-digit CVV or 4-digit PIN would match
        unrelated numbers), also with spaces/dashes removed (card numbers, Aadhaar)."""
        out: set[str] = set()
        for s in self.truth["secrets"]:
            for v in (s["value"], s["value"].replace(" ", "").replace("-", "")):
                if len(v) >= min_len:
                    out.add(v)
        return sorted(out)


@dataclass
class World:
    root: Path
    corpus: Corpus
    instance: dg.DagsterInstance
    resources: dict
    fake: FakeLLM
    chain: dg.ExecuteInProcessResult
    profile: dg.ExecuteInProcessResult
    chain_seconds: float
    llm_bodies: list[dict] = field(default_factory=list)

    @property
    def db(self) -> Path:
        return self.root / "memory.duckdb"

    @property
    def published(self) -> Path:
        return self.root / "published"


def make_resources(root: Path, exports: Path, llm: LLMResource | None = None, published: Path | None = None) -> dict:
    return {
        "exports": ExportsResource(exports_dir=str(exports), cache_dir=str(root / "cache"),
                                   store_path=str(root / "memory.duckdb")),
        "duckdb": DuckDBStore(path=str(root / "memory.duckdb")),
        "llm": llm or LLMResource(cache_dir=str(root / "cache" / "llm")),
        "index": IndexResource(root=str(root / "index")),
        "published": PublishedResource(dir=str(published or root / "published")),
        # not used by the memory chain; `defs.assets` as a whole needs it bound
        "models": ModelsResource(root=str(root / "models"), datasets_dir=str(root / "training"),
                                 runtime_dir=str(root / "runtime"), registry_dir=str(root / "registry")),
    }


def llm_resource(base_url: str, cache_dir: Path) -> LLMResource:
    return LLMResource(base_url=base_url, api_key="x", timeout_s=1, max_retries=1, cache_dir=str(cache_dir))




def frame(db: Path, sql: str, params: list | None = None) -> pl.DataFrame:
    with duckdb.connect(str(db), read_only=True) as con:
        return pl.from_arrow(con.sql(sql, params=params or None).to_arrow_table())


def scalar(db: Path, sql: str, params: list | None = None):
    with duckdb.connect(str(db), read_only=True) as con:
        return con.execute(sql, params or []).fetchall()[0][0]


def clone_store(world: World, dest: Path) -> Path:
    """A private copy of the built DuckDB file (for tests that change the store)."""
    dest.mkdir(parents=True, exist_ok=True)
    shutil.copy(world.db, dest / "memory.duckdb")
    return dest


def range_tags() -> dict[str, str]:
    return chat_range_tags(CHAT, FIRST, LAST)


def register(instance: dg.DagsterInstance, chat: str = CHAT, first: date = FIRST, last: date = LAST) -> None:
    """`chat`'s keys for every month from `first`'s through `last`'s, so `chat_range_tags` over them resolves."""
    add_chat_months(instance, {chat: months_between(first, last)})


@pytest.fixture(scope="package", autouse=True)
def _no_llm_env():
    """A developer's TRUFFLE_LLM_* must not switch the LLM tiers on in these tests."""
    with pytest.MonkeyPatch.context() as mp:
        for k in ("TRUFFLE_LLM_BASE_URL", "TRUFFLE_LLM_MODEL", "TRUFFLE_LLM_API_KEY", "TRUFFLE_LLM_CACHE_DIR",
                  "OPENROUTER_API_KEY"):
            mp.delenv(k, raising=False)
        mp.setenv("HF_HUB_OFFLINE", "1")
        yield


@pytest.fixture(scope="package")
def corpus(tmp_path_factory) -> Corpus:
    out = tmp_path_factory.mktemp("corpus") / "exports"
    write_corpus(out, chats=2, tokens=8000, seed=24)
    truth = json.loads((out / "ground_truth.json").read_text())
    return Corpus(exports=out, truth=truth)


@pytest.fixture(scope="package")
def fake_llm():
    with FakeLLM(mode="ok") as fake:
        yield fake


@pytest.fixture(scope="package")
def world(tmp_path_factory, corpus, fake_llm, _no_llm_env) -> World:
    root = tmp_path_factory.mktemp("world")
    with dg.DagsterInstance.ephemeral() as instance:
        register(instance)
        res = make_resources(root, corpus.exports, llm_resource(fake_llm.base_url, root / "cache" / "llm"))
        t0 = time.perf_counter()
        chain = dg.materialize(CHAT_MONTH_ASSETS, instance=instance, resources=res, tags=range_tags())
        seconds = time.perf_counter() - t0
        assert chain.success
        prof = dg.materialize([profile], instance=instance, resources=res)
        assert prof.success
        yield World(root=root, corpus=corpus, instance=instance, resources=res, fake=fake_llm, chain=chain,
                    profile=prof, chain_seconds=seconds, llm_bodies=list(fake_llm.bodies))
