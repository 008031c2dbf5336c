"""`POST /api/forget` and `GET /api/forget`: the inspector's forget buttons, the same forget as the CLI.

Forgetting rebuilds the days that held the item, which is the pipeline's work; the runtime never
imports the pipeline. The app is given a `Forgetter` at construction (`create_app(...,
forgetter=...)`; `truffle serve` wires in the pipeline's, `defs.forget.forgetter.PipelineForgetter`),
and without one both routes answer 503. A forget can take tens of seconds; one runs at a time (the
store has one writer anyway). The memory read by this server is the one the forget republishes: the
runtime reads `latest.json` afresh, so the next answer no longer sees it.
"""

from __future__ import annotations

import threading
from typing import Any, Literal, Protocol, runtime_checkable

from fastapi import FastAPI
from pydantic import BaseModel, ConfigDict, Field

KINDS = Literal["chat", "message", "fact", "before", "contains"]
NOT_WIRED = ("forgetting runs through the pipeline, and this server was started without it: "
             "use `truffle forget`, or serve with `truffle serve` (which wires the pipeline's forget in)")


@runtime_checkable
class Forgetter(Protocol):
    """What the forget routes hand to the pipeline.

    `forget` raises LookupError when the memory holds no such chat, message or fact, and ValueError
    when the request is not a valid forget; it returns `dry_run`, `kind`, `id`, `tombstone` and
    `removed` (store -> count), plus `audit` once done. `tombstones` lists what was forgotten."""

    def forget(self, kind: str, value: str, chat: str | None = None, *, dry_run: bool = False) -> dict[str, Any]: ...

    def tombstones(self) -> list[dict[str, Any]]: ...


class ForgetRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")
    kind: KINDS
    id: str = Field(min_length=1, max_length=4096)  # the chat/message/fact id, the date, or the text
    chat: str | None = Field(None, max_length=256)  # limits message/before/contains to one chat
    dry_run: bool = False


def register(app: FastAPI, api_error: type[Exception], forgetter: Forgetter | None = None) -> None:
    lock = threading.Lock()

    def wired() -> Forgetter:
        if forgetter is None:
            raise api_error(503, NOT_WIRED, "service_unavailable", "forget_not_wired")
        return forgetter

    @app.post("/api/forget")
    def forget_item(body: ForgetRequest) -> dict[str, Any]:
        pipeline = wired()
        with lock:
            try:
                out = pipeline.forget(body.kind, body.id, body.chat, dry_run=body.dry_run)
            except LookupError as exc:
                raise api_error(404, str(exc), "not_found_error", "not_found") from exc
            except ValueError as exc:
                raise api_error(400, str(exc), "invalid_request_error", "invalid_forget", "id") from exc
        return {"dry_run": out["dry_run"], "kind": out["kind"], "id": out["id"], "tombstone": out["tombstone"],
                "removed": out["removed"], **({"audit": out["audit"]} if "audit" in out else {})}

    @app.get("/api/forget")
    def list_tombstones() -> dict[str, Any]:
        return {"tombstones": wired().tombstones()}
