import hashlib
import hmac
import json
import stat
from pathlib import Path

import pytest

from truffle_assets.registry import (GENESIS, KEY_ENV, PromotionRefused, Registry, RegistryError,
                                              canonical)

KEY = "test-key"


def make_run(tmp_path: Path, name: str, passed: bool | None = True) -> Path:
    run = tmp_path / "runs" / name
    (run / "gguf").mkdir(parents=True)
    (run / "eval").mkdir()
    (run / "gguf" / f"{name}-q4_k_m.gguf").write_bytes(b"GGUF" + name.encode())
    (run / "Modelfile").write_text(f"FROM ./gguf/{name}-q4_k_m.gguf\n")
    (run / "eval" / "report.json").write_text(json.dumps({"gate": {"passed": passed}} if passed is not None else {}))
    return run


@pytest.fixture
def reg(tmp_path) -> Registry:
    return Registry(tmp_path / "registry", key=KEY)


def audit_lines(reg: Registry) -> list[str]:
    return reg.audit_path.read_text().splitlines()


def put_lines(reg: Registry, lines: list[str]) -> None:
    reg.audit_path.write_text("".join(ln + "\n" for ln in lines))


def test_promote_rollback_and_history(tmp_path, reg):
    assert reg.active() is None and reg.history() == []
    a, b, c = (make_run(tmp_path, n) for n in ("run-a", "run-b", "run-c"))
    for run in (a, b, c):
        reg.promote(run, gate_passed=True, reason=f"better than before: {run.name}", who="arjun")
    active = reg.active()
    assert active.run_id == "run-c" and not active.forced
    assert active.gguf_path == str(c / "gguf" / "run-c-q4_k_m.gguf")
    assert active.gguf_sha256 == hashlib.sha256(b"GGUFrun-c").hexdigest()
    assert active.modelfile_path == str(c / "Modelfile") and active.eval_report_path == str(c / "eval/report.json")

    assert reg.rollback(reason="regressed on tool calls").run_id == "run-b"
    assert reg.active().run_id == "run-b"
    assert reg.rollback().run_id == "run-a"  # a second rollback keeps walking back
    with pytest.raises(RegistryError, match="no previous model"):
        reg.rollback()
    assert reg.active().run_id == "run-a"

    hist = reg.history()
    assert [(h.action, h.run_id, h.previous_run_id) for h in hist] == [
        ("promote", "run-a", None), ("promote", "run-b", "run-a"), ("promote", "run-c", "run-b"),
        ("rollback", "run-b", "run-c"), ("rollback", "run-a", "run-b")]
    assert hist[0].who == "arjun" and hist[3].why == "regressed on tool calls" and hist[0].at
    assert reg.verify_audit().ok and reg.verify_audit().lines == 5
    assert not [p for p in reg.root.iterdir() if p.name.startswith(".active")]  # no temp files left


def test_failed_gate_refused_unless_forced_and_force_is_logged(tmp_path, reg):
    bad = make_run(tmp_path, "run-bad", passed=False)
    with pytest.raises(PromotionRefused, match="gate failed"):
        reg.promote(bad, gate_passed=False)
    with pytest.raises(PromotionRefused):  # the report's own verdict is not overridden by the caller
        reg.promote(bad, gate_passed=True)
    with pytest.raises(RegistryError, match="needs a reason"):
        reg.promote(bad, gate_passed=False, force=True)
    assert reg.active() is None and reg.history() == []

    model = reg.promote(bad, gate_passed=False, force=True, reason="privacy fix outweighs the hygiene dip")
    assert model.forced and reg.active().forced
    [h] = reg.history()
    assert h.forced and h.gate_passed is False and h.why.startswith("privacy fix")
    events = [json.loads(ln) for ln in audit_lines(reg)]
    assert [e["event"] for e in events] == ["promote_refused", "promote_refused", "promote"]
    assert events[-1]["data"]["forced"] is True

    ok = make_run(tmp_path, "run-ok", passed=None)  # no gate in the report: the argument decides
    assert not reg.promote(ok, gate_passed=True).forced


def test_run_dir_must_be_complete(tmp_path, reg):
    run = make_run(tmp_path, "run-x")
    (run / "Modelfile").unlink()
    with pytest.raises(RegistryError, match="Modelfile"):
        reg.promote(run, gate_passed=True)
    empty = tmp_path / "runs" / "empty"
    empty.mkdir()
    with pytest.raises(RegistryError, match="exactly one .gguf"):
        reg.promote(empty, gate_passed=True)


@pytest.fixture
def logged(tmp_path, reg) -> Registry:
    """A registry with a five-line audit log."""
    runs = [make_run(tmp_path, f"run-{i}") for i in range(3)]
    for run in runs:
        reg.promote(run, gate_passed=True)
    reg.rollback()
    with pytest.raises(PromotionRefused):
        reg.promote(make_run(tmp_path, "run-bad", passed=False), gate_passed=False)
    assert len(audit_lines(reg)) == 5
    return reg


def test_clean_log_verifies_and_chains(logged):
    verdict = logged.verify_audit()
    assert (verdict.ok, verdict.lines, verdict.first_bad_line) == (True, 5, None)
    recs = [json.loads(ln) for ln in audit_lines(logged)]
    assert [r["seq"] for r in recs] == [1, 2, 3, 4, 5] and recs[0]["prev"] == GENESIS
    assert all(r["prev"] == p["mac"] for p, r in zip(recs, recs[1:]))


@pytest.mark.parametrize("k", [1, 3, 5])
def test_edited_line_fails_at_that_line(logged, k):
    lines = audit_lines(logged)
    rec = json.loads(lines[k - 1])
    rec["data"]["who"] = "mallory"
    lines[k - 1] = canonical(rec).decode()
    put_lines(logged, lines)
    v = logged.verify_audit()
    assert not v.ok and v.first_bad_line == k and "mac mismatch" in v.reason


@pytest.mark.parametrize("k", [1, 3])
def test_deleted_line_fails_where_it_was(logged, k):
    lines = audit_lines(logged)
    del lines[k - 1]
    put_lines(logged, lines)
    v = logged.verify_audit()
    assert not v.ok and v.first_bad_line == k


def test_deleted_last_line_is_caught_by_the_head(logged):
    put_lines(logged, audit_lines(logged)[:-1])
    v = logged.verify_audit()
    assert not v.ok and v.first_bad_line == 5 and "truncated" in v.reason


def test_reordered_lines_fail_at_the_first_moved(logged):
    lines = audit_lines(logged)
    lines[1], lines[2] = lines[2], lines[1]
    put_lines(logged, lines)
    v = logged.verify_audit()
    assert not v.ok and v.first_bad_line == 2


def test_line_resigned_with_wrong_key_fails(logged):
    lines = audit_lines(logged)
    rec = json.loads(lines[3])
    rec["data"]["why"] = "rewritten"
    del rec["mac"]
    rec["mac"] = hmac.new(b"wrong-key", canonical(rec), hashlib.sha256).hexdigest()
    lines[3] = canonical(rec).decode()
    put_lines(logged, lines)
    v = logged.verify_audit()
    assert not v.ok and v.first_bad_line == 4
    assert Registry(logged.root, key="another-key").verify_audit().first_bad_line == 1


def test_key_from_env_else_a_private_key_file(tmp_path, monkeypatch):
    monkeypatch.delenv(KEY_ENV, raising=False)
    reg = Registry(tmp_path / "r1")
    key_file = reg.root / "audit.key"
    assert stat.S_IMODE(key_file.stat().st_mode) == 0o600
    reg.promote(make_run(tmp_path, "run-a"), gate_passed=True)
    assert Registry(tmp_path / "r1").verify_audit().ok  # the same key is read back, not regenerated

    monkeypatch.setenv(KEY_ENV, "from-env")
    reg2 = Registry(tmp_path / "r2")
    assert not (reg2.root / "audit.key").exists()
    reg2.promote(make_run(tmp_path, "run-b"), gate_passed=True)
    assert Registry(tmp_path / "r2", key="from-env").verify_audit().ok
    assert not Registry(tmp_path / "r2", key="other").verify_audit().ok


def test_cli_promote_rollback_audit(tmp_path, monkeypatch, capsys):
    """`truffle promote/rollback/audit verify` as a user runs them: refusals exit 2 with the reason."""
    from truffle_assets.cli import main

    monkeypatch.setenv(KEY_ENV, KEY)
    registry, runs = tmp_path / "registry", tmp_path / "runs"
    make_run(tmp_path, "run-a")
    make_run(tmp_path, "run-b", passed=False)
    common = ["--registry", str(registry)]
    assert main(["promote", "run-a", "--runs", str(runs), *common]) == 0
    assert "active model: run-a" in capsys.readouterr().out
    assert main(["promote", "run-b", "--runs", str(runs), *common]) == 2
    assert "eval gate failed" in capsys.readouterr().err
    assert main(["promote", "run-b", "--runs", str(runs), "--force", "--reason", "manual check", *common]) == 0
    assert capsys.readouterr().out.strip().endswith("[forced]")
    assert main(["rollback", *common]) == 0
    assert capsys.readouterr().out.strip() == f"active model: run-a ({runs / 'run-a' / 'gguf' / 'run-a-q4_k_m.gguf'})"
    assert main(["rollback", *common]) == 2
    assert "no previous model" in capsys.readouterr().err
    assert main(["audit", "verify", *common]) == 0
    assert "audit log intact" in capsys.readouterr().out
