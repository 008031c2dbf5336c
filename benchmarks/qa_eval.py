"""End-to-end QA: questions about planted facts asked through the real runtime, base vs tuned model.

    .venv/bin/python -m benchmarks.qa_eval                          # base GGUF vs the registry's active model
    .venv/bin/python -m benchmarks.qa_eval --tuned data/models/runs/<run>/gguf/model-q8_0.gguf
    .venv/bin/python -m benchmarks.qa_eval --base-url https://openrouter.ai/api/v1 --model qwen/qwen3-30b-a3b-instruct-2507
    .venv/bin/python -m benchmarks.qa_eval --limit 10               # a quick look
    .venv/bin/python -m benchmarks.qa_eval --sets dev2                # the dev set, for choosing runtime settings

Two memories, both built through the pipeline once (`ingest_all`, ephemeral Dagster instance):
* the synthetic corpus of seed 7 (60K tokens, 10 chats; `evals.qa_memory`, the eval gate's QA
  memory under data/models/qa-memory), asked its `eval` phrasings
  (`evals.qa.synthetic_questions`): current and temporal facts, questions nothing in memory answers,
  secret-seeking questions. The grounded training rows come from other seeds and `train` phrasings;
* the held-out natural set (`benchmarks/heldout/natural`, 11 chats written independently of the
  rules; cached under benchmarks/.work/qa/), asked its own 44 annotated questions
  (`evals.qa.natural_questions`).
`--sets dev2` asks the second dev set's 25 questions instead (`benchmarks/devset2`, never used for
training rows): the set to choose runtime settings on (budgets, sampling), so the two above stay
held out.

Every question goes through `ChatService.ask` on `open_service`: guard, retrieval, budgets, the
served model (an embedded llama.cpp server on each GGUF, with the embedded budget and sampling),
recall rounds, the answer repairs (`runtime.repairs`), scrubbing. Scores per model (`evals.qa.score_answer`): accuracy,
cited share and citation precision over answerable questions, unsupported claims, secret leaks
(any planted secret value in any answer), median latency. Last line:
`qa_accuracy_base=<a0> qa_accuracy=<a> cited_share=<c> citation_precision=<p>` (the last three for
the tuned model, or for the `--base-url` endpoint when one is given).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from datetime import date
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.corpus import WORK  # noqa: E402
from truffle_assets import paths  # noqa: E402
from truffle_assets.defs.eval.qa_memory import TODAY, annotated_memory, qa_memory  # noqa: E402
from truffle_assets.evals.qa import ask_endpoint, runtime_fingerprint, summarize_rows  # noqa: E402
from truffle_assets.evals.questions import (Question, natural_questions, spread, states_key,  # noqa: E402
                                            synthetic_questions)

QA_WORK = WORK / "qa"
NATURAL = ROOT / "benchmarks" / "heldout" / "natural"
# the annotated chat sets: name -> (chats, memory folder under --work, the questions' source label)
ANNOTATED = {"natural": (NATURAL, "mem-natural", "heldout-natural"),
             "dev2": (ROOT / "benchmarks" / "devset2" / "natural", "mem-dev2", "dev2-natural")}


def _printer(where: str):
    def show(n: int, total: int, r: dict) -> None:
        print(f"  [{where} {n}/{total}] {'ok' if r['correct'] else '--'} {r['question'][:60]!r} -> "
              f"{r['answer'][:90]!r} ({r['ms'] / 1000:.1f} s)", flush=True)
    return show


def run_model(label: str, endpoint: dict, sets: list[tuple[str, Path, list[Question], str, list[str]]],
              store: Path, budget: dict[str, int] | None = None, options: dict | None = None) -> list[dict]:
    rows: list[dict] = []
    for name, data, questions, today, secrets in sets:
        def announce(svc, name=name):
            print(f"{label} on {name}: {svc.model} ({endpoint.get('gguf') or endpoint.get('base_url')}), "
                  f"budget {svc.config.budget.model_dump()}", flush=True)
        rows += ask_endpoint(endpoint, data / "published", store / label / name, questions, today, secrets,
                             progress=_printer(f"{label}/{name}"), announce=announce, budget=budget,
                             options=options)
    return rows


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--base-gguf", default=None, help="the base model (default: the embedded Qwen2.5-Coder-0.5B GGUF)")
    ap.add_argument("--tuned", default=None, help="the tuned GGUF (default: the registry's active model)")
    ap.add_argument("--base-url", default=None, help="also/instead: an OpenAI-compatible endpoint as the compared model")
    ap.add_argument("--model", default=None, help="model name at --base-url")
    ap.add_argument("--api-key", default=None)
    ap.add_argument("--budget", nargs="+", default=[], metavar="SECTION=TOKENS",
                    help="lower the compared model's prompt budget, e.g. raw=350 (the base keeps the default)")
    ap.add_argument("--label", default=None, help="the compared model's name in the output (default: tuned, or endpoint)")
    ap.add_argument("--limit", type=int, default=None, help="questions per set (every n-th, all kinds kept)")
    ap.add_argument("--sets", nargs="+", default=["synthetic", "natural"], choices=["synthetic", *ANNOTATED],
                    help="synthetic and natural are held out; dev2 is for choosing runtime settings")
    ap.add_argument("--work", type=Path, default=QA_WORK)
    ap.add_argument("--out", type=Path, default=None, help="results JSON (default benchmarks/results/qa_eval.json)")
    ap.add_argument("--base-from", type=Path, default=None, metavar="RESULTS",
                    help="the base model's answers from an earlier results JSON of the same questions and runtime "
                         "(temperature 0: the same prompts give the same answers), scored again; saves half the run")
    ap.add_argument("--rescore", type=Path, default=None, metavar="RESULTS",
                    help="no model: score a results JSON's recorded answers again with today's scorer and print it")
    args = ap.parse_args(argv)
    if args.rescore:
        return rescore(args.rescore)

    from truffle_assets.llm.gguf import active_gguf, qwen_gguf

    options: dict = {}  # RuntimeConfig fields both models are asked with (none: the product's defaults)
    # the runtime's code, and any option that changes its answers: answers are alike only when both are
    runtime = runtime_fingerprint() + "".join(f"+{k}" if v is True else f"+{k}={v}" for k, v in sorted(options.items()))
    if args.base_from:  # checked before any memory is built
        earlier = json.loads(args.base_from.read_text(encoding="utf-8"))
        if earlier.get("runtime") != runtime:  # other prompts or another memory: not the same answers
            ap.error(f"{args.base_from} was asked through runtime {earlier.get('runtime') or '(not recorded)'}, "
                     f"today's is {runtime}: ask the base again (drop --base-from)")
    sets = []
    if "synthetic" in args.sets:  # the eval gate's QA memory: built once, shared with `truffle train`
        published, truth = qa_memory(paths.models_dir() / "qa-memory")
        qs = spread(synthetic_questions(truth, "eval"), args.limit)
        sets.append(("synthetic", published.parent, qs, TODAY, [s["value"] for s in truth["secrets"]]))
    for name, (chats, folder, source) in ANNOTATED.items():
        if name in args.sets:
            published, ann, line_ids = annotated_memory(chats, args.work / folder)
            qs = spread(natural_questions(ann, line_ids, source=source), args.limit)
            sets.append((name, published.parent, qs, ann["as_of"], []))

    base = {"gguf": str(args.base_gguf or qwen_gguf())}
    if args.base_url:
        other_label, other = "endpoint", {"base_url": args.base_url, "model": args.model, "api_key": args.api_key}
    else:
        tuned = args.tuned or active_gguf()
        if not tuned:
            ap.error("no --tuned GGUF and no promoted model in the registry (or pass --base-url)")
        other_label, other = "tuned", {"gguf": str(tuned)}
    other_label = args.label or other_label
    store = args.work / "stores"
    budget = {k: int(v) for k, v in (b.split("=", 1) for b in args.budget)}
    t0 = time.perf_counter()
    if args.base_from:
        asked = [q.question for _, _, qs, _, _ in sets for q in qs]
        if [r["question"] for r in earlier["rows"]["base"]] != asked:
            ap.error(f"{args.base_from} asked the base other questions than this run would")
        base = earlier["models"]["base"] | {"answers_from": str(args.base_from)}
        results = {"base": [r | {"correct": _correct(r)} for r in earlier["rows"]["base"]],
                   other_label: run_model(other_label, other, sets, store, budget, options)}
    else:
        results = {"base": run_model("base", base, sets, store, options=options),
                   other_label: run_model(other_label, other, sets, store, budget, options)}
    summary = {label: summarize_rows(rows) for label, rows in results.items()}
    out = args.out or ROOT / "benchmarks" / "results" / "qa_eval.json"
    models = {"base": base, other_label: other | ({"budget": budget} if budget else {})}
    out.write_text(json.dumps({"date": date.today().isoformat(), "models": models, "runtime": runtime, "options": options,
                               "summary": summary,
                               "rows": results, "seconds": round(time.perf_counter() - t0)}, indent=1,
                              ensure_ascii=False) + "\n", encoding="utf-8")
    show(summary, other_label, out)
    return 0


def show(summary: dict, other_label: str, out: Path) -> None:
    print(f"\n{'':22}{'base':>10}{other_label:>10}")
    for k in ("questions", "accuracy", "cited_share", "citation_precision", "attributed", "evidence_shown",
              "correct_when_shown", "precise_in_reach", "unsupported", "leaks", "fallbacks",
              "median_ms", "p90_ms"):
        print(f"{k:22}{summary['base'].get(k)!s:>10}{summary[other_label].get(k)!s:>10}")
    for k in sorted(set(summary["base"]["by"]) | set(summary[other_label]["by"])):
        print(f"{'  ' + k:22}{summary['base']['by'].get(k, '-')!s:>10}{summary[other_label]['by'].get(k, '-')!s:>10}")
    print(f"results: {out}")
    t = summary[other_label]
    print(f"qa_accuracy_base={summary['base']['accuracy']:.3f} qa_accuracy={t['accuracy']:.3f} "
          f"cited_share={t['cited_share']:.3f} citation_precision={t['citation_precision']:.3f}")


def _correct(r: dict) -> bool:
    """A recorded answer's correctness by today's `states_key` (questions with keys; others as recorded)."""
    if r["keys"] and r["kind"] not in ("none", "secret", "yesno") and not r["fallback"]:
        return any(states_key(r["question"], k, r["answer"]) for k in r["keys"])
    return r["correct"]


def rescore(path: Path) -> int:
    """A results file's answers scored again by today's `states_key` (correctness of the questions
    with keys; citation precision stays as recorded: the cited texts are not in the file)."""
    data = json.loads(path.read_text(encoding="utf-8"))
    changed = 0
    for rows in data["rows"].values():
        for r in rows:
            now = _correct(r)
            changed += now != r["correct"]
            r["correct"] = now
    summary = {label: summarize_rows(rows) for label, rows in data["rows"].items()}
    print(f"{path}: {changed} answers scored differently today")
    show(summary, next(k for k in data["rows"] if k != "base"), path)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
