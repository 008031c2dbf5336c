"""The memory build in progress, as one small file beside the published memory: `published/build.json`.

`truffle ingest` (and `truffle up`) write it as the build goes, chat by chat; the chat runtime reads it
so the page and `/v1/models` can say "Building memory: 4 of 10 chats" while earlier chats already
answer. A build whose process is gone (killed, machine restarted) is not building, whatever its file
says, so a stale file never shows progress that is not happening.

    {"state": "building", "pid": 4242, "host": "laptop", "started_at": "2026-12-05T17:02:11+00:00",
     "updated_at": "…", "stage": "chats", "current": "meera-iyer",
     "chats": [{"chat_id": "meera-iyer", "state": "building"}, {"chat_id": "mummy", "state": "done"}, …]}

A chat's state is `waiting`, `building`, `done`, `failed` or `up to date`; the build's state is
`building`, `done` or `failed`; `stage` is `chats`, then `profile`.
"""

from __future__ import annotations

import json
import os
import socket
from collections.abc import Iterable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from truffle_assets.files import write_json_atomic

FILE_NAME = "build.json"


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


class BuildStatus:
    """Writes `build.json` for one build: `chats` in the order they will be built, `todo` the ones with
    work; with `record` False (nothing to build) it writes nothing. As a context manager, a build that
    leaves by an exception (a crash, Ctrl-C) is written as failed: no page shows progress that stopped."""

    def __init__(self, published_dir: str | Path, chats: Iterable[str], todo: Iterable[str],
                 record: bool = True) -> None:
        self.path, self.record = Path(published_dir) / FILE_NAME, record
        todo = set(todo)
        self.doc: dict[str, Any] = {
            "state": "building", "pid": os.getpid(), "host": socket.gethostname(), "started_at": _now(),
            "updated_at": None, "stage": "chats", "current": None,
            "chats": [{"chat_id": c, "state": "waiting" if c in todo else "up to date"} for c in chats],
        }
        self._write()

    def __enter__(self) -> BuildStatus:
        return self

    def __exit__(self, *exc) -> None:
        if self.doc["state"] == "building":
            self.finished(ok=False)

    def _write(self) -> None:
        if self.record:
            self.doc["updated_at"] = _now()
            write_json_atomic(self.path, self.doc)

    def _chat(self, chat: str) -> dict:
        return next(c for c in self.doc["chats"] if c["chat_id"] == chat)

    def chat_started(self, chat: str) -> None:
        self._chat(chat)["state"] = "building"
        self.doc["current"] = chat
        self._write()

    def chat_ended(self, chat: str, ok: bool) -> None:
        self._chat(chat)["state"] = "done" if ok else "failed"
        self.doc["current"] = None
        self._write()

    def profile_started(self) -> None:
        self.doc["stage"], self.doc["current"] = "profile", None
        self._write()

    def finished(self, ok: bool) -> None:
        self.doc["state"] = "done" if ok else "failed"
        self.doc["current"] = None
        self.doc["finished_at"] = _now()
        self._write()


def _alive(pid: Any, host: Any) -> bool:
    if host != socket.gethostname() or not isinstance(pid, int):
        return False  # another machine's build cannot be checked: only a local one is shown as running
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # someone else's process: it exists
        return True
    return True


def building(published_dir: str | Path) -> dict[str, Any] | None:
    """The build under way for this published memory, None when none is (no file, finished, or its process gone):

        {"chats_done": 4, "chats_total": 10, "current": "meera-iyer", "stage": "chats", "started_at": "…"}

    Chats already up to date count as done.
    """
    try:  # a few hundred bytes: read on every ask
        doc = json.loads((Path(published_dir) / FILE_NAME).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(doc, dict) or doc.get("state") != "building" or not _alive(doc.get("pid"), doc.get("host")):
        return None
    chats = [c for c in doc.get("chats") or [] if isinstance(c, dict)]
    return {"chats_done": sum(c.get("state") in ("done", "up to date") for c in chats), "chats_total": len(chats),
            "current": doc.get("current"), "stage": doc.get("stage"), "started_at": doc.get("started_at")}
