"""The memory inspector's reads: a message (with its day around it), a chat's day, a fact with its
evidence, the profile. Published files only (latest.json → LanceDB, facts.json, profile.json)."""

from __future__ import annotations

import logging

from truffle_assets.runtime.display import as_written
from truffle_assets.runtime.model_lease import ModelLease
from truffle_assets.runtime.published import fetch_day, fetch_messages, read_profile
from truffle_assets.runtime.tool_exec import resolve_fact

log = logging.getLogger(__name__)


class MemoryLookups:
    """Reads of the published memory the config `models` serves with points at."""

    def __init__(self, models: ModelLease) -> None:
        self._models = models

    def evidence(self, message_id: str, around: int = 0) -> dict | None:
        """{message_id, chat_id, ts, day, author, text} of one indexed (redacted) message, or None;
        with `around` > 0 also `neighbours`: up to that many messages of the same chat and day
        before and after it, in order, the message itself included (`"cited": true`)."""
        rows = self._messages([message_id])
        if not rows:
            return None
        found = rows[0]
        if around > 0 and found.get("day"):
            day = self.day(found["chat_id"], found["day"])
            at = next((i for i, r in enumerate(day) if r["message_id"] == message_id), None)
            if at is not None:
                found["neighbours"] = [r | {"cited": r["message_id"] == message_id}
                                       for r in day[max(0, at - around): at + around + 1]]
        return found

    def day(self, chat_id: str, day: str) -> list[dict]:
        """A chat's indexed (redacted) messages of one day, oldest first."""
        return [self._row(r) for r in fetch_day(self._models.config.pointer, str(chat_id), str(day)[:10])]

    def _messages(self, ids: list[str]) -> list[dict]:
        try:
            rows = fetch_messages(self._models.config.pointer, [str(i) for i in ids])
        except Exception as exc:  # noqa: BLE001 - an unreadable index is "not found" to a caller
            log.warning("evidence lookup failed: %s", exc)
            return []
        return [self._row(r) for r in rows]

    @staticmethod
    def _row(r: dict) -> dict:
        """A message as callers see it: as written (`display.as_written`), still redacted."""
        ts = r.get("ts")
        ts_s = ts.isoformat() if hasattr(ts, "isoformat") else (str(ts) if ts is not None else None)
        return {"message_id": r["message_id"], "chat_id": r["chat_id"], "ts": ts_s,
                "day": ts_s[:10] if ts_s else None, "author": r.get("author"),
                "text": as_written(r.get("shown_text"), r.get("text"))}

    def fact(self, fact_id: str) -> dict | None:
        """A fact from the published facts.json (current or superseded) with its evidence messages; a
        shortened id names the one fact it begins (the profile's first: `tool_exec.resolve_fact`)."""
        hit = resolve_fact(self._models.config.published_dir, str(fact_id))
        if hit is None:
            return None
        f = {**hit[1], "fact_id": hit[0]}
        keep = ("fact_id", "fact_text", "category", "predicate", "value", "subject", "confidence", "first_seen_at",
                "last_seen_at", "valid_from", "valid_to", "superseded_by", "evidence_message_ids")
        out = {k: f.get(k) for k in keep if k in f}
        out["fact_id"] = str(f.get("fact_id") or f.get("id"))
        out["evidence"] = self._messages(list(f.get("evidence_message_ids") or []))
        return out

    def profile(self) -> dict | None:
        """The published profile (profile.json), or None."""
        return read_profile(self._models.config.published_dir)
