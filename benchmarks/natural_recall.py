"""Retrieval recall@k on the two hand-annotated natural chat sets: questions a person asks about
themselves ("Where do I work now?"), in English and Hinglish, on text nobody wrote the rules for.

    .venv/bin/python benchmarks/natural_recall.py

Each set (`benchmarks/devset/natural` and `benchmarks/devset2/natural`: tuning chats;
`benchmarks/heldout/natural`: frozen before any tuning) is built through the pipeline once
(`defs.eval.qa_memory.annotated_memory`, kept under benchmarks/.work/natural/), and every annotated
question with evidence is asked of `retrieve` under each weight setting below. The same sets are
built a second time with passages as they were before the English gloss (`TRUFFLE_GLOSS_PASSAGES=0`,
in a child process, under benchmarks/.work/natural-plain/) and asked with the shipped weights, so
the gloss's gain is measured in the same run. Evidence = the messages of the question's annotated
facts and their restatements (`evals.questions.natural_questions`). Recall@k = share of a question's
evidence messages in the top k; "any@k" = share of questions with at least one in the top k.
Last line: `natural_recall@10 dev=<d> dev2=<d2> heldout=<h>` for the shipped weights (the child's
"plain passages" lines come first).
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import warnings
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks import offline_build  # noqa: E402

offline_build()
WORK = ROOT / "benchmarks" / ".work" / "natural"
PLAIN = ROOT / "benchmarks" / ".work" / "natural-plain"
SETS = {"dev": ROOT / "benchmarks" / "devset" / "natural", "dev2": ROOT / "benchmarks" / "devset2" / "natural",
        "heldout": ROOT / "benchmarks" / "heldout" / "natural"}
K = 10


def settings():
    from truffle_assets.retrieval import RetrievalWeights

    return {
        "plain (no query-time signals)": RetrievalWeights.plain(),
        "asking + semantic 0.5": RetrievalWeights(unnamed_dense=False, self_speaker=False),
        "+ unnamed dense": RetrievalWeights(self_speaker=False),
        "shipped (+ self speaker)": RetrievalWeights(),
    }


def recall(work: Path, name: str, weights: dict) -> dict:
    """(questions, recall@K, any@K) per weight setting on one set, its memory built under `work` once."""
    from truffle_assets.evals.questions import natural_questions
    from truffle_assets.defs.eval.qa_memory import annotated_memory
    from truffle_assets.retrieval import open_index, retrieve

    published, ann, line_ids = annotated_memory(SETS[name], work / name)
    idx = open_index(published / "latest.json")
    qs = [q for q in natural_questions(ann, line_ids) if q.evidence]
    out = {}
    for label, w in weights.items():
        r, a = [], []
        for q in qs:
            top = set(retrieve(q.question, idx, k=K, weights=w).message_ids)
            r.append(sum(e in top for e in q.evidence) / len(q.evidence))
            a.append(float(any(e in top for e in q.evidence)))
        out[label] = (len(qs), statistics.fmean(r), statistics.fmean(a))
    return out


def main() -> int:
    warnings.filterwarnings("ignore")
    from truffle_assets.defs.resources import GLOSS_PASSAGES_ENV

    plain = os.environ.get(GLOSS_PASSAGES_ENV) == "0"
    if not plain:  # the passages before the gloss, built in a child process
        subprocess.run([sys.executable, __file__], check=True, env={**os.environ, GLOSS_PASSAGES_ENV: "0"})
    import torch

    from truffle_assets.retrieval import RetrievalWeights

    torch.set_num_threads(1)
    weights = {"plain passages, shipped": RetrievalWeights()} if plain else settings()
    shipped = {}
    for name in SETS:
        for label, (n, r, a) in recall(PLAIN if plain else WORK, name, weights).items():
            print(f"{name:8s} {n:3d} questions  {label:24s} recall@{K} {r:.3f}  any@{K} {a:.3f}", flush=True)
            if "shipped" in label:
                shipped[name] = r
    if not plain:
        print(f"natural_recall@{K} " + " ".join(f"{n}={v:.3f}" for n, v in shipped.items()))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
