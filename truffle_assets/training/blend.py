"""A weighted average of finished LoRA adapters on one base (a linear "model soup"), with no training.

Runs that trained toward different suites (one safe and precise, one that answers more questions)
often keep most of both strengths when their weight deltas are averaged. Averaging the A and B
matrices separately is not averaging the deltas (B·A is bilinear), so the adapters are concatenated
along their rank instead: with A = [A₁; A₂] and B = [w₁s₁B₁, w₂s₂B₂], B·A = Σ wᵢ sᵢ Bᵢ Aᵢ exactly,
at rank r₁ + r₂ and scale 1 (lora_alpha = r). This is PEFT's "cat" combination, done on the files so
it needs no model in memory.
"""

from __future__ import annotations

import json
import math
import re
import shutil
from pathlib import Path

ADAPTER = "adapter_model.safetensors"
CONFIG = "adapter_config.json"
# files the merge step reads besides the weights (the tokenizer and the chat template)
_COPY = ("tokenizer.json", "tokenizer_config.json", "chat_template.jinja", "special_tokens_map.json",
         "vocab.json", "merges.txt", "added_tokens.json")
_PAIR = re.compile(r"^(.*)\.lora_([AB])\.weight$")


class BlendError(ValueError):
    """Adapters that cannot be averaged exactly; the message names the adapter and the difference."""


def parse_parts(parts: list[str]) -> list[tuple[str, float]]:
    """["RUN:0.6", "RUN2:0.4"] -> [(run, weight)]; weights must be positive and sum to 1."""
    out = []
    for part in parts:
        run, sep, w = part.rpartition(":")
        try:
            weight = float(w) if sep else math.nan
        except ValueError:
            weight = math.nan
        if not run or not weight > 0:
            raise BlendError(f"blend part {part!r}: expected RUN:WEIGHT with a weight above 0")
        out.append((run, weight))
    if len(out) < 2:
        raise BlendError("a blend needs at least two runs")
    if len({r for r, _ in out}) != len(out):
        raise BlendError("a run appears twice in the blend")
    if abs(sum(w for _, w in out) - 1.0) > 1e-6:
        raise BlendError(f"blend weights sum to {sum(w for _, w in out):g}, not 1")
    return out


def _scale(cfg: dict) -> float:
    r, alpha = cfg["r"], cfg["lora_alpha"]
    return alpha / math.sqrt(r) if cfg.get("use_rslora") else alpha / r


def _check(name: str, cfg: dict, first: dict) -> None:
    if cfg.get("peft_type") != "LORA" or cfg.get("use_dora"):
        raise BlendError(f"{name}: only plain LoRA adapters can be blended (peft_type {cfg.get('peft_type')}, "
                         f"use_dora {cfg.get('use_dora')})")
    if cfg.get("rank_pattern") or cfg.get("alpha_pattern") or cfg.get("modules_to_save"):
        raise BlendError(f"{name}: per-module ranks, alphas or saved modules are not supported")
    if cfg.get("base_model_name_or_path") != first.get("base_model_name_or_path"):
        raise BlendError(f"{name}: base {cfg.get('base_model_name_or_path')!r}, "
                         f"the first adapter's is {first.get('base_model_name_or_path')!r}")


def blend_adapters(sources: list[tuple[Path, float]], out_dir: Path) -> Path:
    """Write to `out_dir` the adapter whose delta is Σ weight · delta of each source adapter folder."""
    import torch
    from safetensors.torch import load_file, save_file

    cfgs = [json.loads((Path(d) / CONFIG).read_text()) for d, _ in sources]
    for (d, _), cfg in zip(sources, cfgs):
        _check(str(d), cfg, cfgs[0])
    tensors = [load_file(str(Path(d) / ADAPTER)) for d, _ in sources]
    keys = set(tensors[0])
    for (d, _), t in zip(sources[1:], tensors[1:]):
        if set(t) != keys:
            raise BlendError(f"{d}: adapts other modules than {sources[0][0]} "
                             f"({len(set(t) ^ keys)} tensors differ)")
    out: dict[str, torch.Tensor] = {}
    for key in sorted(keys):
        m = _PAIR.match(key)
        if not m:
            raise BlendError(f"{sources[0][0]}: unexpected tensor {key} (not a lora_A / lora_B weight)")
        if m.group(2) == "A":
            out[key] = torch.cat([t[key].float() for t in tensors], dim=0).contiguous()
        else:
            out[key] = torch.cat([t[key].float() * w * _scale(cfg)
                                  for t, (_, w), cfg in zip(tensors, sources, cfgs)], dim=1).contiguous()
    rank = sum(cfg["r"] for cfg in cfgs)
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    save_file(out, str(out_dir / ADAPTER), metadata={"format": "pt"})
    cfg = cfgs[0] | {"r": rank, "lora_alpha": rank, "use_rslora": False,
                     "target_modules": sorted({t for c in cfgs for t in c.get("target_modules") or []})}
    (out_dir / CONFIG).write_text(json.dumps(cfg, indent=2))
    first = Path(sources[0][0])
    for name in _COPY:
        if (first / name).exists():
            shutil.copy2(first / name, out_dir / name)
    return out_dir
