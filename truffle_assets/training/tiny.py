"""A tiny random-init Qwen2 model and BPE tokenizer, built locally in seconds, for tests.

It has the real model's shape where the harness cares (Qwen2ForCausalLM, ChatML special tokens,
the canonical chat template, eos = <|im_end|>), so training, merging and GGUF export run on it
end to end without a hub download.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

from truffle_assets.chat_format.template import training_template

IM_START, IM_END, ENDOFTEXT = "<|im_start|>", "<|im_end|>", "<|endoftext|>"
# A new vocabulary has a pre-tokenizer hash convert_hf_to_gguf does not know, so the exporter must
# name the pre-tokenizer itself: this one is Qwen2's (transformers' AutoTokenizer imposes it on
# any qwen2 model anyway), which llama.cpp implements as "qwen2".
LLAMA_CPP_PRE = "qwen2"


def build_tokenizer(texts: Sequence[str], vocab_size: int = 768):
    """Byte-level BPE trained on `texts` with Qwen2's normalizer and pre-tokenizer.

    Every byte is in the alphabet, so any text encodes; the result is a `Qwen2Tokenizer` (a
    `PreTrainedTokenizerFast`) saved exactly as Qwen2.5's is, so it reloads unchanged.
    """
    from tokenizers import Regex, Tokenizer, models, normalizers, pre_tokenizers, trainers
    from transformers.models.qwen2.tokenization_qwen2 import PRETOKENIZE_REGEX, Qwen2Tokenizer

    bpe = Tokenizer(models.BPE())
    bpe.normalizer = normalizers.NFC()
    bpe.pre_tokenizer = pre_tokenizers.Sequence([
        pre_tokenizers.Split(Regex(PRETOKENIZE_REGEX), behavior="isolated"),
        pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False),
    ])
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        special_tokens=[ENDOFTEXT, IM_START, IM_END],
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    bpe.train_from_iterator(list(texts), trainer)
    model = json.loads(bpe.to_str())["model"]
    tokenizer = Qwen2Tokenizer(
        vocab=model["vocab"],
        merges=[tuple(m) for m in model["merges"]],
        unk_token=None,
        eos_token=IM_END,
        pad_token=ENDOFTEXT,
        extra_special_tokens=[IM_START],
        model_max_length=32768,
    )
    tokenizer.chat_template = training_template()
    return tokenizer


def build_tiny_model(out_dir: str | Path, texts: Sequence[str], seed: int = 0, vocab_size: int = 768) -> Path:
    """Save a tiny Qwen2ForCausalLM + tokenizer + generation config to `out_dir`; same seed, same bytes."""
    import torch
    from transformers import GenerationConfig, Qwen2Config, Qwen2ForCausalLM

    out = Path(out_dir)
    tokenizer = build_tokenizer(texts, vocab_size)
    eos, pad = tokenizer.convert_tokens_to_ids([IM_END, ENDOFTEXT])
    config = Qwen2Config(
        vocab_size=len(tokenizer),
        hidden_size=64,
        intermediate_size=128,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=32768,
        # tied like Qwen2.5-0.5B/1.5B; convert_hf_to_gguf then writes no output tensor and
        # llama.cpp reuses token_embd
        tie_word_embeddings=True,
        # LoRA never touches the (tied) embeddings: with the default 0.02 init the logits stay within
        # about ±1, so no adapter could make the model confident enough to emit an exact envelope
        initializer_range=0.2,
        bos_token_id=pad,
        eos_token_id=eos,
        pad_token_id=pad,
    )
    torch.manual_seed(seed)
    model = Qwen2ForCausalLM(config)
    model.generation_config = GenerationConfig(bos_token_id=pad, eos_token_id=eos, pad_token_id=pad)
    model.save_pretrained(out)
    tokenizer.save_pretrained(out)
    return out
