"""One unreadable export among good ones: reported with file, line and reason, and every other chat ingested."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import dagster as dg
import duckdb
import pytest

from truffle_assets_tests.conftest import newcomer_env

pytestmark = pytest.mark.subprocess  # each case runs `truffle ingest`

TRUFFLE = str(Path(sys.executable).with_name("truffle"))


@pytest.fixture
def env(workdir, alice_export, bob_export) -> dict:
    return newcomer_env(workdir)


def _ingest(env: dict, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([TRUFFLE, "ingest", "--messages-only", "--json", *args], env=env, capture_output=True, text=True,
                          timeout=300)


@pytest.mark.parametrize("user", [None, "Arjun"])
def test_an_empty_and_a_foreign_file_are_reported_and_the_rest_ingested(env, workdir, user):
    exports = workdir / "exports"
    (exports / "WhatsApp Chat with Aaron.txt").write_text("")  # sorts before the good chats
    (exports / "WhatsApp Chat with Zed.txt").write_text("shopping list\nmilk\n")
    proc = _ingest(env, *(["--user", user] if user else []))
    assert proc.returncode == 3, proc.stderr[-3000:]  # partial
    report = json.loads(proc.stdout)
    assert report["status"] == "partial" and report["user"] == "Arjun"
    bad = {Path(u["file"]).name: u for u in report["unreadable"]}
    assert set(bad) == {"WhatsApp Chat with Aaron.txt", "WhatsApp Chat with Zed.txt"}
    assert bad["WhatsApp Chat with Zed.txt"]["line"] == 1 and "no WhatsApp message header" in bad["WhatsApp Chat with Zed.txt"]["reason"]
    assert bad["WhatsApp Chat with Aaron.txt"]["reason"]
    assert "partial" in proc.stderr and str(exports / "WhatsApp Chat with Zed.txt") + ":1" in proc.stderr
    assert {c: e["status"] for c, e in report["chats"].items()} == {"alice": "ingested", "bob": "ingested"}
    with duckdb.connect(str(workdir / "memory.duckdb"), read_only=True) as con:
        assert dict(con.execute("SELECT chat_id, count(*) FROM messages GROUP BY ALL").fetchall()) == {"alice": 6, "bob": 2}

    # what the UI shows on `whatsapp_exports`: the unreadable files, where and why
    with dg.DagsterInstance.from_config(env["DAGSTER_HOME"]) as instance:
        obs = instance.fetch_observations(dg.AssetKey("whatsapp_exports"), limit=1).records[0].asset_observation
    assert obs.metadata["unreadable_files"].value == 2
    assert {Path(u["file"]).name for u in obs.metadata["unreadable"].value} == set(bad)

    # fixing the files: the next ingest is whole again, and says so
    (exports / "WhatsApp Chat with Aaron.txt").unlink()
    (exports / "WhatsApp Chat with Zed.txt").unlink()
    fixed = _ingest(env)
    assert fixed.returncode == 0 and json.loads(fixed.stdout)["status"] == "ok", fixed.stderr[-2000:]
    with dg.DagsterInstance.from_config(env["DAGSTER_HOME"]) as instance:
        obs = instance.fetch_observations(dg.AssetKey("whatsapp_exports"), limit=1).records[0].asset_observation
    assert obs.metadata["unreadable_files"].value == 0
