"""Which claim confidence to abstain below: both models asked validation questions, every threshold scored.

    .venv/bin/python -m benchmarks.abstain_sweep                        # base + the active model, ~35 min
    .venv/bin/python -m benchmarks.abstain_sweep --tuned <gguf>
    .venv/bin/python -m benchmarks.abstain_sweep --from benchmarks/results/abstain_sweep_<date>.json   # no model

Both embedded models answer every held-out question nothing in memory answers with an invented,
cited value, and retrieval's scores cannot tell those prompts apart (docs/history/qa_eval.md). The
runtime now records the model's own probability of its claim's tokens (`runtime.confidence`) and
can say "not in memory" below a threshold (`RuntimeConfig.abstain_below`). This picks that
threshold on questions that are not the held-out ones (benchmarks/heldout, synthetic seed 7):
* dev2's 25 annotated questions (benchmarks/devset2; in no training row before pack generator 17,
  so unseen by run 33 and anything older);
* the `train` phrasings of two synthetic seeds no pack or suite uses (21, 22), each with six of
  the `train` unanswerable questions (different ones per seed, none of the held-out four).
Each question is asked once per model with the gate off and log-probabilities on
(`evals.qa.ask_endpoint`, the whole turn).
Abstaining below t turns exactly the claims under t into "not in memory", so every t is scored from
the same answers (`withheld`): right for a question nothing answers, wrong for one that has an
answer, uncited either way. Chosen: the t that gives the compared model its best accuracy, the
smaller t on a tie. Last line: `abstain_below=<t> accuracy=<a> none_right=<k>/<n> answerable_lost=<m>`
(the compared model, at t, against no gate). The 2026-12-02 choice (0.35 for run 33) then lost
on the held-out questions (`qa_eval --abstain-below 0.35`), so the product ships with no gate.
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

from benchmarks.qa_eval import ANNOTATED, QA_WORK, _printer  # noqa: E402
from truffle_assets.evals.qa import summarize_rows, synthetic_questions  # noqa: E402

SEEDS = (21, 22)
THRESHOLDS = (0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5, 0.6)


def as_withheld(r: dict) -> dict:
    """Row `r` as it scores when the runtime says "not in memory" instead: right only where nothing
    answers (or a secret was asked for), and no citation, claim or leak."""
    return r | {"correct": r["kind"] in ("none", "secret"), "cited": False, "n_citations": 0,
                "precise_citations": 0, "unsupported": False, "leak": False, "abstained": True}


def withheld(rows: list[dict], t: float | None, signal: str = "min_p") -> list[dict]:
    """`rows` as they would have scored with abstain_below=t: a claim whose weakest token (`signal`
    "min_p"; "mean_p": the claim's geometric mean) is under t says "not in memory" (right only
    where nothing answers), with no citation."""
    if t is None:
        return rows
    out = []
    for r in rows:
        conf = r.get("confidence")
        out.append(as_withheld(r) if conf and conf[signal] < t and not r["refused"] and not r["fallback"] else r)
    return out


def sweep(rows: list[dict], signal: str = "min_p") -> list[dict]:
    """One line per threshold (None: no gate): the summary plus unanswerable right and answerable lost."""
    plain = {r["id"] + r["source"]: r["correct"] for r in rows}
    out = []
    for t in (None, *THRESHOLDS):
        w = withheld(rows, t, signal)
        s = summarize_rows(w)
        none = [r for r in w if r["kind"] == "none"]
        lost = sum(plain[r["id"] + r["source"]] and not r["correct"] for r in w)
        out.append({"t": t, "accuracy": s["accuracy"], "cited_share": s["cited_share"],
                    "citation_precision": s["citation_precision"], "none_right": sum(r["correct"] for r in none),
                    "none": len(none), "lost": lost, "abstained": sum(bool(r.get("abstained")) for r in w)})
    return out


def choose(lines: list[dict]) -> dict:
    """The threshold with the best accuracy (the smaller on a tie; None = no gate wins ties)."""
    return max(lines, key=lambda x: (x["accuracy"], -(x["t"] or 0)))


def validation_sets(work: Path) -> list[tuple[str, Path, list, str, list[str]]]:
    """(name, published dir, questions, today, planted secrets) of the validation questions, none held
    out: dev2's annotated ones and the `train` phrasings of synthetic SEEDS (memories built once)."""
    from benchmarks.runtime_bench import build_memory
    from truffle_assets.evals.qa import natural_questions
    from truffle_assets.evals.qa_memory import TODAY, annotated_memory

    chats, folder, source = ANNOTATED["dev2"]
    published, ann, line_ids = annotated_memory(chats, work / folder)
    out = [("dev2", Path(published), natural_questions(ann, line_ids, source=source), ann["as_of"], [])]
    for seed in SEEDS:
        data, truth, _, _ = build_memory(work, 60_000, 10, seed, False)
        out.append((f"s{seed}", data / "published", list(synthetic_questions(truth, "train", seed)), TODAY,
                    [s["value"] for s in truth["secrets"]]))
    return out


def ask(label: str, endpoint: dict, work: Path) -> list[dict]:
    from truffle_assets.evals.qa import ask_endpoint

    rows: list[dict] = []
    for name, published, qs, today, secrets in validation_sets(work):
        rows += ask_endpoint(endpoint, published, work / "stores" / f"sweep-{label}" / name, qs, today, secrets,
                             progress=_printer(f"{label}/{name}"))
    return rows


def show(results: dict[str, list[dict]], signal: str = "min_p") -> dict:
    chosen = {}
    for label, rows in results.items():
        lines = sweep(rows, signal)
        print(f"\n{label}: {len(rows)} questions, abstaining on the claim's {signal}")
        print(f"{'abstain_below':>14}{'accuracy':>10}{'none right':>12}{'lost':>6}{'withheld':>10}{'cited':>8}{'precision':>11}")
        for x in lines:
            print(f"{x['t'] if x['t'] is not None else 'off':>14}{x['accuracy']:>10.3f}{x['none_right']:>7}/{x['none']:<4}"
                  f"{x['lost']:>6}{x['abstained']:>10}{x['cited_share']:>8.3f}{x['citation_precision']:>11.3f}")
        chosen[label] = (choose(lines), lines[0])
    return chosen


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--base-gguf", default=None)
    ap.add_argument("--tuned", default=None, help="the compared GGUF (default: the registry's active model)")
    ap.add_argument("--work", type=Path, default=QA_WORK)
    ap.add_argument("--from", dest="from_", type=Path, default=None, metavar="RESULTS",
                    help="sweep a results JSON's recorded answers again (no model)")
    ap.add_argument("--out", type=Path, default=None)
    ap.add_argument("--signal", choices=["min_p", "mean_p"], default="min_p",
                    help="the claim's weakest token (what the runtime gates on) or its geometric mean")
    args = ap.parse_args(argv)
    if args.from_:
        results = json.loads(args.from_.read_text(encoding="utf-8"))["rows"]
    else:
        from truffle_assets.llm.gguf import active_gguf, qwen_gguf

        tuned = args.tuned or active_gguf()
        if not tuned:
            ap.error("no --tuned GGUF and no promoted model in the registry")
        models = {"base": str(args.base_gguf or qwen_gguf()), "tuned": str(tuned)}
        t0 = time.perf_counter()
        results = {label: ask(label, {"gguf": g, "logprobs": True}, args.work) for label, g in models.items()}
        out = args.out or ROOT / "benchmarks" / "results" / f"abstain_sweep_{date.today().isoformat()}.json"
        out.write_text(json.dumps({"models": models, "seeds": SEEDS, "rows": results,
                                   "seconds": round(time.perf_counter() - t0)}, indent=1, ensure_ascii=False) + "\n",
                       encoding="utf-8")
        print(f"results: {out}")
    chosen = show(results, args.signal)
    label = next(k for k in results if k != "base")
    best, off = chosen[label]
    print(f"abstain_below={best['t']} accuracy={best['accuracy']:.3f} none_right={best['none_right']}/{best['none']} "
          f"answerable_lost={best['lost']} (no gate: accuracy={off['accuracy']:.3f} none_right={off['none_right']})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
