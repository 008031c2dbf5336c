"""What a forget takes, in a person's terms: the chats and days it touches, its messages (date,
chat, author, first words) and the facts that go with them, with totals.

Built from the same `Reach` the purge uses, so the list is exactly what goes; it only describes.
Texts are the redacted ones `truffle recall` shows (a secret stays a placeholder on screen), cut
to their first words. At most `LISTED` messages and facts are listed; the totals count them all.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import date, datetime

from truffle_assets.forget.inventory import Reach

LISTED = 100
FIRST_WORDS = 60  # characters of a message shown


def first_words(text: str, limit: int = FIRST_WORDS) -> str:
    """`text` on one line, cut at a word boundary to at most `limit` characters (… when cut)."""
    flat = " ".join((text or "").split())
    if len(flat) <= limit:
        return flat
    cut = flat[:limit].rsplit(" ", 1)[0] if " " in flat[:limit] else flat[:limit]
    return cut.rstrip(" ,.;:") + "…"


def _iso(v: date | datetime | str | None) -> str | None:
    return v.isoformat() if isinstance(v, date | datetime) else v


def selection(r: Reach, names: Mapping[str, str], listed: int = LISTED) -> dict:
    """{"totals": {chats, days, messages, facts}, "chats": [{id, name, messages, days: [ISO dates]}],
    "messages": [{id, chat_id, ts, author, text}] (oldest first), "facts": [{fact_id, text}]}."""
    per_chat: dict[str, dict] = {}
    for m in r.messages:
        c = per_chat.setdefault(m["chat_id"], {"messages": 0, "days": set()})
        c["messages"] += 1
        c["days"].add(_iso(m["day"]))
    chats = [{"id": cid, "name": names.get(cid), "messages": per_chat.get(cid, {}).get("messages", 0),
              "days": sorted(per_chat.get(cid, {}).get("days", ()))} for cid in sorted(r.chats | set(per_chat))]
    return {
        "totals": {"chats": len(chats), "days": sum(len(c["days"]) for c in chats),
                   "messages": len(r.messages), "facts": len(r.facts)},
        "chats": chats,
        "messages": [{"id": m["id"], "chat_id": m["chat_id"], "ts": _iso(m["ts"]), "author": m["author"],
                      "text": first_words(m["text"])} for m in r.messages[:listed]],
        "facts": [{"fact_id": f["id"], "text": first_words(f["text"], 120)} for f in r.facts[:listed]],
    }
