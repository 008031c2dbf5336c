"""`truffle ingest` with an OpenAI-compatible endpoint configured: the LLM work is announced before the
runs, the routed fact reads reach the endpoint, and their claims land in the store as `llm` claims.
Without an endpoint nothing of it is said or done."""

import json
import os
import subprocess
import sys
from pathlib import Path

import duckdb
import pytest

from truffle_assets_tests.conftest import write_export
from truffle_assets_tests.fake_llm import FakeLLM

TRUFFLE = [str(Path(sys.executable).with_name("truffle"))]
LINES = [
    "05/03/2023, 09:01 - Dev: hey, long time! where are you working these days?",
    "05/03/2023, 09:02 - Arjun: I joined Northwind last month, the payments team",
    "05/03/2023, 09:03 - Dev: nice",
    "06/03/2023, 20:10 - Dev: dinner at the steak place friday?",
    "06/03/2023, 20:12 - Arjun: can't, I'm vegetarian now",
    "07/03/2023, 08:00 - Dev: good morning",
    "07/03/2023, 08:01 - Arjun: morning",
]


def ingest(workdir: Path, env: dict) -> subprocess.CompletedProcess:
    return subprocess.run(TRUFFLE + ["ingest", "--exports", str(workdir / "exports"), "--db", str(workdir / "memory.duckdb"),
                                     "--instance", "ephemeral", "--user", "Arjun", "--json"],
                          capture_output=True, text=True, timeout=300, env=env)


@pytest.mark.subprocess
def test_ingest_says_what_the_llm_work_costs_and_reads_the_candidates(workdir):
    write_export(workdir / "exports", "WhatsApp Chat with Dev.txt", LINES)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("TRUFFLE_LLM_", "OPENROUTER_"))}
    with FakeLLM() as fake:
        proc = ingest(workdir, {**env, "TRUFFLE_LLM_BASE_URL": fake.base_url, "TRUFFLE_LLM_MODEL": "fake-model"})
        requests = fake.requests
    assert proc.returncode == 0, proc.stderr[-2000:]
    said = [line for line in proc.stderr.splitlines() if line.startswith("LLM work (fake-model)")]
    assert len(said) == 1 and "LLM calls" in said[0] and "tokens in" in said[0] and "$" in said[0]
    assert "each run stops at 2,000,000 tokens or $5" in said[0]
    plan = json.loads(proc.stdout)["llm_plan"]
    assert plan["fact_calls"] >= 1 and plan["routed_episodes"] >= 1 and requests >= plan["fact_calls"]
    with duckdb.connect(str(workdir / "memory.duckdb"), read_only=True) as con:
        sources = dict(con.execute("SELECT source, count(*) FROM fact_claims GROUP BY source").fetchall())
    assert sources.get("llm", 0) >= 1  # the fake states one fact per read, citing a line it was sent


@pytest.mark.subprocess
def test_without_an_endpoint_ingest_says_nothing_of_llm_work(workdir):
    write_export(workdir / "exports", "WhatsApp Chat with Dev.txt", LINES)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("TRUFFLE_LLM_", "OPENROUTER_"))}
    proc = ingest(workdir, env)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "LLM work" not in proc.stderr and "llm_plan" not in json.loads(proc.stdout)
