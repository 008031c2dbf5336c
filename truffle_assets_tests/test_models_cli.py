"""`truffle models`, `promote` and `rollback` as a person runs them, in a data root of their own."""

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from truffle_assets_tests.training.test_card import finished, trained_run

TRUFFLE = str(Path(sys.executable).with_name("truffle"))
WHEN = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\+00:00$")


def truffle(home: Path, *args: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != "TRUFFLE_AUDIT_KEY"} | {"TRUFFLE_HOME": str(home)}
    return subprocess.run([TRUFFLE, *args], capture_output=True, text=True, timeout=120, env=env)


@pytest.mark.subprocess
def test_models_lists_the_active_model_rollback_target_and_history(tmp_path):
    proc = truffle(tmp_path, "models")
    assert proc.returncode == 0, proc.stderr
    lines = [ln for ln in proc.stdout.splitlines() if not ln.startswith("served:")]  # what answers `ask`
    assert lines == [f"active: none (nothing promoted in {tmp_path / 'models' / 'registry'})",
                     "rollback target: none (no earlier model in this registry's history)"]
    assert not (tmp_path / "models").exists()  # listing makes no registry
    assert json.loads(truffle(tmp_path, "models", "--json").stdout)["history"] == []

    runs = tmp_path / "models" / "runs"
    a = finished(trained_run(runs, "20260101-000000-aaaaaaaa"))
    b = finished(trained_run(runs, "20260102-000000-bbbbbbbb"))
    for run in (a, b):
        (run / "model_card.md").write_text(f"# Model card — run {run.name}\n")
        proc = truffle(tmp_path, "promote", run.name)
        assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines()[1] == f"rollback target: {a.name}"

    proc = truffle(tmp_path, "models")
    lines = [ln for ln in proc.stdout.splitlines() if not ln.startswith("served:")]
    assert lines[0].startswith(f"active: {b.name} (since ") and lines[1] == f"  gguf: {b / 'gguf' / 'model-q8_0.gguf'}"
    assert lines[2] == f"rollback target: {a.name} (what `truffle rollback` restores)"
    header, *rows = lines[4:]
    assert header.split() == ["when", "action", "run", "id", "gate", "forced", "reason"]
    assert [r.split()[1:5] for r in rows] == [["promote", a.name, "passed", "no"], ["promote", b.name, "passed", "no"]]
    assert all(WHEN.match(r.split()[0]) for r in rows) and "{" not in proc.stdout
    # the card of the active run names the same rollback target
    assert f"- Rollback target: {a.name} " in (b / "model_card.md").read_text()

    got = json.loads(truffle(tmp_path, "models", "--json").stdout)
    assert got["active"]["run_id"] == b.name and got["rollback_target"]["run_id"] == a.name
    assert [h["run_id"] for h in got["history"]] == [a.name, b.name]

    proc = truffle(tmp_path, "rollback", "--reason", "b answers worse")
    assert proc.returncode == 0 and proc.stdout.splitlines()[1] == "rollback target: none"
    rows = [ln for ln in truffle(tmp_path, "models").stdout.splitlines() if not ln.startswith("served:")][5:]
    assert rows[-1].split()[1:5] == ["rollback", a.name, "–", "no"] and rows[-1].endswith("b answers worse")
    assert "- Rollback target: none" in (a / "model_card.md").read_text()
    assert "- Not the active model" in (b / "model_card.md").read_text()
    assert json.loads(truffle(tmp_path, "models", "--json").stdout)["rollback_target"] is None
