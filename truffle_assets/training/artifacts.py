"""merged safetensors → GGUF files → the quantization that keeps the fine-tune, with a smoke test.

A LoRA delta learnt on Q4-derived weights can vanish when re-quantized to q4_k_m (the tuned GGUF
then answers exactly like the base). So every quantization is compared with the f16 master on
held-out prompts, greedy, and the smallest one that agrees on at least `min_agreement` of them is
selected; the choice and the agreement figures go into the metadata.
"""

from __future__ import annotations

import gc
from dataclasses import asdict, dataclass, field
from pathlib import Path

from truffle_assets.chat_format.toolcalls import parse_tool_calls
from truffle_assets.files import json_text
from truffle_assets.training import gguf_export

QUANT_ORDER = ("q4_k_m", "q8_0", "f16")  # smallest first


@dataclass
class GGUFExport:
    selected: str
    selected_path: str
    files: dict[str, str]
    sizes_mb: dict[str, float]
    agreement_with_f16: dict[str, float]
    smoke_output: str
    smoke_parses: bool
    probes: int
    outputs: dict[str, list[str]] = field(default_factory=dict)

    def to_json(self) -> dict:
        return asdict(self)


def greedy_outputs(gguf_path: Path, prompts: list[list[dict]], max_tokens: int) -> list[str]:
    llm = gguf_export.load_llama(gguf_path)
    try:
        return [gguf_export.greedy_chat(llm, p, max_tokens=max_tokens) for p in prompts]
    finally:
        llm.close()
        del llm
        gc.collect()


def export_gguf(merged_dir: Path, out_dir: Path, probes: list[list[dict]], smoke: list[dict],
                quants: tuple[str, ...] = ("q8_0", "q4_k_m"), min_agreement: float = 0.9,
                pre_tokenizer: str | None = None, max_tokens: int = 64, stem: str = "model") -> GGUFExport:
    """Convert to f16, quantize, measure agreement with f16 on `probes`, pick, smoke-test `smoke`."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    files = {"f16": gguf_export.convert(merged_dir, out / f"{stem}-f16.gguf", "f16", pre_tokenizer=pre_tokenizer)}
    for q in quants:
        files[q] = gguf_export.quantize(files["f16"], out / f"{stem}-{q}.gguf", q)
    outputs = {name: greedy_outputs(path, probes, max_tokens) for name, path in files.items()}
    agreement = {q: round(gguf_export.agreement(outputs[q], outputs["f16"]), 3) for q in files}
    selected = next(q for q in QUANT_ORDER if q in files and agreement[q] >= min_agreement)
    smoke_out = greedy_outputs(files[selected], [smoke], max_tokens)[0]
    result = GGUFExport(
        selected=selected, selected_path=str(files[selected]), files={k: str(v) for k, v in files.items()},
        sizes_mb={k: round(Path(v).stat().st_size / 1e6, 2) for k, v in files.items()},
        agreement_with_f16=agreement, smoke_output=smoke_out, smoke_parses=parse_tool_calls(smoke_out).ok,
        probes=len(probes), outputs=outputs,
    )
    (out / "export.json").write_text(json_text(result.to_json()), encoding="utf-8")
    return result
