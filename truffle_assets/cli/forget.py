"""forget: take something back from every store and keep it out of later ingests."""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

from truffle_assets import paths


def cmd_forget(args: argparse.Namespace) -> int:
    """Take something back: removed from every store, kept out of every later ingest (tombstone)."""
    from truffle_assets.defs.forget.runner import NothingToForget, forget, tombstones, unforget
    from truffle_assets.ingest.tombstones import TombstoneError

    if args.list:
        stones = [t.listing() for t in tombstones(Path(args.db)).load()]
        if args.json:  # one JSON array, `[]` when nothing is forgotten
            print(json.dumps(stones, ensure_ascii=False))
        elif not stones:
            print("nothing is forgotten")
        for s in [] if args.json else stones:
            state = "done" if s["done"] else "not finished: run the same forget again"
            print(f"{s['tombstone']}  {s['what']}  (added {s['added_at']}; {state})")
        return 0
    if args.undo:
        gone = unforget(args.undo, Path(args.db))
        print(f"un-forgotten: {gone.describe()}; the next ingest brings it back if the export still holds it"
              if gone else f"error: no tombstone {args.undo}", file=sys.stdout if gone else sys.stderr)
        return 0 if gone else 2
    kind, value = next(((k, v) for k in ("chat", "message", "fact", "before", "contains")
                        if (v := getattr(args, k)) is not None), (None, None))
    if kind is None:
        print("error: say what to forget: --chat, --message, --fact, --before or --contains", file=sys.stderr)
        return 2
    instance = None
    if not args.dry_run and (args.instance == "local" or (args.instance is None and os.environ.get("DAGSTER_HOME"))):
        import dagster as dg
        instance = dg.DagsterInstance.get()
    try:
        out = forget(kind, value, args.in_chat, exports_dir=Path(args.exports), db_path=Path(args.db),
                     instance=instance, dry_run=args.dry_run)
    except (TombstoneError, NothingToForget) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    if args.json:
        print(json.dumps(out, indent=2))
        return 0
    verb = "would remove" if out["dry_run"] else "removed"
    print(f"forget {out['kind']} {out['id']}: {verb}")
    for store_name, n in sorted(out["removed"].items()):
        print(f"  {store_name:24} {n}")
    if not out["dry_run"]:
        print(f"tombstone {out['tombstone']} keeps it out of later ingests (undo: truffle forget --undo "
              f"{out['tombstone']}); audit {out['audit']}")
    return 0


def add_commands(sub) -> None:
    fg = sub.add_parser("forget", help="remove a chat, message, fact, old or matching messages from every store")
    what = fg.add_mutually_exclusive_group()
    what.add_argument("--chat", help="a whole chat (its id)")
    what.add_argument("--message", help="one message id ([msg:ID] in answers)")
    what.add_argument("--fact", help="one fact id (from the profile or the inspector)")
    what.add_argument("--before", metavar="YYYY-MM-DD", help="every message before this day")
    what.add_argument("--contains", metavar="TEXT", help="every message containing TEXT (case-insensitive)")
    what.add_argument("--list", action="store_true", help="the tombstones kept")
    what.add_argument("--undo", metavar="TOMBSTONE", help="un-forget: the next ingest may bring it back")
    fg.add_argument("--in-chat", help="limit --before/--contains/--message to one chat")
    fg.add_argument("--dry-run", action="store_true", help="list what would go; change nothing")
    fg.add_argument("--json", action="store_true", help="what was removed per store, as JSON")
    fg.add_argument("--exports", default=str(paths.exports_dir()))
    fg.add_argument("--db", default=str(paths.store_path()))
    fg.add_argument("--instance", choices=["local", "ephemeral"], default=None,
                    help="record the runs in $DAGSTER_HOME (local, default when set) or in memory")
    fg.set_defaults(func=cmd_forget)
