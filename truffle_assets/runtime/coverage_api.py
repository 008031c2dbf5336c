"""`GET /api/memory/coverage`: what the published memory covers, for the page's header on load.

    {"published_at": "2026-12-05T14:02:11+00:00", "current_to": "2024-10-21",
     "chats": [{"chat_id": "meera-iyer", "name": "Meera Iyer",
                "watermark": "2024-10-21T18:30:00", "current_to": "2024-10-21"}, ...]}

A chat's `watermark` is its newest indexed message, as the published pointer (`latest.json`) records
it — the dates `truffle recall` prints as "memory current to". `name` is the export's display name
from the chat id map (`<data root>/cache/chat_ids.json`), None where the map has none. Before the
first publish `published_at` and `current_to` are None and `chats` is empty. It reads two small
files and never opens the index, so the page can ask on every load; behind the API token like every
other route.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from fastapi import APIRouter, Request

from truffle_assets.ingest.chat_names import mapped_names
from truffle_assets.runtime.published import read_json_cached

router = APIRouter()


def coverage(published_dir: str | Path) -> dict[str, Any]:
    """The chats of the published memory with their watermarks, ordered by display name."""
    published_dir = Path(published_dir)
    pointer = read_json_cached(published_dir / "latest.json")
    if not isinstance(pointer, dict):
        return {"published_at": None, "current_to": None, "chats": []}
    names = mapped_names(published_dir.parent / "cache")  # the data root's, as `truffle recall` reads it
    watermarks = {str(c): str(ts) for c, ts in (pointer.get("watermarks") or {}).items() if ts}
    chats = [{"chat_id": c, "name": names.get(c), "watermark": ts, "current_to": ts[:10]}
             for c, ts in watermarks.items()]
    chats.sort(key=lambda c: ((c["name"] or c["chat_id"]).casefold(), c["chat_id"]))
    return {"published_at": pointer.get("published_at"),
            "current_to": max((c["current_to"] for c in chats), default=None), "chats": chats}


@router.get("/api/memory/coverage")
def memory_coverage(request: Request) -> dict[str, Any]:
    return coverage(request.app.state.service.config.published_dir)
