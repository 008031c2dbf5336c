"""forget: take something back from every store and keep it out of later ingests."""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys
from pathlib import Path

from truffle_assets import paths
from truffle_assets.plurals import plural


def cmd_forget(args: argparse.Namespace) -> int:
    """Take something back: removed from every store, kept out of every later ingest (tombstone)."""
    from truffle_assets.defs.forget.runner import NothingToForget, forget, tombstones, unforget
    from truffle_assets.cli.dagster_local import quiet_runs
    from truffle_assets.cli.progress import IngestView
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
    from truffle_assets.ingest.chat_names import UnknownChat, in_store, resolve

    in_chat = args.in_chat
    if kind == "chat" or in_chat is not None:  # a display name or an id, any case
        db = Path(args.db)
        try:
            chats = in_store(db, db.parent / "cache")
            value = resolve(value, chats, f"in the memory at {db}") if kind == "chat" else value
            in_chat = resolve(in_chat, chats, f"in the memory at {db}") if in_chat is not None else None
        except UnknownChat as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 2
    instance = None
    if not args.dry_run and (args.instance == "local" or (args.instance is None and os.environ.get("DAGSTER_HOME"))):
        import dagster as dg
        instance = dg.DagsterInstance.get()
    # on a terminal, a live line while the chats concerned are rebuilt; elsewhere only the result
    view = IngestView(live=True) if sys.stderr.isatty() and not args.dry_run else contextlib.nullcontext()
    try:
        with quiet_runs(Path(args.db).parent), view:  # Dagster's events to <data>/logs/truffle.log, not the console
            out = forget(kind, value, in_chat, exports_dir=Path(args.exports), db_path=Path(args.db),
                         instance=instance, dry_run=args.dry_run, progress=view if isinstance(view, IngestView) else None)
    except (TombstoneError, NothingToForget) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    if args.json:
        print(json.dumps(out, indent=2, ensure_ascii=False))
        return 0
    print("\n".join(report(out, verbose=args.verbose)))
    return 0


SHOWN = 20  # messages and facts listed in the plain report (--json lists up to selection.LISTED)
# what was built from the messages, in a person's words; the other stores' counts stay under --json/--verbose
BUILT_FROM = (("episodes", "conversation episode"), ("summaries", "summary"),
              ("runtime_turns", "chat turn that quoted them"),
              ("retrieval_logs", "logged search that found them", "logged searches that found them"),
              ("dataset_sft", "training example"), ("dataset_dpo", "preference pair"))


def report(out: dict, verbose: bool = False) -> list[str]:
    """A forget's result as a person reads it: what it covers, its messages and facts, then totals."""
    sel, dry = out["selection"], out["dry_run"]
    named = {c["id"]: c["name"] or c["id"] for c in sel["chats"]}
    what = out["what"]
    if out["kind"] == "chat" and named.get(out["id"], out["id"]) != out["id"]:
        what += f" ({named[out['id']]})"
    t = sel["totals"]
    facts = plural(t["facts"], "fact") if t["facts"] else ""
    if t["messages"]:
        total = (f"{plural(t['messages'], 'message')} on {plural(t['days'], 'day')} in {plural(t['chats'], 'chat')}"
                 + (f", and {facts}" if facts else ""))
    else:
        total = facts or "no stored message or fact matches now"
    lines = [f"{'Would forget' if dry else 'Forgot'} {what}: {total}."]
    for c in sel["chats"]:
        if c["messages"]:
            days = c["days"] if len(c["days"]) <= 6 else [*c["days"][:3], "…", c["days"][-1]]
            lines.append(f"  {named[c['id']]} ({c['id']}): {plural(c['messages'], 'message')} on "
                         f"{plural(len(c['days']), 'day')}: {', '.join(days)}")
    if sel["messages"]:
        lines.append("Messages:")
        for m in sel["messages"][:SHOWN]:
            when = m["ts"][:16].replace("T", " ")
            lines.append(f"  {when}  {named.get(m['chat_id'], m['chat_id'])}  {m['author'] or '(system)'}: {m['text']}")
        if t["messages"] > SHOWN:
            lines.append(f"  … and {plural(t['messages'] - SHOWN, 'more message')} (--json lists "
                         f"{min(t['messages'], len(sel['messages']))})")
    if sel["facts"]:
        lines.append("Fact:" if out["kind"] == "fact" else "Facts learned only from these messages:")
        lines += [f"  {f['text']}  (fact {f['fact_id']})" for f in sel["facts"][:SHOWN]]
        if t["facts"] > SHOWN:
            lines.append(f"  … and {plural(t['facts'] - SHOWN, 'more fact')}")
    removed = out["removed"]
    built = [plural(removed[k], *rest) for k, *rest in BUILT_FROM if removed.get(k)]
    if built:
        lines.append(f"{'Would also go' if dry else 'Also gone'}, built from them: {', '.join(built)}.")
    if verbose:
        lines.append("Per store:")
        lines += [f"  {name:24} {n}" for name, n in sorted(removed.items())]
    if dry:
        lines.append("Nothing changed (dry run): run the same command without --dry-run to forget "
                     + ("them." if t["messages"] or t["facts"] else "what matches later."))
    else:
        lines.append(f"Tombstone {out['tombstone']} keeps this out of later ingests "
                     f"(undo: truffle forget --undo {out['tombstone']}); audit {out['audit']}.")
    return lines


def add_commands(sub) -> None:
    fg = sub.add_parser("forget", help="remove a chat, message, fact, old or matching messages from every store")
    what = fg.add_mutually_exclusive_group()
    what.add_argument("--chat", help="a whole chat: its display name or id, any case")
    what.add_argument("--message", help="one message id ([msg:ID] in answers)")
    what.add_argument("--fact", help="one fact id (from the profile or the inspector)")
    what.add_argument("--before", metavar="YYYY-MM-DD", help="every message before this day")
    what.add_argument("--contains", metavar="TEXT", help="every message containing TEXT (case-insensitive)")
    what.add_argument("--list", action="store_true", help="the tombstones kept")
    what.add_argument("--undo", metavar="TOMBSTONE", help="un-forget: the next ingest may bring it back")
    fg.add_argument("--in-chat", metavar="CHAT", help="limit --before/--contains/--message to one chat (name or id)")
    fg.add_argument("--dry-run", action="store_true",
                    help="list what would go (chats, days, messages, facts, totals); change nothing")
    fg.add_argument("--json", action="store_true",
                    help="the whole result as JSON: the selection and the count removed from each store")
    fg.add_argument("--verbose", action="store_true", help="also print the count removed from each store")
    fg.add_argument("--exports", default=str(paths.exports_dir()),
                    help="the exports folder the rebuild reads (default: %(default)s)")
    fg.add_argument("--db", default=str(paths.store_path()),
                    help="the memory's DuckDB store; its data root holds the rest (default: %(default)s)")
    fg.add_argument("--instance", choices=["local", "ephemeral"], default=None,
                    help="record the runs in $DAGSTER_HOME (local, default when set) or in memory")
    fg.set_defaults(func=cmd_forget)
