"""recall: the evidence the chat would read for a question."""

from __future__ import annotations

import argparse
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
    from truffle_assets.feedback.settings import SettingsError, resolve
    from truffle_assets.runtime.config import RuntimeConfig

    try:  # a trace is kept like a chat turn: only when transcripts are, the question's text only with content
        keep, _ = resolve(RuntimeConfig.from_env().store_dir)
    except SettingsError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    log = RetrievalLog(Path(args.published).parent / "runtime.duckdb", store_query_text=keep.keeps_content) \
        if keep.transcripts else None
    pack = retrieve(args.query, pointer, k=args.k, chats=args.chat or None, log=log)
    if args.json:
        print(pack.model_dump_json(indent=2))
        return 0
    from truffle_assets.runtime.display import as_written

    for i, item in enumerate(pack.items, 1):
        flag = " (uncertain)" if item.uncertain else ""
        shown = " ".join(as_written(item.shown_text, item.text).split())  # as written, on one line
        print(f"{i:2}. {item.ts:%Y-%m-%d %H:%M} {item.chat_id} {item.author or ''}: {shown[:120]}{flag}")
        print(f"    [msg:{item.message_id}] score {item.score:.3f} via {item.via}")
    print(f"memory current to: {pack.watermarks}", file=sys.stderr)
    return 0


def add_commands(sub) -> None:
    recall = sub.add_parser("recall", help="retrieve evidence for a question from the published memory")
    recall.add_argument("query")
    recall.add_argument("-k", type=int, default=10)
    recall.add_argument("--chat", action="append", help="only this chat id (repeatable)")
    recall.add_argument("--published", default=str(paths.published_dir()))
    recall.add_argument("--json", action="store_true", help="the whole evidence pack as JSON")
    recall.set_defaults(func=cmd_recall)

