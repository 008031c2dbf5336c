"""A tiny GGUF built offline in seconds, for tests that need a real llama.cpp model.

`tiny_gguf(tmp_dir)` builds the tiny random-init Qwen2 model (`training/tiny.py`), replaces its
chat template with the serving template (what `trainer.merge()` does, so the converter copies the
canonical ChatML template into `tokenizer.chat_template`) and converts it to an f16 GGUF with
llama.cpp's own converter. Wrap it in a session-scoped fixture: it takes ~5-20 s.
"""

from __future__ import annotations

import os
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")

TINY_TEXTS = [
    f"<|im_start|>user\nWhat did {name} say about the {thing}?<|im_end|>\n"
    f"<|im_start|>assistant\n{name} said the {thing} is on Friday [msg:{i:020x}].<|im_end|>\n"
    for i, (name, thing) in enumerate(
        (n, t) for n in ("Alice", "Bob", "Chen", "Dara") for t in ("trip", "dinner", "plumber", "exam", "party"))
] + ['{"toolCalls":[{"name":"search_memory","arguments":{"query":"trip"}}]}', "Hello! How can I help you today?"]


def tiny_gguf(tmp_dir: str | Path, name: str = "tiny-f16.gguf") -> Path:
    """Build `<tmp_dir>/<name>` (f16, serving chat template in its metadata) and return its path."""
    from transformers import AutoTokenizer

    from truffle_assets.training.gguf_export import convert
    from truffle_assets.chat_format.template import serving_template
    from truffle_assets.training.tiny import LLAMA_CPP_PRE, build_tiny_model

    tmp = Path(tmp_dir)
    hf_dir = build_tiny_model(tmp / "tiny-hf", TINY_TEXTS, seed=0)
    tokenizer = AutoTokenizer.from_pretrained(str(hf_dir))
    tokenizer.chat_template = serving_template()  # the converter copies this into the GGUF
    tokenizer.save_pretrained(str(hf_dir))
    return convert(hf_dir, tmp / name, "f16", pre_tokenizer=LLAMA_CPP_PRE)


_BUILT: dict[str, Path] = {}


def shared_tiny_gguf(tmp_path_factory) -> Path:
    """`tiny_gguf` built once per test process (session fixtures in several conftests share it)."""
    path = _BUILT.get("f16")
    if path is None or not path.exists():
        path = _BUILT["f16"] = tiny_gguf(tmp_path_factory.mktemp("tiny-gguf"))
    return path
