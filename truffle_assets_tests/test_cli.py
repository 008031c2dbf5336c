"""The `truffle` console script as a user runs it."""

import json
import os
import subprocess
import sys
from pathlib import Path

import duckdb
import pytest

from truffle_assets_tests.conftest import FIXTURES

TRUFFLE = [str(Path(sys.executable).with_name("truffle"))]


def run(*args: str, **kw) -> subprocess.CompletedProcess:
    return subprocess.run(TRUFFLE + list(args), capture_output=True, text=True, timeout=300, **kw)


@pytest.mark.subprocess
def test_parse_json_prints_one_entry_per_line_and_summary_on_stderr():
    path = FIXTURES / "JBGruber__rwhatsapp/inst/extdata/sample.txt"
    proc = run("parse", str(path), "--json")
    assert proc.returncode == 0, proc.stderr
    entries = [json.loads(line) for line in proc.stdout.splitlines()]
    assert len(entries) == 9
    assert set(entries[0]) >= {"ts", "author", "text", "kind", "line_start", "line_end"}
    assert entries[0]["ts"] == "2017-07-12T22:35:00" and entries[0]["author"] is None and entries[0]["kind"] == "system"
    multi = next(e for e in entries if "\n" in e["text"])
    assert multi["text"] == "It's fun doing text analysis with R\nisn't it?" and multi["line_end"] == multi["line_start"] + 1
    assert "9 entries (7 authored)" in proc.stderr and "0 quarantined" in proc.stderr


@pytest.mark.subprocess
def test_a_closed_pipe_ends_parse_quietly(tmp_path):
    lines = [f"12/01/2024, 09:{i % 60:02d} - Priya: message number {i}" for i in range(20_000)]
    export = tmp_path / "WhatsApp Chat with Priya.txt"
    export.write_text("\n".join(lines) + "\n", encoding="utf-8")
    err = tmp_path / "stderr.txt"
    proc = subprocess.run(["bash", "-c", f'"{TRUFFLE[0]}" parse --json "{export}" 2>"{err}" | head -n 2; '
                                         'echo "status ${PIPESTATUS[0]}"'],
                          capture_output=True, text=True, timeout=300)
    out = proc.stdout.splitlines()
    assert [json.loads(line)["text"] for line in out[:2]] == ["message number 0", "message number 1"]
    assert out[2] == "status 141"  # what a shell tool stopped by SIGPIPE reports
    assert "Traceback" not in err.read_text() and "BrokenPipeError" not in err.read_text()


@pytest.mark.subprocess
def test_parse_bad_file_names_file_and_line(tmp_path):
    bad = tmp_path / "notes.txt"
    bad.write_text("shopping list\nmilk\n")
    proc = run("parse", str(bad), "--json")
    assert proc.returncode == 2
    assert f"{bad}:1:" in proc.stderr and "no WhatsApp message header" in proc.stderr


@pytest.mark.subprocess
def test_ingest_from_the_command_line(workdir, alice_export, bob_export):
    db = workdir / "memory.duckdb"
    proc = run("ingest", "--exports", str(workdir / "exports"), "--db", str(db), "--instance", "ephemeral", "--json")
    assert proc.returncode == 0, proc.stderr[-2000:]
    report = json.loads(proc.stdout)
    assert report["user"] == "Arjun" and report["failed"] == 0
    assert [r["rows"] for r in report["chats"]["alice"]["runs"]] == [6]
    assert [(r["first_month"], r["last_month"]) for r in report["chats"]["bob"]["runs"]] == [("2023-03", "2023-03")]
    with duckdb.connect(str(db), read_only=True) as con:
        before = con.execute("SELECT * FROM messages ORDER BY id").fetchall()
    assert len(before) == 8 and sum(r[5] for r in before) == 3  # Arjun, in both chats, is the user
    # a second ingest finds nothing changed; after an edit only that day's month runs, and in it only that day
    again = json.loads(run("ingest", "--exports", str(workdir / "exports"), "--db", str(db), "--instance", "ephemeral",
                           "--json").stdout)
    assert {c["status"] for c in again["chats"].values()} == {"up to date"}
    alice_export.write_text(alice_export.read_text().replace("Good morning!", "Good morning!!"))
    edited = json.loads(run("ingest", "--exports", str(workdir / "exports"), "--db", str(db), "--instance", "ephemeral",
                            "--json").stdout)
    assert [(r["first_month"], r["last_month"], r["days_redone"]) for r in edited["chats"]["alice"]["runs"]] == [
        ("2023-03", "2023-03", 1)]
    assert edited["chats"]["bob"]["status"] == "up to date"


@pytest.mark.subprocess
def test_synth_then_ingest_end_to_end(tmp_path):
    """The synthetic corpus goes through the real ingest: no line lost, ground-truth ids stored.

    `--messages-only`: the memory chain behind it has its own tests under truffle_assets_tests/defs.
    """
    exports, db = tmp_path / "exports", tmp_path / "memory.duckdb"
    proc = run("synth", "--out", str(exports), "--chats", "2", "--tokens", "20000", "--seed", "3")
    assert proc.returncode == 0, proc.stderr[-2000:]
    truth = json.loads((exports / "ground_truth.json").read_text(encoding="utf-8"))
    assert proc.stdout.startswith(f"wrote 2 exports to {exports}: ") and proc.stdout.count("\n") == 1
    assert f"the {len(truth['facts'])} planted facts" in proc.stdout
    proc = run("ingest", "--exports", str(exports), "--db", str(db), "--instance", "ephemeral", "--messages-only", "--json")
    assert proc.returncode == 0, proc.stderr[-2000:]
    report = json.loads(proc.stdout)
    assert report["failed"] == 0 and report["user"] == truth["user"] and "profile" not in report
    with duckdb.connect(str(db), read_only=True) as con:
        assert con.execute("SELECT sum(quarantined_lines) FROM ingestion_jobs").fetchall() == [(0,)]
        stored = {r[0] for r in con.execute("SELECT id FROM messages").fetchall()}
        users = con.execute("SELECT DISTINCT author FROM messages WHERE is_user").fetchall()
    planted = {mid for f in truth["facts"] for mid in f["message_ids"]} | {s["message_id"] for s in truth["secrets"]}
    assert planted and planted <= stored
    assert users == [(truth["user"],)]


def test_train_flags_become_a_run_config_the_lora_asset_accepts():
    """`--dpo-steps N` turns on DPO after the SFT steps; without it the run is SFT only. The config is
    checked by the lora_adapter asset's own Dagster config class, as a run would check it."""
    from truffle_assets.cli import build_parser
    from truffle_assets.cli.models import train_run_config
    from truffle_assets.defs.training.assets import LoraConfig

    def lora(*argv):
        cfg = train_run_config(build_parser().parse_args(["train", *argv]))["ops"]["lora_adapter"]["config"]
        return LoraConfig(**cfg)

    dpo = lora("--base", "tiny", "--max-steps", "7", "--dpo-steps", "3")
    assert (dpo.base_model, dpo.max_steps, dpo.dpo, dpo.dpo_max_steps) == ("tiny", 7, True, 3)
    assert dpo.dpo_kinds == [] and dpo.dpo_learning_rate is None  # every pair, SFT's learning rate
    some = lora("--dpo-steps", "3", "--dpo-kinds", "privacy_refusal", "write_refusal", "--dpo-learning-rate", "1e-4")
    assert (some.dpo_kinds, some.dpo_learning_rate) == (["privacy_refusal", "write_refusal"], 1e-4)
    assert dpo.dpo_sft_weight == 0 and lora("--dpo-steps", "3", "--dpo-sft-weight", "0.5").dpo_sft_weight == 0.5
    assert lora("--max-steps", "7").dpo is False
    blend = lora("--blend", "run-a:0.6", "run-b:0.4")
    assert blend.blend == ["run-a:0.6", "run-b:0.4"] and lora().blend == []


def test_train_quants_reach_the_gguf_asset():
    from truffle_assets.cli import build_parser
    from truffle_assets.cli.models import train_run_config
    from truffle_assets.defs.training.assets import GGUFConfig

    def quants(*argv):
        return GGUFConfig(**train_run_config(build_parser().parse_args(["train", *argv]))["ops"]["gguf_model"]["config"])

    assert quants("--quants", "q8_0").quants == ["q8_0"]
    assert quants().quants == GGUFConfig().quants  # the asset's own default unless asked


def test_serve_wires_the_pipelines_forget_into_the_api(tmp_path):
    """`truffle serve` (and `truffle up`, which starts it) hands `/api/forget` the pipeline's forget
    for the data root it serves; the runtime's own parser leaves it unwired."""
    import argparse

    from truffle_assets.cli import build_parser
    from truffle_assets.defs.forget.forgetter import PipelineForgetter
    from truffle_assets.runtime.forget_api import Forgetter
    from truffle_assets.runtime.serve import add_serve_command

    args = build_parser().parse_args(["serve"])
    forgetter = args.forgetter(tmp_path)
    assert isinstance(forgetter, PipelineForgetter) and isinstance(forgetter, Forgetter)
    assert forgetter.db_path == tmp_path / "memory.duckdb"
    bare = argparse.ArgumentParser().add_subparsers()
    add_serve_command(bare)
    assert bare.choices["serve"].parse_args([]).forgetter is None


@pytest.mark.subprocess
def test_forget_list_reads_well_when_nothing_is_forgotten(tmp_path):
    env = {**os.environ, "TRUFFLE_HOME": str(tmp_path)}
    as_json = run("forget", "--list", "--json", env=env)
    assert as_json.returncode == 0 and json.loads(as_json.stdout) == []
    human = run("forget", "--list", env=env)
    assert human.returncode == 0 and human.stdout.strip() == "nothing is forgotten"
    assert "Warning" not in human.stderr, human.stderr
