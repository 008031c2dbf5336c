"""The `truffle` console script. Each module here holds one family of commands and adds them to the parser:
`exports` (parse, synth), `ingest` (ingest, up), `recall`, `forget`, `models` (the fine-tuning loop); the runtime adds
ask, chat, logging and serve."""

from __future__ import annotations

import argparse
import os
import signal
import sys
import warnings
from pathlib import Path

from truffle_assets import paths
from truffle_assets.cli import exports, forget, help_format, ingest, models, recall
from truffle_assets.cli.progress import log_file_for
from truffle_assets.quiet import quiet_console


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="truffle", description="Personal memory from WhatsApp exports.")
    sub = p.add_subparsers(dest="command", required=True)
    for family in (exports, ingest, forget, recall, models):
        family.add_commands(sub)

    from truffle_assets.runtime.cli import add_runtime_commands
    from truffle_assets.runtime.mcp.cli import add_mcp_command
    from truffle_assets.runtime.serve import add_serve_command

    add_runtime_commands(sub)  # ask, chat, logging
    # serve: OpenAI-compatible API + web page, embedded llama.cpp when no endpoint; /api/forget runs the pipeline's
    add_serve_command(sub, forgetter=_pipeline_forgetter)
    # mcp: the memory to other apps over MCP (stdio); forget only with --allow-forget, through the pipeline's
    add_mcp_command(sub, forgetter=_pipeline_forgetter)
    help_format.apply(p)
    return p


def _pipeline_forgetter(data_dir: Path):
    """The pipeline's forget for `truffle serve`'s `/api/forget` and the MCP forget tool (the runtime never
    imports the pipeline)."""
    from truffle_assets.defs.forget.forgetter import PipelineForgetter

    return PipelineForgetter(data_dir)


def _interrupt(signum, frame) -> None:
    raise KeyboardInterrupt(f"signal {signum}")


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    # Dagster's beta/preview notices speak to the pipeline's authors, not to the person at the prompt
    warnings.filterwarnings("ignore", message=r".* is currently in (beta|preview)")
    # model-loading bars, library warnings, llama.cpp's log lines: to the log file unless --verbose
    quiet_console(getattr(args, "verbose", False) is True, log_file_for(paths.data_root()))
    # SIGTERM (a service manager, `kill`) stops a command the way Ctrl-C does: cleanup runs
    signal.signal(signal.SIGTERM, _interrupt)
    try:
        return args.func(args)
    except KeyboardInterrupt:
        print("truffle: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        # the reader went away (`truffle parse --json … | head`): stop quietly, as a shell tool does on
        # SIGPIPE. Output still buffered would raise again when Python flushes at exit, so it goes nowhere.
        if sys.stdout is sys.__stdout__:
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141
