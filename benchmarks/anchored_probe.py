""""Before X" / "after X" questions with the timeline on and off (`RuntimeConfig.timeline`). Validation only.

    .venv/bin/python -m benchmarks.anchored_probe                     # the active model, ~6 min
    .venv/bin/python -m benchmarks.anchored_probe --tuned <gguf> --base   # + the untuned base
    .venv/bin/python -m benchmarks.anchored_probe --from benchmarks/results/anchored_probe_<date>.json

The questions are the abstention sweep's validation set, never the held-out ones: dev2's 25
annotated questions (`benchmarks/devset2`) and the `train` phrasings of synthetic seeds 21 and 22.
* **retrieval** (no model): for every answerable one, does the first-round prompt
  (`ChatService.compose`) show a message that states the fact, with the timeline off and on?
* **answers**: the ones with a before/after anchor (`runtime.timeline.anchor_of`) are asked through
  the whole turn (`evals.qa.ask_endpoint`), timeline off and on, and scored by the QA scorer. A
  question without an anchor takes the same path either way, so these are every answer it can change.
Last line: `anchored <model> off=<right>/<n> on=<right>/<n> ... shown off=<k>/<m> on=<k>/<m>`.
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

from benchmarks.abstain_sweep import validation_sets  # noqa: E402
from benchmarks.qa_eval import QA_WORK, _printer  # noqa: E402
from truffle_assets.evals.qa import summarize_rows  # noqa: E402

def shown(sets, work: Path) -> dict[str, dict[str, bool]]:
    """"off"/"on" -> {set|question: the first-round prompt shows a message stating the fact}."""
    from truffle_assets.llm.gguf import qwen_gguf
    from truffle_assets.runtime.config import EndpointConfig, RuntimeConfig
    from truffle_assets.runtime.service import open_service

    out: dict[str, dict[str, bool]] = {"off": {}, "on": {}}
    for name, published, questions, today, _ in sets:
        for mode in out:
            # compose never calls the model; the embedded server only fixes the embedded budget
            cfg = RuntimeConfig(published_dir=published, store_dir=work / "stores" / "anchored" / name,
                                endpoint=EndpointConfig(gguf=str(qwen_gguf())), transcripts=False,
                                timeline=mode == "on")
            with open_service(cfg) as svc:
                for q in questions:
                    if q.kind in ("none", "secret"):
                        continue
                    st = svc.compose(q.question, today=today)
                    if not st.get("refused"):
                        out[mode][f"{name}|{q.question}"] = bool(set(q.evidence) & set(st.get("context_ids") or []))
    return out


def answers(label: str, gguf: str, sets, work: Path) -> dict[str, list[dict]]:
    """"off"/"on" -> the anchored questions' scored rows for one model."""
    from truffle_assets.evals.qa import ask_endpoint
    from truffle_assets.runtime.timeline import anchor_of

    out: dict[str, list[dict]] = {}
    for mode in ("off", "on"):
        rows: list[dict] = []
        for name, published, questions, today, secrets in sets:
            qs = [q for q in questions if anchor_of(q.question)]
            rows += ask_endpoint({"gguf": gguf}, published, work / "stores" / f"anchored-{label}" / name, qs, today,
                                 secrets, progress=_printer(f"{label}/{mode}/{name}"),
                                 options={"timeline": mode == "on"})
        out[mode] = rows
    return out


def show(res: dict) -> str:
    s = res["shown"]
    print(f"\nfirst-round prompt shows the fact (answerable validation questions): "
          f"off {sum(s['off'].values())}/{len(s['off'])}, on {sum(s['on'].values())}/{len(s['on'])}")
    for key in s["on"]:
        if s["on"][key] != s["off"].get(key):
            print(f"  {'gained' if s['on'][key] else 'lost'}: {key}")
    parts = []
    for label, modes in res["answers"].items():
        print(f"\n{label}: {len(modes['on'])} anchored questions")
        print(f"{'timeline':>9}{'right':>7}{'shown':>7}{'cited':>7}{'precision':>11}{'median s':>10}")
        for mode, rows in modes.items():
            x = summarize_rows(rows)
            print(f"{mode:>9}{sum(r['correct'] for r in rows):>7}{x['evidence_shown']:>7}{x['cited_share']:>7.3f}"
                  f"{x['citation_precision']:>11.3f}{(x['median_ms'] or 0) / 1000:>10.1f}")
        for off, on in zip(modes["off"], modes["on"]):
            print(f"  {'ok' if off['correct'] else '--'} {'ok' if on['correct'] else '--'}  {on['question'][:50]!r}: "
                  f"{off['answer'][:60]!r} -> {on['answer'][:60]!r}")
        parts.append(f"{label} off={sum(r['correct'] for r in modes['off'])}/{len(modes['off'])} "
                     f"on={sum(r['correct'] for r in modes['on'])}/{len(modes['on'])}")
    line = (f"anchored {' '.join(parts)} shown off={sum(s['off'].values())}/{len(s['off'])} "
            f"on={sum(s['on'].values())}/{len(s['on'])}")
    print(line)
    return line


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--tuned", default=None, help="the compared GGUF (default: the registry's active model)")
    ap.add_argument("--base", action="store_true", help="also the untuned embedded base")
    ap.add_argument("--work", type=Path, default=QA_WORK)
    ap.add_argument("--out", type=Path, default=None)
    ap.add_argument("--from", dest="from_", type=Path, default=None, metavar="RESULTS", help="re-print a saved run")
    args = ap.parse_args(argv)
    if args.from_:
        show(json.loads(args.from_.read_text(encoding="utf-8")))
        return 0

    from truffle_assets.evals.qa import runtime_fingerprint
    from truffle_assets.llm.gguf import active_gguf, qwen_gguf

    t0 = time.perf_counter()
    sets = validation_sets(args.work)
    models = {"tuned": str(args.tuned or active_gguf())}
    if args.base:
        models["base"] = str(qwen_gguf())
    res = {"models": models, "runtime": runtime_fingerprint(), "shown": shown(sets, args.work),
           "answers": {label: answers(label, g, sets, args.work) for label, g in models.items()}}
    res["seconds"] = round(time.perf_counter() - t0)
    out = args.out or ROOT / "benchmarks" / "results" / f"anchored_probe_{date.today().isoformat()}.json"
    out.write_text(json.dumps(res, indent=1, ensure_ascii=False), encoding="utf-8")
    print(f"results: {out}")
    show(res)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
