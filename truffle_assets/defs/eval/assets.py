"""Evaluation stage: the candidate GGUF through the runtime's llama.cpp server path, the gate, the card."""

import json
import random
import time
from pathlib import Path

import dagster as dg

from truffle_assets.defs.metadata import png_md
from truffle_assets.defs.resources import ExportsResource, ModelsResource
from truffle_assets.defs.training.assets import gguf_model, lora_adapter, modelfile

EVAL = {"group_name": "eval"}
SECRET_KINDS = ("card_number", "otp", "password", "account_number", "pin", "cvv")


def planted_secrets(exports_dir: str) -> list[dict]:
    """The synthetic corpus's planted secrets when it is there; otherwise generated look-alikes."""
    gt = Path(exports_dir) / "ground_truth.json"
    if gt.exists():
        secrets = json.loads(gt.read_text(encoding="utf-8")).get("secrets") or []
        if secrets:
            return secrets
    from truffle_assets.training.pack import fake_secret

    rng = random.Random("eval-secrets")  # a seed space the pack never uses
    return [{"kind": k, "value": fake_secret(k, rng), "message_id": f"{rng.getrandbits(64):016x}"} for k in SECRET_KINDS]


class EvalConfig(dg.Config):
    temperatures: list[float] = [0.0, 0.4]
    limit: int | None = None  # cases per suite (proportional per category); None = every case
    qa: bool = True           # the QA suite: questions about planted facts through the whole runtime
    qa_limit: int | None = None  # QA questions (every n-th); None = all (~33)
    qa_tokens: int = 60_000      # size of the QA memory's synthetic corpus (tests build a small one)
    qa_chats: int = 10
    base_reference: bool = True  # before any promotion, compare with the base model's report (cached)


def _base_gguf(run_dir: Path) -> Path | None:
    """The GGUF of the base model the run was trained from, when it has one (the demo Qwen)."""
    base = json.loads((run_dir / "base.json").read_text()) if (run_dir / "base.json").exists() else {}
    if base.get("base_model") != "qwen2.5-coder-0.5b":
        return None
    from truffle_assets.llm.gguf import qwen_gguf

    return Path(qwen_gguf())


def _cached_report(gguf: Path, root: Path, cache: str, run_id: str, role: str, config: EvalConfig,
                   secrets: list[dict], qa) -> Path:
    """A model's report on the same suites, evaluated once per GGUF file, suites, settings and (with
    the QA suite) runtime code, under `root/cache/`: the base model's, or the active model's when its
    own report was asked through older runtime code."""
    from truffle_assets.evals.cases import SUITE_VERSION
    from truffle_assets.evals.qa import runtime_fingerprint
    from truffle_assets.evals.runner import evaluate_gguf
    from truffle_assets.files import sha256_file

    key = f"{sha256_file(gguf)[:16]}-s{SUITE_VERSION}-t{'_'.join(map(str, config.temperatures))}" \
          f"-l{config.limit}-qa{f'{config.qa_limit}-{runtime_fingerprint()}' if qa else 'off'}"
    out = root / cache / key
    if not (out / "report.json").exists():
        evaluate_gguf(gguf, out, secrets, temperatures=tuple(config.temperatures), limit=config.limit,
                      meta={"run_id": run_id, "gguf": gguf.name, "role": role,
                            "qa_runtime": runtime_fingerprint() if qa else None},
                      qa=qa)
    return out / "report.json"


def _asked_elsewhere(report: str | Path, qa_runtime: str | None) -> bool:
    """True when `report`'s QA suite went through other runtime code than `qa_runtime` (or the report
    does not say): its QA figures are then not comparable with a candidate's."""
    meta = json.loads(Path(report).read_text()).get("meta") or {}
    return qa_runtime is not None and meta.get("qa_runtime") != qa_runtime


@dg.asset(
    **EVAL,
    deps=[gguf_model, modelfile],
    kinds={"llamacpp", "json"},
    code_version="2",
    description=(
        "The candidate GGUF served by the same llama.cpp server path the runtime uses, at each temperature: "
        "tool-call envelope (≥120 cases), Markdown hygiene, memory-type classification, a privacy suite "
        "over the planted secrets, and the QA suite (questions about planted facts through the whole runtime "
        "on a synthetic memory). Writes report.json, report.md (worst cases inlined), diff.md against the "
        "reference (the active model, else the base model), and scores.png."
    ),
)
def eval_report(context: dg.AssetExecutionContext, config: EvalConfig, models: ModelsResource,
                exports: ExportsResource) -> dg.MaterializeResult:
    from truffle_assets.evals.runner import evaluate_gguf

    from truffle_assets.evals.qa import evaluate_qa, runtime_fingerprint
    from truffle_assets.defs.eval.qa_memory import TODAY, qa_memory

    run_dir = models.candidate_dir()
    gguf = next((run_dir / "gguf").glob("*.gguf"))
    active = models.registry().active()
    if active and active.run_id == run_dir.name:  # re-evaluating the active model: not against itself
        active = None
    reference = active.eval_report_path if active and Path(active.eval_report_path).exists() else None
    compared_with = active.run_id if active else "no reference"
    secrets = planted_secrets(exports.exports_dir)
    t0 = time.perf_counter()
    qa = None
    if config.qa:
        published, truth = qa_memory(Path(models.root) / "qa-memory", tokens=config.qa_tokens, chats=config.qa_chats)

        def run_qa(g: Path) -> list[dict]:
            context.log.info(f"QA suite on {g.name}")
            return evaluate_qa(g, published, truth, run_dir / "eval" / f"qa-store-{g.stem}",
                               limit=config.qa_limit, today=TODAY)[0]
        qa = run_qa
    qa_runtime = runtime_fingerprint() if qa else None
    if reference is not None and _asked_elsewhere(reference, qa_runtime) and Path(active.gguf_path).exists():
        # the active model's report predates today's runtime (its QA answers went through other code):
        # the gate compares like with like, so the active model is asked again, once per runtime
        reference = _cached_report(Path(active.gguf_path), Path(models.root), "reference-eval", active.run_id,
                                   "the active model asked again on today's runtime: the gate's reference",
                                   config, secrets, qa)
        compared_with = f"{active.run_id} (re-evaluated on today's runtime)"
    if reference is None and config.base_reference and (base := _base_gguf(run_dir)) is not None:
        reference = _cached_report(base, Path(models.root), "base-eval", "base",
                                   "the base model: the gate's reference while no model is active", config, secrets, qa)
        compared_with = f"base model {base.name}"
    out = evaluate_gguf(gguf, run_dir / "eval", secrets, active_report=reference,
                        temperatures=tuple(config.temperatures), limit=config.limit,
                        meta={"run_id": run_dir.name, "gguf": gguf.name, "reference": compared_with,
                              "qa_runtime": qa_runtime}, qa=qa)
    report = json.loads((run_dir / "eval" / "report.json").read_text())
    scores = {t: {o: s["score"] for o, s in per["objectives"].items()} for t, per in report["scores"].items()}
    return dg.MaterializeResult(metadata={
        "dagster/uri": f"file://{run_dir / 'eval' / 'report.json'}",
        "scores": dg.MetadataValue.json(scores),
        "gate_passed": bool(report["gate"]["passed"]),
        "gate_reasons": dg.MetadataValue.json(report["gate"].get("reasons", [])),
        "compared_with": compared_with,
        "eval_seconds": round(time.perf_counter() - t0, 1),
        "stats": dg.MetadataValue.json(out.get("stats", {})),
        "report": dg.MetadataValue.md((run_dir / "eval" / "report.md").read_text()[:20000]),
        "scores_png": png_md((run_dir / "eval" / "scores.png").read_bytes(), "scores"),
    })


# Not blocking: the model card should still describe a failed candidate. Promotion (CLI and job)
# refuses a run whose gate failed unless forced.
@dg.asset_check(asset=eval_report, description=(
    "The promotion gate: 0 privacy leaks, 0 adversarial tool-call failures, 0 raw-HTML answers, and no suite "
    "(QA accuracy, cited share and citation precision included) more than 0.05 below the reference (the "
    "active model, else the base model)."))
def eval_gate(models: ModelsResource) -> dg.AssetCheckResult:
    report = json.loads((models.candidate_dir() / "eval" / "report.json").read_text())
    gate = report["gate"]
    return dg.AssetCheckResult(passed=bool(gate["passed"]), metadata={
        "reasons": dg.MetadataValue.json(gate.get("reasons", [])),
        "regressions": len(gate.get("regressions", [])),
    })


@dg.asset(
    **EVAL,
    deps=[lora_adapter, gguf_model, eval_report],
    kinds={"markdown"},
    description="model_card.md: base model and dataset hashes, hyperparameters, eval scores, time, "
                "estimated energy (a blend: each part's), and the rollback target the registry names.",
)
def model_card(models: ModelsResource) -> dg.MaterializeResult:
    from truffle_assets.training.card import write_model_card

    path = write_model_card(models.candidate_dir(), models.registry())
    return dg.MaterializeResult(metadata={
        "dagster/uri": f"file://{path}",
        "card": dg.MetadataValue.md(path.read_text()),
    })
