"""ingest, up: building the memory from the exports (and `up` serving it)."""

from __future__ import annotations

import argparse
import json
import os
import signal
import sys
from pathlib import Path

from truffle_assets import paths
from truffle_assets.cli.dagster_local import local_dagster_home, quiet_runs, serve_ui
from truffle_assets.cli.progress import IngestView, log_file_for
from truffle_assets.plurals import duration, plural
from truffle_assets.files import json_default


def cmd_ingest(args: argparse.Namespace) -> int:
    db = Path(args.db)
    from truffle_assets.ingest.chat_names import UnknownChat, chats_in_exports

    try:  # --chat: a display name or an id, any case
        wanted = chats_in_exports(args.chat, args.exports, args.db)
    except UnknownChat as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    report = _ingest(args, exports_dir=Path(args.exports), db_path=db, chats_wanted=wanted,
                     instance_kind=args.instance, full=args.full, memory=not args.messages_only)
    return exit_status(report)


def _ingest(args: argparse.Namespace, also=None, **kw) -> dict:
    """`ingest_all` under a progress view, Dagster's events in the log file; then the summary (or the
    JSON report with `--json`) on stdout. `also` hears the runner's progress too."""
    from truffle_assets.defs.ingest.runner import ingest_all

    view = IngestView(live=None if not args.verbose else False)
    hear = view if also is None else lambda p: (view(p), also(p))
    with quiet_runs(Path(kw["db_path"]).parent, args.verbose) as log_file, view:
        report = ingest_all(user_name=args.user, progress=hear, **kw)
    report["log_file"] = str(log_file)
    if args.json:
        print(json.dumps(report, indent=2, default=json_default), flush=True)
    else:
        print("\n".join(summary(report, view.elapsed, Path(kw["db_path"]), log_file)), flush=True)
    return report


def summary(report: dict, seconds: float, db_path: Path, log_file: Path) -> list[str]:
    """A few lines a person reads: what was ingested, what was already current, where the memory is."""
    chats = report["chats"]
    failed = {c for c, e in chats.items() if not all(r["success"] for r in e["runs"])}
    done = {c: e for c, e in chats.items() if e["runs"] and c not in failed}
    runs = [r for e in done.values() for r in e["runs"]]
    current = len(chats) - len(done) - len(failed)
    rows, months = sum(r["rows"] for r in runs), sum(r["months"] for r in runs)
    head = (f"Ingested {plural(len(done), 'chat')}: {plural(rows, 'message')} over {plural(months, 'month')}"
            if done else "Nothing ingested" if failed else "Nothing new to ingest")
    tail = [f"{current} up to date"] if current else []
    if failed:
        tail.append(f"{plural(len(failed), 'chat')} FAILED")
    if report["failed"] and not failed:
        tail.append("the profile FAILED")
    who = f" (you: {report['user']})" if report.get("user") else ""
    lines = [f"{head}{'; ' + ', '.join(tail) if tail else ''} in {duration(seconds)}{who}.",
             f"Memory: {db_path}" + (" and the published profile beside it" if "profile" in report else ""),
             f"Log: {log_file}"]
    return lines


def _months(run: dict) -> str:
    first, last = run["first_month"], run["last_month"]
    return first if first == last else f"{first}..{last}"


def exit_status(report: dict, command: str = "ingest") -> int:
    """0 all done, 1 a run failed, 3 partial: every readable chat is in, the unreadable ones are listed.
    What failed, and where its whole story is, goes to stderr."""
    if report["status"] != "ok":
        bad = [f"{u['file']}{':' + str(u['line']) if u['line'] else ''}: {u['reason']}" for u in report["unreadable"]]
        failed = [f"{chat} {_months(r)}: {err}" for chat, e in report["chats"].items()
                  for r in e["runs"] if not r["success"] for err in r.get("errors") or ["failed"]]
        failed += [f"{what}: {err}" for what in ("facts", "profile") if not report.get(what, {"success": True})["success"]
                   for err in report[what].get("errors") or ["failed"]]
        status = "FAILED" if report["status"] == "failed" else report["status"]
        print(f"truffle {command}: {status}" + "".join(f"\n  unreadable: {b}" for b in bad)
              + "".join(f"\n  failed: {f}" for f in failed)
              + (f"\n  every event of the failed runs: {report['log_file']}"
                 if failed and report.get("log_file") else ""), file=sys.stderr)
    return {"ok": 0, "failed": 1, "partial": 3}[report["status"]]


def cmd_up(args: argparse.Namespace) -> int:
    """Sample data if needed, ingest everything, then serve the Dagster UI on 127.0.0.1. The chat server
    starts as soon as the first chat is in (the chats written to most go first) and the shipped model
    is rebuilt beside the ingest, so a person can ask while the rest builds."""
    from truffle_assets.cli.chat_server import ChatOpener, ShippedInstall
    from truffle_assets.ingest.exports import scan_exports
    from truffle_assets.synth import write_corpus

    def say(text: str) -> None:  # resolved at each call: while the progress line is live, rich holds stdout
        print(text, file=sys.stderr if args.json else sys.stdout, flush=True)  # with --json, stdout holds the report alone

    exports, db = Path(args.exports), Path(args.db)
    exports.mkdir(parents=True, exist_ok=True)
    if not scan_exports(exports):
        say(f"{exports} is empty: writing the sample export set into it")
        write_corpus(exports, chats=args.sample_chats, tokens=args.sample_tokens, seed=7)
    local_dagster_home()
    opener = None
    if not (args.no_ui or args.no_chat):
        log_file = log_file_for(db.parent)
        opener = ChatOpener(args.chat_port, log_file, args.verbose, say, ShippedInstall(log_file, args.verbose),
                            db.parent / "published")
    report = _ingest(args, exports_dir=exports, db_path=db, instance_kind="local", also=opener)
    if args.no_ui:
        return exit_status(report, "up")
    if report["status"] != "ok":  # loud, but the UI still starts: it shows what failed
        exit_status(report, "up")
    log_file = Path(report["log_file"])
    chat = None if opener is None else opener.wait()
    try:
        return serve_ui(args.port, log_file, args.verbose, say, also=" and the chat" if chat else "")
    finally:
        if chat is not None:
            os.killpg(chat.pid, signal.SIGTERM)  # the chat server stops its llama.cpp server on SIGTERM
            chat.wait(timeout=30)


def add_commands(sub) -> None:
    for name, func, help_ in (("ingest", cmd_ingest, "materialize messages and the memory build for every chat and day"),
                              ("up", cmd_up, "sample data if empty, ingest everything, start the Dagster UI")):
        si = sub.add_parser(name, help=help_)
        si.add_argument("--exports", default=str(paths.exports_dir()), metavar="DIR", help="the folder of WhatsApp exports")
        si.add_argument("--db", default=str(paths.store_path()), metavar="FILE",
                        help="the DuckDB store; the memory is built in the folder that holds it")
        si.add_argument("--user", default=None, help="the exporting user's name (default: auto-detect)")
        si.add_argument("--json", action="store_true", help="print the full report as JSON on stdout instead of the summary")
        si.add_argument("--verbose", action="store_true",
                        help="show Dagster's event lines and library output on the console (always in <data>/logs/truffle.log)")
        si.set_defaults(func=func)
    ingest = sub.choices["ingest"]
    ingest.add_argument("--chat", action="append",
                        help="only this chat: its display name or id, any case (repeatable)")
    ingest.add_argument("--full", action="store_true", help="re-ingest every day, not only changed ones")
    ingest.add_argument("--messages-only", action="store_true",
                        help="stop after `messages` (no memory build; the months stay planned until a whole chain runs)")
    ingest.add_argument("--instance", choices=["local", "ephemeral"], default=None,
                        help="record runs in $DAGSTER_HOME (local, default when set) or in memory")
    up = sub.choices["up"]
    up.add_argument("--port", type=int, default=3000, help="port of the Dagster UI")
    up.add_argument("--no-ui", action="store_true", help="stop after ingesting")
    up.add_argument("--no-chat", action="store_true", help="do not start the chat server next to the UI")
    up.add_argument("--chat-port", type=int, default=8800, help="port of the chat page and its OpenAI-compatible API")
    up.add_argument("--sample-chats", type=int, default=10, help="chats in the sample set written into an empty exports folder")
    up.add_argument("--sample-tokens", type=int, default=400_000, help="about how many tokens the sample set holds")
