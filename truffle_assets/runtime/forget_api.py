"""`POST /api/forget` and `GET /api/forget`: the inspector's forget buttons, the same forget as the CLI.

A forget rebuilds the days that held the item, so a request can take tens of seconds; one runs at
a time (the store has one writer anyway). The memory read by this server is the one the forget
republishes: the runtime reads `latest.json` afresh, so the next answer no longer sees it.
"""

from __future__ import annotations

import os
import threading
from pathlib import Path
from typing import Any, Literal

from fastapi import FastAPI
from pydantic import BaseModel, ConfigDict, Field

KINDS = Literal["chat", "message", "fact", "before", "contains"]


class ForgetRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")
    kind: KINDS
    id: str = Field(min_length=1, max_length=4096)  # the chat/message/fact id, the date, or the text
    chat: str | None = Field(None, max_length=256)  # limits message/before/contains to one chat
    dry_run: bool = False


def register(app: FastAPI, service: Any, api_error: type[Exception]) -> None:
    lock = threading.Lock()

    def data_dir() -> Path:
        return Path(service.config.published_dir).parent  # published/ sits in the data root

    @app.post("/api/forget")
    def forget_item(body: ForgetRequest) -> dict[str, Any]:
        import dagster as dg

        from truffle_assets.defs.forget.runner import NothingToForget, forget
        from truffle_assets.ingest.tombstones import TombstoneError

        root = data_dir()
        with lock:
            # with a local instance (`truffle up` sets DAGSTER_HOME) the UI shows the forget's runs
            instance = dg.DagsterInstance.get() if os.environ.get("DAGSTER_HOME") and not body.dry_run else None
            try:
                out = forget(body.kind, body.id, body.chat, exports_dir=root / "exports",
                             db_path=root / "memory.duckdb", instance=instance, dry_run=body.dry_run)
            except NothingToForget as exc:
                raise api_error(404, str(exc), "not_found_error", "not_found") from exc
            except TombstoneError as exc:
                raise api_error(400, str(exc), "invalid_request_error", "invalid_forget", "id") from exc
        return {"dry_run": out["dry_run"], "kind": out["kind"], "id": out["id"], "tombstone": out["tombstone"],
                "removed": out["removed"], **({"audit": out["audit"]} if "audit" in out else {})}

    @app.get("/api/forget")
    def list_tombstones() -> dict[str, Any]:
        from truffle_assets.defs.forget.runner import tombstones

        items = tombstones(data_dir() / "memory.duckdb").load()
        return {"tombstones": [{"tombstone": t.id, "kind": t.kind, "what": t.describe(), "added_at": t.added_at,
                                "done": t.done} for t in items]}
