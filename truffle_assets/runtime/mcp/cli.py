"""`truffle mcp`: the memory as an MCP server over stdio (Claude Desktop, Cursor, VS Code, agents)."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any


def add_mcp_command(subparsers: argparse._SubParsersAction,
                    forgetter: Callable[[Path], Any] | None = None) -> argparse.ArgumentParser:
    """`truffle mcp [--allow-forget]` plus the runtime's common options. `forgetter(data_dir)` builds
    the pipeline's forget for the data root served (used only with --allow-forget)."""
    from truffle_assets.runtime.cli import _add_common

    sp = subparsers.add_parser(
        "mcp", help="serve the memory to other apps over MCP (stdio; `truffle serve` also serves it at /mcp)",
        description="An MCP server on stdin/stdout for desktop clients and agents: search the memory, read "
                    "messages, days, facts and the profile, list the chats, ask for a grounded answer. "
                    "Read-only unless --allow-forget.")
    sp.add_argument("--allow-forget", action="store_true",
                    help="also offer the forget tool (a dry run first, then an explicit confirmation)")
    _add_common(sp)
    sp.set_defaults(func=cmd_mcp, forgetter=forgetter)
    return sp


def cmd_mcp(args: argparse.Namespace) -> int:
    from truffle_assets.feedback.settings import SettingsError
    from truffle_assets.runtime.cli import config_from_args
    from truffle_assets.runtime.mcp.stdio import run_stdio

    try:
        config = config_from_args(args)
        forgetter = None
        if args.allow_forget:
            make = getattr(args, "forgetter", None)
            if make is None:
                print("error: forgetting runs through the pipeline, which this command was started without",
                      file=sys.stderr)
                return 2
            forgetter = make(Path(config.published_dir).parent)  # published/ sits in the data root
        run_stdio(config, allow_forget=args.allow_forget, forgetter=forgetter, n_ctx=args.n_ctx)
    except SettingsError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 0
    return 0
