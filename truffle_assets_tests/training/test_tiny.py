"""The tiny model builds offline in seconds, reloads through the Auto classes and runs."""

import json
import os
import time

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")

from truffle_assets.chat_format.template import render, training_template  # noqa: E402
from truffle_assets.training.tiny import build_tiny_model, build_tokenizer  # noqa: E402

pytestmark = pytest.mark.training  # builds or trains a tiny model

TEXTS = [
    render([{"role": "user", "content": f"Où est Alice ? {i} 🚆"},
            {"role": "assistant", "content": f"À la gare [msg:abc{i:03d}]."}])
    for i in range(40)
]


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    return build_tiny_model(tmp_path_factory.mktemp("tiny") / "model", TEXTS, seed=0)


def test_loads_through_auto_classes_and_runs_forward(tiny):
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    path = tiny
    tok = AutoTokenizer.from_pretrained(path)
    model = AutoModelForCausalLM.from_pretrained(path)
    assert type(model).__name__ == "Qwen2ForCausalLM"
    assert model.config.vocab_size == len(tok) <= 768
    assert tok.chat_template == training_template()
    ids = tok.apply_chat_template([{"role": "user", "content": "Où est Alice ?"}], add_generation_prompt=True,
                                  return_dict=True, return_tensors="pt")["input_ids"]
    with torch.no_grad():
        logits = model(input_ids=ids).logits
    assert logits.shape == (1, ids.shape[1], len(tok))
    assert torch.isfinite(logits).all()


def test_eos_is_im_end_everywhere(tiny):
    from transformers import AutoTokenizer

    path = tiny
    tok = AutoTokenizer.from_pretrained(path)
    im_end = tok.convert_tokens_to_ids("<|im_end|>")
    generation = json.loads((path / "generation_config.json").read_text())
    config = json.loads((path / "config.json").read_text())
    assert generation["eos_token_id"] == config["eos_token_id"] == tok.eos_token_id == im_end
    assert tok.pad_token == "<|endoftext|>"
    ids = tok.encode("<|im_start|>user\nhi<|im_end|>", add_special_tokens=False)
    assert (ids[0], ids[-1]) == (tok.convert_tokens_to_ids("<|im_start|>"), im_end)


def test_reloaded_tokenizer_encodes_as_built(tmp_path):
    from transformers import AutoTokenizer

    # AutoTokenizer rebuilds any qwen2 tokenizer with Qwen2's pre-tokenizer: ours must already be it
    built = build_tokenizer(TEXTS)
    built.save_pretrained(tmp_path)
    reloaded = AutoTokenizer.from_pretrained(tmp_path)
    probe = "3333 Où   est  l'arrivée ?\n\n🚆 <|im_end|>naïve\tcafé"
    assert reloaded.encode(probe) == built.encode(probe)
    assert reloaded.decode(reloaded.encode(probe)) == probe


def test_same_seed_same_bytes_other_seed_other_weights(tiny, tmp_path):
    start = time.perf_counter()  # torch and transformers are imported by now: this times the build
    again = build_tiny_model(tmp_path / "again", TEXTS, seed=0)
    assert time.perf_counter() - start < 5
    path = tiny
    other = build_tiny_model(tmp_path / "other", TEXTS, seed=1)
    for name in ("model.safetensors", "tokenizer.json", "config.json"):
        assert (again / name).read_bytes() == (path / name).read_bytes(), name
    assert (other / "model.safetensors").read_bytes() != (path / "model.safetensors").read_bytes()
    assert (other / "tokenizer.json").read_bytes() == (path / "tokenizer.json").read_bytes()
