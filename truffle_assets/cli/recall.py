"""recall: the evidence the chat would read for a question."""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

from truffle_assets import paths


def cmd_recall(args: argparse.Namespace) -> int:
    """Query the published memory (latest.json) the way the chat runtime will."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    from truffle_assets.retrieval import RetrievalLog, retrieve

    pointer = Path(args.published) / "latest.json"
    if not pointer.is_file():
        print(f"error: {pointer} does not exist: run `truffle ingest` (or `truffle up`) first", file=sys.stderr)
        return 2
    from truffle_assets.ingest.chat_names import UnknownChat, in_published, resolve_all

    published = json.loads(pointer.read_text(encoding="utf-8"))
    chats = in_published(published, Path(args.published).parent / "cache")
    try:  # a display name or an id, any case
        wanted = resolve_all(args.chat, chats, "in the published memory")
    except UnknownChat as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    from truffle_assets.feedback.settings import SettingsError, resolve
    from truffle_assets.runtime.config import RuntimeConfig

    try:  # a trace is kept like a chat turn: only when transcripts are, the question's text only with content
        keep, _ = resolve(RuntimeConfig.from_env().store_dir)
    except SettingsError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    log = RetrievalLog(Path(args.published).parent / "runtime.duckdb", store_query_text=keep.keeps_content) \
        if keep.transcripts else None
    pack = retrieve(args.query, pointer, k=args.k, chats=wanted, log=log)
    if args.json:
        print(pack.model_dump_json(indent=2))
        return 0
    from truffle_assets.runtime.display import as_written

    for i, item in enumerate(pack.items, 1):
        flag = " (uncertain)" if item.uncertain else ""
        shown = " ".join(as_written(item.shown_text, item.text).split())  # as written, on one line
        print(f"{i:2}. {item.ts:%Y-%m-%d %H:%M} {item.chat_id} {item.author or ''}: {shown[:120]}{flag}")
        print(f"    [msg:{item.message_id}] score {item.score:.3f}, {FOUND.get(item.via, 'found via ' + item.via)}")
    if not pack.items:
        print("nothing found" + (f" in {', '.join(wanted)}" if wanted else ""))
    if any(item.uncertain for item in pack.items):
        print(UNCERTAIN)
    print(f"memory current to: {current_to(pack.watermarks, wanted)}")
    return 0


# `EvidenceItem.via`: which search reached the message
FOUND = {"raw": "found by searching the messages", "summary": "found through its conversation's summary"}
UNCERTAIN = ("(uncertain): weak support: no signal (meaning, words, a conversation summary) clearly matches "
             "the question, or only one does and the score is low; check it before relying on it")


def current_to(watermarks: dict[str, str], chats: list[str] | None) -> str:
    """"karthik 2024-10-21, meera 2024-09-30": the newest message of each chat asked, by day."""
    shown = [(c, watermarks[c]) for c in sorted(watermarks) if chats is None or c in chats]
    return ", ".join(f"{c} {str(ts)[:10]}" for c, ts in shown) or "no messages yet"


def add_commands(sub) -> None:
    recall = sub.add_parser("recall", help="retrieve evidence for a question from the published memory")
    recall.add_argument("query", help="the question, in your words")
    recall.add_argument("-k", type=int, default=10, help="how many messages to return (default: %(default)s)")
    recall.add_argument("--chat", action="append", metavar="CHAT",
                        help="only this chat: its display name or id, any case (repeatable; default: every chat)")
    recall.add_argument("--published", default=str(paths.published_dir()),
                        help="the published memory to read (default: %(default)s)")
    recall.add_argument("--json", action="store_true", help="the whole evidence pack as JSON")
    recall.set_defaults(func=cmd_recall)

