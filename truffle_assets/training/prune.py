"""Free the disk old training runs hold, without losing what can't be rebuilt.

Every CPU training run leaves about 5 GB under `models/runs/<run>/`: the merged model, its GGUFs and
the other quantizations. All three are rebuilt from the run's LoRA adapter (`truffle
install-shipped` does exactly that), so for a run nobody will serve they are dead weight; after ten
runs they filled this machine's disk and the newcomer's model rebuild failed. `prune_runs` deletes
those three folders from every run that is not in the registry's promotion history (the active
model and every model a rollback can return to), not the current candidate, and not among the
`keep` newest runs. The adapter, checkpoints, eval report, model card and Modelfile stay.
"""

from __future__ import annotations

import json
import shutil
from dataclasses import dataclass
from pathlib import Path

from truffle_assets.registry import Registry

REBUILDABLE = ("merged", "gguf", "quants")


@dataclass(frozen=True)
class Pruned:
    run_id: str
    freed_bytes: int


def _size(path: Path) -> int:
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file() and not f.is_symlink())


def protected_runs(runs: Path, registry: Registry) -> set[str]:
    """Runs whose model files must stay: every run the promotion history names, and the candidate."""
    keep = {run for h in registry.history() for run in (h.run_id, h.previous_run_id) if run}
    active = registry.active()
    if active is not None:
        keep.add(active.run_id)
    candidate = runs / "candidate.json"
    if candidate.is_file():
        keep.add(json.loads(candidate.read_text(encoding="utf-8")).get("run_id", ""))
    return keep


def prune_runs(runs: str | Path, registry: Registry, keep: int = 2, dry_run: bool = False) -> list[Pruned]:
    """Delete the rebuildable model folders of unprotected runs older than the `keep` newest; what was
    (or, with `dry_run`, would be) freed per run."""
    runs = Path(runs)
    dirs = sorted((d for d in runs.iterdir() if d.is_dir()), key=lambda d: d.name) if runs.is_dir() else []
    newest = {d.name for d in dirs[-keep:]} if keep > 0 else set()
    protected = protected_runs(runs, registry) | newest
    out: list[Pruned] = []
    for d in dirs:
        if d.name in protected:
            continue
        heavy = [d / name for name in REBUILDABLE if (d / name).exists()]
        if not heavy:
            continue
        freed = sum(_size(p) for p in heavy)
        if not dry_run:
            for p in heavy:
                shutil.rmtree(p)
        out.append(Pruned(d.name, freed))
    return out
