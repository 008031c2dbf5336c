"""The memories the QA suite asks its questions of, built through the pipeline once and reused.

`qa_memory(root)` writes the synthetic corpus (`synth.write_corpus`, seed 7: the QA suite's seed,
which the grounded training rows never use) under `root/corpus`, ingests it with `ingest_all` on an
ephemeral Dagster instance into `root/memory`, and reuses both while the stamp (the generator's code,
the corpus's size and seed, the fact extractor's version) is unchanged. A 60K-token corpus builds in
about five minutes on two cores. `annotated_memory` does the same for a hand-annotated chat set.
The questions and their scoring are plain code (`evals.questions`, `evals.qa`); building a memory
runs Dagster, so it lives here.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import shutil
from pathlib import Path

import dagster as dg

from truffle_assets import paths
from truffle_assets.defs.ingest.runner import ingest_all
from truffle_assets.defs.resources import LLMResource
from truffle_assets.evals.questions import load_natural
from truffle_assets.ids import chat_id_for, message_ids
from truffle_assets.index.lance import PASSAGE_FORMAT
from truffle_assets.memory.facts.extraction import EXTRACTOR_VERSION
from truffle_assets.parsing import parse_file
from truffle_assets.synth import write_corpus

SEED, TOKENS, CHATS = 7, 60_000, 10
TODAY = "2024-12-31"  # the questions are asked as of the end of the corpus


def memory_version() -> str:
    """What a QA memory is built with besides its chats: the facts a question's answer rests on come
    from the extractor, and what retrieval finds from the index passages: a new version of either is
    a new memory (`evals.qa.runtime_fingerprint` hashes the same two)."""
    return f"{EXTRACTOR_VERSION}/{PASSAGE_FORMAT}"


def _stamp(tokens: int, chats: int, seed: int) -> str:
    h = hashlib.sha256(f"{tokens}/{chats}/{seed}/{memory_version()}".encode())
    for p in sorted((paths.PROJECT_ROOT / "truffle_assets" / "synth").glob("*.py")):
        h.update(p.read_bytes())
    return h.hexdigest()[:16]


def build_memory(exports: Path, memory: Path, user: str) -> Path:
    """Ingest `exports` into `memory` (DuckDB, index, published/) on an ephemeral Dagster instance,
    Dagster's log in `memory/pipeline.log`; the published dir, or an error naming that log."""
    memory.mkdir(parents=True, exist_ok=True)
    with (memory / "pipeline.log").open("w") as log, contextlib.redirect_stderr(log):
        report = ingest_all(exports, memory / "memory.duckdb", user_name=user, instance=dg.DagsterInstance.ephemeral(),
                            cache_dir=memory / "cache", full=True, llm=LLMResource(cache_dir=str(memory / "cache" / "llm")),
                            memory=True)
    if report["failed"] or not (memory / "published" / "latest.json").is_file():
        raise RuntimeError(f"the memory of {exports} did not build (see {memory / 'pipeline.log'})")
    return memory / "published"


def qa_memory(root: str | Path, tokens: int = TOKENS, chats: int = CHATS, seed: int = SEED) -> tuple[Path, dict]:
    """(published dir, ground truth) of the QA memory under `root`, built if missing or stale."""
    root = Path(root)
    corpus, memory, stamp_file = root / "corpus", root / "memory", root / "stamp"
    stamp = _stamp(tokens, chats, seed)
    if not (stamp_file.is_file() and stamp_file.read_text() == stamp and (memory / "published" / "latest.json").is_file()):
        shutil.rmtree(root, ignore_errors=True)
        memory.mkdir(parents=True)
        write_corpus(corpus, chats=chats, tokens=tokens, seed=seed)
        truth = json.loads((corpus / "ground_truth.json").read_text(encoding="utf-8"))
        build_memory(corpus, memory, truth["user"])
        stamp_file.write_text(stamp)
    return memory / "published", json.loads((corpus / "ground_truth.json").read_text(encoding="utf-8"))


def annotated_memory(chats: str | Path, root: str | Path) -> tuple[Path, dict, dict[tuple[str, int], str]]:
    """(published dir, annotations, (chat file, line) -> message id) of a hand-annotated chat set
    (`chats/*.txt` + `chats/annotations.json`: the held-out natural set, the dev set), its memory
    built under `root` once and rebuilt when a chat file or the fact extractor's version changes."""
    chats, root = Path(chats), Path(root)
    ann = load_natural(chats)
    files = sorted(chats.glob("*.txt"))
    h = hashlib.sha256(memory_version().encode())
    line_ids: dict[tuple[str, int], str] = {}
    for f in files:
        h.update(f.name.encode() + b"\0" + f.read_bytes())
        entries = parse_file(f).entries
        for e, mid in zip(entries, message_ids(chat_id_for(f), entries)):
            for line in range(e.line_start, e.line_end + 1):
                line_ids[(f.name, line)] = mid
    stamp_file, published = root / "stamp", root / "published"
    if not (stamp_file.is_file() and stamp_file.read_text() == h.hexdigest()[:16]
            and (published / "latest.json").is_file()):
        shutil.rmtree(root, ignore_errors=True)
        exports = root / "exports"
        exports.mkdir(parents=True)
        for f in files:
            shutil.copy2(f, exports / f.name)
        build_memory(exports, root, ann["user"])
        stamp_file.write_text(h.hexdigest()[:16])
    return published, ann, line_ids
