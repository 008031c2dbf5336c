"""Forget over MCP: only when the operator turns it on, a dry run first, then an explicit confirmation.

A call without `confirm` runs the pipeline's dry run and answers what would be removed together
with a `confirmation`: an HMAC, under a key this server process drew at start, of exactly that
request and those counts, valid `TTL_S` seconds. Forgetting needs `confirm=true` and that value.
Before it forgets, the dry run runs again: when the memory changed since (other counts), the
confirmation no longer matches and the agent has to look again. Only the memory's own counts count
there: the records of its use (chat turns, MCP call records, retrieval traces) that quote the item
go with it too, but calls made since the dry run, the agent's own included, add to them and change
nothing about what is forgotten. A confirmation cannot be made up by a client, carried to another
server process or reused for another item.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import secrets
import threading
import time
from typing import Any

from truffle_assets.runtime import privacy

TTL_S = 600.0
USE_RECORDS = ("runtime_", "retrieval_logs")  # `removed` keys of the records of use (`forget.runtime_purge`)


class ForgetRefused(ValueError):
    """A forget the server will not run as asked (no or wrong confirmation)."""


class Confirmations:
    def __init__(self, ttl_s: float = TTL_S, key: bytes | None = None) -> None:
        self.ttl_s = ttl_s
        self._key = key or secrets.token_bytes(32)

    def _mac(self, kind: str, value: str, chat: str | None, removed: dict[str, Any], expires: int) -> str:
        counts = sorted((str(k), v) for k, v in (removed or {}).items() if not str(k).startswith(USE_RECORDS))
        what = json.dumps([kind, value, chat, counts, expires], default=str, separators=(",", ":"))
        return hmac.new(self._key, what.encode(), hashlib.sha256).hexdigest()[:40]

    def issue(self, kind: str, value: str, chat: str | None, removed: dict[str, Any], now: float | None = None) -> str:
        expires = int((time.time() if now is None else now) + self.ttl_s)
        return f"{expires}-{self._mac(kind, value, chat, removed, expires)}"

    def check(self, confirmation: str | None, kind: str, value: str, chat: str | None, removed: dict[str, Any],
              now: float | None = None) -> str | None:
        """Why `confirmation` does not confirm this forget now, or None when it does."""
        if not confirmation:
            return "forgetting needs the confirmation of a dry run: call forget without confirm first"
        expires_s, _, mac = confirmation.partition("-")
        if not expires_s.isdigit() or not mac:
            return "that is not a confirmation from this server: call forget without confirm first"
        if (time.time() if now is None else now) > int(expires_s):
            return "that confirmation has expired: call forget without confirm again"
        if not hmac.compare_digest(mac, self._mac(kind, value, chat, removed, int(expires_s))):
            return ("that confirmation is not for this item, or the memory changed since the dry run: "
                    "call forget without confirm again")
        return None


class McpForget:
    """The forget tool's two steps over the pipeline's `Forgetter` (`forget_api.Forgetter`); one runs at a time."""

    def __init__(self, forgetter: Any, confirmations: Confirmations | None = None) -> None:
        self.forgetter = forgetter
        self.confirmations = confirmations or Confirmations()
        self._lock = threading.Lock()

    def __call__(self, kind: str, id: str, chat: str | None = None, confirm: bool = False,
                 confirmation: str | None = None) -> dict[str, Any]:
        with self._lock:
            dry = self.forgetter.forget(kind, id, chat, dry_run=True)
            removed = dict(dry.get("removed") or {})
            if not confirm:
                return _result(dry, kind, id, chat, removed=removed, expires_in_s=int(self.confirmations.ttl_s),
                               confirmation=self.confirmations.issue(kind, id, chat, removed))
            why = self.confirmations.check(confirmation, kind, id, chat, removed)
            if why:
                raise ForgetRefused(why)
            out = self.forgetter.forget(kind, id, chat, dry_run=False)
            return _result(out, kind, id, chat, removed=dict(out.get("removed") or {}))


def _result(out: dict[str, Any], kind: str, id: str, chat: str | None, **extra: Any) -> dict[str, Any]:
    """The catalog's ForgetResult fields from a `Forgetter.forget` answer."""
    return {"dry_run": bool(out.get("dry_run")), "kind": kind, "id": str(out.get("id") or id), "chat": chat,
            "what": out.get("what"), "chats": [str(c) for c in out.get("chats") or []],
            "tombstone": out.get("tombstone"), "selection": _shown(out.get("selection")), **extra}


def _shown(selection: dict[str, Any] | None) -> dict[str, Any] | None:
    """The pipeline's `selection` with its texts through `privacy.redact_data` (they are the redacted
    texts already: defence in depth); ids, days and counts as they are."""
    if not selection:
        return None

    def texts(rows: Any, field: str) -> list[dict[str, Any]]:
        return [r | {field: privacy.redact_data(str(r[field]))} if r.get(field) else r for r in rows or []]

    return selection | {"messages": texts(selection.get("messages"), "text"),
                        "facts": texts(selection.get("facts"), "text"), "chats": texts(selection.get("chats"), "name")}
