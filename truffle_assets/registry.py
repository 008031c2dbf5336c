"""Which fine-tuned model the runtime serves, how it got there, and a tamper-evident trail.

`<data root>/models/registry/` (see `truffle_assets.paths`) holds:
- `active.json`         the served model (replaced atomically, so the runtime never reads half of it);
- `model_history.jsonl` every promotion and rollback: who, when, why, forced or not;
- `audit.log`           one JSON object per line, each carrying the HMAC of the line before it, so
                        editing, deleting or reordering any line breaks the chain from that line on;
- `audit.head`          the HMAC'd seq/mac of the newest line: a chain alone cannot see its tail
                        being cut off;
- `audit.key`           only when no key is configured (see `resolve_key`).
"""

from __future__ import annotations

import fcntl
import getpass
import hashlib
import hmac
import json
import os
import secrets
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from truffle_assets import paths
from truffle_assets.files import atomic_write, sha256_file

KEY_ENV = "TRUFFLE_AUDIT_KEY"
GENESIS = "0" * 64


class RegistryError(RuntimeError):
    pass


class PromotionRefused(RegistryError):
    pass


@dataclass(frozen=True)
class ActiveModel:
    run_id: str
    gguf_path: str
    modelfile_path: str
    eval_report_path: str
    promoted_at: str
    gguf_sha256: str
    forced: bool = False


@dataclass(frozen=True)
class HistoryEntry:
    action: str  # promote | rollback
    run_id: str
    at: str
    who: str
    why: str
    forced: bool
    gate_passed: bool | None
    previous_run_id: str | None
    model: ActiveModel


@dataclass(frozen=True)
class AuditVerdict:
    ok: bool
    lines: int
    first_bad_line: int | None = None  # 1-based
    reason: str = ""


def canonical(obj: Any) -> bytes:
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="microseconds")



def _append(path: Path, data: bytes) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    try:
        if os.write(fd, data) != len(data):
            raise OSError(f"short write to {path}")
        os.fsync(fd)
    finally:
        os.close(fd)


def resolve_key(root: Path, key: bytes | str | None = None) -> bytes:
    """Explicit key, else $TRUFFLE_AUDIT_KEY, else a key file made once in the registry.

    The key file is the fallback because this is a local single-user tool: it still catches
    accidental edits and careless tampering, but anyone who can write the log can read the
    file beside it. A key configured outside the registry directory is the stronger setup.
    """
    if key is None:
        key = os.environ.get(KEY_ENV) or None
    if key is not None:
        key = key.encode() if isinstance(key, str) else key
        if not key:
            raise RegistryError("audit key is empty")
        return key
    path = root / "audit.key"
    try:  # O_EXCL: two processes starting at once agree on one key
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        return path.read_bytes().strip()
    with os.fdopen(fd, "wb") as f:
        f.write(secrets.token_hex(32).encode())
    return path.read_bytes().strip()


def read_gate(run_dir: Path) -> bool | None:
    """`report.json["gate"]["passed"]`, or None when the report does not say."""
    try:
        report = json.loads((run_dir / "eval" / "report.json").read_text())
    except (OSError, ValueError):
        return None
    gate = report.get("gate") if isinstance(report, dict) else None
    passed = gate.get("passed") if isinstance(gate, dict) else None
    return passed if isinstance(passed, bool) else None


class Registry:
    def __init__(self, root: str | Path | None = None, key: bytes | str | None = None) -> None:
        self.root = Path(root) if root is not None else paths.registry_dir()
        self.root.mkdir(parents=True, exist_ok=True)
        self._key = resolve_key(self.root, key)
        self.active_path = self.root / "active.json"
        self.history_path = self.root / "model_history.jsonl"
        self.audit_path = self.root / "audit.log"
        self.head_path = self.root / "audit.head"

    # --- reads --------------------------------------------------------------------------------

    def active(self) -> ActiveModel | None:
        if not self.active_path.exists():
            return None
        return ActiveModel(**json.loads(self.active_path.read_text()))

    def history(self) -> list[HistoryEntry]:
        if not self.history_path.exists():
            return []
        out = []
        for line in self.history_path.read_text().splitlines():
            if line.strip():
                rec = json.loads(line)
                out.append(HistoryEntry(**{**rec, "model": ActiveModel(**rec["model"])}))
        return out

    def _stack(self) -> list[ActiveModel]:
        """Replay history: a promotion pushes, a rollback pops, so repeated rollbacks walk back."""
        stack: list[ActiveModel] = []
        for e in self.history():
            if e.action == "promote":
                stack.append(e.model)
            elif e.action == "rollback" and stack:
                stack.pop()
        return stack

    # --- changes ------------------------------------------------------------------------------

    def promote(self, run_dir: str | Path, gate_passed: bool, force: bool = False, reason: str = "",
                who: str | None = None) -> ActiveModel:
        run = Path(run_dir).resolve()
        gguf, modelfile, report = self._run_files(run)
        report_gate = read_gate(run)
        # both must agree: the caller's verdict and, when it is there, the report's own
        passed = bool(gate_passed) and report_gate is not False
        who = who or _user()
        with self._lock():
            current = self.active()
            if not passed and not force:
                self._audit("promote_refused", {"run_id": run.name, "who": who, "why": reason,
                                                "gate_passed": gate_passed, "report_gate": report_gate})
                raise PromotionRefused(f"{run.name}: eval gate failed (argument={gate_passed}, "
                                       f"report={report_gate}); pass force=True with a reason to override")
            if not passed and not reason.strip():
                raise RegistryError("a forced promotion needs a reason")
            forced = not passed
            model = ActiveModel(run_id=run.name, gguf_path=str(gguf), modelfile_path=str(modelfile),
                                eval_report_path=str(report), promoted_at=_now(),
                                gguf_sha256=sha256_file(gguf), forced=forced)
            self._record("promote", model, who, reason, forced, passed, current)
            return model

    def rollback(self, reason: str = "", who: str | None = None) -> ActiveModel:
        with self._lock():
            stack = self._stack()
            if len(stack) < 2:
                raise RegistryError("no previous model in history to roll back to")
            target = stack[-2]
            missing = [p for p in (target.gguf_path, target.modelfile_path) if not Path(p).exists()]
            if missing:
                raise RegistryError(f"cannot roll back to {target.run_id}: missing {', '.join(missing)}")
            model = ActiveModel(**{**asdict(target), "promoted_at": _now()})
            self._record("rollback", model, who or _user(), reason, False, None, self.active())
            return model

    def _record(self, action: str, model: ActiveModel, who: str, why: str, forced: bool,
                gate_passed: bool | None, previous: ActiveModel | None) -> None:
        entry = HistoryEntry(action=action, run_id=model.run_id, at=model.promoted_at, who=who, why=why,
                             forced=forced, gate_passed=gate_passed,
                             previous_run_id=previous.run_id if previous else None, model=model)
        # log first, then switch: a crash in between leaves a logged change not yet in effect,
        # never a served model nobody recorded
        _append(self.history_path, canonical(asdict(entry)) + b"\n")
        self._audit(action, {k: v for k, v in asdict(entry).items() if k != "model"}
                    | {"gguf_path": model.gguf_path, "gguf_sha256": model.gguf_sha256})
        atomic_write(self.active_path, json.dumps(asdict(model), indent=2).encode() + b"\n")

    @staticmethod
    def _run_files(run: Path) -> tuple[Path, Path, Path]:
        ggufs = sorted((run / "gguf").glob("*.gguf"))
        if len(ggufs) != 1:
            raise RegistryError(f"{run}/gguf must hold exactly one .gguf, found {[g.name for g in ggufs]}")
        modelfile, report = run / "Modelfile", run / "eval" / "report.json"
        for p in (modelfile, report):
            if not p.is_file():
                raise RegistryError(f"{run} is not a finished run: missing {p.relative_to(run)}")
        return ggufs[0], modelfile, report

    @contextmanager
    def _lock(self) -> Iterator[None]:
        # the audit chain needs read-last-then-append to be one step across processes
        with (self.root / ".lock").open("a") as f:
            fcntl.flock(f, fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(f, fcntl.LOCK_UN)

    # --- audit log ----------------------------------------------------------------------------

    def _mac(self, payload: bytes) -> str:
        return hmac.new(self._key, payload, hashlib.sha256).hexdigest()

    def _head_mac(self, seq: int, mac: str) -> str:
        return self._mac(canonical({"head": seq, "mac": mac}))

    def _audit(self, event: str, data: dict[str, Any]) -> None:
        seq, prev = 0, GENESIS
        if self.audit_path.exists():
            lines = [ln for ln in self.audit_path.read_bytes().split(b"\n") if ln.strip()]
            if lines:
                try:
                    last = json.loads(lines[-1])
                    seq, prev = int(last["seq"]), str(last["mac"])
                except (ValueError, KeyError, TypeError) as exc:
                    raise RegistryError(f"{self.audit_path}:{len(lines)} is damaged; run verify_audit") from exc
        line = {"seq": seq + 1, "ts": _now(), "event": event, "data": data, "prev": prev}
        line["mac"] = self._mac(canonical(line))
        _append(self.audit_path, canonical(line) + b"\n")
        head = {"seq": line["seq"], "mac": line["mac"]}
        atomic_write(self.head_path, canonical(head | {"hmac": self._head_mac(head["seq"], head["mac"])}))

    def verify_audit(self) -> AuditVerdict:
        raw = self.audit_path.read_bytes().split(b"\n") if self.audit_path.exists() else []
        prev, n = GENESIS, 0
        macs: dict[int, str] = {}
        for n, ln in enumerate((ln for ln in raw if ln.strip()), start=1):
            try:
                rec = json.loads(ln)
                mac = rec.pop("mac")
                seq, rec_prev = rec["seq"], rec["prev"]
                if set(rec) != {"seq", "ts", "event", "data", "prev"}:
                    raise KeyError("unexpected fields")
            except (ValueError, KeyError, TypeError, AttributeError) as exc:
                return AuditVerdict(False, n, n, f"not an audit record: {exc}")
            if seq != n:
                return AuditVerdict(False, n, n, f"seq {seq} at line {n}: a line was deleted or moved")
            if rec_prev != prev:
                return AuditVerdict(False, n, n, "prev does not match the line before: chain broken")
            if not hmac.compare_digest(str(mac), self._mac(canonical(rec))):
                return AuditVerdict(False, n, n, "mac mismatch: line edited or signed with another key")
            prev = macs[n] = mac
        bad, reason = self._check_head(n, macs)
        if reason:
            return AuditVerdict(False, n, bad, reason)
        return AuditVerdict(True, n)

    def _check_head(self, lines: int, macs: dict[int, str]) -> tuple[int | None, str]:
        """(first bad line, reason); reason is "" when the head agrees with the log."""
        if not self.head_path.exists():
            return (None, "") if lines == 0 else (None, "audit.head missing")
        try:
            head = json.loads(self.head_path.read_bytes())
            seq, mac = int(head["seq"]), str(head["mac"])
        except (ValueError, KeyError, TypeError) as exc:
            return None, f"audit.head unreadable: {exc}"
        if not hmac.compare_digest(str(head.get("hmac", "")), self._head_mac(seq, mac)):
            return None, "audit.head mac mismatch"
        if seq > lines:
            return lines + 1, f"log truncated: audit.head records {seq} lines, the log has {lines}"
        # a head behind the log is a crash between append and head write, not tampering
        if macs.get(seq) != mac:
            return seq, f"line {seq} differs from the one audit.head recorded"
        return None, ""


def _user() -> str:
    try:
        return getpass.getuser()
    except (KeyError, OSError):
        return "unknown"
