"""model_card.md for a training run: what went in, how it was trained, how it scored, how to undo it."""

from __future__ import annotations

import json
import os
from datetime import UTC, datetime
from pathlib import Path

from truffle_assets.files import sha256_file

# Energy is estimated, not metered: wall time × busy cores × an assumed per-core draw.
WATTS_PER_CORE = 15.0


def _load(path: Path) -> dict:
    return json.loads(path.read_text()) if path.exists() else {}


def base_hash(base_path: str) -> str:
    weights = sorted(Path(base_path).glob("*.safetensors")) if Path(base_path).is_dir() else []
    return ",".join(sha256_file(w)[:16] for w in weights) or f"hub:{base_path}"


def write_model_card(run_dir: str | Path, rollback_target: str | None) -> Path:
    run = Path(run_dir)
    base, train = _load(run / "base.json"), _load(run / "train_result.json")
    export, report = _load(run / "quants" / "export.json"), _load(run / "eval" / "report.json")
    cores = os.cpu_count() or 1
    wall = float(train.get("wall_s", 0.0))
    energy_wh = wall * cores * WATTS_PER_CORE / 3600
    scores = report.get("scores", {})
    rows = [f"| {t} | " + " | ".join(f"{(s.get('objectives', {}).get(o) or {}).get('score', float('nan')):.3f}" for o in
                                       ("toolcall", "markdown", "classification", "privacy")) + " |"
            for t, s in scores.items()]
    params = base.get("params", {})
    blend = ", ".join(f"{b['run']} × {b['weight']:g}" for b in base.get("blend") or [])
    lines = [
        f"# Model card — run {run.name}", "",
        f"Written {datetime.now(UTC):%Y-%m-%d %H:%M UTC}.", "",
        "## Inputs",
        f"- Base model: `{base.get('base_model')}` (weights sha256 prefix `{base_hash(base.get('base_path', ''))}`)",
        f"- SFT dataset content hash: `{base.get('sft_content_hash')}`",
        "",
        "## Training",
        f"- Backend: {train.get('backend')}; SFT steps {train.get('steps')}, final loss "
        f"{(train.get('losses') or [float('nan')])[-1]}; DPO steps {len(train.get('dpo_losses') or [])}, final loss "
        f"{(train.get('dpo_losses') or [float('nan')])[-1]}",
        *([f"- Stages: {' → '.join(base['stages'])} (the first run's SFT and DPO, then a DPO stage on the "
           "adapter of the run before each later one; this run's SFT steps are 0)"] if base.get("stages") else []),
        *([f"- Blend of finished runs, no training: {blend} (the weighted average of their LoRA deltas)"]
          if blend else []),
        f"- Trainable params: {train.get('trainable_params')} of {train.get('total_params')}",
        f"- Tokens: SFT {train.get('train_tokens')} at {train.get('tokens_per_s')} tokens/s, DPO "
        f"{train.get('dpo_tokens', 0)} (pairs seen × prompt + chosen and prompt + rejected); wall time {wall:.0f} s",
        f"- Estimated energy: {energy_wh:.2f} Wh ({cores} cores × {WATTS_PER_CORE:.0f} W assumed, not metered)",
        "- Hyperparameters: " + ", ".join(f"{k}={v}" for k, v in params.items() if k != "base_model"),
        "",
        "## Export",
        f"- Selected quantization: {export.get('selected')} (agreement with f16: {export.get('agreement_with_f16')})",
        f"- Sizes (MB): {export.get('sizes_mb')}",
        "",
        "## Evaluation",
        "| temperature | tool-call | markdown | classification | privacy |",
        "|---|---|---|---|---|",
        *rows,
        "",
        f"Gate: {'passed' if (report.get('gate') or {}).get('passed') else 'failed'}"
        + "".join(f"\n- {r}" for r in (report.get("gate") or {}).get("reasons", [])),
        "",
        "## Rollback",
        f"- Rollback target: {rollback_target or 'none (no model was active when this card was written)'}",
        "- `truffle rollback` restores the previous active model; `truffle audit verify` checks the log.",
        "",
    ]
    path = run / "model_card.md"
    path.write_text("\n".join(lines), encoding="utf-8")
    return path
