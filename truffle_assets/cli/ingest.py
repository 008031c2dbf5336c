"""ingest, up: building the memory from the exports (and `up` serving it)."""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from truffle_assets import paths
from truffle_assets.cli.dagster_local import local_dagster_home
from truffle_assets.paths import PROJECT_ROOT


def cmd_ingest(args: argparse.Namespace) -> int:
    from truffle_assets.defs.ingest.runner import ingest_all
    from truffle_assets.ingest.chat_names import UnknownChat, chats_in_exports

    try:  # --chat: a display name or an id, any case
        wanted = chats_in_exports(args.chat, args.exports, args.db)
    except UnknownChat as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    report = ingest_all(
        exports_dir=Path(args.exports), db_path=Path(args.db), user_name=args.user,
        chats_wanted=wanted, instance_kind=args.instance, full=args.full, memory=not args.messages_only,
    )
    print(json.dumps(report, indent=2, default=str))
    return exit_status(report)


def exit_status(report: dict) -> int:
    """0 all done, 1 a run failed, 3 partial: every readable chat is in, the unreadable ones are listed."""
    if report["status"] != "ok":
        bad = [f"{u['file']}{':' + str(u['line']) if u['line'] else ''}: {u['reason']}" for u in report["unreadable"]]
        print(f"truffle ingest: {report['status']}" + "".join(f"\n  unreadable: {b}" for b in bad), file=sys.stderr)
    return {"ok": 0, "failed": 1, "partial": 3}[report["status"]]


def cmd_up(args: argparse.Namespace) -> int:
    """Sample data if needed, ingest everything, then serve the Dagster UI on 127.0.0.1."""
    from truffle_assets.defs.ingest.runner import ingest_all
    from truffle_assets.ingest.exports import scan_exports
    from truffle_assets.synth import write_corpus

    exports = Path(args.exports)
    exports.mkdir(parents=True, exist_ok=True)
    if not scan_exports(exports):
        print(f"{exports} is empty: writing the sample export set into it", flush=True)
        write_corpus(exports, chats=args.sample_chats, tokens=args.sample_tokens, seed=7)
    local_dagster_home()
    report = ingest_all(exports_dir=exports, db_path=Path(args.db), user_name=args.user, instance_kind="local")
    print(json.dumps(report, indent=2, default=str), flush=True)
    if args.no_ui:
        return exit_status(report)
    chat = None if args.no_chat else start_chat(args.chat_port)
    url = f"http://127.0.0.1:{args.port}"
    print(f"Dagster UI: {url}", flush=True)
    dagster = Path(sys.executable).with_name("dagster")
    try:
        return subprocess.call(
            [str(dagster), "dev", "-w", str(PROJECT_ROOT / "workspace.yaml"), "-h", "127.0.0.1", "-p", str(args.port)],
            cwd=PROJECT_ROOT,
        )
    finally:
        if chat is not None:
            os.killpg(chat.pid, signal.SIGTERM)  # the chat server stops its llama.cpp server on SIGTERM
            chat.wait(timeout=30)


def start_chat(port: int, timeout_s: float = 180.0) -> subprocess.Popen | None:
    """`truffle serve` in the background (own process group) until its API answers."""
    import urllib.request

    proc = subprocess.Popen([str(Path(sys.executable).with_name("truffle")), "serve", "--port", str(port)],
                            cwd=PROJECT_ROOT, start_new_session=True)
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            print(f"warning: the chat server exited with {proc.returncode}; see its output above", file=sys.stderr)
            return None
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/v1/models", timeout=2):
                print(f"Chat: http://127.0.0.1:{port}/  (OpenAI-compatible API at http://127.0.0.1:{port}/v1; "
                      f"CLI: truffle ask / truffle chat)", flush=True)
                return proc
        except OSError:
            time.sleep(1)
    print(f"warning: the chat server did not answer within {timeout_s:.0f} s", file=sys.stderr)
    return proc


def add_commands(sub) -> None:
    for name, func, help_ in (("ingest", cmd_ingest, "materialize messages and the memory build for every chat and day"),
                              ("up", cmd_up, "sample data if empty, ingest everything, start the Dagster UI")):
        si = sub.add_parser(name, help=help_)
        si.add_argument("--exports", default=str(paths.exports_dir()))
        si.add_argument("--db", default=str(paths.store_path()))
        si.add_argument("--user", default=None, help="the exporting user's name (default: auto-detect)")
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
    up.add_argument("--port", type=int, default=3000)
    up.add_argument("--no-ui", action="store_true", help="stop after ingesting")
    up.add_argument("--no-chat", action="store_true", help="do not start the chat server next to the UI")
    up.add_argument("--chat-port", type=int, default=8800)
    up.add_argument("--sample-chats", type=int, default=10)
    up.add_argument("--sample-tokens", type=int, default=400_000)
