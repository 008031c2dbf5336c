"""train, eval, promote, rollback, models, prune-runs, ship, install-shipped, audit: the fine-tuning loop."""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import time
from dataclasses import asdict
from pathlib import Path

from truffle_assets import paths
from truffle_assets.cli.dagster_local import materialize_locally
from truffle_assets.files import json_default, to_the_second


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


def cmd_train(args: argparse.Namespace) -> int:
    """Materialize the training chain (datasets → … → eval report → card) on the local instance."""
    from truffle_assets.definitions import TRAINING_CHAIN

    result = materialize_locally(TRAINING_CHAIN, train_run_config(args), verbose=args.verbose, command="train")
    for ev in result.get_asset_check_evaluations():
        print(f"check {ev.asset_check_key.name}: {'passed' if ev.passed else 'FAILED'}")
    print(f"run {result.run_id}: {'success' if result.success else 'failed'}; its events: {_log_file()}")
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
    result = materialize_locally(EVAL_CHAIN, {"ops": {"eval_report": {"config": config}}}, {"models": models},
                                 verbose=args.verbose, command="eval")
    gate = read_gate(run_dir)
    print(f"run {result.run_id}: {'success' if result.success else 'failed'}; {run_dir.name} gate: "
          f"{'passed' if gate else 'FAILED' if gate is False else 'not evaluated'} ({run_dir / 'eval' / 'report.md'}); "
          f"its events: {_log_file()}")
    return 0 if result.success else 1


def _log_file() -> Path:
    from truffle_assets.cli.progress import log_file_for

    return log_file_for(paths.data_root())


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
        reg = _registry(args)
        active = change(reg)
    except RegistryError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    forced = " [forced]" if show_forced and active.forced else ""
    print(f"active model: {active.run_id} ({active.gguf_path}){forced}")
    target = reg.rollback_target()  # what the run's model card now names too
    print(f"rollback target: {target.run_id if target else 'none'}")
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


def cmd_prune_runs(args: argparse.Namespace) -> int:
    from truffle_assets.training.prune import prune_runs

    pruned = prune_runs(args.runs, _registry(args), keep=args.keep, dry_run=args.dry_run)
    verb = "would free" if args.dry_run else "freed"
    for p in pruned:
        print(f"{p.run_id}: {verb} {p.freed_bytes / 1e9:.2f} GB (merged model, GGUFs, quantizations)")
    print(f"{len(pruned)} runs, {verb} {sum(p.freed_bytes for p in pruned) / 1e9:.2f} GB")
    return 0


def _gate(passed: bool | None) -> str:
    return "passed" if passed is True else "failed" if passed is False else "–"  # a rollback checks no gate


def _served(registry: Path) -> dict:
    """What `ask` and `serve` answer with in this data root when no endpoint or --gguf is given
    (`llm.gguf.served`: id, description, source, run_id …, gguf), or {error}."""
    from truffle_assets.llm.gguf import BaseModelError, served
    from truffle_assets.registry import RegistryError

    try:
        gguf, info = served(None, registry, assemble=False)
    except (BaseModelError, RegistryError, OSError, ValueError) as exc:
        return {"error": str(exc)}
    return info | {"gguf": gguf}


def cmd_models(args: argparse.Namespace) -> int:
    """The active model, the rollback target and the history: a table, or one JSON document (--json)."""
    from truffle_assets.registry import reading

    root = Path(args.registry)
    if root.is_dir():
        with reading(root):
            reg = _registry(args)
            active, target, history = reg.active(), reg.rollback_target(), reg.history()
    else:  # nothing promoted yet: say so without making a registry
        active, target, history = None, None, []
    served = _served(root)
    if args.json:
        print(json.dumps({"registry": str(root), "served": served, "active": asdict(active) if active else None,
                          "rollback_target": asdict(target) if target else None,
                          "history": [asdict(h) for h in history]}, indent=2, ensure_ascii=False, default=json_default))
        return 0
    if active is None:
        print(f"active: none (nothing promoted in {root})")
    else:
        print(f"active: {active.run_id} (since {to_the_second(active.promoted_at)}{', forced' if active.forced else ''})")
        print(f"  gguf: {active.gguf_path}")
    print(f"served: {served['description']}, {served['gguf']}" if "error" not in served else
          f"served: unknown ({served['error']})")
    print(f"rollback target: {target.run_id} (what `truffle rollback` restores)" if target else
          "rollback target: none (no earlier model in this registry's history)")
    if not history:
        return 0
    rows = [("when", "action", "run id", "gate", "forced", "reason")]
    rows += [(to_the_second(h.at), h.action, h.run_id, _gate(h.gate_passed), "yes" if h.forced else "no", h.why or "–")
             for h in history]
    widths = [max(len(r[i]) for r in rows) for i in range(5)]
    print()
    for r in rows:
        print("  ".join(c.ljust(w) for c, w in zip(r, widths)) + "  " + r[5])
    return 0


def add_commands(sub) -> None:
    train = sub.add_parser("train", help="materialize the training chain: datasets → LoRA → GGUF → eval report")
    train.add_argument("--verbose", action="store_true",
                       help="show Dagster's event lines and library output on the console (always in <data>/logs/truffle.log)")
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
    train.add_argument("--temperatures", type=float, nargs="+", default=[0.0, 0.4], metavar="T",
                       help="sampling temperatures the eval suites run at")
    train.add_argument("--quants", nargs="+", default=["q8_0", "q4_k_m"], metavar="QUANT",
                       help="quantizations to try; the smallest that answers like f16 on held-out prompts is served")
    train.add_argument("--eval-limit", type=int, default=None, help="cases per suite (default: all)")
    train.add_argument("--qa-limit", type=int, default=None, help="QA suite questions (default: all)")
    train.set_defaults(func=cmd_train)
    ev = sub.add_parser("eval", help="re-evaluate a run's GGUF (default: the candidate) and re-check its gate, no training")
    ev.add_argument("run", nargs="?", help="run id under --runs (default: the current candidate)")
    ev.add_argument("--verbose", action="store_true",
                    help="show Dagster's event lines and library output on the console (always in <data>/logs/truffle.log)")
    ev.add_argument("--runs", default=str(paths.models_dir() / "runs"), help="the folder of training runs")
    ev.add_argument("--temperatures", type=float, nargs="+", default=[0.0, 0.4], metavar="T",
                    help="sampling temperatures the eval suites run at")
    ev.add_argument("--eval-limit", type=int, default=None, help="cases per suite (default: all)")
    ev.add_argument("--qa-limit", type=int, default=None, help="QA suite questions (default: all)")
    ev.add_argument("--no-qa", action="store_true", help="skip the QA suite (it asks through the runtime, at temperature 0)")
    registry = str(paths.registry_dir())
    ev.add_argument("--registry", default=registry, help="the model registry: the active model, its history and the audit log")
    ev.set_defaults(func=cmd_eval)
    for name, func, help_ in (("promote", cmd_promote, "make a training run the active model (gate must pass)"),
                              ("rollback", cmd_rollback, "restore the previously active model"),
                              ("models", cmd_models, "the active model and the promotion history")):
        sr = sub.add_parser(name, help=help_)
        sr.add_argument("--registry", default=registry, help="the model registry: the active model, its history and the audit log")
        sr.set_defaults(func=func)
    sub.choices["models"].add_argument("--json", action="store_true",
                                       help="one JSON document: active model, rollback target, history")
    promote = sub.choices["promote"]
    promote.add_argument("run", nargs="?", help="run id under --runs (default: the current candidate)")
    promote.add_argument("--runs", default=str(paths.models_dir() / "runs"), help="the folder of training runs")
    promote.add_argument("--force", action="store_true", help="promote although the gate failed (needs --reason)")
    promote.add_argument("--reason", default="", help="why, kept in the audit log (needed with --force)")
    sub.choices["rollback"].add_argument("--reason", default="", help="why, kept in the audit log")
    from truffle_assets.training.shipped import SHIPPED_DIR

    prn = sub.add_parser("prune-runs", help="delete the rebuildable model files (~5 GB each) of old runs nobody serves")
    prn.add_argument("--runs", default=str(paths.models_dir() / "runs"), help="the folder of training runs")
    prn.add_argument("--registry", default=registry, help="the model registry: the active model, its history and the audit log")
    prn.add_argument("--keep", type=int, default=2, help="also keep the newest N runs whole")
    prn.add_argument("--dry-run", action="store_true", help="list what would be deleted; delete nothing")
    prn.set_defaults(func=cmd_prune_runs)
    shp = sub.add_parser("ship", help="copy a gate-passed run's adapter to models/shipped/ to commit with the repository")
    shp.add_argument("run", nargs="?", help="run id under --runs (default: the current candidate)")
    shp.add_argument("--runs", default=str(paths.models_dir() / "runs"), help="the folder of training runs")
    shp.add_argument("--to", default=str(SHIPPED_DIR), help="the repository folder shipped runs are committed in")
    shp.set_defaults(func=cmd_ship)
    ins = sub.add_parser("install-shipped", help="rebuild the shipped model, check its sha256, make it active if none is")
    ins.add_argument("--from", dest="source", default=str(SHIPPED_DIR), help="the folder of shipped runs; the newest is installed")
    ins.add_argument("--runs", default=str(paths.shared_models_dir() / "runs"),
                     help="where the rebuilt run goes (default: the shared models folder every data root serves from)")
    ins.add_argument("--registry", default=registry, help="the model registry: the active model, its history and the audit log")
    ins.add_argument("--base-dir", default=None, help="the base model folder (default: resolved from its name)")
    ins.add_argument("--force", action="store_true", help="replace the active model")
    ins.set_defaults(func=cmd_install_shipped)
    audit = sub.add_parser("audit", help="verify the promotion audit log, its anchors and the active model")
    audit.add_argument("action", choices=["verify"], help="verify: check the log's chain, its anchors and the active model")
    audit.add_argument("--registry", default=registry, help="the model registry: the active model, its history and the audit log")
    audit.set_defaults(func=cmd_audit)

