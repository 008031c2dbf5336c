"""Blending finished LoRA adapters: the blend's delta is exactly the weighted sum of theirs."""

import json

import pytest
import torch
from safetensors.torch import load_file, save_file

from truffle_assets.training.blend import BlendError, blend_adapters, parse_parts

KEY = "base_model.model.model.layers.0.self_attn.q_proj.lora_"


def _adapter(path, rank, alpha, seed, **cfg):
    g = torch.Generator().manual_seed(seed)
    path.mkdir(parents=True)
    save_file({KEY + "A.weight": torch.randn(rank, 12, generator=g), KEY + "B.weight": torch.randn(10, rank, generator=g)},
              str(path / "adapter_model.safetensors"))
    (path / "adapter_config.json").write_text(json.dumps({
        "peft_type": "LORA", "r": rank, "lora_alpha": alpha, "base_model_name_or_path": "/base",
        "target_modules": ["q_proj"], "use_rslora": False, "use_dora": False, "rank_pattern": {}, "alpha_pattern": {},
    } | cfg))
    (path / "tokenizer.json").write_text("{}")
    return path


def _delta(path):
    cfg = json.loads((path / "adapter_config.json").read_text())
    t = load_file(str(path / "adapter_model.safetensors"))
    return t[KEY + "B.weight"] @ t[KEY + "A.weight"] * cfg["lora_alpha"] / cfg["r"]


def test_the_blend_is_the_weighted_sum_of_the_deltas(tmp_path):
    a, b = _adapter(tmp_path / "a", 4, 8, 0), _adapter(tmp_path / "b", 2, 16, 1)  # different ranks and scales
    out = blend_adapters([(a, 0.7), (b, 0.3)], tmp_path / "out")
    cfg = json.loads((out / "adapter_config.json").read_text())
    assert cfg["r"] == 6 and cfg["lora_alpha"] == 6
    assert torch.allclose(_delta(out), 0.7 * _delta(a) + 0.3 * _delta(b), atol=1e-5)
    assert (out / "tokenizer.json").exists()  # the merge step reads the tokenizer from the adapter folder


def test_adapters_that_cannot_be_averaged_exactly_are_refused(tmp_path):
    a = _adapter(tmp_path / "a", 4, 8, 0)
    with pytest.raises(BlendError, match="base"):
        blend_adapters([(a, 0.5), (_adapter(tmp_path / "b", 4, 8, 1, base_model_name_or_path="/other"), 0.5)],
                       tmp_path / "out")
    with pytest.raises(BlendError, match="plain LoRA"):
        blend_adapters([(a, 0.5), (_adapter(tmp_path / "c", 4, 8, 1, use_dora=True), 0.5)], tmp_path / "out")
    d = _adapter(tmp_path / "d", 4, 8, 1)
    t = load_file(str(d / "adapter_model.safetensors"))
    save_file({k.replace("q_proj", "v_proj"): v for k, v in t.items()}, str(d / "adapter_model.safetensors"))
    with pytest.raises(BlendError, match="other modules"):
        blend_adapters([(a, 0.5), (d, 0.5)], tmp_path / "out")


@pytest.mark.parametrize("parts, message", [
    (["r1:0.5"], "at least two"),
    (["r1:0.5", "r2:0.4"], "sum to 0.9"),
    (["r1:0.5", "r1:0.5"], "twice"),
    (["r1", "r2:1"], "RUN:WEIGHT"),
    (["r1:-0.5", "r2:1.5"], "above 0"),
])
def test_blend_parts_are_checked(parts, message):
    with pytest.raises(BlendError, match=message):
        parse_parts(parts)
    assert parse_parts(["a:0.25", "b:0.75"]) == [("a", 0.25), ("b", 0.75)]
