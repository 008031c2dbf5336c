"""Which word a model opens its answer with, on the QA suite's prompts: the greedy first token.

    .venv/bin/python -m benchmarks.first_token models/runs/<run>/gguf/model-f16.gguf   # ~3 min a model
    .venv/bin/python -m benchmarks.first_token <gguf> --compare <other gguf>

At temperature 0 the first token decides a short answer's kind. A fine-tune that teaches one fixed
"not in your memory" string on a share of its rows concentrates probability on that string's first
word, while the real answers spread theirs over "You", "Your", "Before"…, so the fixed string wins
on questions whose evidence is in the prompt (the third grounded run: "That" at p 0.44-0.82). This
asks for one token with logprobs instead of whole answers: minutes, where the QA suite takes ten.

Prompts: `ChatService.compose` on the eval gate's QA memory (seed 7, `evals.qa_memory`) at the
embedded budget, for its `eval` questions, rendered with the canonical chat template and sent to
an embedded llama.cpp server's `/v1/completions` (`max_tokens=1`, `logprobs=8`). Per question: the
greedy first token, its probability, and the probability of the not-in-memory openers. Last line:
`absent_first=<answerable questions whose greedy first token opens a not-in-memory answer>/<n>
absent_p=<their mean p on answerable questions> unanswerable_absent_first=<k>/<m>`.
"""

from __future__ import annotations

import argparse
import math
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from truffle_assets import paths  # noqa: E402
from truffle_assets.evals.qa import spread, synthetic_questions  # noqa: E402
from truffle_assets.evals.qa_memory import TODAY, qa_memory  # noqa: E402
from truffle_assets.training.grounded import NOT_FOUND_WORDINGS  # noqa: E402

ABSENT_OPENERS = {w.split()[0] for w in NOT_FOUND_WORDINGS}


def probe(gguf: Path, published: Path, questions, store: Path) -> list[dict]:
    from truffle_assets.chat_format.template import render
    from truffle_assets.llm.server import LlamaServer
    from truffle_assets.runtime.config import Budget, RuntimeConfig
    from truffle_assets.runtime.service import EMBEDDED_BUDGET, ChatService

    svc = ChatService(RuntimeConfig(published_dir=published, store_dir=store, transcripts=False,
                                    budget=Budget(**EMBEDDED_BUDGET, cap=16_384)))
    rows = []
    with LlamaServer(gguf, n_ctx=4096) as server:
        client = server.client()
        for q in questions:
            state = svc.compose(q.question, today=TODAY)
            if state.get("refused"):
                continue  # the guard answers it; the model never sees the question
            prompt = render([{"role": m["role"], "content": m["content"]} for m in state["prompt"]],
                            add_generation_prompt=True)
            out = client.completions.create(model=server.alias, prompt=prompt, max_tokens=1, temperature=0, logprobs=8)
            top = {t: math.exp(lp) for t, lp in out.choices[0].logprobs.top_logprobs[0].items()}
            rows.append({"id": q.id, "answerable": q.answerable, "first": max(top, key=top.get),
                         "absent_p": sum(p for t, p in top.items() if t.strip() in ABSENT_OPENERS), "top": top})
    return rows


def summary(rows: list[dict]) -> str:
    ans = [r for r in rows if r["answerable"]]
    una = [r for r in rows if not r["answerable"]]
    opens_absent = lambda r: r["first"].strip() in ABSENT_OPENERS  # noqa: E731
    return (f"absent_first={sum(map(opens_absent, ans))}/{len(ans)} "
            f"absent_p={statistics.fmean(r['absent_p'] for r in ans) if ans else 0:.3f} "
            f"unanswerable_absent_first={sum(map(opens_absent, una))}/{len(una)}")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("gguf", type=Path)
    ap.add_argument("--compare", type=Path, default=None, help="a second GGUF probed on the same prompts")
    ap.add_argument("--limit", type=int, default=None, help="at most this many questions (every n-th)")
    ap.add_argument("--store", type=Path, default=Path("benchmarks/.work/first-token"))
    args = ap.parse_args(argv)
    published, truth = qa_memory(paths.models_dir() / "qa-memory")
    questions = spread([q for q in synthetic_questions(truth, "eval") if q.kind != "secret"], args.limit)
    summaries = []  # runs' GGUFs share file names (model-f16.gguf), so nothing is keyed by name
    for gguf in [args.gguf] + ([args.compare] if args.compare else []):
        rows = probe(gguf, Path(published), questions, args.store)
        summaries.append(summary(rows))
        print(f"== {gguf}")
        for r in rows:
            top3 = ", ".join(f"{t!r} {p:.2f}" for t, p in sorted(r["top"].items(), key=lambda x: -x[1])[:3])
            print(f"  {r['id']:<18} {'answerable' if r['answerable'] else 'nothing planted':<16} {top3}")
        print(f"  {summaries[-1]}")
    print(summaries[0])
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
