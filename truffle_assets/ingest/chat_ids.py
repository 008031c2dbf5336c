"""Which chat id each export name has, for good: the id map, collisions, and the migration of stores
built when accented and emoji names were folded into plain ones.

`ids.chat_id_for_name` gives a name its id. Two names can still meet on one (`Alice Smith`,
`alice_smith`): the first, in sorted order, keeps it and every later one takes its hashed form
(`ids.hashed_chat_id`), reported as an `IdCollision`, never merged. `ChatIdMap` keeps every id it
gave in a JSON file, so an id never moves once given, whatever names come later.

A store from before the map holds chats under `ids.legacy_chat_id`, where `Zoë` and `Zoe` were one
chat `zoe`. When the map first meets a name, a name whose files already have rows under an id that
name could have (its legacy id first) keeps that id; of names that shared a legacy id the first in
sorted order keeps it and the others get their own. The chat they leave loses their files' messages,
so the planner sees its days change and the next ingest splits it (`planning`).
"""

from __future__ import annotations

import fcntl
import json
import os
import re
from collections.abc import Callable, Iterable, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from truffle_assets.files import write_json_atomic
from truffle_assets.ids import chat_id_for_name, export_name, hashed_chat_id, legacy_chat_id

Held = set[tuple[str, str]]  # (chat id, export name) pairs a store holds rows for
_ZIP_MEMBER = re.compile(r"(?<=\.zip)!.*\Z", re.IGNORECASE | re.DOTALL)  # source_file `<zip>!<member>`: the name is the zip's


@dataclass(frozen=True)
class IdCollision:
    """A name whose rule id was already another name's: it got `chat_id` instead."""

    name: str
    wanted: str
    taken_by: str
    chat_id: str
    files: tuple[str, ...]

    def as_dict(self) -> dict:
        """As the ingest report and the `whatsapp_exports` observation list it."""
        return {"file": self.files[0] if self.files else "", "name": self.name, "wanted": self.wanted,
                "taken_by": self.taken_by, "chat_id": self.chat_id}

    def __str__(self) -> str:
        where = self.files[0] if self.files else self.name
        return (f"{where}: chat {self.name!r} would be {self.wanted!r}, already the id of {self.taken_by!r}; "
                f"kept apart as {self.chat_id!r}")


@dataclass
class ChatScan:
    chats: dict[str, list[Path]]  # chat id -> its export files, in file order
    collisions: list[IdCollision] = field(default_factory=list)


def candidates(name: str, legacy: str) -> list[str]:
    """Ids `name` may already hold rows under, most likely first: its legacy id, the rule, a hashed form."""
    return list(dict.fromkeys([legacy, chat_id_for_name(name), *(hashed_chat_id(name, s) for s in range(3))]))


def assign(
    names: Mapping[str, str],
    known: Mapping[str, str] | None = None,
    held: Held | None = None,
) -> dict[str, str]:
    """Ids for `names` (name -> legacy id), keeping every id in `known` (name -> id, given before).

    New names that `held` shows with rows in the store claim those ids first, in sorted order; the
    rest, in sorted order, take their rule id or, when that is taken, the first free hashed form.
    The same inputs always give the same ids.
    """
    ids = dict(known or {})
    owner = {cid: name for name, cid in ids.items()}
    fresh = sorted(n for n in names if n not in ids)
    for name in fresh if held else ():
        for cid in candidates(name, names[name]):
            if (cid, name) in held and cid not in owner:
                ids[name], owner[cid] = cid, name
                break
    for name in fresh:
        if name in ids:
            continue
        cid, salt = chat_id_for_name(name), 0
        while cid in owner:
            cid, salt = hashed_chat_id(name, salt), salt + 1
        ids[name], owner[cid] = cid, name
    return ids


def collisions(by_name: Mapping[str, list[Path]], ids: Mapping[str, str]) -> list[IdCollision]:
    """Present names kept off their rule id because another name (present or remembered) has it."""
    owner = {cid: name for name, cid in ids.items()}
    found = []
    for name in sorted(by_name):
        wanted = chat_id_for_name(name)
        if ids[name] != wanted and owner.get(wanted, name) != name:
            found.append(IdCollision(name, wanted, owner[wanted], ids[name], tuple(str(p) for p in by_name[name])))
    return found


def _legacy(by_name: Mapping[str, list[Path]]) -> dict[str, str]:
    return {name: legacy_chat_id(files[0]) for name, files in by_name.items()}


def needs_evidence(names: Mapping[str, str], known: Mapping[str, str]) -> bool:
    """Whether the store could change what `assign` gives the new names: some new name's legacy id
    differs from its rule id, or two names meet on an id. Otherwise the rule alone decides, and the
    store is not opened (it may be busy with a writer)."""
    fresh = [n for n in names if n not in known]
    if any(names[n] != chat_id_for_name(n) for n in fresh):
        return True
    wanted = [chat_id_for_name(n) for n in fresh] + list(known.values())
    return len(set(wanted)) < len(wanted)


def by_rule(by_name: Mapping[str, list[Path]]) -> ChatScan:
    """Chats of a folder with no map and no store behind it (a fresh folder, the synth corpus)."""
    return _scan(by_name, assign(_legacy(by_name)))


def _scan(by_name: Mapping[str, list[Path]], ids: Mapping[str, str]) -> ChatScan:
    chats = {ids[name]: files for name, files in sorted(by_name.items(), key=lambda kv: ids[kv[0]])}
    return ChatScan(chats, collisions(by_name, ids))


class ChatIdMap:
    """Export name -> chat id, kept in a JSON file (`{"version": 1, "ids": {...}}`) and only added to.

    `held` is asked, only when a new name's id could depend on it, which (chat id, export name)
    pairs the store holds rows for. Writers hold an flock on `<file>.lock`, so two processes meeting
    the same new names give them one answer.
    """

    VERSION = 1

    def __init__(self, path: str | Path, held: Callable[[Mapping[str, str]], Held] | None = None):
        self.path = Path(path)
        self.held = held

    def load(self) -> dict[str, str]:
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return {}
        except ValueError as exc:  # a map we cannot read must not silently re-deal the ids
            raise ValueError(f"{self.path}: not a chat id map ({exc}); move it away to rebuild it from the store") from exc
        ids = data.get("ids") if isinstance(data, dict) else None
        if not isinstance(ids, dict) or len(set(ids.values())) != len(ids):
            raise ValueError(f"{self.path}: not a chat id map (ids missing or shared); move it away to rebuild it from the store")
        return ids

    def scan(self, by_name: Mapping[str, list[Path]]) -> ChatScan:
        """Chats for the files grouped by export name, giving new names their ids first."""
        ids = self.load()
        if any(n not in ids for n in by_name):
            with self._locked():
                ids = self.load()  # another process may have just given them
                legacy = _legacy(by_name)
                held = self.held(legacy) if self.held and needs_evidence(legacy, ids) else None
                ids = assign(legacy, ids, held)
                write_json_atomic(self.path, {"version": self.VERSION, "ids": dict(sorted(ids.items()))})
        return _scan(by_name, ids)

    @contextmanager
    def _locked(self):
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(f"{self.path}.lock", os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            yield
        finally:
            os.close(fd)


def held_in_store(store_path: str | Path, ingested_dir: str | Path | None = None,
                  wait_s: float = 10.0) -> Callable[[Mapping[str, str]], Held]:
    """What a store holds, for `ChatIdMap`: (chat id, export name of the source file) of its messages.

    If the store is busy past `wait_s` or unreadable, the planner's record (`IngestedDays`, one file
    per chat id ingested through the whole chain) stands in: each recorded legacy id is taken as held
    by the first name, in sorted order, that had it.
    """
    def held(names: Mapping[str, str]) -> Held:
        import duckdb

        from truffle_assets import store

        path = Path(store_path)
        if not path.exists():
            return set()
        try:
            with store.writer_lock(path, wait_s=wait_s), store.connect(path, read_only=True) as con:
                rows = con.execute("SELECT DISTINCT chat_id, source_file FROM messages").fetchall()
        except (TimeoutError, OSError, duckdb.Error):  # busy, locked by another process, or damaged
            return _held_recorded(names, ingested_dir)
        return {(cid, export_name(_ZIP_MEMBER.sub("", src))) for cid, src in rows}

    return held


def _held_recorded(names: Mapping[str, str], ingested_dir: str | Path | None) -> Held:
    root = Path(ingested_dir) if ingested_dir else None
    if root is None or not root.is_dir():
        return set()
    recorded = {p.stem for p in root.glob("*.json")}
    first: dict[str, str] = {}
    for name in sorted(names):
        first.setdefault(names[name], name)
    return {(cid, name) for cid, name in first.items() if cid in recorded}


def names_of(paths: Iterable[Path]) -> dict[str, list[Path]]:
    """Export files grouped by display name: re-exports of one chat sit together."""
    by_name: dict[str, list[Path]] = {}
    for p in paths:
        by_name.setdefault(export_name(p), []).append(p)
    return by_name
