"""Stable identifiers: chat ids from export names, message ids and hashes from content.

Ids depend only on what a message says and when, never on line numbers, so a re-export that
adds history keeps every existing id and the partitions whose content did not change stay put.

A chat's id comes from its display name (`export_name`). A plain ASCII name keeps its slug
(`Alice Smith` -> `alice-smith`); a name the slug would lose something of (accents, emoji, other
scripts, symbols) gets the slug and a hash of the name (`Zoë` -> `zoe-00f86eaa`), so `Zoë` and `Zoe`,
or `Mom` and `Mom 😀`, stay two chats. Names that still meet on one id are kept apart by
`truffle_assets.ingest.chat_ids`, which also remembers every id it gave out.
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


_FAITHFUL = re.compile(r"[A-Za-z0-9 _.'-]*")  # what the slug keeps all of (up to case and separators)
SLUG_CHARS = 48


def _stripped_stem(path: str | Path) -> str:
    p = Path(path)
    stem = p.stem
    if stem.lower() in ("_chat", "chat") and p.parent.name:
        stem = p.parent.name
    return _EXPORT_PREFIXES.sub("", stem).strip(" -_")


def export_name(path: str | Path) -> str:
    """The chat's display name: `WhatsApp Chat with Zoë.txt` -> `Zoë`; `_chat.txt` takes its folder's
    name. NFC, so a re-export whose name a filesystem decomposed (macOS) is the same chat."""
    return unicodedata.normalize("NFC", _stripped_stem(path))


def _slug(name: str) -> str:
    slug = unicodedata.normalize("NFKD", name).encode("ascii", "ignore").decode().lower()
    return re.sub(r"[^a-z0-9]+", "-", slug).strip("-")[:SLUG_CHARS]


def _name_hash(name: str, salt: int = 0) -> str:
    data = unicodedata.normalize("NFC", name) + (f"\x1f{salt}" if salt else "")
    return hashlib.blake2b(data.encode("utf-8", "surrogatepass"), digest_size=4).hexdigest()


def chat_id_for_name(name: str) -> str:
    """The id rule: the slug of a plain ASCII name; slug and name hash when the slug loses anything."""
    slug = _slug(name)
    if not slug:  # names in non-Latin scripts (or only emoji): the hash alone, as always
        return "chat-" + _name_hash(name)
    return slug if _FAITHFUL.fullmatch(name) else f"{slug}-{_name_hash(name)}"


def hashed_chat_id(name: str, salt: int = 0) -> str:
    """The form a name takes when its rule id already belongs to another name (`salt` > 0 only if
    that form is taken too, which takes a name made to look like one)."""
    return f"{_slug(name) or 'chat'}-{_name_hash(name, salt)}"


def chat_id_for(path: str | Path) -> str:
    """`WhatsApp Chat with Alice.txt` -> `alice`; `… with Zoë.txt` -> `zoe-<hash>` (the rule alone;
    `chat_ids` settles names that meet on one id)."""
    return chat_id_for_name(export_name(path))


def legacy_chat_id(path: str | Path) -> str:
    """The id the rule before distinct ids gave (ASCII-folded slug: `Zoë` and `Zoe` both `zoe`): what
    a store built then holds, read only to migrate it (`chat_ids`)."""
    stem = _stripped_stem(path)
    return _slug(stem) or "chat-" + hashlib.blake2b(stem.encode(), digest_size=4).hexdigest()


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


# A fact id is 20 hex digits, ~20 tokens of the served model's tokenizer: more than the fact itself. The
# prompt shows its first digits (`get_fact` resolves them), so a 250-token profile holds ~9 facts, not ~6.
SHOWN_FACT_ID = 6


def shown_fact_id(fact_id: object) -> str:
    """A fact id as prompts show it."""
    return str(fact_id)[:SHOWN_FACT_ID]
