"""A gate-passed run shipped with the repository as its LoRA adapter, rebuilt at setup into the GGUF
the gate evaluated.

The run's GGUF (~650 MB) and merged weights stay out of git; its adapter (~35 MB fp32) goes in.
`ship` copies what a rebuild needs to `models/shipped/<run_id>/` and records the evaluated GGUF's
sha256. `install` redoes what the training chain did (merge with the run's serving template,
llama.cpp convert with its pre-tokenizer, quantize to the selected type) and promotes the result
only when its sha256 is the recorded one: another torch, transformers or llama.cpp, another base, or
an edited adapter gives a different model than the one that passed the gate, and that one is not
served. A model already active in the registry is the user's choice and is left alone. The rebuilt
run goes to the shared models folder (`paths.shared_models_dir()`), and every data root without a
promoted model serves it from there (`llm.gguf.served`), with no copy per root.

A blend (`truffle train --blend`) has no trained adapter of its own, and its concatenated one is as
large as its parts together. It ships as those parts under `parts/<run_id>/`, and `install` blends
them again (`training.blend` is exact and deterministic) and checks the result against the blended
file's recorded sha256. A part that is also shipped on its own is the same bytes, which git stores once.

GitHub refuses files over 100 MB, and a stage trained on a blend (`--dpo-from`) carries the blend's
rank: ~280 MB of fp32 weights. Any shipped file over `CHUNK_BYTES` is stored as numbered byte chunks
(`<name>.000`, `<name>.001`, …; the manifest's `split` lists each chunk's sha256) and joined again
before a rebuild. Chunks keep the weights exact, which the GGUF's sha256 check needs; fp16 would not.
"""

from __future__ import annotations

import json
import os
import shutil
import time
from dataclasses import dataclass
from datetime import datetime, UTC
from pathlib import Path

from truffle_assets import paths
from truffle_assets.files import sha256_file, write_json_atomic
from truffle_assets.registry import Registry, read_gate

SHIPPED_DIR = paths.SHIPPED_DIR
MANIFEST = "ship.json"
TEMPLATE = "serving_template.jinja"  # the chat template the evaluated GGUF was converted with
REPORTS = ("eval/report.json", "eval/report.md", "model_card.md")
TOOLCHAIN = ("torch", "transformers", "peft", "llama-cpp-python")
WEIGHTS = "adapter_model.safetensors"
ADAPTER_FILES = ("adapter_config.json", WEIGHTS)  # what a merge needs of an adapter, at the least
PARTS = "parts"  # a blend's source adapters, one folder per run
CHUNK_BYTES = 90 * 2**20  # under GitHub's 100 MB file limit


class ShipError(RuntimeError):
    pass


class ShipRefused(ShipError):
    """Not shipped or not installed by design: the gate did not pass, or the rebuild is another model."""


@dataclass(frozen=True)
class InstallResult:
    status: str  # installed | skipped (an active model, or this one, already served)
    run_id: str
    message: str
    gguf_path: str | None = None
    rebuilt: bool = False
    seconds: float = 0.0


def quant_of(gguf_name: str) -> str:
    """`model-q8_0.gguf` → `q8_0`: the export names each file `<stem>-<quant>.gguf`."""
    from truffle_assets.training.gguf_export import QUANT_TYPES

    quant = Path(gguf_name).stem.rsplit("-", 1)[-1]
    if quant not in QUANT_TYPES:
        raise ShipError(f"{gguf_name}: no quantization in the name (expected <stem>-<{'|'.join(QUANT_TYPES)}>.gguf)")
    return quant


def _toolchain() -> dict[str, str | None]:
    from importlib.metadata import PackageNotFoundError, version

    out: dict[str, str | None] = {}
    for name in TOOLCHAIN:
        try:
            out[name] = version(name)
        except PackageNotFoundError:
            out[name] = None
    return out


def ship(run_dir: str | Path, dest_root: str | Path = SHIPPED_DIR, chunk_bytes: int = CHUNK_BYTES) -> Path:
    """Copy a gate-passed run's adapter, reports and recipe to `dest_root/<run_id>/`, files over
    `chunk_bytes` in chunks; returns that folder."""
    from truffle_assets.training.gguf_export import gguf_metadata

    run = Path(run_dir).resolve()
    if not run.is_dir():
        raise ShipError(f"no run folder {run}")
    report = run / "eval" / "report.json"
    gate = read_gate(run)
    if gate is not True:
        raise ShipRefused(f"{run.name}: the eval gate {'failed' if gate is False else 'is not recorded'} "
                          f"in {report}; only a gate-passed run ships")
    ggufs = sorted((run / "gguf").glob("*.gguf"))
    if len(ggufs) != 1:
        raise ShipError(f"{run}/gguf must hold exactly one .gguf, found {[g.name for g in ggufs]}")
    gguf = ggufs[0]
    evaluated = json.loads(report.read_text()).get("meta", {}).get("gguf")
    if evaluated and evaluated != gguf.name:
        raise ShipError(f"{report} evaluated {evaluated}, but {run}/gguf holds {gguf.name}")
    try:
        base = json.loads((run / "base.json").read_text())
    except (OSError, ValueError) as exc:
        raise ShipError(f"{run / 'base.json'}: cannot read ({exc})") from exc
    if not base.get("base_model"):
        raise ShipError(f"{run / 'base.json'}: no base_model")
    template = gguf_metadata(gguf, ("tokenizer.chat_template",)).get("tokenizer.chat_template")
    if not template:
        raise ShipError(f"{gguf}: no tokenizer.chat_template in its metadata")
    adapter_files = sorted(p for p in (run / "adapter").iterdir() if p.is_file() and p.name != "README.md") \
        if (run / "adapter").is_dir() else []
    if not set(ADAPTER_FILES) <= {p.name for p in adapter_files}:
        raise ShipError(f"{run}/adapter lacks {' or '.join(ADAPTER_FILES)}")

    blend = base.get("blend") or []
    dest = Path(dest_root) / run.name
    tmp = dest.with_name(f".{run.name}.tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    (tmp / "adapter").mkdir(parents=True)
    for p in adapter_files:
        if not (blend and p.name == WEIGHTS):  # a blend's weights are rebuilt from its parts
            shutil.copyfile(p, tmp / "adapter" / p.name)
    _set_base(tmp / "adapter" / "adapter_config.json", base["base_model"])
    if blend:
        _ship_parts(run, blend, base["base_model"], tmp)
    write_json_atomic(tmp / "base.json", {k: v for k, v in base.items() if k != "base_path"})
    for rel in REPORTS:
        if (run / rel).is_file():
            (tmp / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(run / rel, tmp / rel)
    (tmp / TEMPLATE).write_bytes(template.encode("utf-8"))
    manifest = {
        "run_id": run.name,
        "base_model": base["base_model"],
        "pre_tokenizer": base.get("pre_tokenizer"),
        "quant": quant_of(gguf.name),
        "gguf_name": gguf.name,
        "gguf_sha256": sha256_file(gguf),
        "gguf_bytes": gguf.stat().st_size,
        "adapter_sha256": {p.name: sha256_file(p) for p in sorted((tmp / "adapter").iterdir())}
                          | ({WEIGHTS: sha256_file(run / "adapter" / WEIGHTS)} if blend else {}),
        "blend": blend,
        "parts_sha256": {str(p.relative_to(tmp / PARTS)): sha256_file(p) for p in sorted((tmp / PARTS).rglob("*"))
                         if p.is_file()} if blend else {},
        "template_sha256": sha256_file(tmp / TEMPLATE),
        "toolchain": _toolchain(),  # what shipped it: a rebuild with other versions may differ
        "shipped_at": datetime.now(UTC).isoformat(timespec="seconds"),
    }
    # the hashes above are of whole files: chunks are only how they are stored
    write_json_atomic(tmp / MANIFEST, manifest | {"split": _split_large(tmp, chunk_bytes)})
    shutil.rmtree(dest, ignore_errors=True)
    tmp.replace(dest)
    return dest


def _split_large(root: Path, chunk_bytes: int) -> dict[str, list[str]]:
    """Replace every file under `root` larger than `chunk_bytes` with its chunks `<name>.000`, …;
    returns {relative path of the whole file: [each chunk's sha256]}."""
    split: dict[str, list[str]] = {}
    for path in sorted(p for p in root.rglob("*") if p.is_file() and p.stat().st_size > chunk_bytes):
        hashes = []
        with path.open("rb") as f:
            while block := f.read(chunk_bytes):
                chunk = path.with_name(f"{path.name}.{len(hashes):03d}")
                chunk.write_bytes(block)
                hashes.append(sha256_file(chunk))
        path.unlink()
        split[path.relative_to(root).as_posix()] = hashes
    return split


def _chunks(shipped_dir: Path, rel: str, n: int) -> list[Path]:
    return [shipped_dir / f"{rel}.{i:03d}" for i in range(n)]


def joined(shipped_dir: Path, manifest: dict, out: Path) -> Path:
    """`shipped_dir` as `ship` built it before splitting: a copy under `out` with every chunked file
    joined again (the chunks' hashes are checked by `check_shipped`, the whole file's by its rebuild),
    or `shipped_dir` itself when nothing is chunked."""
    split = manifest.get("split") or {}
    if not split:
        return shipped_dir
    chunk_names = {c for rel, hashes in split.items() for c in _chunks(shipped_dir, rel, len(hashes))}
    shutil.rmtree(out, ignore_errors=True)
    shutil.copytree(shipped_dir, out, ignore=lambda d, names: [n for n in names if Path(d) / n in chunk_names])
    for rel, hashes in split.items():
        with (out / rel).open("wb") as whole:
            for chunk in _chunks(shipped_dir, rel, len(hashes)):
                with chunk.open("rb") as f:
                    shutil.copyfileobj(f, whole)
    return out


def _set_base(config_path: Path, base_model: str) -> None:
    """The training machine's base path is no use elsewhere (install passes the base explicitly)."""
    config = json.loads(config_path.read_text())
    config["base_model_name_or_path"] = base_model
    config_path.write_text(json.dumps(config, indent=2, sort_keys=True) + "\n")


def _ship_parts(run: Path, blend: list[dict], base_model: str, tmp: Path) -> None:
    """Copy each blended run's adapter to `tmp/parts/<run>/` and check that blending them again gives
    the run's adapter byte for byte, so `install` can do the same."""
    for part in blend:
        src, out = run.parent / part["run"] / "adapter", tmp / PARTS / part["run"]
        if not all((src / name).is_file() for name in ADAPTER_FILES):
            raise ShipError(f"{run.name} blends {part['run']}, but {src} lacks {' or '.join(ADAPTER_FILES)}")
        out.mkdir(parents=True)
        for name in ADAPTER_FILES:
            shutil.copyfile(src / name, out / name)
        _set_base(out / "adapter_config.json", base_model)
    got = sha256_file(_reblend(tmp, blend, tmp / ".reblend") / WEIGHTS)
    shutil.rmtree(tmp / ".reblend")
    if got != sha256_file(run / "adapter" / WEIGHTS):
        raise ShipError(f"blending {', '.join(p['run'] for p in blend)} again does not give {run}/adapter/{WEIGHTS}: "
                        "a part's adapter changed since the blend")


def _reblend(shipped: Path, blend: list[dict], out: Path) -> Path:
    from truffle_assets.training.blend import blend_adapters

    return blend_adapters([(shipped / PARTS / p["run"], float(p["weight"])) for p in blend], out)


def adapter_for(shipped_dir: Path, manifest: dict, run: Path) -> Path:
    """The shipped adapter folder, or for a blend its parts blended again into `run/adapter`, checked
    against the blended weights' recorded sha256."""
    if not manifest.get("blend"):
        return shipped_dir / "adapter"
    adapter = run / "adapter"
    want = manifest["adapter_sha256"][WEIGHTS]
    if (adapter / WEIGHTS).is_file():
        if sha256_file(adapter / WEIGHTS) == want:
            return adapter
        raise ShipError(f"{adapter} holds another adapter than the shipped blend: move that run folder away first")
    tmp = run / ".adapter.tmp"
    shutil.rmtree(tmp, ignore_errors=True)
    _reblend(shipped_dir, manifest["blend"], tmp / "blend")
    shutil.copytree(shipped_dir / "adapter", tmp / "adapter")
    os.replace(tmp / "blend" / WEIGHTS, tmp / "adapter" / WEIGHTS)
    got = sha256_file(tmp / "adapter" / WEIGHTS)
    if got != want:
        raise ShipRefused(f"blending {shipped_dir / PARTS} gave {WEIGHTS} sha256 {got}, not the shipped {want}; "
                          "not installed")
    shutil.rmtree(adapter, ignore_errors=True)  # a folder without weights: an interrupted copy
    os.replace(tmp / "adapter", adapter)
    shutil.rmtree(tmp)
    return adapter


def read_manifest(shipped_dir: str | Path) -> dict:
    path = Path(shipped_dir) / MANIFEST
    try:
        manifest = json.loads(path.read_text())
    except OSError as exc:
        raise ShipError(f"{path}: cannot read ({exc.strerror})") from exc
    except ValueError as exc:
        raise ShipError(f"{path}: not JSON ({exc})") from exc
    need = ("run_id", "base_model", "quant", "gguf_name", "gguf_sha256", "adapter_sha256")
    missing = [k for k in need if not manifest.get(k)]
    if missing:
        raise ShipError(f"{path}: missing {', '.join(missing)}")
    return manifest


def latest_shipped(root: str | Path = SHIPPED_DIR) -> Path | None:
    """The most recently shipped run under `root`, or None."""
    found = [(read_manifest(m.parent).get("shipped_at", ""), m.parent.name, m.parent)
             for m in Path(root).glob(f"*/{MANIFEST}")]
    return max(found)[2] if found else None


def check_shipped(shipped_dir: Path, manifest: dict) -> None:
    """Every shipped input is the file `ship` recorded (a cheap check before a minutes-long rebuild)."""
    blended = bool(manifest.get("blend"))  # its weights are checked once blended again (`adapter_for`)
    expected = {**{f"adapter/{n}": h for n, h in manifest["adapter_sha256"].items() if not (blended and n == WEIGHTS)},
                **{f"{PARTS}/{n}": h for n, h in (manifest.get("parts_sha256") or {}).items()},
                **({TEMPLATE: manifest["template_sha256"]} if manifest.get("template_sha256") else {})}
    if blended and not manifest.get("parts_sha256"):
        raise ShipError(f"{shipped_dir / MANIFEST}: a blend without parts_sha256")
    split = manifest.get("split") or {}
    if unknown := set(split) - set(expected):
        raise ShipError(f"{shipped_dir / MANIFEST}: split lists {sorted(unknown)}, which no hash covers")
    for rel, want in expected.items():  # a chunked file: its chunks now, the whole once joined
        for path, part_want in (zip(_chunks(shipped_dir, rel, len(split[rel])), split[rel]) if rel in split
                                else [(shipped_dir / rel, want)]):
            got = sha256_file(path) if path.is_file() else "missing"
            if got != part_want:
                raise ShipRefused(f"{path}: sha256 {got} is not the shipped {part_want}; not installed")


def _base_dir(name: str, models_dir: Path | None) -> str:
    if name == "tiny":
        raise ShipError("the tiny base is built from a run's training data and cannot be resolved by name: pass base_dir")
    from truffle_assets.training.base_models import resolve_base

    return str(resolve_base(name, models_dir)[0])


def rebuild(shipped_dir: Path, manifest: dict, run: Path, base_dir: str | Path) -> Path:
    """merge → f16 GGUF → quantize, as merged_model and gguf_model do; returns `run/quants/<gguf_name>`.

    The folder names are the training run's (`merged/`): the converter names the model after it."""
    from truffle_assets.training.gguf_export import convert, quantize
    from truffle_assets.training.trainer import merge

    template = (shipped_dir / TEMPLATE).read_bytes().decode("utf-8")
    merged = merge(base_dir, adapter_for(shipped_dir, manifest, run), run / "merged", template)
    quants, name, quant = run / "quants", manifest["gguf_name"], manifest["quant"]
    try:
        if quant == "f16":
            return convert(merged, quants / name, "f16", pre_tokenizer=manifest.get("pre_tokenizer"))
        f16 = convert(merged, quants / name.replace(f"-{quant}.gguf", "-f16.gguf"), "f16",
                      pre_tokenizer=manifest.get("pre_tokenizer"))
        out = quantize(f16, quants / name, quant)
        f16.unlink()
        return out
    finally:
        shutil.rmtree(merged, ignore_errors=True)  # 2.4 GB of fp32 weights for the demo model


def _shown(path: Path) -> str:
    try:
        return str(path.resolve().relative_to(paths.PROJECT_ROOT))
    except ValueError:
        return str(path)


def install(shipped_dir: str | Path, runs_dir: str | Path, registry: Registry, models_dir: str | Path | None = None,
            force: bool = False, base_dir: str | Path | None = None) -> InstallResult:
    """Rebuild the shipped run under `runs_dir/<run_id>/` and make it the active model.

    Does nothing when the registry already serves a model (unless `force`) or already serves this
    one. Raises ShipRefused, promoting nothing, when an input or the rebuilt GGUF differs from what
    was shipped. `base_dir` overrides resolving `base_model` by name (a tiny or local base)."""
    t0 = time.perf_counter()
    shipped = Path(shipped_dir).resolve()
    manifest = read_manifest(shipped)
    run_id, want = manifest["run_id"], manifest["gguf_sha256"]
    active = registry.active()
    if active is not None and active.run_id == run_id and active.gguf_sha256 == want:
        return InstallResult("skipped", run_id, f"{run_id} is already the active model", active.gguf_path)
    if active is not None and not force:
        return InstallResult("skipped", run_id, f"the registry already serves {active.run_id}: left as is "
                             f"(install-shipped --force replaces it with {run_id})", active.gguf_path)
    check_shipped(shipped, manifest)

    run = Path(runs_dir).resolve() / run_id
    target = run / "gguf" / manifest["gguf_name"]
    others = [p.name for p in run.glob("gguf/*.gguf") if p != target]
    if others:
        raise ShipError(f"{run}/gguf already holds {others}: move that run folder away first")
    rebuilt = not (target.is_file() and sha256_file(target) == want)
    source = joined(shipped, manifest, run / ".shipped")  # chunked files whole again, beside the run
    try:
        if rebuilt:
            _rebuild_checked(source, manifest, run, target, base_dir or _base_dir(
                manifest["base_model"], Path(models_dir) if models_dir else None))
        _finish_run(source, manifest, run, target)
    finally:
        if source != shipped:
            shutil.rmtree(source, ignore_errors=True)
    model = registry.promote(run, gate_passed=True, reason=f"shipped with the repository: {_shown(shipped)}")
    return InstallResult("installed", run_id, f"{run_id} is the active model ({model.gguf_path}, sha256 {want[:16]}…)",
                         model.gguf_path, rebuilt, round(time.perf_counter() - t0, 2))


def _rebuild_checked(shipped: Path, manifest: dict, run: Path, target: Path, base: str | Path) -> None:
    """Rebuild the GGUF and move it to `target` only when its sha256 is the evaluated one."""
    want = manifest["gguf_sha256"]
    os.environ.setdefault("HF_HUB_OFFLINE", "1")  # nothing comes from a model hub
    built = rebuild(shipped, manifest, run, base)
    got = sha256_file(built)
    if got != want:
        versions = manifest.get("toolchain") or {}
        here = _toolchain()
        differ = [f"{k} {versions.get(k)} shipped, {here.get(k)} here" for k in TOOLCHAIN
                  if versions.get(k) != here.get(k)]
        raise ShipRefused(
            f"rebuilt {manifest['gguf_name']} has sha256 {got}, the evaluated one {want}: it is not the model "
            f"the gate passed, so it is not promoted (kept for inspection at {built})"
            + (f"; toolchain differs: {', '.join(differ)}" if differ else ""))
    target.parent.mkdir(parents=True, exist_ok=True)
    os.replace(built, target)
    if (run / "quants").is_dir() and not any((run / "quants").iterdir()):
        (run / "quants").rmdir()


def _finish_run(shipped: Path, manifest: dict, run: Path, gguf: Path) -> None:
    """What `promote` and `truffle serve` expect next to the GGUF (Modelfile, eval report, card), and
    the adapter, which a later stage (`truffle train --dpo-from`, `--blend`) starts from."""
    from truffle_assets.chat_format.prompt import system_prompt
    from truffle_assets.training.modelfile import write_modelfile

    if manifest.get("blend"):
        adapter_for(shipped, manifest, run)
    elif not (run / "adapter").exists():
        shutil.copytree(shipped / "adapter", run / "adapter")

    for rel in (*REPORTS, "base.json", MANIFEST):
        if (shipped / rel).is_file() and not (run / rel).exists():
            (run / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(shipped / rel, run / rel)
    if not (run / "Modelfile").exists():
        write_modelfile(gguf, run / "Modelfile", system_prompt())  # the modelfile asset's defaults
