"""The README's two result tables, printed from the committed result files so they stay derived.

* `qa`: one row per `benchmarks/results/qa_eval_*.json` (held-out, then the dev2 set): the base's
  accuracy and the compared model's accuracy, cited share, citation precision and leaks.
* `runs`: one row per candidate in `benchmarks/results/candidates.json` (run number, what it tried,
  its `truffle train` report); every figure is read from that report's objective table, so the
  only hand-written column is "what it tried".

    python -m benchmarks.results_tables            # both, as Markdown
    python -m benchmarks.results_tables --check README.md   # exit 1 if a row is missing or differs
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

RESULTS = Path(__file__).resolve().parent / "results"

# "| toolcall | 0.807 | 0.739 |": the objective, then its first temperature's figure (more columns
# follow when the run was evaluated at several temperatures)
_ROW = re.compile(r"^\| ([a-z ]+) \| ([^|]+) \|.*\|$", re.M)
_NUM = re.compile(r"\d+(?:\.\d+)?")


def report_figures(text: str) -> dict:
    """The figures of one eval report (`truffle train`'s `report.md`) at its first temperature."""
    rows = {name.strip(): cell.strip() for name, cell in _ROW.findall(text)}
    missing = {"toolcall", "markdown", "classification", "privacy", "qa", "adversarial failures", "leaks"} - set(rows)
    if missing:
        raise ValueError(f"report without {sorted(missing)} rows")
    qa = _NUM.findall(rows["qa"]) or ["—"]  # "0.485 (cited 1.000, precision 0.609)"; "–" when not asked
    gate = re.search(r"\*\*Gate: (\w+)\*\*", text)
    return {"toolcall": rows["toolcall"].split()[0], "markdown": rows["markdown"].split()[0],
            "classification": rows["classification"].split()[0], "privacy": rows["privacy"].split()[0],
            "qa": qa[0], "precision": qa[-1] if len(qa) > 1 else "—",
            "adversarial": rows["adversarial failures"], "leaks": rows["leaks"],
            "gate": gate.group(1).lower() if gate else "?"}


def run_rows(candidates: list[dict], results: Path = RESULTS) -> list[str]:
    out = ["| run | what it tried | ref. | tool calls | Markdown | class. | privacy | QA / precision | adv. / leaks | gate |",
           "|---|---|---|---|---|---|---|---|---|---|"]
    for c in candidates:
        f = report_figures((results / c["report"]).read_text(encoding="utf-8"))
        out.append(f"| {c['run']} | {c['what']} | {c['ref']} | {f['toolcall']} | {f['markdown']} | "
                   f"{f['classification']} | {f['privacy']} | {f['qa']} / {f['precision']} | "
                   f"{f['adversarial']} / {f['leaks']} | {f['gate']} |")
    return out


def qa_rows(paths: list[Path], notes: dict[str, str]) -> list[str]:
    out = ["| results file | base accuracy | compared model (run) | its accuracy | cited share | citation precision | leaks |",
           "|---|---|---|---|---|---|---|"]
    for p in paths:
        d = json.loads(p.read_text(encoding="utf-8"))
        base, tuned = d["summary"]["base"], d["summary"][next(k for k in d["summary"] if k != "base")]
        model = notes.get(f"{p.name}:model") or _run_of(d)
        out.append(f"| `{p.name}`{notes.get(p.name, '')} | {base['accuracy']:.3f} | {model} | {tuned['accuracy']:.3f} | "
                   f"{tuned['cited_share']:.3f} | {tuned['citation_precision']:.3f} | {tuned['leaks']} |")
    return out


def _run_of(d: dict) -> str:
    """The compared model's run id, read off its GGUF path (…/runs/<run>/…), else its label."""
    models = d.get("models") or {}
    other = next((v for k, v in models.items() if k != "base"), "")
    m = re.search(r"\d{8}-\d{6}-[0-9a-f]{8}", json.dumps(other))
    return m.group(0) if m else next((k for k in models if k != "base"), "?")


def tables(results: Path = RESULTS) -> str:
    meta = json.loads((results / "candidates.json").read_text(encoding="utf-8"))
    files = sorted(results.glob("qa_eval_*.json"))
    heldout = [p for p in files if "-dev2" not in p.name]
    dev2 = [p for p in files if "-dev2" in p.name]
    notes = meta.get("qa_notes", {})
    return "\n".join(["Held-out:", "", *qa_rows(heldout, notes), "", "dev2:", "", *qa_rows(dev2, notes), "",
                      "Candidates:", "", *run_rows(meta["runs"], results)]) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--check", type=Path, help="a README: exit 1 unless it holds every printed table row")
    args = ap.parse_args(argv)
    text = tables()
    if args.check is None:
        sys.stdout.write(text)
        return 0
    readme = set(args.check.read_text(encoding="utf-8").splitlines())
    missing = [ln for ln in text.splitlines() if ln.startswith("| ") and ln not in readme]
    for ln in missing:
        print(f"{args.check}: row missing or different: {ln}")
    return 1 if missing else 0


if __name__ == "__main__":
    sys.exit(main())
