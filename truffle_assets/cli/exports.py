"""parse, synth: reading an export without storing it, and writing a synthetic export set."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from truffle_assets.files import json_default
from truffle_assets.plurals import plural


def cmd_parse(args: argparse.Namespace) -> int:
    from truffle_assets.parsing import ExportError, parse_file

    status = 0
    for path in _export_files(args.paths):
        if isinstance(path, str):  # what a path that is not an export file is instead
            print(f"error: {path}", file=sys.stderr)
            status = 2
            continue
        try:
            result = parse_file(path)
        except ExportError as exc:
            print(f"error: {exc}", file=sys.stderr)
            status = 2
            continue
        if args.json:
            out = sys.stdout
            for e in result.entries:
                out.write(json.dumps(e.to_json(), ensure_ascii=False) + "\n")
        print(result.summary(), file=sys.stderr)
        for line, reason, preview in result.quarantined[: args.show_quarantined]:
            print(f"  quarantined {result.source}:{line}: {reason}: {preview[:60]!r}", file=sys.stderr)
    return status


def _export_files(paths: list[str]) -> list[Path | str]:
    """The files to parse: each path as given, a directory's exports in its place (as `truffle ingest`
    finds them: .txt and .zip files, README.txt and hidden files left out), or an error in words."""
    from truffle_assets.ingest.exports import scan_chats

    out: list[Path | str] = []
    for arg in paths:
        path = Path(arg)
        if not path.is_dir():
            out.append(path)
            continue
        found = sorted(f for files in scan_chats(path).chats.values() for f in files)
        if not found:
            out.append(f"{path}: a directory with no WhatsApp export in it (.txt or .zip files); "
                       f"pass an export file, or a folder holding some")
        out += found
    return out


def cmd_synth(args: argparse.Namespace) -> int:
    from truffle_assets.synth import write_corpus

    summary = write_corpus(Path(args.out), chats=args.chats, tokens=args.tokens, seed=args.seed)
    if args.json:
        print(json.dumps(summary, indent=2, default=json_default))
        return 0
    print(f"wrote {plural(summary['files'], 'export')} to {summary['out']}: {plural(summary['messages'], 'message')}, "
          f"about {summary['approx_tokens']:,} tokens; ground_truth.json lists the {plural(summary['facts'], 'planted fact')}, "
          f"{plural(summary['secrets'], 'secret')} and {plural(summary['decoys'], 'decoy')}")
    return 0


def add_commands(sub) -> None:
    sp = sub.add_parser("parse", help="parse exports; --json prints one entry per line, summary on stderr")
    sp.add_argument("paths", nargs="+", metavar="PATH",
                    help="an export (.txt or .zip), or a folder: every export in it and its subfolders")
    sp.add_argument("--json", action="store_true", help="print each entry as one JSON object per line on stdout")
    sp.add_argument("--show-quarantined", type=int, default=20, metavar="N",
                    help="print the first N quarantined lines of each file (default: %(default)s)")
    sp.set_defaults(func=cmd_parse)

    ss = sub.add_parser("synth", help="write a synthetic export set with ground_truth.json")
    ss.add_argument("--out", required=True, metavar="DIR", help="the folder to write the exports into")
    ss.add_argument("--chats", type=int, default=10, help="how many chats to write (default: %(default)s)")
    ss.add_argument("--tokens", type=int, default=5_000_000,
                    help="about how many tokens (characters / 4) in all, shared out over the chats (default: %(default)s)")
    ss.add_argument("--seed", type=int, default=7,
                    help="random seed: the same seed writes the same exports (default: %(default)s)")
    ss.add_argument("--json", action="store_true", help="print the summary as JSON")
    ss.set_defaults(func=cmd_synth)

