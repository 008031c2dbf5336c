"""The template inside a real GGUF and llama.cpp's own tokenizer agree with the training side."""

import pytest
from transformers import AutoTokenizer

from truffle_assets.training.gguf_export import gguf_metadata
from truffle_assets.chat_format.template import render, serving_template
from truffle_assets_tests.chat_format.test_template import CONVO

llama_cpp = pytest.importorskip("llama_cpp")


def test_gguf_carries_the_serving_template_and_llama_cpp_tokenizes_like_hf(tiny_gguf_path):
    meta = gguf_metadata(tiny_gguf_path)
    assert meta["tokenizer.chat_template"] == serving_template()
    assert meta["tokenizer.ggml.pre"] == "qwen2"

    from llama_cpp.llama_chat_format import Jinja2ChatFormatter

    for gen in (False, True):
        from_gguf = Jinja2ChatFormatter(template=meta["tokenizer.chat_template"], eos_token="<|im_end|>",
                                        bos_token="", add_generation_prompt=gen)(messages=CONVO).prompt
        assert from_gguf == render(CONVO, add_generation_prompt=gen)

    text = render(CONVO)
    hf = AutoTokenizer.from_pretrained(str(tiny_gguf_path.parent / "tiny-hf"))
    llm = llama_cpp.Llama(model_path=str(tiny_gguf_path), vocab_only=True, verbose=False)
    ids = llm.tokenize(text.encode("utf-8"), add_bos=False, special=True)
    assert ids == hf(text, add_special_tokens=False)["input_ids"]
    assert llm.detokenize(ids, special=True).decode("utf-8") == text
