"""Which fine-tuned model the runtime serves, how it got there, and a tamper-evident trail.

`<data root>/models/registry/` (see `truffle_assets.paths`) holds:
- `active.json`         the served model (replaced atomically, so the runtime never reads half of it)
                        and the audit line that made it; that line holds the file's sha256;
- `model_history.jsonl` every promotion, rollback and refused promotion: who, when, why, forced or
                        not, each line HMAC'd and anchored to the seq/mac of its audit line;
- `audit.log`           one JSON object per line, each carrying the HMAC of the line before it, so
                        editing, deleting or reordering any line breaks the chain from that line on;
- `audit.head`          the HMAC'd seq/mac of the newest line: a chain alone cannot see its tail
                        being cut off;
- `audit.key`           only when no key is configured (see `resolve_key`).

Why the anchors: a head is one file, and an older copy of it verifies against a log cut back to
match. The history and active.json each record a later seq, so cutting the log, deleting it, or
deleting it together with the head is caught as long as either remains. `verify()` checks all
four agree. What it cannot see, without a key or a counter kept outside the directory: every file
put back to one earlier consistent copy (that is the registry as it was then), the whole directory
deleted (no registry), and anything done by someone holding the key (the fallback key file sits
beside the log). A change interrupted between its writes shows as a failure, except a log tail no
other file yet records, which is accepted with a note: nobody without the key can write such lines.
Registries written before the anchors verify as before, with a note; new changes are anchored.
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
from datetime import datetime, UTC
from pathlib import Path
from typing import Any

from truffle_assets import paths
from truffle_assets.card_rollback import refresh_rollback
from truffle_assets.files import atomic_write, json_text, sha256_file

KEY_ENV = "TRUFFLE_AUDIT_KEY"
GENESIS = "0" * 64
FORMAT = 2  # audit lines with "v": 2 are anchored in model_history.jsonl and active.json
SWITCHES = ("promote", "rollback")  # the events that change active.json
CHANGES = (*SWITCHES, "promote_refused")  # the events model_history.jsonl records


class RegistryError(RuntimeError):
    pass


class PromotionRefused(RegistryError):
    pass


class AuditFailed(RegistryError):
    """The registry does not verify: it is not changed, and its active model is not served."""


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
    check: str = ""  # which check failed: key | chain | head | history | active | files
    notes: tuple[str, ...] = ()  # what an ok verdict could not check (old registry, interrupted write)


class _Broken(Exception):
    def __init__(self, check: str, line: int | None, reason: str) -> None:
        super().__init__(reason)
        self.check, self.line, self.reason = check, line, reason


def canonical(obj: Any) -> bytes:
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="microseconds")



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


def verify(root: str | Path, key: bytes | str | None = None, files: bool = True) -> AuditVerdict:
    """Verify a registry without creating anything in it: log chain, head, history anchors,
    active.json against its audit line and (files=True) the active GGUF against its recorded hash."""
    root = Path(root)
    if not root.is_dir():
        return AuditVerdict(True, 0, notes=(f"no registry at {root}",))
    if key is None and not os.environ.get(KEY_ENV) and not (root / "audit.key").exists():
        state = [n for n in ("audit.log", "audit.head", "model_history.jsonl", "active.json") if (root / n).exists()]
        if state:  # a new key would only report every line as forged
            return AuditVerdict(False, 0, None, f"no audit key: {root / 'audit.key'} is missing and {KEY_ENV} "
                                f"is unset, but {', '.join(state)} exist", "key")
        return AuditVerdict(True, 0)
    return Registry(root, key).verify_audit(files=files)


@contextmanager
def reading(root: str | Path) -> Iterator[None]:
    """Hold off changes while reading: inside, a reader sees the registry before or after a
    promotion or rollback, never between its writes. Creates nothing (without a lock file no change
    has run yet; one starting this instant is seen on the next read)."""
    try:
        fd: int | None = os.open(Path(root) / ".lock", os.O_RDONLY)
    except OSError:
        fd = None
    try:
        if fd is not None:
            fcntl.flock(fd, fcntl.LOCK_SH)
        yield
    finally:
        if fd is not None:
            os.close(fd)  # releases the lock


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
        rec = json.loads(self.active_path.read_text())
        rec.pop("audit_seq", None)
        return ActiveModel(**rec)

    def history(self) -> list[HistoryEntry]:
        """Promotions and rollbacks (refusals are in the file too, for their anchors, but changed nothing)."""
        out = []
        for rec in self._history_records():
            if rec.get("action") in SWITCHES:
                rec = {k: v for k, v in rec.items() if k not in ("audit", "hmac")}
                out.append(HistoryEntry(**{**rec, "model": ActiveModel(**rec["model"])}))
        return out

    def _history_records(self) -> list[dict[str, Any]]:
        if not self.history_path.exists():
            return []
        return [json.loads(ln) for ln in self.history_path.read_text().splitlines() if ln.strip()]

    def rollback_target(self) -> ActiveModel | None:
        """The model `truffle rollback` restores now (the one promoted before the active one, replaying
        the history), or None. The model card's rollback section and `truffle models` both read this."""
        stack = self._stack()
        return stack[-2] if len(stack) >= 2 else None

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
            self._require_intact()
            current = self.active()
            if not passed and not force:
                refusal = {"run_id": run.name, "who": who, "why": reason, "gate_passed": gate_passed,
                           "report_gate": report_gate}
                self._write_change("promote_refused", refusal, refusal | {"action": "promote_refused", "at": _now()})
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
            self._require_intact()
            target = self.rollback_target()
            if target is None:
                raise RegistryError("no previous model in history to roll back to")
            missing = [p for p in (target.gguf_path, target.modelfile_path) if not Path(p).exists()]
            if missing:
                raise RegistryError(f"cannot roll back to {target.run_id}: missing {', '.join(missing)}")
            model = ActiveModel(**{**asdict(target), "promoted_at": _now()})
            self._record("rollback", model, who or _user(), reason, False, None, self.active())
            return model

    def record_forget(self, kind: str, tombstone_id: str, removed: dict[str, int], who: str | None = None) -> int:
        """Append a forget to the audit chain: what kind, which tombstone, how many per store; never
        the content. Returns the audit line's seq."""
        with self._lock():
            self._require_intact()
            data = {"kind": kind, "tombstone": tombstone_id, "removed": dict(sorted(removed.items())),
                    "who": who or _user()}
            self._write_change("forget", data, {"action": "forget", "at": _now(), **data})
            return self._tail()[0]

    def _require_intact(self) -> None:
        # appending to a tampered registry would bury the evidence under fresh, valid lines
        verdict = self.verify_audit(files=False)
        if not verdict.ok:
            at = f" at line {verdict.first_bad_line}" if verdict.first_bad_line else ""
            raise AuditFailed(f"{self.root}: audit failed{at}: {verdict.reason}; nothing was changed")

    def _record(self, action: str, model: ActiveModel, who: str, why: str, forced: bool,
                gate_passed: bool | None, previous: ActiveModel | None) -> None:
        entry = asdict(HistoryEntry(action=action, run_id=model.run_id, at=model.promoted_at, who=who, why=why,
                                    forced=forced, gate_passed=gate_passed,
                                    previous_run_id=previous.run_id if previous else None, model=model))
        self._write_change(action, {k: v for k, v in entry.items() if k != "model"}
                           | {"gguf_path": model.gguf_path, "gguf_sha256": model.gguf_sha256}, entry, model)
        self._refresh_cards(model, previous)

    def _refresh_cards(self, model: ActiveModel, previous: ActiveModel | None) -> None:
        """Rewrite the rollback section of the new and the replaced model's cards from this registry,
        so a card never names another rollback target than `truffle models` (a card is a report: one
        that cannot be written does not undo the switch)."""
        for m in (model, previous):
            if m is not None:
                try:
                    refresh_rollback(Path(m.modelfile_path).parent, self)
                except OSError:
                    pass

    def _write_change(self, event: str, data: dict[str, Any], history: dict[str, Any],
                      model: ActiveModel | None = None) -> None:
        """Log line, history line, head, active.json, in that order: a crash leaves a logged change
        not yet in effect, never a served model nobody recorded. Each later file names the log line."""
        seq, prev = self._tail()
        seq += 1
        active = None
        if model is not None:
            active = json_text(asdict(model) | {"audit_seq": seq}).encode()
            data = data | {"active_sha256": hashlib.sha256(active).hexdigest()}
        line = {"seq": seq, "ts": _now(), "event": event, "data": data, "prev": prev, "v": FORMAT}
        line["mac"] = self._mac(canonical(line))
        _append(self.audit_path, canonical(line) + b"\n")
        rec = history | {"audit": {"seq": seq, "mac": line["mac"]}}
        _append(self.history_path, canonical(rec | {"hmac": self._history_mac(rec)}) + b"\n")
        head = {"seq": seq, "mac": line["mac"]}
        atomic_write(self.head_path, canonical(head | {"hmac": self._head_mac(seq, line["mac"])}))
        if active is not None:
            atomic_write(self.active_path, active)

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

    def _history_mac(self, rec: dict[str, Any]) -> str:
        return self._mac(canonical({"history": rec}))

    def _tail(self) -> tuple[int, str]:
        """(seq, mac) of the newest log line; (0, GENESIS) for an empty log."""
        if not self.audit_path.exists():
            return 0, GENESIS
        lines = [ln for ln in self.audit_path.read_bytes().split(b"\n") if ln.strip()]
        if not lines:
            return 0, GENESIS
        try:
            last = json.loads(lines[-1])
            return int(last["seq"]), str(last["mac"])
        except (ValueError, KeyError, TypeError) as exc:
            raise RegistryError(f"{self.audit_path}:{len(lines)} is damaged; run verify_audit") from exc

    def verify_audit(self, files: bool = True) -> AuditVerdict:
        """Chain, head, history anchors, active.json, and (files=True) the active GGUF's hash."""
        notes: list[str] = []
        recs: list[dict[str, Any]] = []
        try:
            self._check_chain(recs)
            head = self._check_head(recs)
            anchored = self._check_history(recs, notes)
            active_seq = self._check_active(recs, anchored, head, notes, files)
            self._check_unanchored(recs, anchored, max(head, active_seq, *anchored, 0), notes)
        except _Broken as b:
            return AuditVerdict(False, len(recs), b.line, b.reason, b.check)
        old = sum(1 for r in recs if "v" not in r)
        if old:
            notes.append(f"{old} of {len(recs)} log lines predate anchoring (history/active.json anchors): "
                         "they are chain-checked only")
        return AuditVerdict(True, len(recs), notes=tuple(notes))

    def _check_chain(self, recs: list[dict[str, Any]]) -> None:
        """Append each good line to `recs` (so a failure still says how many lines were good)."""
        raw = self.audit_path.read_bytes().split(b"\n") if self.audit_path.exists() else []
        prev = GENESIS
        for n, ln in enumerate((ln for ln in raw if ln.strip()), start=1):
            try:
                rec = json.loads(ln)
                mac = rec.pop("mac")
                seq, rec_prev = rec["seq"], rec["prev"]
                if set(rec) - {"v"} != {"seq", "ts", "event", "data", "prev"}:
                    raise KeyError("unexpected fields")
            except (ValueError, KeyError, TypeError, AttributeError) as exc:
                raise _Broken("chain", n, f"not an audit record: {exc}") from None
            if seq != n:
                raise _Broken("chain", n, f"seq {seq} at line {n}: a line was deleted or moved")
            if rec_prev != prev:
                raise _Broken("chain", n, "prev does not match the line before: chain broken")
            if not hmac.compare_digest(str(mac), self._mac(canonical(rec))):
                raise _Broken("chain", n, "mac mismatch: line edited or signed with another key")
            prev = rec["mac"] = mac
            recs.append(rec)

    def _check_head(self, recs: list[dict[str, Any]]) -> int:
        """The seq audit.head records (0 when there is no head and no log)."""
        lines = len(recs)
        if not self.head_path.exists():
            if lines:
                raise _Broken("head", None, f"audit.head missing: the log has {lines} lines")
            return 0
        try:
            head = json.loads(self.head_path.read_bytes())
            seq, mac = int(head["seq"]), str(head["mac"])
        except (ValueError, KeyError, TypeError) as exc:
            raise _Broken("head", None, f"audit.head unreadable: {exc}") from None
        if not hmac.compare_digest(str(head.get("hmac", "")), self._head_mac(seq, mac)):
            raise _Broken("head", None, "audit.head mac mismatch")
        _check_length(lines, seq, "audit.head", "head")
        # a head behind the log is a crash between append and head write, not tampering
        if recs[seq - 1]["mac"] != mac:
            raise _Broken("head", seq, f"line {seq} differs from the one audit.head recorded")
        return seq

    def _check_history(self, recs: list[dict[str, Any]], notes: list[str]) -> dict[int, dict[str, Any]]:
        """{audit seq: history record}, each line's HMAC checked and its anchor found in the log."""
        try:
            records = self._history_records()
        except (ValueError, OSError) as exc:
            raise _Broken("history", None, f"model_history.jsonl unreadable: {exc}") from None
        anchored: dict[int, dict[str, Any]] = {}
        old: list[dict[str, Any]] = []
        for i, rec in enumerate(records, start=1):
            where = f"model_history.jsonl line {i}"
            if not isinstance(rec, dict):
                raise _Broken("history", None, f"{where} is not a history record")
            if "audit" not in rec:
                if anchored:  # old lines come first; an unanchored line later was put there
                    raise _Broken("history", None, f"{where} has no audit anchor but follows anchored lines")
                old.append(rec)
                continue
            mac = rec.pop("hmac", "")
            if not hmac.compare_digest(str(mac), self._history_mac(rec)):
                raise _Broken("history", None, f"{where}: hmac mismatch: edited or signed with another key")
            seq = int(rec["audit"]["seq"])
            if anchored and seq <= max(anchored):
                raise _Broken("history", None, f"{where} records audit line {seq} after line {max(anchored)}: "
                              "lines reordered or duplicated")
            anchored[seq] = rec
        if old:
            _check_old_history(old, recs)
            notes.append(f"{len(old)} model_history.jsonl entries predate anchoring: matched to their log lines, "
                         "their Modelfile and report paths unchecked")
        if anchored:
            _check_length(len(recs), max(anchored), "model_history.jsonl", "history")
        for seq, rec in anchored.items():
            line = recs[seq - 1]
            if line["mac"] != rec["audit"]["mac"] or line["event"] != rec.get("action"):
                raise _Broken("history", seq, f"line {seq} is not the {rec.get('action')} of {rec.get('run_id')} "
                              "that model_history.jsonl recorded")
        return anchored

    def _check_active(self, recs: list[dict[str, Any]], anchored: dict[int, dict[str, Any]], head: int,
                      notes: list[str], files: bool) -> int:
        """active.json against the newest promote/rollback line; returns the seq active.json records."""
        switches = [r for r in recs if r["event"] in SWITCHES]
        last = switches[-1] if switches else None
        if not self.active_path.exists():
            if last is not None:
                raise _Broken("active", last["seq"], f"active.json missing: line {last['seq']} made "
                              f"{last['data'].get('run_id')} the active model")
            return 0
        raw = self.active_path.read_bytes()
        try:
            active = json.loads(raw)
            seq = int(active.get("audit_seq", 0))
        except (ValueError, TypeError, AttributeError) as exc:
            raise _Broken("active", None, f"active.json unreadable: {exc}") from None
        _check_length(len(recs), seq, "active.json", "active")
        if seq > head:  # active.json is written after the head, so it is never newer
            raise _Broken("head", None, f"audit.head records line {head}, older than the line {seq} that "
                          "active.json records: an older audit.head was put back")
        if last is None:
            raise _Broken("active", None, f"active.json names {active.get('run_id')} but no audited promotion "
                          "or rollback made any model active")
        where = f"line {last['seq']} ({last['event']} {last['data'].get('run_id')})"
        differ = [f for f in ("run_id", "gguf_path", "gguf_sha256") if active.get(f) != last["data"].get(f)]
        if differ or ("v" in last and hashlib.sha256(raw).hexdigest() != last["data"].get("active_sha256")):
            older = _written_by(switches[:-1], raw)
            if older is not None:
                raise _Broken("active", last["seq"], f"active.json is the copy line {older['seq']} wrote "
                              f"({older['data'].get('run_id')}), but {where} switched since: an older "
                              "active.json was put back, or that switch was interrupted before it")
            if not differ:  # name what differs from the model the history line recorded
                wrote = anchored.get(last["seq"], {}).get("model", {}) | {"audit_seq": last["seq"]}
                differ = sorted(k for k in set(active) | set(wrote) if active.get(k) != wrote.get(k)) or ["layout"]
            raise _Broken("active", last["seq"], f"active.json differs from what the log's {where} says: "
                          + "; ".join(f"{k} is {active.get(k)!r}" for k in differ))
        if "v" not in last:
            notes.append(f"active.json predates anchoring: run id, GGUF path and hash checked against {where}, "
                         "not the whole file")
        if files:
            gguf = Path(str(active.get("gguf_path")))
            if not gguf.is_file():
                raise _Broken("files", None, f"{gguf} (the active model) is missing")
            digest = sha256_file(gguf)
            if digest != active.get("gguf_sha256"):
                raise _Broken("files", None, f"{gguf} has sha256 {digest[:12]}…, {where} recorded "
                              f"{str(active.get('gguf_sha256'))[:12]}…: the file was replaced after promotion")
        return seq

    @staticmethod
    def _check_unanchored(recs: list[dict[str, Any]], anchored: dict[int, dict[str, Any]], newest: int,
                          notes: list[str]) -> None:
        """Every anchored-format change line has its history line, except a tail no file records yet."""
        tail = 0
        for r in recs:
            if "v" in r and r["event"] in CHANGES and r["seq"] not in anchored:
                if r["seq"] <= newest:
                    raise _Broken("history", r["seq"], f"line {r['seq']} ({r['event']} {r['data'].get('run_id')}) "
                                  "is missing from model_history.jsonl")
                tail += 1
        if tail:
            notes.append(f"the last {tail} log line(s) are in no other file yet: a change interrupted mid-write")


def _check_length(lines: int, seq: int, source: str, check: str) -> None:
    if seq > lines:
        what = "log missing" if lines == 0 else f"log truncated to {lines} lines"
        raise _Broken(check, lines + 1, f"{what}: {source} records line {seq}")


def _check_old_history(old: list[dict[str, Any]], recs: list[dict[str, Any]]) -> None:
    """History lines from before anchoring, one per old promote/rollback line, whose data the old
    code copied from the history entry: so the log still vouches for them."""
    logged = [r for r in recs if "v" not in r and r["event"] in SWITCHES]
    if not recs:
        raise _Broken("history", 1, f"log missing: model_history.jsonl has {len(old)} entries, audit.log none")
    if len(old) != len(logged):
        raise _Broken("history", None, f"model_history.jsonl has {len(old)} entries from before anchoring, "
                      f"the log {len(logged)} promotions and rollbacks")
    for i, (h, r) in enumerate(zip(old, logged), start=1):
        model = h.get("model") if isinstance(h.get("model"), dict) else {}
        copied = {k: v for k, v in h.items() if k != "model"} | {"gguf_path": model.get("gguf_path"),
                                                                  "gguf_sha256": model.get("gguf_sha256")}
        if copied != r["data"]:
            raise _Broken("history", r["seq"], f"model_history.jsonl line {i} differs from log line {r['seq']}")


def _written_by(switches: list[dict[str, Any]], raw: bytes) -> dict[str, Any] | None:
    """The newest anchored switch line whose active.json was exactly `raw`."""
    digest = hashlib.sha256(raw).hexdigest()
    return next((r for r in reversed(switches) if r["data"].get("active_sha256") == digest), None)


def _user() -> str:
    try:
        return getpass.getuser()
    except (KeyError, OSError):
        return "unknown"
