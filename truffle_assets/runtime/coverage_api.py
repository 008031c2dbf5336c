"""`GET /api/memory/coverage`: what the published memory covers, for the page's header on load.

    {"published_at": "2026-12-05T14:02:11+00:00", "current_to": "2024-10-21",
     "chats": [{"chat_id": "meera-iyer", "name": "Meera Iyer",
                "watermark": "2024-10-21T18:30:00", "current_to": "2024-10-21"}, ...],
     "building": {"chats_done": 4, "chats_total": 10, "current": "mummy", "current_name": "Mummy",
                  "stage": "chats", "started_at": "2026-12-05T14:00:02+00:00"}}

A chat's `watermark` is its newest indexed message, as the published pointer (`latest.json`) records
it — the dates `truffle recall` prints as "memory current to". `name` is the export's display name
from the chat id map (`<data root>/cache/chat_ids.json`), None where the map has none. Before the
first publish `published_at` and `current_to` are None and `chats` is empty. `building` is the memory
build under way (`ingest.build_status`), None when none is: while it runs, the chats already built
answer, and `summary_line` says how far it is. It reads three small files and never opens the
index, so the page can ask on every load; behind the API token like every other route.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from fastapi import APIRouter, Request

from truffle_assets.ingest.build_status import building
from truffle_assets.ingest.chat_names import mapped_names
from truffle_assets.runtime.published import read_json_cached

router = APIRouter()


def coverage(published_dir: str | Path) -> dict[str, Any]:
    """The chats of the published memory with their watermarks, ordered by display name."""
    published_dir = Path(published_dir)
    names = mapped_names(published_dir.parent / "cache")  # the data root's, as `truffle recall` reads it
    build = building(published_dir)
    if build is not None:
        build["current_name"] = names.get(build["current"]) if build["current"] else None
    pointer = read_json_cached(published_dir / "latest.json")
    if not isinstance(pointer, dict):
        return {"published_at": None, "current_to": None, "chats": [], "building": build}
    watermarks = {str(c): str(ts) for c, ts in (pointer.get("watermarks") or {}).items() if ts}
    chats = [{"chat_id": c, "name": names.get(c), "watermark": ts, "current_to": ts[:10]}
             for c, ts in watermarks.items()]
    chats.sort(key=lambda c: ((c["name"] or c["chat_id"]).casefold(), c["chat_id"]))
    return {"published_at": pointer.get("published_at"),
            "current_to": max((c["current_to"] for c in chats), default=None), "chats": chats, "building": build}


def summary_line(cov: dict[str, Any]) -> str | None:
    """While a build runs, the line a person reads ("Building memory: 4 of 10 chats, current to
    2024-10-21"); None when none runs."""
    build = cov.get("building")
    if not build:
        return None
    if build.get("stage") == "profile":
        where = "all chats in, writing the profile"
    else:
        where = f"{build['chats_done']} of {build['chats_total']} chats"
    return f"Building memory: {where}" + (f", current to {cov['current_to']}" if cov.get("current_to") else "")


@router.get("/api/memory/coverage")
def memory_coverage(request: Request) -> dict[str, Any]:
    return coverage(request.app.state.service.config.published_dir)
