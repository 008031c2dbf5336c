"""model_card.md for a training run: what went in, how it was trained, how it scored, how to undo it.

Every figure comes from the run's own files (base.json, train_result.json, quants/export.json,
eval/report.json); a blend's parts from theirs. A figure a run did not record is left out or
reads "not recorded", never `None` or `nan`. The rollback section states what the registry says
(`Registry.rollback_target`, the model `truffle rollback` restores) and is rewritten whenever the
registry switches models, so the card and `truffle models` name the same target.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Iterable, Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from truffle_assets.card_rollback import CARD, rollback_lines
from truffle_assets.files import sha256_file
from truffle_assets.plurals import duration

# Energy is estimated, not metered: wall time × busy cores × an assumed per-core draw.
WATTS_PER_CORE = 15.0
# hyperparameters that say how a run trained (the rest are plumbing: resume, backend choice, …)
_PARAMS = ("rank", "alpha", "dropout", "learning_rate", "max_steps", "epochs", "seq_len", "batch_size",
           "grad_accum", "target_modules", "seed", "dpo_max_steps", "dpo_beta", "dpo_learning_rate", "dpo_kinds",
           "dpo_sft_weight", "dpo_seed", "sft_from", "dpo_from")


def _load(path: Path) -> dict:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def base_hash(base_path: str) -> str:
    weights = sorted(Path(base_path).glob("*.safetensors")) if base_path and Path(base_path).is_dir() else []
    return ",".join(sha256_file(w)[:16] for w in weights)


def _number(v: Any) -> float | None:
    """A finite number, else None (missing, null, nan, text)."""
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
        return None
    return v


def _count(v: Any) -> str:
    return f"{int(v):,}"


def _duration(seconds: float) -> str:
    s = round(seconds)
    return duration(s) + (f" ({s:,} s)" if s >= 60 else "")


def _value(v: Any) -> str:
    if isinstance(v, (list, tuple)):
        return ", ".join(map(str, v)) if v else "none"
    if isinstance(v, bool):
        return "yes" if v else "no"
    if isinstance(v, float):
        return f"{v:g}"
    return str(v)


def energy_wh(wall_s: float, cores: int | None = None) -> float:
    return wall_s * (cores or os.cpu_count() or 1) * WATTS_PER_CORE / 3600


def training_record(run_dir: str | Path) -> dict[str, Any]:
    """What a run's own files say about its training, with only the figures it recorded: the
    summary a blend keeps of each part (so it travels with the blend) and the card shows."""
    run = Path(run_dir)
    base, train = _load(run / "base.json"), _load(run / "train_result.json")
    out: dict[str, Any] = {}
    if train.get("backend"):
        out["backend"] = train["backend"]
    for key, losses in (("sft", train.get("losses")), ("dpo", train.get("dpo_losses"))):
        steps = train.get("steps") if key == "sft" else len(losses or [])
        if _number(steps):
            out[f"{key}_steps"] = int(steps)
            if losses and _number(losses[-1]) is not None:
                out[f"{key}_final_loss"] = round(float(losses[-1]), 4)
    for key in ("train_tokens", "dpo_tokens", "tokens_per_s", "wall_s", "trainable_params", "total_params"):
        if _number(train.get(key)):  # 0 is "not measured" here: no run trains on nothing
            out[key] = train[key]
    if "wall_s" in out:
        out["cores"] = os.cpu_count() or 1
        out["energy_wh"] = round(energy_wh(out["wall_s"], out["cores"]), 2)
    for key in ("base_model", "sft_content_hash", "stages"):
        if base.get(key):
            out[key] = base[key]
    if (weights := base_hash(base.get("base_path", ""))):
        out["base_weights_sha256"] = weights
    params = base.get("params") or {}
    kept = {k: params[k] for k in _PARAMS if params.get(k) not in (None, [], "")}
    if not params.get("dpo"):
        kept = {k: v for k, v in kept.items() if not k.startswith("dpo_")}
    if kept:
        out["params"] = kept
    return out


def _training_lines(rec: Mapping[str, Any], indent: str = "") -> list[str]:
    """Bullets for one run's training record; figures it lacks are left out or marked."""
    b = f"{indent}- "
    lines = []
    if rec.get("backend"):
        lines.append(f"{b}Backend: {rec['backend']}")
    for key, name in (("sft", "SFT"), ("dpo", "DPO")):
        steps = rec.get(f"{key}_steps")
        if steps:
            loss = rec.get(f"{key}_final_loss")
            lines.append(f"{b}{name}: {_count(steps)} steps" + (f", final loss {loss:.4f}" if loss is not None else ""))
    if rec.get("stages"):
        lines.append(f"{b}Stages: {' → '.join(rec['stages'])} (the first run's SFT and DPO, then a DPO stage on "
                     "the adapter of the run before each later one)")
    if not any(k in rec for k in ("sft_steps", "dpo_steps", "train_tokens", "dpo_tokens", "wall_s")):
        lines.append(f"{b}Steps, losses, tokens, time and energy: not recorded")
    else:
        lines += _figures(rec, b)
    data = []
    if rec.get("sft_content_hash"):
        data.append(f"SFT dataset `{rec['sft_content_hash']}`")
    if rec.get("base_weights_sha256"):
        data.append(f"base weights `{rec['base_weights_sha256']}`")
    if data:
        lines.append(f"{b}Data hashes: " + ", ".join(data))
    if rec.get("params"):
        lines.append(f"{b}Hyperparameters: " + "; ".join(f"{k.replace('_', ' ')} {_value(v)}"
                                                          for k, v in rec["params"].items()))
    return lines


def _figures(rec: Mapping[str, Any], b: str) -> list[str]:
    lines = []
    tokens = []
    if rec.get("train_tokens"):
        rate = f" at {rec['tokens_per_s']:,.1f} tokens/s" if rec.get("tokens_per_s") else ""
        tokens.append(f"SFT {_count(rec['train_tokens'])}{rate}")
    if rec.get("dpo_tokens"):
        tokens.append(f"DPO {_count(rec['dpo_tokens'])} (pairs seen × prompt + chosen and prompt + rejected)")
    lines.append(f"{b}Tokens: " + ("; ".join(tokens) if tokens else "not measured"))
    if rec.get("trainable_params") and rec.get("total_params"):
        share = 100 * rec["trainable_params"] / rec["total_params"]
        lines.append(f"{b}Trainable parameters: {_count(rec['trainable_params'])} of "
                     f"{_count(rec['total_params'])} ({share:.2f}%)")
    if rec.get("wall_s"):
        lines.append(f"{b}Time: {_duration(rec['wall_s'])}")
        lines.append(f"{b}Estimated energy: {rec['energy_wh']:.2f} Wh ({rec['cores']} cores × "
                     f"{WATTS_PER_CORE:.0f} W assumed, not metered)")
    else:
        lines.append(f"{b}Time and energy: not measured")
    return lines


def _part_record(part: Mapping[str, Any], run: Path, search: Iterable[Path]) -> tuple[dict[str, Any], str]:
    """(training record, where it came from) of one blend part: what the blend recorded, else the
    part's own run folder (beside this run, or a shipped copy), else nothing."""
    if isinstance(part.get("training"), dict):
        return part["training"], part.get("source", "recorded when the blend was made")
    for root in (run.parent, *search):
        folder = Path(root) / str(part.get("run"))
        if (folder / "base.json").is_file():
            card = f" (its own card: {_shown(folder / CARD)})" if (folder / CARD).is_file() else ""
            return training_record(folder), f"read from {_shown(folder)}{card}"
    return {}, ""


def _shown(path: Path) -> str:
    from truffle_assets.paths import PROJECT_ROOT

    try:
        return str(path.resolve().relative_to(PROJECT_ROOT))
    except ValueError:
        return str(path)


def _shipped_roots() -> list[Path]:
    from truffle_assets.paths import SHIPPED_DIR

    return [SHIPPED_DIR]


def _blend_lines(base: Mapping[str, Any], train: Mapping[str, Any], run: Path) -> list[str]:
    parts = base.get("blend") or []
    took = f" (made in {_duration(train['wall_s'])})" if _number(train.get("wall_s")) else ""
    lines = [f"A blend of {len(parts)} finished runs, no training of its own: the weighted average of their "
             f"LoRA deltas{took}.", ""]
    lines += ["| part | run | weight |", "|---|---|---|"]
    lines += [f"| {i} | {p.get('run')} | {float(p.get('weight', 0)):g} |" for i, p in enumerate(parts, start=1)]
    for i, p in enumerate(parts, start=1):
        rec, where = _part_record(p, run, _shipped_roots())
        lines += ["", f"### Part {i}: run {p.get('run')} × {float(p.get('weight', 0)):g}", ""]
        if not rec:
            lines.append("- Training: not recorded (the blend kept no record and the run's folder is not here)")
            continue
        lines += _training_lines(rec)
        lines.append(f"- Source: {where}")
    return lines


def _export_lines(export: Mapping[str, Any], ship: Mapping[str, Any]) -> list[str]:
    if not export.get("selected"):
        if ship.get("quant"):  # a shipped copy keeps the served file's name, size and hash
            size = f", {ship['gguf_bytes'] / 1e6:,.0f} MB" if _number(ship.get("gguf_bytes")) else ""
            return [f"- Served quantization: {ship['quant']} (`{ship.get('gguf_name')}`{size}, sha256 "
                    f"`{str(ship.get('gguf_sha256'))[:16]}…`)"]
        return ["- Not recorded"]
    agree = export.get("agreement_with_f16") or {}
    sizes = export.get("sizes_mb") or {}
    lines = [f"- Served quantization: {export['selected']}"]
    for q in sorted(set(agree) | set(sizes), key=lambda q: (q != "f16", q)):
        bits = [f"{sizes[q]:,.0f} MB" if _number(sizes.get(q)) is not None else "",
                f"agrees with f16 on {agree[q]:.0%} of held-out prompts" if _number(agree.get(q)) is not None else ""]
        lines.append(f"  - {q}: " + ", ".join(b for b in bits if b))
    return lines


def _eval_lines(report: Mapping[str, Any]) -> list[str]:
    scores = report.get("scores") or {}
    if not scores:
        return ["- Not evaluated"]
    objectives = ("toolcall", "markdown", "classification", "privacy", "qa")
    names = {"toolcall": "tool-call", "qa": "QA"}
    shown = [o for o in objectives if any(o in (s.get("objectives") or {}) for s in scores.values())]
    lines = ["| temperature | " + " | ".join(names.get(o, o) for o in shown) + " |",
             "|---" * (len(shown) + 1) + "|"]
    for t, s in scores.items():
        cells = [(s.get("objectives") or {}).get(o, {}).get("score") for o in shown]
        lines.append(f"| {t} | " + " | ".join("–" if _number(c) is None else f"{c:.3f}" for c in cells) + " |")
    gate = report.get("gate") or {}
    reference = (report.get("meta") or {}).get("reference") or "no reference"
    lines += ["", f"Gate: {'passed' if gate.get('passed') else 'failed'}, compared with the reference: {reference} "
              "(eval/report.md has the details)"]
    lines += [f"- {r}" for r in gate.get("reasons") or []]
    return lines


def write_model_card(run_dir: str | Path, registry: Any | None = None) -> Path:
    """Write `run_dir/model_card.md`; `registry` (a `registry.Registry`) decides the rollback section."""
    run = Path(run_dir)
    base, train = _load(run / "base.json"), _load(run / "train_result.json")
    export, report = _load(run / "quants" / "export.json"), _load(run / "eval" / "report.json")
    inputs = [f"- Base model: `{base.get('base_model', 'not recorded')}`"
              + (f" (weights sha256 prefix `{h}`)" if (h := base_hash(base.get("base_path", ""))) else "")]
    if base.get("sft_content_hash"):
        inputs.append(f"- SFT dataset content hash: `{base['sft_content_hash']}`")
    if base.get("blend"):
        training = _blend_lines(base, train, run)
    else:
        training = _training_lines(training_record(run) | {"base_weights_sha256": None, "sft_content_hash": None})
    lines = [
        f"# Model card — run {run.name}", "",
        f"Written {datetime.now(UTC).isoformat(timespec='seconds')}.", "",
        "## Inputs", *inputs, "",
        "## Training", *training, "",
        "## Export", *_export_lines(export, _load(run / "ship.json")), "",
        "## Evaluation", *_eval_lines(report), "",
        *rollback_lines(run.name, registry),
    ]
    path = run / CARD
    path.write_text("\n".join(lines), encoding="utf-8")
    return path
