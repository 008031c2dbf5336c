"""One data root: `$TRUFFLE_HOME` moves every default path, in the library, Dagster and the CLI."""

import json
import os
import subprocess
import sys
from pathlib import Path

import duckdb
import pytest

from truffle_assets import paths
from truffle_assets.runtime.config import RuntimeConfig
from truffle_assets_tests.test_cli import run

# what a fresh process sees: the resources' defaults are read when the definitions load
PROBE = """
import json
from truffle_assets.defs import resources as r
from truffle_assets.cli import build_parser
from truffle_assets.registry import Registry
from truffle_assets.runtime.config import RuntimeConfig
ingest = build_parser().parse_args(["ingest"])
cfg = RuntimeConfig()
print(json.dumps({
    "exports": r.ExportsResource().exports_dir, "cache": r.ExportsResource().cache_dir,
    "duckdb": r.DuckDBStore().path, "llm_cache": r.LLMResource().cache_dir,
    "published": r.PublishedResource().dir, "index": r.IndexResource().root,
    "models": r.ModelsResource().root, "datasets": r.ModelsResource().datasets_dir,
    "runtime": r.ModelsResource().runtime_dir, "registry": r.ModelsResource().registry_dir,
    "cli_exports": ingest.exports, "cli_db": ingest.db,
    "rt_published": str(cfg.published_dir), "rt_store": str(cfg.store_dir), "rt_registry": str(cfg.registry_dir),
    "registry_default": str(Registry().root),
}))
"""


def _probe(env: dict) -> dict[str, str]:
    proc = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True, timeout=300, env=env)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


@pytest.mark.subprocess
def test_truffle_home_moves_every_default_path(tmp_path):
    home = tmp_path / "home"
    env = {**os.environ, paths.HOME_ENV: str(home)}
    got = _probe(env)
    outside = {k: v for k, v in got.items() if not Path(v).resolve().is_relative_to(home.resolve())}
    assert not outside, f"defaults outside $TRUFFLE_HOME: {outside}"
    assert Path(got["duckdb"]) == home.resolve() / "memory.duckdb"
    assert Path(got["models"]) == home.resolve() / "models"
    assert got["registry"] == got["rt_registry"] == got["registry_default"]


@pytest.mark.subprocess
def test_without_truffle_home_everything_is_under_the_repo(tmp_path):
    env = {k: v for k, v in os.environ.items() if k != paths.HOME_ENV}
    got = _probe(env)
    data = paths.PROJECT_ROOT / "data"
    assert Path(got["duckdb"]) == data / "memory.duckdb" and Path(got["exports"]) == data / "exports"
    assert Path(got["models"]) == paths.PROJECT_ROOT / "models"


def test_runtime_config_reads_the_root_when_built(tmp_path, monkeypatch):
    monkeypatch.setenv(paths.HOME_ENV, str(tmp_path))
    cfg = RuntimeConfig()
    assert cfg.pointer == tmp_path.resolve() / "published" / "latest.json"
    assert cfg.store_dir == tmp_path.resolve() / "runtime"


@pytest.mark.subprocess
def test_ingest_with_only_truffle_home(workdir, alice_export, bob_export):
    """No --exports or --db: the exports are read from, and the store written to, $TRUFFLE_HOME."""
    env = {**os.environ, paths.HOME_ENV: str(workdir)}
    proc = run("ingest", "--instance", "ephemeral", "--messages-only", "--json", env=env)
    assert proc.returncode == 0, proc.stderr[-2000:]
    report = json.loads(proc.stdout)
    assert report["failed"] == 0 and set(report["chats"]) == {"alice", "bob"}
    with duckdb.connect(str(workdir / "memory.duckdb"), read_only=True) as con:
        assert con.execute("SELECT count(*) FROM messages").fetchone() == (8,)
