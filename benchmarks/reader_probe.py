"""How well does a model read the runtime's prompts, and can it check a cited message? Validation only.

    .venv/bin/python -m benchmarks.reader_probe                                    # run 33 as served, ~12 min
    .venv/bin/python -m benchmarks.reader_probe --read models/qwen2.5-coder-1.5b.gguf:nudge   # + another reader
    .venv/bin/python -m benchmarks.reader_probe --from benchmarks/results/reader_probe_<date>.json   # no model

The held-out QA benchmark (`qa_eval`) mixes two limits: retrieval (was the fact's message in the
prompt?) and reading (given it, did the model state it?). This takes retrieval out. It composes the
runtime's exact first-round prompts (`ChatService.compose`: guard, retrieval, the embedded budget)
for validation questions, never the held-out ones: dev2's 25 annotated questions
(`benchmarks/devset2`) and the `train` phrasings of synthetic seeds 21 and 22, as the abstention
sweep asks them. It keeps the questions whose fact's message is in the prompt, and those nothing in
memory answers. Then:
* **read**: each `--read GGUF` answers every prompt once (llama.cpp in-process, temperature 0, the
  embedded sampling). `GGUF:nudge` appends one instruction to the context message: answer now from
  what is shown, cite, say "not in memory" otherwise, no tool call. That is for a model the
  runtime's tool-call prompt was not trained into. Scored with the QA scorer on the reply itself
  (`evals.qa.score_answer`, no `finalize`: no citation repair, no uncertainty note).
* **judge**: can the untuned base model tell whether a cited message supports the first reader's
  answer? It asks for yes/no with log-probabilities, per cited message, and keeps the best P(yes).
  There are two prompts: the question and the answer, or the question alone. It reports the AUC
  between right and wrong answers, and the accuracy if answers under each P(yes) were withheld as
  "not in memory" (scored as `abstain_sweep.withheld` scores them).
Last line: `reader_shown <reader>=<right>/<n> ... judge_auc=<best AUC>` (no AUC with `--judge none`).
"""

from __future__ import annotations

import argparse
import json
import math
import re
import sys
import time
import warnings
from datetime import date
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.abstain_sweep import as_withheld, validation_sets  # noqa: E402
from benchmarks.qa_eval import QA_WORK  # noqa: E402
from truffle_assets.evals.qa import Question, says_absent, score_answer, summarize_rows  # noqa: E402

CITE = re.compile(r"\[msg:([0-9a-f]{6,})\]")
NUDGE = ("\nAnswer now from the memories shown: one or two sentences, each claim cited as [msg:<id>]; "
         "if no shown memory answers the question, say it is not in your memory. Do not call a tool.")
JUDGE_SYSTEM = "You are a strict fact checker. Reply with one word: yes or no."
JUDGE = {
    "answer": "Message from {author} on {day}:\n\"{text}\"\n\nQuestion: {question}\nProposed answer: {claim}\n"
              "Does the message itself answer the question with exactly this answer? yes or no",
    "question": "Message from {author} on {day}:\n\"{text}\"\n\nQuestion: {question}\n"
                "Does this message contain the answer to the question? yes or no",
}
THRESHOLDS = (0.3, 0.35, 0.4, 0.45, 0.5, 0.55, 0.6)


def compose(work: Path) -> list[dict]:
    """The first-round prompt of every validation question whose fact's message it shows, or that
    nothing answers: {"q", "prompt", "sources": {message id: {author, day, text}}}."""
    from truffle_assets.llm.gguf import qwen_gguf
    from truffle_assets.runtime.config import EndpointConfig, RuntimeConfig
    from truffle_assets.runtime.service import open_service

    out = []
    for _, published, questions, today, _ in validation_sets(work):
        # compose never calls the model; the embedded server only fixes the embedded budget
        cfg = RuntimeConfig(published_dir=published, store_dir=work / "stores" / "reader_probe",
                            endpoint=EndpointConfig(gguf=str(qwen_gguf())), transcripts=False)
        with open_service(cfg) as svc:
            for q in questions:
                st = svc.compose(q.question, today=today)
                shown = set(q.evidence) & set(st.get("context_ids") or [])
                if st.get("refused") or not (shown or q.kind == "none"):
                    continue
                sources = {i["message_id"]: {"author": i.get("author") or "", "day": str(i.get("ts") or "")[:10],
                                             "text": i.get("text") or ""} for i in st.get("items", [])}
                out.append({"q": q.to_dict(), "prompt": st["prompt"], "sources": sources})
    return out


def _llama(gguf: str, logprobs: bool = False):
    from llama_cpp import Llama

    # logits for every position only where log-probabilities are read: they change the arithmetic
    # enough to flip a greedy reply, and the runtime's server does not keep them
    return Llama(model_path=gguf, n_ctx=4096, n_threads=2, n_threads_batch=2, logits_all=logprobs, verbose=False)


def read(gguf: str, prompts: list[dict], nudge: bool, label: str) -> list[dict]:
    """One answer per prompt, scored on the reply as the model wrote it."""
    from truffle_assets.runtime.service import EMBEDDED_SAMPLING

    llm = _llama(gguf)
    rows = []
    for n, p in enumerate(prompts, 1):
        msgs = [dict(m) for m in p["prompt"]]
        if nudge:
            msgs[-2]["content"] += NUDGE  # the context message, just before the question
        t0 = time.perf_counter()
        out = llm.create_chat_completion(msgs, max_tokens=128, temperature=0.0,
                                         repeat_penalty=EMBEDDED_SAMPLING["repeat_penalty"],
                                         frequency_penalty=EMBEDDED_SAMPLING["frequency_penalty"],
                                         stop=EMBEDDED_SAMPLING["stop"])
        body = (out["choices"][0]["message"]["content"] or "").strip()
        q = Question(**p["q"])
        cites = list(dict.fromkeys(CITE.findall(body)))
        s = score_answer(q, body, cites, {i: m["text"] for i, m in p["sources"].items()})
        rows.append({"id": q.id, "source": q.source, "kind": q.kind, "question": q.question, "keys": q.keys,
                     "answer": body, "citations": cites, "refused": False, "fallback": None,
                     "ms": round((time.perf_counter() - t0) * 1000), **s})
        print(f"  [{label} {n}/{len(prompts)}] {'ok' if s['correct'] else '--'} {q.question[:50]!r} -> "
              f"{body[:80]!r}", flush=True)
    return rows


def p_yes(top: list[dict]) -> float:
    """P(yes) / (P(yes) + P(no)) from one token's top log-probabilities (0.5 when neither is there)."""
    py = sum(math.exp(t["logprob"]) for t in top if t["token"].strip().lower() == "yes")
    pn = sum(math.exp(t["logprob"]) for t in top if t["token"].strip().lower() == "no")
    return py / (py + pn) if py + pn else 0.5


def claim(body: str) -> str:
    """The answer's first paragraph without its citations (no "Uncertain: …" note)."""
    return re.sub(r"\s*\[msg:[0-9a-f]+\]", "", body.split("\n\n")[0]).strip()


def judge(gguf: str, rows: list[dict], prompts: list[dict], how: str) -> list[float | None]:
    """The best P(yes) over each cited answer's shown messages (None: nothing cited that was shown)."""
    llm = _llama(gguf, logprobs=True)
    sources = {(p["q"]["source"], p["q"]["id"]): p["sources"] for p in prompts}
    out: list[float | None] = []
    for r in rows:
        shown = sources[(r["source"], r["id"])]
        ps = []
        for c in r["citations"]:
            if c not in shown:
                continue
            m = shown[c]
            user = JUDGE[how].format(author=m["author"], day=m["day"], text=m["text"], question=r["question"],
                                     claim=claim(r["answer"]))
            o = llm.create_chat_completion([{"role": "system", "content": JUDGE_SYSTEM},
                                            {"role": "user", "content": user}],
                                           max_tokens=1, temperature=0.0, logprobs=True, top_logprobs=20)
            ps.append(p_yes(o["choices"][0]["logprobs"]["content"][0]["top_logprobs"]))
        out.append(round(max(ps), 4) if ps else None)
    return out


def auc(pos: list[float], neg: list[float]) -> float:
    """P(a right answer's score > a wrong one's), ties half."""
    if not pos or not neg:
        return float("nan")
    return sum((p > n) + 0.5 * (p == n) for p in pos for n in neg) / (len(pos) * len(neg))


def withheld(rows: list[dict], scores: list[float | None], t: float) -> list[dict]:
    """`rows` as scored had every answer whose P(yes) is under t said "not in memory", uncited."""
    return [as_withheld(r) if s is not None and s < t else r for r, s in zip(rows, scores)]


def name(spec: str) -> str:
    """A reader's short name: its run folder for a trained model's GGUF, else the file's stem; "+nudge"."""
    gguf, _, mode = spec.partition(":")
    p = Path(gguf)
    return (p.parent.parent.name if p.parent.name == "gguf" else p.stem) + ("+nudge" if mode == "nudge" else "")


def rescored(rows: list[dict]) -> list[dict]:
    """Rows of a question nothing answers scored again with today's `says_absent` (the only part of
    `score_answer` a stored reply can be re-read by: the other kinds need the question's keys)."""
    return [r | {"correct": says_absent(r["answer"]),
                 "unsupported": bool(r["answer"].strip()) and not says_absent(r["answer"])}
            if r["kind"] == "none" else r for r in rows]


def show(res: dict) -> str:
    res = {**res, "read": {k: rescored(v) for k, v in res["read"].items()}}
    line = []
    for label, rows in res["read"].items():
        ans = [r for r in rows if r["kind"] != "none"]
        s = summarize_rows(rows)
        right = sum(r["correct"] for r in ans)
        none = sum(r["correct"] for r in rows if r["kind"] == "none")
        print(f"{name(label):36s} fact shown: {right}/{len(ans)} right; nothing answers: {none}/{len(rows) - len(ans)} "
              f"right; cited {s['cited_share']:.3f}, precision {s['citation_precision']:.3f}; "
              f"median {s['median_ms'] / 1000:.1f} s")
        line.append(f"{name(label)}={right}/{len(ans)}")
    best = 0.0
    first = next(iter(res["read"].values()))
    for how, scores in res.get("judge", {}).items():
        pos = [s for r, s in zip(first, scores) if s is not None and r["correct"]]
        neg = [s for r, s in zip(first, scores) if s is not None and not r["correct"]]
        a = auc(pos, neg)
        best = max(best, a)
        print(f"\njudge ({how}) on the first reader's answers: AUC {a:.3f} ({len(pos)} right, {len(neg)} wrong)")
        base = summarize_rows(first)["accuracy"]
        for t in THRESHOLDS:
            w = withheld(first, scores, t)
            gained = sum(b["correct"] and not a_["correct"] for a_, b in zip(first, w))
            lost = sum(a_["correct"] and not b["correct"] for a_, b in zip(first, w))
            print(f"  withhold under {t:.2f}: accuracy {base:.3f} -> {summarize_rows(w)['accuracy']:.3f} "
                  f"(+{gained} -{lost})")
    return f"reader_shown {' '.join(line)}" + (f" judge_auc={best:.3f}" if res.get("judge") else "")


def main(argv: list[str] | None = None) -> int:
    warnings.filterwarnings("ignore")
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--read", action="append", default=None, metavar="GGUF[:nudge]",
                    help="a reader (repeatable; default: the registry's active model, as served)")
    ap.add_argument("--judge", default=None, help="the judge GGUF (default: the untuned base; 'none': no judge)")
    ap.add_argument("--work", type=Path, default=QA_WORK)
    ap.add_argument("--from", dest="from_", type=Path, default=None, metavar="RESULTS")
    ap.add_argument("--out", type=Path, default=None)
    args = ap.parse_args(argv)
    if args.from_:
        print(show(json.loads(args.from_.read_text(encoding="utf-8"))))
        return 0
    from benchmarks import offline_build

    offline_build()
    from truffle_assets.llm.gguf import active_gguf, qwen_gguf

    readers = args.read or [str(active_gguf() or ap.error("no --read GGUF and no promoted model"))]
    t0 = time.perf_counter()
    prompts = compose(args.work)
    print(f"{len(prompts)} prompts", flush=True)
    res: dict = {"readers": readers, "judge_model": str(args.judge or qwen_gguf()), "read": {}, "judge": {}}
    for spec in readers:
        gguf, _, mode = spec.partition(":")
        res["read"][spec] = read(gguf, prompts, mode == "nudge", name(spec))
    first = next(iter(res["read"].values()))
    for how in JUDGE if args.judge != "none" else ():
        res["judge"][how] = judge(res["judge_model"], first, prompts, how)
    res["seconds"] = round(time.perf_counter() - t0)
    out = args.out or ROOT / "benchmarks" / "results" / f"reader_probe_{date.today().isoformat()}.json"
    out.write_text(json.dumps(res, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"results: {out}")
    print(show(res))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
