"""`GET/PUT /api/settings`: what the runtime store keeps, as the chat page shows and changes it.

    GET  /api/settings  -> {transcripts, content, feedback, retention_days, summary, sources}
    PUT  /api/settings  {"transcripts": true, "retention_days": 30}   (any subset of the four)

A PUT saves the person's choice in the store (`feedback.settings`), so `truffle serve`, `truffle
chat` and `truffle ask` on that store all follow it from their next turn. `summary` is the line
the page and `truffle serve` show ("Keeping transcripts … for 90 days" / "Not keeping …");
`sources` says where each value came from (default, env, saved, session). Behind the API token
like every other route (`api_guard.ApiGuard`).
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse
from pydantic import BaseModel, ConfigDict, Field, model_validator

from truffle_assets.feedback.settings import MAX_RETENTION_DAYS, SettingsError
from truffle_assets.runtime.api_guard import error_response

router = APIRouter()


class SettingsUpdate(BaseModel):
    model_config = ConfigDict(extra="forbid")

    transcripts: bool | None = None
    content: bool | None = None
    feedback: bool | None = None
    retention_days: int | None = Field(default=None, ge=1, le=MAX_RETENTION_DAYS)

    @model_validator(mode="after")
    def _something(self) -> SettingsUpdate:
        if all(getattr(self, k) is None for k in type(self).model_fields):
            raise ValueError("say what to change: transcripts, content, feedback or retention_days")
        return self


def settings_json(service: Any) -> dict[str, Any]:
    keep, sources = service.config.keeping()
    return {**keep.model_dump(), "summary": keep.describe(), "sources": sources}


def _unreadable(exc: SettingsError) -> JSONResponse:
    # the message names the file (or variable) and line; nothing is kept until it is fixed
    return error_response(500, f"{exc}; nothing is kept until it is fixed", "server_error", "settings_unreadable")


@router.get("/api/settings")
def get_settings(request: Request) -> Any:
    try:
        return settings_json(request.app.state.service)
    except SettingsError as exc:
        return _unreadable(exc)


@router.put("/api/settings")
def put_settings(body: SettingsUpdate, request: Request) -> Any:
    service = request.app.state.service
    changes = {k: v for k, v in body.model_dump(exclude_unset=True).items() if v is not None}
    try:
        service.save_settings(changes)
        return settings_json(service)
    except SettingsError as exc:
        return _unreadable(exc)
