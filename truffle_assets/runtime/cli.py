"""`truffle ask` and `truffle chat`: the chat runtime from a terminal.

Wire into the console script with `add_runtime_commands(subparsers)`. Both commands use
`service.open_service`: the configured endpoint (`--base-url`, `TRUFFLE_LLM_BASE_URL`, or
OpenRouter when `OPENROUTER_API_KEY` is set), else an embedded llama.cpp server on `--gguf`, the
registry's active model, or the Qwen2.5-Coder-0.5B GGUF.

    truffle ask "When is Priya's party?" --json
    truffle chat          # :up, :down [note], :reroll, :quit
    truffle logging on    # keep transcripts and ratings (saved in the store; `off`, `set --days N`, `status`)

Nothing of a turn is kept until the person turns it on (`feedback.settings`): `truffle logging`
saves the choice every command on that store follows, `--log` / `--no-transcripts` change it for
one session only.
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import sys
from collections.abc import Callable

from truffle_assets import paths
from truffle_assets.feedback.settings import MAX_RETENTION_DAYS, SettingsError, resolve, save, settings_path
from truffle_assets.runtime.config import RuntimeConfig

TURN_ON = "turn it on with `truffle logging on`, or --log for one session"
LOGGING_ACTIONS = ("status", "on", "off", "set")


def _add_common(p: argparse.ArgumentParser) -> None:
    p.add_argument("--published", default=None, help=f"published memory dir (default {paths.published_dir()})")
    p.add_argument("--store", default=None, help=f"runtime store dir (default {paths.runtime_dir()})")
    p.add_argument("--base-url", default=None, help="OpenAI-compatible endpoint (default: env, else embedded)")
    p.add_argument("--model", default=None,
                   help="the model to ask the endpoint for (default: $TRUFFLE_LLM_MODEL, else the configured default)")
    p.add_argument("--api-key", default=None,
                   help="the endpoint's key (default: $TRUFFLE_LLM_API_KEY or $OPENROUTER_API_KEY; the variable is safer)")
    p.add_argument("--gguf", default=None, help="GGUF to serve locally when no endpoint is configured")
    p.add_argument("--max-recalls", type=int, default=None, help="1-3 (default 2)")
    p.add_argument("--timeout", type=float, default=None, help="seconds per model call")
    p.add_argument("--n-ctx", type=int, default=16_384, help="context window, in tokens, of the embedded llama.cpp server")
    keep = p.add_mutually_exclusive_group()
    keep.add_argument("--log", action="store_true",
                      help="keep this session's transcripts (with their text) and ratings, whatever is saved")
    keep.add_argument("--no-transcripts", action="store_true", help="do not record this session's turns")


def add_runtime_commands(subparsers) -> None:
    ask = subparsers.add_parser("ask", help="answer one question from the published memory")
    ask.add_argument("question", help="the question, in quotes")
    ask.add_argument("--json", action="store_true", help="answer, citations, trace and tokens per section as JSON")
    _add_common(ask)
    ask.set_defaults(func=ask_main)
    chat = subparsers.add_parser("chat", help="interactive chat over the published memory (:up :down :reroll)")
    _add_common(chat)
    chat.set_defaults(func=chat_main)
    lg = subparsers.add_parser(
        "logging", help="what the chat keeps (transcripts, their text, ratings) and for how long",
        description="Show or change what the chat keeps. `status` (the default) only shows; `on`, `off` and "
                    "`set` change the choice saved in the store, which every serve, chat and ask on it follows.")
    lg.add_argument("action", nargs="?", choices=LOGGING_ACTIONS, default="status",
                    help="status: show every setting, change nothing (default); on: keep transcripts with their "
                         "text, and ratings; off: keep nothing new; set: change only the settings given")
    lg.add_argument("--days", type=int, default=None,
                    help=f"with on, off or set: the retention window, 1-{MAX_RETENTION_DAYS} days (default 90)")
    lg.add_argument("--content", action=argparse.BooleanOptionalAction, default=None,
                    help="with on or set: keep the text of questions and answers beside the transcripts "
                         "(default with on: keep it)")
    lg.add_argument("--ratings", action=argparse.BooleanOptionalAction, default=None,
                    help="with on or set: keep ratings and their notes (default with on: keep them)")
    lg.add_argument("--transcripts", action=argparse.BooleanOptionalAction, default=None,
                    help="with set: keep per-turn transcripts (on turns them on, off turns them off)")
    lg.add_argument("--json", action="store_true", help="print the settings as one JSON object")
    lg.add_argument("--store", default=None, help=f"runtime store dir (default {paths.runtime_dir()})")
    lg.set_defaults(func=logging_main)


def config_from_args(args: argparse.Namespace) -> RuntimeConfig:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    over: dict = {}
    if getattr(args, "published", None):
        over["published_dir"] = args.published
    if getattr(args, "store", None):
        over["store_dir"] = args.store
    if getattr(args, "max_recalls", None) is not None:
        over["max_recalls"] = args.max_recalls
    if getattr(args, "log", False):
        over.update(transcripts=True, content=True, feedback=True)
    if getattr(args, "no_transcripts", False):
        over["transcripts"] = False
    cfg = RuntimeConfig.from_env(**over)
    cfg.keeping()  # an unreadable saved choice or $TRUFFLE_LOG is refused here, naming the file or variable
    ep = {k: v for k, v in (("base_url", args.base_url), ("model", args.model), ("api_key", args.api_key),
                            ("gguf", args.gguf), ("timeout_s", args.timeout)) if v is not None}
    if ep:
        cfg = cfg.model_copy(update={"endpoint": cfg.endpoint.model_copy(update=ep)})
    return cfg


def _print_turn(turn) -> None:
    print(turn.answer)
    meta = [f"turn {turn.turn_id[:8]}", f"{turn.latency_ms / 1000:.1f}s", "kept" if turn.kept else "not kept"]
    if turn.fallback:
        meta.append(f"fallback: {turn.fallback}")
    meta.append("tokens " + " ".join(f"{k}={turn.tokens[k]}" for k in ("profile", "summaries", "raw", "dialogue",
                                                                      "total") if k in turn.tokens))
    print(f"  [{' · '.join(meta)}]", file=sys.stderr)


def _refuses_tampered_registry(main: Callable[..., int]) -> Callable[..., int]:
    """A registry that fails its audit is not served (llm.gguf.active_gguf), and an unreadable logging
    choice is not guessed at: say why in one line and exit 2, as `truffle serve` does, instead of a traceback."""
    @functools.wraps(main)
    def wrapped(*args, **kwargs) -> int:
        from truffle_assets.registry import AuditFailed

        from pydantic import ValidationError

        from truffle_assets.validation_text import in_words

        try:
            return main(*args, **kwargs)
        except (AuditFailed, SettingsError) as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 2
        except ValidationError as exc:  # a refused option or setting, e.g. --max-recalls 7
            print(f"error: {in_words(exc)}", file=sys.stderr)
            return 2

    return wrapped


@_refuses_tampered_registry
def ask_main(args: argparse.Namespace) -> int:
    from truffle_assets.files import json_default
    from truffle_assets.runtime.service import open_service

    cfg = config_from_args(args)
    with open_service(cfg, n_ctx=args.n_ctx) as svc:
        turn = svc.ask([{"role": "user", "content": args.question}])
        served = svc.model_status()
    if args.json:
        print(json.dumps({"turn_id": turn.turn_id, "answer": turn.answer, "citations": turn.citations,
                          "uncertain": turn.uncertain, "watermarks": turn.watermarks, "tokens": turn.tokens,
                          "fallback": turn.fallback, "refused": turn.refused, "model": turn.model,
                          "model_description": served.get("description"),
                          "latency_ms": turn.latency_ms, "sources": turn.sources, "kept": turn.kept,
                          "trace": turn.trace},
                         indent=2, ensure_ascii=False, default=json_default))
    else:
        _print_turn(turn)
        print(answered_by(turn, served))
    return 0


def answered_by(turn, served: dict) -> str:
    """The last line of `truffle ask`: which model wrote the answer, or that none did."""
    if turn.model:
        return f"model: {served.get('description') or turn.model}"
    return f"model: none, a retrieval-only answer (served: {served.get('description')})"


HELP = "commands: :up  :down [note]  :reroll  :new  :quit"


@_refuses_tampered_registry
def chat_main(args: argparse.Namespace, read: Callable[[str], str] = input, out=None) -> int:
    from truffle_assets.runtime.service import open_service

    out = out or sys.stdout
    cfg = config_from_args(args)
    with open_service(cfg, n_ctx=args.n_ctx) as svc:
        print(f"Truffle chat on {svc.model_status().get('description') or svc.model} — {HELP}", file=out)
        keep = svc.keeping()
        print(f"{keep.describe()}" + ("" if keep.keeps_anything else f" ({TURN_ON})"), file=out)
        history: list[dict] = []
        last = None
        conversation = None
        while True:
            try:
                line = read("you> ").strip()
            except (EOFError, KeyboardInterrupt):
                print(file=out)
                return 0
            if not line:
                continue
            if line in (":quit", ":q", ":exit"):
                return 0
            if line == ":new":
                history, last, conversation = [], None, None
                continue
            if line.startswith((":up", ":down")):
                if last is None:
                    print("nothing to rate yet", file=out)
                    continue
                cmd, _, note = line.partition(" ")
                ok = svc.feedback(last.turn_id, 1 if cmd == ":up" else -1, note.strip())
                print("thanks, noted" if ok else f"not recorded: ratings are not being kept ({TURN_ON})", file=out)
                continue
            if line == ":reroll":
                if last is None:
                    print("nothing to re-roll yet", file=out)
                    continue
                last = svc.reroll(last.turn_id)
                history[-1] = {"role": "assistant", "content": last.body}
            elif line.startswith(":"):
                print(HELP, file=out)
                continue
            else:
                history.append({"role": "user", "content": line})
                last = svc.ask(history, conversation_id=conversation)
                conversation = last.conversation_id
                history.append({"role": "assistant", "content": last.body})
            print(f"truffle> {last.answer}", file=out)
            if last.fallback:
                print(f"  (retrieval-only: {last.fallback})", file=out)
            if line == ":reroll" and not last.kept:
                print("  (not kept: transcripts are off, so this pair of answers is not saved)", file=out)


# which change options each action takes (status takes none: it never writes)
_APPLIES = {"status": (), "on": ("days", "content", "ratings"), "off": ("days",),
            "set": ("days", "content", "ratings", "transcripts")}
_FIELD = {"content": "content", "ratings": "feedback", "transcripts": "transcripts", "days": "retention_days"}
_LABEL = {"transcripts": "transcripts", "content": "their text", "feedback": "ratings",
          "retention_days": "retention"}


def _option(name: str, value) -> str:
    """How the person typed it: `--days 5`, `--no-content`."""
    if name == "days":
        return f"--days {value}"
    return f"--{'' if value else 'no-'}{name}"


def _refused(action: str, given: dict) -> str | None:
    """Why these options do not go with `action` (None when they do)."""
    stray = [n for n in given if n not in _APPLIES[action]]
    if not stray:
        if action == "set" and not given:
            return ("`truffle logging set` needs something to set: --days N, --transcripts/--no-transcripts, "
                    "--content/--no-content, --ratings/--no-ratings")
        return None
    typed = " ".join(_option(n, given[n]) for n in stray)
    if action == "status":
        return (f"{typed}: `truffle logging status` only shows the settings and changes nothing; "
                f"to change them: truffle logging set {' '.join(_option(n, v) for n, v in given.items())}")
    takes = ", ".join(f"--{n}" for n in _APPLIES[action]) or "no options"
    return f"{typed} does not apply to `truffle logging {action}` (it takes {takes}); use `truffle logging set`"


def _source(kind: str) -> str:
    return {"default": "built-in default", "env": "from the environment", "saved": "saved",
            "session": "this process"}.get(kind, kind)


def _status_lines(keep, sources: dict, store) -> list[str]:
    days = f"{keep.retention_days} day" + ("" if keep.retention_days == 1 else "s")
    values = {"transcripts": "on" if keep.transcripts else "off",
              "content": ("on" if keep.content else "off") + ("" if keep.transcripts or not keep.content
                                                              else " (kept only with transcripts)"),
              "feedback": "on" if keep.feedback else "off", "retention_days": days}
    lines = [keep.describe() + "."]
    lines += [f"  {_LABEL[k]:<12} {values[k]:<10} {_source(sources[k])}" for k in _LABEL]
    saved = any(v == "saved" for v in sources.values())
    lines.append(f"  saved in {settings_path(store)}" if saved else "  nothing saved yet: off until turned on")
    if any(v == "env" for v in sources.values()):
        lines.append("  the environment's values come from $TRUFFLE_LOG / $TRUFFLE_RETENTION_DAYS")
    return lines


@_refuses_tampered_registry
def logging_main(args: argparse.Namespace, out=None) -> int:
    """`truffle logging [status|on|off|set] [--days N] [--[no-]content] [--[no-]ratings] [--[no-]transcripts]
    [--json]`: `status` only shows; `on`, `off` and `set` save the choice."""
    from pydantic import ValidationError

    from truffle_assets.feedback.settings import LoggingSettings
    from truffle_assets.validation_text import in_words

    out = out or sys.stdout
    given = {n: getattr(args, n, None) for n in ("days", "content", "ratings", "transcripts")}
    given = {n: v for n, v in given.items() if v is not None}
    why = _refused(args.action, given)
    if why:
        print(f"error: {why}", file=sys.stderr)
        return 2
    changes = {_FIELD[n]: v for n, v in given.items()}
    if args.action == "on":
        changes = {"transcripts": True, "content": True, "feedback": True} | changes
    elif args.action == "off":
        changes = {"transcripts": False, "content": False, "feedback": False} | changes
    try:  # refused in a person's words before anything is written
        LoggingSettings.model_validate(LoggingSettings().model_dump() | changes)
    except ValidationError as exc:
        print(f"error: {in_words(exc)}", file=sys.stderr)
        return 2
    store = args.store or RuntimeConfig.from_env().store_dir
    if changes:
        save(store, changes)
    keep, sources = resolve(store)
    if getattr(args, "json", False):
        print(json.dumps({"summary": keep.describe(), **keep.model_dump(), "keeps_content": keep.keeps_content,
                          "sources": sources, "settings_file": str(settings_path(store)),
                          "saved": any(v == "saved" for v in sources.values())}, indent=2), file=out)
        return 0
    print("\n".join(_status_lines(keep, sources, store)), file=out)
    if args.action == "off":
        print(f"  what was kept before stays until it is {keep.retention_days} days old "
              "(the daily runtime_retention job deletes it)", file=out)
    return 0
