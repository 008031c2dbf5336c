"""The synthetic corpus the benchmarks share, generated once into benchmarks/.work/ and reused while
the generator's source is unchanged (`truffle_assets.evals.synthetic_corpus`)."""

from pathlib import Path

from truffle_assets.evals.synthetic_corpus import cached_corpus, generator_stamp

ROOT = Path(__file__).resolve().parents[1]
WORK = ROOT / "benchmarks" / ".work"

__all__ = ["ROOT", "WORK", "corpus", "generator_stamp"]


def corpus(tokens: int, chats: int, seed: int, work: Path = WORK, regen: bool = False,
           prefix: str = "corpus") -> tuple[Path, dict, float | None]:
    """(folder, ground truth, seconds spent generating or None when reused)."""
    return cached_corpus(Path(work) / f"{prefix}-t{tokens}-c{chats}-s{seed}", tokens, chats, seed, regen)
