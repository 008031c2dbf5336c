"""Token counting with the served model's own tokenizer (never tiktoken).

`TokenCounter.load(source)` takes a GGUF file (llama.cpp `Llama(vocab_only=True)`: the vocabulary
and merges only, no weights, ~1 s for Qwen's 150k vocab) or a Hugging Face tokenizer folder
(`tokenizer.json`, read with the `tokenizers` library). Counters are cached per source, so every
ChatService in a process shares one. When the served model is remote (OpenRouter), the runtime
counts with the local Qwen2.5 GGUF tokenizer and marks the counter `proxy_for=<model>`: the counts
are then an estimate of the remote model's, reported as such in the turn trace.
"""

from __future__ import annotations

import threading
from pathlib import Path

_CACHE: dict[str, TokenCounter] = {}
_CACHE_LOCK = threading.Lock()

# ChatML wraps each message as "<|im_start|>{role}\n{content}<|im_end|>\n"; the generation prompt
# adds "<|im_start|>assistant\n". These are counted per message on top of the content.
_WRAP = "<|im_start|>{role}\n<|im_end|>\n"
_GEN = "<|im_start|>assistant\n"


class TokenCounter:
    def __init__(self, source: str | Path, *, proxy_for: str | None = None) -> None:
        self.source = str(source)
        self.proxy_for = proxy_for
        self._lock = threading.Lock()
        p = Path(source)
        if p.is_file() and p.suffix == ".gguf":
            from llama_cpp import Llama

            from truffle_assets.quiet import quiet_llama_cpp

            quiet_llama_cpp()
            self.kind = "gguf"
            self._llama = Llama(model_path=str(p), vocab_only=True, verbose=False)
            self._hf = None
        elif p.is_dir() and (p / "tokenizer.json").is_file():
            from tokenizers import Tokenizer

            self.kind = "hf"
            self._hf = Tokenizer.from_file(str(p / "tokenizer.json"))
            self._llama = None
        else:
            raise FileNotFoundError(f"no tokenizer at {p}: expected a .gguf file or a folder with tokenizer.json")
        self._overhead: dict[str, int] = {}

    @classmethod
    def load(cls, source: str | Path, *, proxy_for: str | None = None) -> TokenCounter:
        key = str(Path(source).resolve())
        with _CACHE_LOCK:
            base = _CACHE.get(key)
            if base is None:
                base = _CACHE[key] = cls(source)
        if proxy_for is None:
            return base
        view = object.__new__(cls)  # same tokenizer, labelled as a proxy
        view.__dict__.update(base.__dict__)
        view.proxy_for = proxy_for
        return view

    @property
    def name(self) -> str:
        label = f"{self.kind}:{Path(self.source).name}"
        return f"{label} (proxy for {self.proxy_for})" if self.proxy_for else label

    # -- tokens --------------------------------------------------------------------------------------
    def encode(self, text: str, special: bool = False) -> list[int]:
        if not text:
            return []
        with self._lock:
            if self._llama is not None:
                return list(self._llama.tokenize(text.encode("utf-8"), add_bos=False, special=special))
            return list(self._hf.encode(text, add_special_tokens=False).ids)

    def decode(self, ids: list[int]) -> str:
        if not ids:
            return ""
        with self._lock:
            if self._llama is not None:
                return self._llama.detokenize(ids).decode("utf-8", errors="ignore")
            return self._hf.decode(ids)

    def count(self, text: str) -> int:
        return len(self.encode(text))

    def truncate(self, text: str, n: int) -> str:
        """The longest prefix of `text` (on a token boundary) that counts at most `n` tokens."""
        if n <= 0:
            return ""
        ids = self.encode(text)
        if len(ids) <= n:
            return text
        ids = ids[:n]
        out = self.decode(ids)
        while ids and self.count(out) > n:  # a decode/re-encode round trip can merge differently
            ids = ids[:-1]
            out = self.decode(ids)
        return out

    def message_overhead(self, role: str) -> int:
        if role not in self._overhead:
            self._overhead[role] = len(self.encode(_WRAP.format(role=role), special=True))
        return self._overhead[role]

    def count_messages(self, messages: list[dict]) -> int:
        """Prompt tokens of a chat as the ChatML template renders it, with the generation prompt."""
        total = len(self.encode(_GEN, special=True))
        for m in messages:
            total += self.message_overhead(m["role"]) + self.count(m.get("content") or "")
        return total
