"""A chat as a person names it: its id (`meera-iyer`) or its display name (`Meera Iyer`), in any
case, turned into the id every store uses.

The display name is the export's (`WhatsApp Chat with Meera Iyer.txt`); the chat id map
(`chat_ids.ChatIdMap`, `<data root>/cache/chat_ids.json`) says which id it was given. The chats a
command can name are the ones its source holds: the store for `forget`, the published index for
`recall`, the exports folder for `ingest`. A name none of them answers to is refused with the list
of the chats there, so a typo never silently matches nothing.
"""

from __future__ import annotations

import json
import unicodedata
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from truffle_assets.ids import chat_id_for_name, export_name

MAP_FILE = "chat_ids.json"  # in the cache dir, as `ExportsResource.id_map` keeps it


@dataclass(frozen=True)
class Chat:
    id: str
    name: str | None  # the export's display name; None when nothing records it


class UnknownChat(LookupError):
    """A chat name or id that matches none of the chats there (or, by name, more than one)."""

    def __init__(self, wanted: str, chats: Iterable[Chat], where: str, ambiguous: bool = False):
        self.wanted, self.chats, self.where = wanted, sorted(chats, key=lambda c: c.id), where
        if ambiguous:
            head = f"{wanted!r} names more than one chat {where}; give its id"
        else:
            head = f"no chat {wanted!r} {where}"
        if not self.chats:
            super().__init__(f"{head}; there are no chats there yet")
            return
        width = max(len(c.id) for c in self.chats)
        rows = "".join(f"\n  {c.id:<{width}}  {c.name or ''}".rstrip() for c in self.chats)
        super().__init__(f"{head}; the chats there (id, name):{rows}")


def _key(s: str) -> str:
    return unicodedata.normalize("NFC", s).strip().casefold()


def resolve(wanted: str, chats: Iterable[Chat], where: str) -> str:
    """The id of the chat `wanted` names: an id first, then a display name, both case-insensitive."""
    chats = list(chats)
    key = _key(wanted)
    by_id = [c for c in chats if _key(c.id) == key]
    if len(by_id) == 1:
        return by_id[0].id
    by_name = [c for c in chats if c.name is not None and _key(c.name) == key]
    if len(by_name) == 1 and not by_id:
        return by_name[0].id
    raise UnknownChat(wanted, chats, where, ambiguous=len(by_id) + len(by_name) > 1)


def resolve_all(wanted: Iterable[str] | None, chats: Iterable[Chat], where: str) -> list[str] | None:
    """`resolve` for each (None stays None: no chat named means every chat)."""
    if wanted is None:
        return None
    chats = list(chats)
    return list(dict.fromkeys(resolve(w, chats, where) for w in wanted))


def mapped_names(cache_dir: str | Path) -> dict[str, str]:
    """chat id -> display name, from the chat id map ({} when there is none or it cannot be read:
    ids still resolve, and the ingest that reads the map reports it)."""
    try:
        data = json.loads((Path(cache_dir) / MAP_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    ids = data.get("ids") if isinstance(data, dict) else None
    return {cid: name for name, cid in ids.items()} if isinstance(ids, dict) else {}


def named(ids: Iterable[str], cache_dir: str | Path, fallback: Mapping[str, str] | None = None) -> list[Chat]:
    """The chats `ids`, each with its name from the map (else from `fallback`)."""
    names = {**(fallback or {}), **mapped_names(cache_dir)}
    return [Chat(cid, names.get(cid)) for cid in sorted(set(ids))]


def in_store(db_path: str | Path, cache_dir: str | Path) -> list[Chat]:
    """The chats the DuckDB store holds messages of (read-only; [] with no store yet)."""
    from truffle_assets import store
    from truffle_assets.ingest.chat_ids import _ZIP_MEMBER

    path = Path(db_path)
    if not path.exists():
        return []
    with store.connect(path, read_only=True) as con:
        has = con.execute("SELECT count(*) FROM information_schema.tables WHERE table_name = 'messages'"
                          ).fetchall()[0][0]
        rows = con.execute("SELECT DISTINCT chat_id, source_file FROM messages").fetchall() if has else []
    # a store from before the map (or with the map moved away) still knows its files' names
    fallback = {cid: export_name(_ZIP_MEMBER.sub("", src)) for cid, src in rows if src}
    return named({cid for cid, _ in rows}, cache_dir, fallback)


def in_published(pointer: Mapping, cache_dir: str | Path) -> list[Chat]:
    """The chats a published index holds (its pointer's watermarks name each one)."""
    return named((pointer.get("watermarks") or {}).keys(), cache_dir)


def in_exports(exports_dir: str | Path, cache_dir: str | Path) -> list[Chat]:
    """The chats of the exports folder, under the ids the map gave them; a name the map has not
    met yet under the id the rule gives it (what its first ingest gives it, barring a collision)."""
    from truffle_assets.ingest.chat_ids import names_of
    from truffle_assets.ingest.exports import scan_chats

    files = [f for fs in scan_chats(exports_dir).chats.values() for f in fs]
    known = {name: cid for cid, name in mapped_names(cache_dir).items()}
    return [Chat(known.get(name) or chat_id_for_name(name), name) for name in sorted(names_of(files))]


def chats_in_exports(wanted: Iterable[str] | None, exports_dir: str | Path, db_path: str | Path) -> list[str] | None:
    """`truffle ingest --chat`: the ids of the export chats named (None: every chat)."""
    if not wanted:
        return None
    chats = in_exports(exports_dir, Path(db_path).parent / "cache")  # the cache dir `ingest_all` uses
    return resolve_all(wanted, chats, f"in the exports at {exports_dir}")
