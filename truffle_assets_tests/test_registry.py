import hashlib
import hmac
import json
import stat
import threading
from pathlib import Path

import pytest

from truffle_assets.registry import (GENESIS, KEY_ENV, AuditFailed, PromotionRefused, Registry, RegistryError,
                                     canonical, reading, verify)

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
    assert capsys.readouterr().out.splitlines()[0].endswith("[forced]")
    assert main(["rollback", *common]) == 0
    assert capsys.readouterr().out.splitlines() == [
        f"active model: run-a ({runs / 'run-a' / 'gguf' / 'run-a-q4_k_m.gguf'})", "rollback target: none"]
    assert main(["rollback", *common]) == 2
    assert "no previous model" in capsys.readouterr().err
    assert main(["audit", "verify", *common]) == 0
    assert "audit log intact" in capsys.readouterr().out


# --- anchors: the head, the history and active.json each record the log line they came from ------

STATE = ("audit.log", "audit.head", "model_history.jsonl", "active.json")


def snapshot(reg: Registry) -> dict[str, bytes]:
    return {n: (reg.root / n).read_bytes() for n in STATE if (reg.root / n).exists()}


def restore(reg: Registry, snap: dict[str, bytes], *names: str) -> None:
    """Put files back as they were in `snap` (a file absent then is deleted)."""
    for n in names:
        if n in snap:
            (reg.root / n).write_bytes(snap[n])
        else:
            (reg.root / n).unlink(missing_ok=True)


@pytest.fixture
def states(tmp_path, reg) -> tuple[Registry, list[dict[str, bytes]]]:
    """The `logged` registry (promote run-0..2, rollback to run-1, refused run-bad) and a copy of
    its files after each of its 0..5 log lines."""
    snaps = [snapshot(reg)]
    for i in range(3):
        reg.promote(make_run(tmp_path, f"run-{i}"), gate_passed=True)
        snaps.append(snapshot(reg))
    reg.rollback()
    snaps.append(snapshot(reg))
    with pytest.raises(PromotionRefused):
        reg.promote(make_run(tmp_path, "run-bad", passed=False), gate_passed=False)
    snaps.append(snapshot(reg))
    return reg, snaps


def test_every_change_is_anchored_and_each_state_verifies(states):
    reg, snaps = states
    hist = [json.loads(ln) for ln in reg.history_path.read_text().splitlines()]
    assert [(h["action"], h["audit"]["seq"]) for h in hist] == [
        ("promote", 1), ("promote", 2), ("promote", 3), ("rollback", 4), ("promote_refused", 5)]
    log = [json.loads(ln) for ln in audit_lines(reg)]
    assert [h["audit"]["mac"] for h in hist] == [r["mac"] for r in log]
    active = json.loads(reg.active_path.read_text())
    assert active["audit_seq"] == 4 and reg.active().run_id == "run-1"
    assert log[3]["data"]["active_sha256"] == hashlib.sha256(reg.active_path.read_bytes()).hexdigest()
    assert [h.action for h in reg.history()] == ["promote", "promote", "promote", "rollback"]  # refusals: file only
    for n, snap in enumerate(snaps):  # clean after each promote, the rollback and the refusal
        restore(reg, snap, *STATE)
        v = verify(reg.root, key=KEY)
        assert (v.ok, v.lines, v.check, v.notes) == (True, n, "", ()), (n, v)


def _edit_json_line(path: Path, i: int, **change) -> None:
    lines = path.read_text().splitlines()
    rec = json.loads(lines[i])
    rec.update(change)
    lines[i] = canonical(rec).decode()
    path.write_text("".join(ln + "\n" for ln in lines))


def _edit_log_line(reg: Registry, i: int) -> None:
    lines = audit_lines(reg)
    rec = json.loads(lines[i])
    rec["data"]["who"] = "mallory"
    lines[i] = canonical(rec).decode()
    put_lines(reg, lines)


def _edit_active(reg: Registry, **change) -> None:
    rec = json.loads(reg.active_path.read_text())
    reg.active_path.write_text(json.dumps(rec | change, indent=2) + "\n")


def _swap(reg: Registry, path: Path, i: int, j: int) -> None:
    lines = path.read_text().splitlines()
    lines[i], lines[j] = lines[j], lines[i]
    path.write_text("".join(ln + "\n" for ln in lines))


RUN2_GGUF = "runs/run-2/gguf/run-2-q4_k_m.gguf"
# (tamper(reg, snaps), failed check, first bad line, words of the reason)
TAMPER = {
    "truncate tail, restore older head": (
        lambda r, s: restore(r, s[4], "audit.log", "audit.head"),
        "history", 5, "log truncated to 4 lines: model_history.jsonl records line 5"),
    "truncate two lines, restore older head and history": (
        lambda r, s: restore(r, s[3], "audit.log", "audit.head", "model_history.jsonl"),
        "active", 4, "log truncated to 3 lines: active.json records line 4"),
    "delete log and head": (
        lambda r, s: restore(r, s[0], "audit.log", "audit.head"),
        "history", 1, "log missing: model_history.jsonl records line 5"),
    "delete log, head and history": (
        lambda r, s: restore(r, s[0], "audit.log", "audit.head", "model_history.jsonl"),
        "active", 1, "log missing: active.json records line 4"),
    "delete log only": (
        lambda r, s: restore(r, s[0], "audit.log"), "head", 1, "log missing: audit.head records line 5"),
    "delete head only": (
        lambda r, s: restore(r, s[0], "audit.head"), "head", None, "audit.head missing: the log has 5 lines"),
    "restore older head over the full log": (
        lambda r, s: restore(r, s[3], "audit.head"), "head", None, "an older audit.head was put back"),
    "delete history": (
        lambda r, s: restore(r, s[0], "model_history.jsonl"),
        "history", 1, "line 1 (promote run-0) is missing from model_history.jsonl"),
    "delete active.json": (
        lambda r, s: restore(r, s[0], "active.json"),
        "active", 4, "active.json missing: line 4 made run-1 the active model"),
    "edit a log line": (lambda r, s: _edit_log_line(r, 1), "chain", 2, "mac mismatch"),
    "reorder log lines": (
        lambda r, s: _swap(r, r.audit_path, 1, 2), "chain", 2, "seq 3 at line 2: a line was deleted or moved"),
    "edit a history line": (
        lambda r, s: _edit_json_line(r.history_path, 0, who="mallory"),
        "history", None, "model_history.jsonl line 1: hmac mismatch"),
    "reorder history lines": (
        lambda r, s: _swap(r, r.history_path, 1, 2), "history", None, "records audit line 2 after line 3"),
    "edit the active model path": (
        lambda r, s: _edit_active(r, gguf_path=str(r.root.parent / RUN2_GGUF)),
        "active", 4, "says: gguf_path is '"),
    "edit active.json's time only": (
        lambda r, s: _edit_active(r, promoted_at="2020-01-01T00:00:00+00:00"),
        "active", 4, "says: promoted_at is '2020-01-01T00:00:00+00:00'"),
    "swap active.json for an older one": (
        lambda r, s: restore(r, s[3], "active.json"),
        "active", 4, "active.json is the copy line 3 wrote (run-2), but line 4 (rollback run-1) switched since"),
    "swap active.json for the same model's older copy": (
        lambda r, s: restore(r, s[2], "active.json"), "active", 4, "active.json is the copy line 2 wrote (run-1)"),
    "replace the active GGUF": (
        lambda r, s: Path(r.active().gguf_path).write_bytes(b"GGUF evil"), "files", None,
        "the file was replaced after promotion"),
}


@pytest.mark.parametrize("case", TAMPER)
def test_tampering_is_detected(states, case):
    reg, snaps = states
    tamper, check, line, words = TAMPER[case]
    tamper(reg, snaps)
    v = verify(reg.root, key=KEY)
    assert (v.ok, v.check, v.first_bad_line) == (False, check, line), v
    assert words in v.reason, v.reason
    if check == "files":  # switching away from a replaced GGUF is allowed: that is the way out
        return
    before = snapshot(reg)
    for change in (lambda: reg.rollback(), lambda: reg.promote(reg.root.parent / "runs" / "run-0", gate_passed=True)):
        with pytest.raises(AuditFailed, match="nothing was changed"):  # a tampered registry is not written to
            change()
        assert snapshot(reg) == before


def test_what_cannot_be_detected_and_interrupted_writes(tmp_path, states):
    """Documented limits: every file put back to one earlier consistent copy is the registry as it
    was then; a log tail no other file records yet is what a change interrupted mid-write leaves."""
    reg, snaps = states
    restore(reg, snaps[4], *STATE)  # the refusal erased from all four files
    assert verify(reg.root, key=KEY).ok

    restore(reg, snaps[5], "audit.log")  # the refusal's log line written, nothing after it
    v = verify(reg.root, key=KEY)
    assert v.ok and v.lines == 5 and "interrupted mid-write" in v.notes[0]

    restore(reg, snaps[5], *STATE)
    reg.promote(make_run(tmp_path, "run-3"), gate_passed=True)  # line 6, then undo all but its log line
    restore(reg, snaps[5], "audit.head", "model_history.jsonl", "active.json")
    v = verify(reg.root, key=KEY)  # a switch interrupted before active.json looks like a swapped-back copy
    assert not v.ok and v.check == "active" and "or that switch was interrupted" in v.reason


def test_verify_creates_nothing_and_a_missing_key_is_reported(tmp_path, monkeypatch):
    monkeypatch.delenv(KEY_ENV, raising=False)
    assert verify(tmp_path / "none").ok and not (tmp_path / "none").exists()
    reg = Registry(tmp_path / "r")
    reg.promote(make_run(tmp_path, "run-a"), gate_passed=True)
    assert verify(reg.root).ok
    (reg.root / "audit.key").unlink()
    v = verify(reg.root)
    assert (v.ok, v.check) == (False, "key") and "audit.key is missing" in v.reason
    assert not (reg.root / "audit.key").exists()


def write_legacy(reg: Registry, runs: list[Path]) -> None:
    """A registry as the code before anchoring wrote it: history first, then a log line and head
    without "v", then active.json without audit_seq."""
    prev, previous_run = GENESIS, None
    for seq, run in enumerate(runs, start=1):
        gguf = next((run / "gguf").glob("*.gguf")).resolve()
        at = f"2026-01-0{seq}T00:00:00.000000+00:00"
        model = {"run_id": run.name, "gguf_path": str(gguf), "modelfile_path": str(run.resolve() / "Modelfile"),
                 "eval_report_path": str(run.resolve() / "eval" / "report.json"), "promoted_at": at,
                 "gguf_sha256": hashlib.sha256(gguf.read_bytes()).hexdigest(), "forced": False}
        entry = {"action": "promote", "run_id": run.name, "at": at, "who": "arjun", "why": "", "forced": False,
                 "gate_passed": True, "previous_run_id": previous_run, "model": model}
        with reg.history_path.open("ab") as f:
            f.write(canonical(entry) + b"\n")
        data = {k: v for k, v in entry.items() if k != "model"} | {"gguf_path": model["gguf_path"],
                                                                      "gguf_sha256": model["gguf_sha256"]}
        line = {"seq": seq, "ts": at, "event": "promote", "data": data, "prev": prev}
        line["mac"] = prev = hmac.new(KEY.encode(), canonical(line), hashlib.sha256).hexdigest()
        with reg.audit_path.open("ab") as f:
            f.write(canonical(line) + b"\n")
        head_mac = hmac.new(KEY.encode(), canonical({"head": seq, "mac": prev}), hashlib.sha256).hexdigest()
        reg.head_path.write_bytes(canonical({"seq": seq, "mac": prev, "hmac": head_mac}))
        reg.active_path.write_text(json.dumps(model, indent=2) + "\n")
        previous_run = run.name


def test_a_registry_from_before_anchoring_verifies_and_is_anchored_on_the_next_change(tmp_path, reg):
    write_legacy(reg, [make_run(tmp_path, "old-a"), make_run(tmp_path, "old-b")])
    v = verify(reg.root, key=KEY)
    assert v.ok and v.lines == 2 and len(v.notes) == 3 and all("predate" in n for n in v.notes)

    good = reg.active_path.read_bytes()
    _edit_active(reg, gguf_path=str(tmp_path / "elsewhere.gguf"))  # an old active.json still names its model
    v = verify(reg.root, key=KEY)
    assert not v.ok and v.check == "active" and "elsewhere.gguf" in v.reason
    reg.active_path.write_bytes(good)

    reg.promote(make_run(tmp_path, "new-c"), gate_passed=True)
    v = verify(reg.root, key=KEY)
    assert v.ok and v.lines == 3 and [n.split(" ")[:2] for n in v.notes] == [["2", "model_history.jsonl"],
                                                                             ["2", "of"]]
    assert reg.rollback().run_id == "old-b"  # the old history still drives rollback
    assert verify(reg.root, key=KEY).ok

    history = reg.history_path.read_bytes()  # old lines carry no HMAC, but the log vouches for them
    _edit_json_line(reg.history_path, 0, who="mallory")
    v = verify(reg.root, key=KEY)
    assert (v.ok, v.check, v.reason) == (False, "history", "model_history.jsonl line 1 differs from log line 1")
    forged = json.loads(history.splitlines()[0]) | {"run_id": "forged"}
    reg.history_path.write_bytes(canonical(forged) + b"\n" + history)  # an extra "old" entry slipped in first
    v = verify(reg.root, key=KEY)
    assert not v.ok and "3 entries from before anchoring, the log 2" in v.reason
    reg.history_path.write_bytes(history)

    lines = audit_lines(reg)
    head = reg.head_path.read_bytes()
    reg.promote(make_run(tmp_path, "new-d"), gate_passed=True)
    reg.head_path.write_bytes(head)
    put_lines(reg, lines)  # the new tail cut off, the head put back: the anchors see it
    v = verify(reg.root, key=KEY)
    assert not v.ok and v.check == "history" and "log truncated to 4 lines" in v.reason


def test_cli_audit_verify_names_the_tampered_file(tmp_path, monkeypatch, capsys, states):
    from truffle_assets.cli import main

    monkeypatch.setenv(KEY_ENV, KEY)
    reg, snaps = states
    common = ["audit", "verify", "--registry", str(reg.root)]
    assert main(common) == 0
    assert capsys.readouterr().out.startswith("audit log intact: 5 lines")
    restore(reg, snaps[3], "active.json")
    assert main(common) == 1
    err = capsys.readouterr().err
    assert err.startswith("audit log FAILED at line 4 (active check): active.json is the copy line 3 wrote")
    restore(reg, snaps[0], "audit.log", "audit.head")
    assert main(common) == 1
    assert "log missing: model_history.jsonl records line 5" in capsys.readouterr().err


def test_a_reader_sees_a_promotion_whole_or_not_at_all(tmp_path, reg):
    """`reading` (what the serving runtime verifies under) holds a promotion off until the reader
    is done, and creates nothing where there is no registry."""
    with reading(tmp_path / "nowhere"):
        pass
    assert not (tmp_path / "nowhere").exists()
    reg.promote(make_run(tmp_path, "run-a"), gate_passed=True)
    run_b = make_run(tmp_path, "run-b")
    done = threading.Event()
    promoting = threading.Thread(target=lambda: (reg.promote(run_b, gate_passed=True), done.set()))
    with reading(reg.root):
        promoting.start()
        assert not done.wait(0.5)  # waiting for the reader
        assert reg.active().run_id == "run-a" and verify(reg.root, key=KEY).ok
    assert done.wait(10) and reg.active().run_id == "run-b"
    promoting.join()


def test_prune_runs_keeps_what_a_rollback_the_candidate_or_the_newest_need(tmp_path, reg):
    from truffle_assets.training.prune import prune_runs

    runs = [make_run(tmp_path, f"2026010{i}-run") for i in range(1, 6)]
    for run in runs:
        (run / "merged").mkdir()
        (run / "merged" / "model.safetensors").write_bytes(b"x" * 1000)
        (run / "adapter").mkdir()
        (run / "adapter" / "adapter_model.safetensors").write_bytes(b"a" * 10)
    reg.promote(runs[0], gate_passed=True, who="t")  # then replaced: a rollback returns to it
    reg.promote(runs[1], gate_passed=True, who="t")
    (tmp_path / "runs" / "candidate.json").write_text(json.dumps({"run_id": runs[2].name}))
    would = prune_runs(tmp_path / "runs", reg, keep=1, dry_run=True)
    assert [p.run_id for p in would] == [runs[3].name] and (runs[3] / "merged").is_dir()
    done = prune_runs(tmp_path / "runs", reg, keep=1)
    assert [(p.run_id, p.freed_bytes) for p in done] == [(runs[3].name, would[0].freed_bytes)]
    assert not (runs[3] / "merged").exists() and not (runs[3] / "gguf").exists()
    assert (runs[3] / "adapter" / "adapter_model.safetensors").is_file() and (runs[3] / "eval" / "report.json").is_file()
    for kept in (runs[0], runs[1], runs[2], runs[4]):  # history, active, candidate, newest
        assert (kept / "merged").is_dir() and (kept / "gguf").is_dir()
    reg.rollback(who="t")  # the model a rollback returns to is still whole
    assert reg.active().run_id == runs[0].name and Path(reg.active().gguf_path).is_file()
    assert prune_runs(tmp_path / "runs", reg, keep=1) == []
