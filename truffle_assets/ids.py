"""Stable identifiers: chat ids from export names, message ids and hashes from content.

Ids depend only on what a message says and when, never on line numbers, so a re-export that
adds history keeps every existing id and the partitions whose content did not change stay put.
"""

from __future__ import annotations

import hashlib
import re
import unicodedata
from collections import Counter
from collections.abc import Iterable
from pathlib import Path

from truffle_assets.parsing.parser import Entry

_EXPORT_PREFIXES = re.compile(
    r"^(?:whatsapp[ -]chat(?:[ -]with| -| met| mit| avec| con| com| s uživatelem| с контактом| с)?|"
    r"chat whatsapp(?: s uživatelem| с контактом| avec| con| com| mit)?|чат whatsapp с контактом|_chat)\s*",
    re.IGNORECASE,
)


def chat_id_for(path: str | Path) -> str:
    """`WhatsApp Chat with Alice.txt` -> `alice`; `_chat.txt` takes its folder's name."""
    p = Path(path)
    stem = p.stem
    if stem.lower() in ("_chat", "chat") and p.parent.name:
        stem = p.parent.name
    stem = _EXPORT_PREFIXES.sub("", stem).strip(" -_")
    slug = unicodedata.normalize("NFKD", stem).encode("ascii", "ignore").decode().lower()
    slug = re.sub(r"[^a-z0-9]+", "-", slug).strip("-")[:48]
    if not slug:  # names in non-Latin scripts: keep them distinct by hashing the name
        slug = "chat-" + hashlib.blake2b(stem.encode(), digest_size=4).hexdigest()
    return slug


def content_hash(entry: Entry) -> str:
    h = hashlib.blake2b(digest_size=16)
    for part in (entry.ts.isoformat(), entry.author or "", entry.kind, entry.text):
        h.update(part.encode("utf-8", "surrogatepass"))
        h.update(b"\x1f")
    return h.hexdigest()


def message_ids(chat_id: str, entries: Iterable[Entry]) -> list[str]:
    """One id per entry: hash of chat, content and the occurrence number of identical content."""
    seen: Counter[str] = Counter()
    ids = []
    for e in entries:
        ch = content_hash(e)
        n = seen[ch]
        seen[ch] += 1
        ids.append(hashlib.blake2b(f"{chat_id}\x1f{ch}\x1f{n}".encode(), digest_size=10).hexdigest())
    return ids


def day_digest(hashes: Iterable[str]) -> str:
    """Digest of one (chat, day)'s messages, order-independent: what the sensor compares."""
    h = hashlib.blake2b(digest_size=8)
    for x in sorted(hashes):
        h.update(x.encode())
    return h.hexdigest()
