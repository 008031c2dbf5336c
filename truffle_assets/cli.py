"""The `truffle` console script: parse, synth, ingest, up, forget, recall, ask, chat, serve, train, eval, promote,
rollback, audit, ship, install-shipped."""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import time
import warnings
from dataclasses import asdict
from pathlib import Path

from truffle_assets import paths
from truffle_assets.paths import PROJECT_ROOT


def _local_dagster_home() -> Path:
    """`$DAGSTER_HOME`, else the data root's instance folder, with the project's dagster.yaml in it."""
    home = Path(os.environ.setdefault("DAGSTER_HOME", str(paths.dagster_home())))
    home.mkdir(parents=True, exist_ok=True)
    shutil.copy(PROJECT_ROOT / "dagster.yaml", home / "dagster.yaml")
    return home


def cmd_parse(args: argparse.Namespace) -> int:
    from truffle_assets.parsing import ExportError, parse_file

    status = 0
    for path in args.paths:
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


def cmd_synth(args: argparse.Namespace) -> int:
    from truffle_assets.synth import write_corpus

    summary = write_corpus(Path(args.out), chats=args.chats, tokens=args.tokens, seed=args.seed)
    print(json.dumps(summary, indent=2, default=str))
    return 0


def cmd_ingest(args: argparse.Namespace) -> int:
    from truffle_assets.defs.ingest.runner import ingest_all

    report = ingest_all(
        exports_dir=Path(args.exports), db_path=Path(args.db), user_name=args.user,
        chats_wanted=args.chat or None, instance_kind=args.instance, full=args.full, memory=not args.messages_only,
    )
    print(json.dumps(report, indent=2, default=str))
    return exit_status(report)


def exit_status(report: dict) -> int:
    """0 all done, 1 a run failed, 3 partial: every readable chat is in, the unreadable ones are listed."""
    if report["status"] != "ok":
        bad = [f"{u['file']}{':' + str(u['line']) if u['line'] else ''}: {u['reason']}" for u in report["unreadable"]]
        print(f"truffle ingest: {report['status']}" + "".join(f"\n  unreadable: {b}" for b in bad), file=sys.stderr)
    return {"ok": 0, "failed": 1, "partial": 3}[report["status"]]


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
    _local_dagster_home()
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


def train_run_config(args: argparse.Namespace) -> dict:
    """The training chain's run config from `truffle train`'s flags."""
    lora = {"base_model": args.base, "max_steps": args.max_steps, "learning_rate": args.learning_rate,
            "sft_from": args.sft_from, "dpo_from": args.dpo_from, "blend": args.blend}
    if args.dpo_steps:  # DPO on the pack's pairs (cited vs uncited, refusal vs leak) after the SFT steps
        lora |= {"dpo": True, "dpo_max_steps": args.dpo_steps, "dpo_kinds": args.dpo_kinds,
                 "dpo_learning_rate": args.dpo_learning_rate, "dpo_sft_weight": args.dpo_sft_weight,
                 "dpo_seed": args.dpo_seed}
    return {"ops": {"lora_adapter": {"config": lora}, "gguf_model": {"config": {"quants": args.quants}},
                    "eval_report": {"config": {"temperatures": args.temperatures, "limit": args.eval_limit,
                                               "qa_limit": args.qa_limit}}}}


def _materialize_locally(selection: list, run_config: dict, resources: dict | None = None):
    """Materialize `selection` on the local instance with the project's resources (`resources`
    replacing some), offline; the run's result, failures included."""
    import dagster as dg

    from truffle_assets.definitions import defs

    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    _local_dagster_home()
    return dg.materialize(selection, instance=dg.DagsterInstance.get(), resources=defs.resources | (resources or {}),
                          run_config=run_config, raise_on_error=False)


def cmd_train(args: argparse.Namespace) -> int:
    """Materialize the training chain (datasets → … → eval report → card) on the local instance."""
    from truffle_assets.definitions import TRAINING_CHAIN

    result = _materialize_locally(TRAINING_CHAIN, train_run_config(args))
    for ev in result.get_asset_check_evaluations():
        print(f"check {ev.asset_check_key.name}: {'passed' if ev.passed else 'FAILED'}")
    print(f"run {result.run_id}: {'success' if result.success else 'failed'}")
    return 0 if result.success else 1


def cmd_eval(args: argparse.Namespace) -> int:
    """Re-evaluate a finished run (default: the candidate) and re-check its gate, with no training: the
    run becomes the candidate and `eval_report`, `eval_gate` and `model_card` are materialized again.
    The earlier report is kept beside the new one as `eval-<time>/`."""
    run_dir = _run_dir(args).resolve()
    if not any((run_dir / "gguf").glob("*.gguf")):
        print(f"error: {run_dir / 'gguf'} holds no GGUF: train the run (or its gguf_model step) first", file=sys.stderr)
        return 1
    kept = run_dir / f"eval-{time.strftime('%Y%m%d-%H%M%S')}"
    if (run_dir / "eval").is_dir():
        (run_dir / "eval").rename(kept)
    try:
        return _evaluate(args, run_dir)
    finally:  # a failed or interrupted evaluation leaves the earlier report in place, not none
        if kept.is_dir() and not (run_dir / "eval" / "report.json").exists():
            shutil.rmtree(run_dir / "eval", ignore_errors=True)
            kept.rename(run_dir / "eval")


def _evaluate(args: argparse.Namespace, run_dir: Path) -> int:
    from truffle_assets.definitions import EVAL_CHAIN, defs
    from truffle_assets.defs.resources import ModelsResource
    from truffle_assets.files import write_json_atomic
    from truffle_assets.registry import read_gate

    write_json_atomic(run_dir.parent / "candidate.json", {"run_id": run_dir.name, "run_dir": str(run_dir)})
    config = {"temperatures": args.temperatures, "limit": args.eval_limit, "qa_limit": args.qa_limit, "qa": not args.no_qa}
    # the models root that holds --runs (runs/ is its child), and --registry, whose active model is the reference
    models = ModelsResource(root=str(run_dir.parent.parent), registry_dir=args.registry,
                            audit_key=defs.resources["models"].audit_key)
    result = _materialize_locally(EVAL_CHAIN, {"ops": {"eval_report": {"config": config}}}, {"models": models})
    gate = read_gate(run_dir)
    print(f"run {result.run_id}: {'success' if result.success else 'failed'}; {run_dir.name} gate: "
          f"{'passed' if gate else 'FAILED' if gate is False else 'not evaluated'} ({run_dir / 'eval' / 'report.md'})")
    return 0 if result.success else 1


def _registry(args: argparse.Namespace):
    from truffle_assets.registry import Registry

    return Registry(args.registry)


def _run_dir(args: argparse.Namespace) -> Path:
    """`--runs/RUN`, else the current candidate."""
    runs = Path(args.runs)
    return runs / args.run if args.run else Path(json.loads((runs / "candidate.json").read_text())["run_dir"])


def cmd_promote(args: argparse.Namespace) -> int:
    from truffle_assets.registry import read_gate

    run_dir = _run_dir(args)
    return _switch_model(args, lambda reg: reg.promote(run_dir, gate_passed=read_gate(run_dir) is True,
                                                       force=args.force, reason=args.reason), show_forced=True)


def cmd_rollback(args: argparse.Namespace) -> int:
    return _switch_model(args, lambda reg: reg.rollback(reason=args.reason))


def cmd_ship(args: argparse.Namespace) -> int:
    """Copy a gate-passed run's adapter into the repository (models/shipped/<run>/) for setup to rebuild."""
    from truffle_assets.training.shipped import ShipError, ShipRefused, ship

    try:
        dest = ship(_run_dir(args), Path(args.to))
    except ShipError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2 if isinstance(exc, ShipRefused) else 1
    mb = sum(p.stat().st_size for p in dest.rglob("*") if p.is_file()) / 1e6
    print(f"shipped {dest.name} to {dest} ({mb:.1f} MB); commit it: git add {dest}")
    return 0


def cmd_install_shipped(args: argparse.Namespace) -> int:
    """Rebuild the shipped run's GGUF, check it is the evaluated one, make it active if none is."""
    from truffle_assets.llm.gguf import BaseModelError
    from truffle_assets.registry import RegistryError
    from truffle_assets.training.gguf_export import ExportError
    from truffle_assets.training.shipped import ShipError, ShipRefused, install, latest_shipped

    try:
        shipped = latest_shipped(args.source)
        if shipped is None:
            print(f"nothing shipped in {args.source}: nothing to install")
            return 0
        result = install(shipped, Path(args.runs), _registry(args), force=args.force, base_dir=args.base_dir)
    except (ShipRefused, RegistryError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except (ShipError, ExportError, BaseModelError, OSError) as exc:
        print(f"error: rebuilding the shipped model failed: {exc}", file=sys.stderr)
        return 1
    took = f" (rebuilt in {result.seconds:.0f} s)" if result.rebuilt else ""
    print(f"{result.message}{took}")
    return 0


def _switch_model(args: argparse.Namespace, change, show_forced: bool = False) -> int:
    """Promote or roll back; a refusal (gate failed, nothing to roll back to) exits 2 with the reason."""
    from truffle_assets.registry import RegistryError

    try:
        active = change(_registry(args))
    except RegistryError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    forced = " [forced]" if show_forced and active.forced else ""
    print(f"active model: {active.run_id} ({active.gguf_path}){forced}")
    return 0


def cmd_audit(args: argparse.Namespace) -> int:
    from truffle_assets.registry import verify

    verdict = verify(args.registry)  # creates nothing: a missing key is reported, not replaced
    for note in verdict.notes:
        print(f"note: {note}")
    if verdict.ok:
        print(f"audit log intact: {verdict.lines} lines; history, head, active.json and its GGUF agree")
        return 0
    at = f" at line {verdict.first_bad_line}" if verdict.first_bad_line else ""
    print(f"audit log FAILED{at} ({verdict.check} check): {verdict.reason}", file=sys.stderr)
    return 1


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


def cmd_prune_runs(args: argparse.Namespace) -> int:
    from truffle_assets.training.prune import prune_runs

    pruned = prune_runs(args.runs, _registry(args), keep=args.keep, dry_run=args.dry_run)
    verb = "would free" if args.dry_run else "freed"
    for p in pruned:
        print(f"{p.run_id}: {verb} {p.freed_bytes / 1e9:.2f} GB (merged model, GGUFs, quantizations)")
    print(f"{len(pruned)} runs, {verb} {sum(p.freed_bytes for p in pruned) / 1e9:.2f} GB")
    return 0


def cmd_models(args: argparse.Namespace) -> int:
    reg = _registry(args)
    active = reg.active()
    print(f"active: {active.run_id if active else 'none'}")
    for h in reg.history():
        print(json.dumps(asdict(h), default=str))
    return 0


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="truffle", description="Personal memory from WhatsApp exports.")
    sub = p.add_subparsers(dest="command", required=True)

    sp = sub.add_parser("parse", help="parse exports; --json prints one entry per line, summary on stderr")
    sp.add_argument("paths", nargs="+")
    sp.add_argument("--json", action="store_true")
    sp.add_argument("--show-quarantined", type=int, default=20, metavar="N")
    sp.set_defaults(func=cmd_parse)

    ss = sub.add_parser("synth", help="write a synthetic export set with ground_truth.json")
    ss.add_argument("--out", required=True)
    ss.add_argument("--chats", type=int, default=10)
    ss.add_argument("--tokens", type=int, default=5_000_000)
    ss.add_argument("--seed", type=int, default=7)
    ss.set_defaults(func=cmd_synth)

    for name, func, help_ in (("ingest", cmd_ingest, "materialize messages and the memory build for every chat and day"),
                              ("up", cmd_up, "sample data if empty, ingest everything, start the Dagster UI")):
        si = sub.add_parser(name, help=help_)
        si.add_argument("--exports", default=str(paths.exports_dir()))
        si.add_argument("--db", default=str(paths.store_path()))
        si.add_argument("--user", default=None, help="the exporting user's name (default: auto-detect)")
        si.set_defaults(func=func)
    ingest = sub.choices["ingest"]
    ingest.add_argument("--chat", action="append", help="only this chat id (repeatable)")
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
    recall = sub.add_parser("recall", help="retrieve evidence for a question from the published memory")
    recall.add_argument("query")
    recall.add_argument("-k", type=int, default=10)
    recall.add_argument("--chat", action="append", help="only this chat id (repeatable)")
    recall.add_argument("--published", default=str(paths.published_dir()))
    recall.add_argument("--json", action="store_true", help="the whole evidence pack as JSON")
    recall.set_defaults(func=cmd_recall)

    train = sub.add_parser("train", help="materialize the training chain: datasets → LoRA → GGUF → eval report")
    train.add_argument("--base", default="qwen2.5-coder-0.5b", help="qwen2.5-coder-0.5b (demo), tiny, or an HF folder/id")
    train.add_argument("--max-steps", type=int, default=100, help="LoRA steps (-1 = one full epoch; hours on a CPU)")
    train.add_argument("--learning-rate", type=float, default=1e-3, help="LoRA learning rate (a short CPU run)")
    train.add_argument("--dpo-steps", type=int, default=0,
                       help="DPO steps on the pack's preference pairs after SFT (0 = SFT only)")
    train.add_argument("--sft-from", metavar="RUN", default=None,
                       help="start from an earlier run's SFT checkpoints (same base, rows and SFT flags), e.g. to try DPO")
    train.add_argument("--dpo-from", metavar="RUN", default=None,
                       help="a second DPO stage on an earlier run's finished adapter (same base and SFT flags; "
                            "no SFT, so the pack's SFT rows may have changed since); that adapter is the reference")
    train.add_argument("--blend", nargs="+", default=[], metavar="RUN:WEIGHT",
                       help="no training: the weighted average of finished runs' adapters (weights sum to 1), "
                            "then the usual merge, GGUF, eval and gate")
    train.add_argument("--dpo-learning-rate", type=float, default=None,
                       help="DPO's learning rate (default: --learning-rate)")
    train.add_argument("--dpo-kinds", nargs="+", default=[], metavar="KIND",
                       help="DPO only on these pack kinds' pairs, e.g. privacy_refusal write_refusal (default: all)")
    train.add_argument("--dpo-sft-weight", type=float, default=0.0,
                       help="weight of an SFT (NLL) term on the chosen answers beside the DPO loss (RPO; 0 = off)")
    train.add_argument("--dpo-seed", type=int, default=None,
                       help="the DPO pairs' shuffling seed (default: the run's seed); give a later --dpo-from stage its own")
    train.add_argument("--temperatures", type=float, nargs="+", default=[0.0, 0.4])
    train.add_argument("--quants", nargs="+", default=["q8_0", "q4_k_m"], metavar="QUANT",
                       help="quantizations to try; the smallest that answers like f16 on held-out prompts is served")
    train.add_argument("--eval-limit", type=int, default=None, help="cases per suite (default: all)")
    train.add_argument("--qa-limit", type=int, default=None, help="QA suite questions (default: all)")
    train.set_defaults(func=cmd_train)
    ev = sub.add_parser("eval", help="re-evaluate a run's GGUF (default: the candidate) and re-check its gate, no training")
    ev.add_argument("run", nargs="?", help="run id under --runs (default: the current candidate)")
    ev.add_argument("--runs", default=str(paths.models_dir() / "runs"))
    ev.add_argument("--temperatures", type=float, nargs="+", default=[0.0, 0.4])
    ev.add_argument("--eval-limit", type=int, default=None, help="cases per suite (default: all)")
    ev.add_argument("--qa-limit", type=int, default=None, help="QA suite questions (default: all)")
    ev.add_argument("--no-qa", action="store_true", help="skip the QA suite (it asks through the runtime, at temperature 0)")
    registry = str(paths.registry_dir())
    ev.add_argument("--registry", default=registry)
    ev.set_defaults(func=cmd_eval)
    for name, func, help_ in (("promote", cmd_promote, "make a training run the active model (gate must pass)"),
                              ("rollback", cmd_rollback, "restore the previously active model"),
                              ("models", cmd_models, "the active model and the promotion history")):
        sr = sub.add_parser(name, help=help_)
        sr.add_argument("--registry", default=registry)
        sr.set_defaults(func=func)
    promote = sub.choices["promote"]
    promote.add_argument("run", nargs="?", help="run id under --runs (default: the current candidate)")
    promote.add_argument("--runs", default=str(paths.models_dir() / "runs"))
    promote.add_argument("--force", action="store_true", help="promote although the gate failed (needs --reason)")
    promote.add_argument("--reason", default="")
    sub.choices["rollback"].add_argument("--reason", default="")
    from truffle_assets.training.shipped import SHIPPED_DIR

    prn = sub.add_parser("prune-runs", help="delete the rebuildable model files (~5 GB each) of old runs nobody serves")
    prn.add_argument("--runs", default=str(paths.models_dir() / "runs"))
    prn.add_argument("--registry", default=registry)
    prn.add_argument("--keep", type=int, default=2, help="also keep the newest N runs whole")
    prn.add_argument("--dry-run", action="store_true")
    prn.set_defaults(func=cmd_prune_runs)
    shp = sub.add_parser("ship", help="copy a gate-passed run's adapter to models/shipped/ to commit with the repository")
    shp.add_argument("run", nargs="?", help="run id under --runs (default: the current candidate)")
    shp.add_argument("--runs", default=str(paths.models_dir() / "runs"))
    shp.add_argument("--to", default=str(SHIPPED_DIR))
    shp.set_defaults(func=cmd_ship)
    ins = sub.add_parser("install-shipped", help="rebuild the shipped model, check its sha256, make it active if none is")
    ins.add_argument("--from", dest="source", default=str(SHIPPED_DIR))
    ins.add_argument("--runs", default=str(paths.models_dir() / "runs"))
    ins.add_argument("--registry", default=registry)
    ins.add_argument("--base-dir", default=None, help="the base model folder (default: resolved from its name)")
    ins.add_argument("--force", action="store_true", help="replace the active model")
    ins.set_defaults(func=cmd_install_shipped)
    audit = sub.add_parser("audit", help="verify the promotion audit log, its anchors and the active model")
    audit.add_argument("action", choices=["verify"])
    audit.add_argument("--registry", default=registry)
    audit.set_defaults(func=cmd_audit)

    from truffle_assets.runtime.cli import add_runtime_commands
    from truffle_assets.runtime.serve import add_serve_command

    add_runtime_commands(sub)  # ask, chat
    # serve: OpenAI-compatible API + web page, embedded llama.cpp when no endpoint; /api/forget runs the pipeline's
    add_serve_command(sub, forgetter=_pipeline_forgetter)
    return p


def _pipeline_forgetter(data_dir: Path):
    """The pipeline's forget for `truffle serve`'s `/api/forget` (the runtime never imports the pipeline)."""
    from truffle_assets.defs.forget.forgetter import PipelineForgetter

    return PipelineForgetter(data_dir)


def _interrupt(signum, frame) -> None:
    raise KeyboardInterrupt(f"signal {signum}")


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    # Dagster's beta/preview notices speak to the pipeline's authors, not to the person at the prompt
    warnings.filterwarnings("ignore", message=r".* is currently in (beta|preview)")
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


if __name__ == "__main__":
    raise SystemExit(main())
