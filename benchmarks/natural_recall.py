"""Retrieval recall@k on the two hand-annotated natural chat sets: questions a person asks about
themselves ("Where do I work now?"), in English and Hinglish, on text nobody wrote the rules for.

    .venv/bin/python benchmarks/natural_recall.py

Each set (`benchmarks/devset/natural`: the extractor's tuning chats; `benchmarks/heldout/natural`:
frozen before any tuning) is built through the pipeline once (`evals.qa_memory.annotated_memory`,
kept under benchmarks/.work/natural/), and every annotated question with evidence is asked of
`retrieve` under each weight setting below. Evidence = the messages of the question's annotated
facts and their restatements (`evals.qa.natural_questions`). Recall@k = share of a question's
evidence messages in the top k; "any@k" = share of questions with at least one in the top k.
Last line: `natural_recall@10 dev=<d> heldout=<h>` for the shipped weights.
"""

from __future__ import annotations

import statistics
import sys
import warnings
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks import offline_build  # noqa: E402

offline_build()
WORK = ROOT / "benchmarks" / ".work" / "natural"
SETS = {"dev": ROOT / "benchmarks" / "devset" / "natural", "heldout": ROOT / "benchmarks" / "heldout" / "natural"}
K = 10


def settings():
    from truffle_assets.retrieval import RetrievalWeights

    return {
        "before 2026-11-27": RetrievalWeights.before(),
        "asking + semantic 0.5": RetrievalWeights(unnamed_dense=False, self_speaker=False),
        "+ unnamed dense": RetrievalWeights(self_speaker=False),
        "shipped (+ self speaker)": RetrievalWeights(),
    }


def main() -> int:
    warnings.filterwarnings("ignore")
    import torch

    from truffle_assets.evals.qa import natural_questions
    from truffle_assets.evals.qa_memory import annotated_memory
    from truffle_assets.retrieval import open_index, retrieve

    torch.set_num_threads(1)
    shipped = {}
    for name, chats in SETS.items():
        published, ann, line_ids = annotated_memory(chats, WORK / name)
        idx = open_index(published / "latest.json")
        qs = [q for q in natural_questions(ann, line_ids) if q.evidence]
        for label, w in settings().items():
            r, a = [], []
            for q in qs:
                top = set(retrieve(q.question, idx, k=K, weights=w).message_ids)
                r.append(sum(e in top for e in q.evidence) / len(q.evidence))
                a.append(float(any(e in top for e in q.evidence)))
            print(f"{name:8s} {len(qs):3d} questions  {label:24s} recall@{K} {statistics.fmean(r):.3f}  "
                  f"any@{K} {statistics.fmean(a):.3f}", flush=True)
            if label.startswith("shipped"):
                shipped[name] = statistics.fmean(r)
    print(f"natural_recall@{K} dev={shipped['dev']:.3f} heldout={shipped['heldout']:.3f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
