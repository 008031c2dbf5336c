"""A synthetic corpus (`truffle_assets.synth`) written once into a folder and reused while the
generator's code is unchanged: what the benchmarks and the fusion fit build their memories from.

The folder holds a `.stamp`: a hash of `truffle_assets/synth/*.py`. A corpus whose stamp differs, or
that lacks its ground truth, is written again.
"""

from __future__ import annotations

import hashlib
import json
import time
from pathlib import Path

from truffle_assets.synth import write_corpus

SYNTH_DIR = Path(__file__).resolve().parents[1] / "synth"


def generator_stamp() -> str:
    """Hash of the generator's source: a new generator writes another corpus for the same seed."""
    h = hashlib.sha256()
    for p in sorted(SYNTH_DIR.glob("*.py")):
        h.update(p.read_bytes())
    return h.hexdigest()[:16]


def cached_corpus(out: Path, tokens: int, chats: int, seed: int, regen: bool = False) -> tuple[Path, dict, float | None]:
    """(folder, ground truth, seconds spent generating or None when reused) of the corpus in `out`."""
    out = Path(out)
    stamp_file, stamp = out / ".stamp", generator_stamp()
    took = None
    if regen or not (stamp_file.is_file() and stamp_file.read_text() == stamp and (out / "ground_truth.json").is_file()):
        t0 = time.perf_counter()
        write_corpus(out, chats=chats, tokens=tokens, seed=seed)
        took = time.perf_counter() - t0
        stamp_file.write_text(stamp)
    return out, json.loads((out / "ground_truth.json").read_text(encoding="utf-8")), took
