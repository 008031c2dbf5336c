"""Does the embedded model stop cleanly? Repetition and max_tokens hits before and after the
runtime's anti-repetition settings, on real turns.

The memory is privacy_eval's (a 60K-token synthetic corpus through the real pipeline, cached under
benchmarks/.work/privacy). Each question is asked through `ChatService` on the embedded
Qwen2.5-Coder-0.5B (llama.cpp, temperature 0), once per setting, interleaved so llama.cpp reuses
the question's prompt prefix:

* `before`: what the runtime did until now: one non-streamed call, no sampling knobs sent (the
  llama.cpp server's defaults: repeat_penalty 1.1), no loop guard;
* `guard`: streamed as the page does, stop sequences, the loop guard (generation stops where the
  reply starts repeating a line, a sentence or a word 8-gram), server-default penalties;
* `after`: `guard` plus `service.EMBEDDED_SAMPLING`'s penalties (what `truffle serve` now sends).

Per setting: share of answers that ran into max_tokens, repeated word 4-gram rate (1 - distinct /
all 4-grams of an answer, mean), completion tokens, answers citing a message, invented citations,
and seconds per answer. Last line: `length_share_before=… length_share_after=… rep4_before=…
rep4_after=…`.

    .venv/bin/python benchmarks/repetition_bench.py [--questions 8] [--answer-budget 384]
    .venv/bin/python benchmarks/repetition_bench.py --skip 10 --questions 4 --raw-budget 3000 \
        --summaries-budget 1500 --profile-budget 1000 --answer-budget 512   # the serve budgets, list questions
"""

from __future__ import annotations

import argparse
import json
import logging
import re
import statistics
import sys
import time
import warnings
from datetime import datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.privacy_eval import WORK, build_memory  # noqa: E402

QUESTIONS = [
    "Where do I work now?",
    "Where do I live?",
    "What is my dog's name?",
    "What did Priya and I talk about, and what plans did we make?",
    "Summarise what happened with my job in 2022.",
    "What do I eat these days, and since when?",
    "Who is Rohan to me, and what do we usually talk about?",
    "Tell me everything about my trip to Spain.",
    "What are my goals?",
    "What happened in the family group around my birthday?",
    # asking for lists and quotes invites the quote-dump and the repeated line
    "List every message where Priya talks about food, quoting each one.",
    "Quote everything my family said to me on my birthdays.",
    "List all the places I have lived and worked, with dates and the messages that say so.",
    "What did I say about running? Quote the messages.",
]
_WORD = re.compile(r"\w+|[^\w\s]")


def rep4(text: str) -> float:
    """Repeated word 4-gram rate of `text`: 1 - distinct / all (0 when shorter than 8 words)."""
    words = [w.lower() for w in _WORD.findall(text)]
    grams = [tuple(words[i:i + 4]) for i in range(len(words) - 3)]
    return 0.0 if len(grams) < 5 else 1 - len(set(grams)) / len(grams)


def answer_step(turn) -> dict:
    steps = [s for s in turn.trace.get("steps", []) if s.get("step") == "answer_or_request_recall"]
    return steps[-1] if steps else {}


def run_turn(svc, question: str, today, stream: bool):
    t0 = time.perf_counter()
    messages = [{"role": "user", "content": question}]
    if not stream:
        turn = svc.ask(messages, today=today)
        return turn, time.perf_counter() - t0, None, 1
    first, chunks, turn = None, 0, None
    for ev in svc.ask_stream(messages, today=today):
        if "delta" in ev:
            chunks += 1
            first = first or time.perf_counter() - t0
        else:
            turn = ev["turn"]
    return turn, time.perf_counter() - t0, first, chunks


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--questions", type=int, default=8)
    ap.add_argument("--skip", type=int, default=0, help="start at this question (10: the list/quote questions)")
    ap.add_argument("--answer-budget", type=int, default=384, help="max completion tokens")
    ap.add_argument("--raw-budget", type=int, default=1_500)
    ap.add_argument("--summaries-budget", type=int, default=600)
    ap.add_argument("--profile-budget", type=int, default=600)
    ap.add_argument("--n-ctx", type=int, default=8_192)
    ap.add_argument("--settings", default="before,guard,after")
    ap.add_argument("--out", type=Path, default=None, help="also write the per-answer rows as JSON")
    args = ap.parse_args(argv)
    logging.basicConfig(level=logging.WARNING)
    warnings.filterwarnings("ignore")

    from truffle_assets.runtime.config import Budget, RuntimeConfig
    from truffle_assets.runtime.service import EMBEDDED_SAMPLING, EMBEDDED_STOP, open_service

    data, truth, _, rebuilt = build_memory(WORK, 60_000, 3, 7, False)
    today = max(datetime.fromisoformat(c["last"]) for c in truth["chats"]).date()
    print(f"memory: {data} ({'built' if rebuilt else 'cached'}); today={today}")
    budget = Budget(profile=args.profile_budget, summaries=args.summaries_budget, raw=args.raw_budget,
                    answer=args.answer_budget)
    cfg = RuntimeConfig.from_env(published_dir=data / "published", store_dir=WORK / "repetition-store",
                                 budget=budget)
    cfg.endpoint.timeout_s = 600.0
    plain = {"frequency_penalty": None, "presence_penalty": None, "repeat_penalty": None, "stop": []}
    settings = {
        "before": (plain | {"loop_guard": False}, False),
        "guard": (plain | {"stop": list(EMBEDDED_STOP), "loop_guard": True}, True),
        "after": (dict(EMBEDDED_SAMPLING) | {"loop_guard": True}, True),
    }
    chosen = [s for s in args.settings.split(",") if s]
    rows: list[dict] = []
    with open_service(cfg, n_ctx=args.n_ctx) as svc:
        svc.warm_up()
        print(f"model: {svc.model} ({Path(svc.config.endpoint.gguf).name}); answer budget {svc.config.budget.answer}"
              f" tokens; after = {json.dumps(EMBEDDED_SAMPLING)}")
        base_ep = svc.config.endpoint
        for q in QUESTIONS[args.skip: args.skip + args.questions]:
            for name in chosen:
                knobs, stream = settings[name]
                svc.config = svc.config.model_copy(update={"endpoint": base_ep.model_copy(update=knobs)})
                turn, secs, first, chunks = run_turn(svc, q, today, stream)
                step = answer_step(turn)
                body = turn.body or ""
                row = {"question": q, "setting": name, "finish_reason": step.get("finish_reason"),
                       "looped": bool(step.get("looped")), "fallback": turn.fallback,
                       "completion_tokens": int(turn.trace.get("usage", {}).get("completion_tokens") or 0),
                       "rep4": round(rep4(body), 3), "cited": bool(turn.citations),
                       "invalid_citations": len(turn.trace.get("invalid_citations") or []),
                       "seconds": round(secs, 1), "first_text_s": round(first, 1) if first else None,
                       "chunks": chunks, "answer": body}
                rows.append(row)
                print(f"  {name:<6} {row['finish_reason'] or '-':<6} loop={int(row['looped'])} "
                      f"tok={row['completion_tokens']:>4} rep4={row['rep4']:.3f} cited={int(row['cited'])} "
                      f"{row['seconds']:6.1f}s first={row['first_text_s']}  {q[:50]}", flush=True)
    if args.out:
        args.out.write_text(json.dumps(rows, indent=1, ensure_ascii=False))

    print()
    print(f"{'setting':<8} {'answers':>7} {'max_tokens':>10} {'loop cut':>8} {'rep4 mean':>9} {'rep4 max':>8} "
          f"{'tokens':>7} {'cited':>6} {'invented':>8} {'s/answer':>8} {'first text s':>12}")
    summary = {}
    for name in chosen:
        rs = [r for r in rows if r["setting"] == name]
        if not rs:
            continue
        firsts = [r["first_text_s"] for r in rs if r["first_text_s"]]
        summary[name] = s = {
            "length_share": sum(r["finish_reason"] == "length" for r in rs) / len(rs),
            "rep4": statistics.mean(r["rep4"] for r in rs)}
        print(f"{name:<8} {len(rs):>7} {s['length_share']:>10.2f} {sum(r['looped'] for r in rs):>8} "
              f"{s['rep4']:>9.3f} {max(r['rep4'] for r in rs):>8.3f} "
              f"{statistics.mean(r['completion_tokens'] for r in rs):>7.0f} "
              f"{sum(r['cited'] for r in rs):>6} {sum(r['invalid_citations'] for r in rs):>8} "
              f"{statistics.mean(r['seconds'] for r in rs):>8.1f} "
              f"{(statistics.median(firsts) if firsts else float('nan')):>12.1f}")
    b, a = summary.get("before", {}), summary.get("after", {})
    print(f"length_share_before={b.get('length_share', float('nan')):.2f} "
          f"length_share_after={a.get('length_share', float('nan')):.2f} "
          f"rep4_before={b.get('rep4', float('nan')):.3f} rep4_after={a.get('rep4', float('nan')):.3f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
