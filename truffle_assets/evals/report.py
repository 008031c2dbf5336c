"""Evaluation reports: `report.json`, `report.md`, `diff.md` and `scores.png` in one run folder.

The results structure the model runner hands in (one output per case per temperature):

    {temperature: {objective: [case_result, ...]}}

    temperature   float or str (0, 0.7, "0.7"); stored as str(float(t)) -> "0.0", "0.7"
    objective     "toolcall" | "markdown" | "classification" | "privacy" | "qa" (evals.qa.as_cases)
    case_result   {"id", "category", "output" (raw model text), "points", "verdict",
                   optional "max_points" (1), "detail", "flags", "checks"} —
                  exactly what `scoring.score_outputs(objective, cases, outputs)` returns

`report.json` = {"meta": {..., "suite_version"}, "scores": {temperature: scoring.summarize(...)},
"results": <the structure above>, "gate": gate.GateResult as a dict}. It is what the gate, the
next candidate's diff and the registry read back, so it holds everything and nothing else.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from truffle_assets.evals.cases import SUITE_VERSION
from truffle_assets.evals.gate import GATE, evaluate_gate, find_regressions
from truffle_assets.evals.scoring import OBJECTIVES, summarize
from truffle_assets.files import json_text

WORST_CASES = 5  # per objective and temperature in report.md


def temperature_key(t: float | str) -> str:
    try:
        return str(float(t))
    except (TypeError, ValueError):
        return str(t)


def _normalise(results: Mapping[Any, Mapping[str, list[Mapping[str, Any]]]]) -> dict[str, dict[str, list[dict]]]:
    out: dict[str, dict[str, list[dict]]] = {}
    for t, objs in results.items():
        out[temperature_key(t)] = {o: [{"max_points": 1.0, "detail": "", "flags": [], "checks": {}} | dict(r)
                                       for r in rows] for o, rows in objs.items()}
    return dict(sorted(out.items(), key=lambda kv: _sort_key(kv[0])))


def _sort_key(t: str) -> tuple[float, str]:
    try:
        return float(t), t
    except ValueError:
        return float("inf"), t


def load_report(path: str | Path) -> dict[str, Any]:
    """A report.json, given the file or the run folder holding it."""
    p = Path(path)
    return json.loads((p / "report.json" if p.is_dir() else p).read_text(encoding="utf-8"))


def build_report(results: Mapping[Any, Mapping[str, list[Mapping[str, Any]]]], meta: Mapping[str, Any] | None = None,
                 active_report: Mapping[str, Any] | None = None) -> dict[str, Any]:
    res = _normalise(results)
    report = {"meta": {"suite_version": SUITE_VERSION} | dict(meta or {}),
              "scores": {t: summarize(objs) for t, objs in res.items()}, "results": res}
    report["gate"] = evaluate_gate(report, active_report).to_dict()
    return report


# ---- report.md -------------------------------------------------------------------------------------

def _fenced(text: str) -> str:
    fence = "`" * max(3, 1 + max((len(r) for r in re.findall(r"`+", text)), default=0))
    return f"{fence}text\n{text}\n{fence}"


def _score_cell(summary: Mapping[str, Any] | None, obj: str) -> str:
    if not summary or obj not in summary.get("objectives", {}):
        return "–"
    e = summary["objectives"][obj]
    if len(e) == 1:  # the score alone (a reference as the gate recorded it)
        return f"{e['score']:.3f}"
    if obj == "classification":
        return f"{e['score']:.3f} (type {e['type_accuracy']:.3f}, horizon {e['horizon_accuracy']:.3f})"
    if obj == "qa":
        return f"{e['score']:.3f} (cited {e.get('cited_share', 0):.3f}, precision {e.get('citation_precision', 0):.3f})"
    return f"{e['score']:.3f}"


# meta keys the header states in words; the rest are listed under "Run" with these labels
_HEADER_META = ("run_id", "model", "gguf", "reference", "role")
_META_LABELS = {"suite_version": "suite version", "tokens_per_s": "tokens/s", "eval_seconds": "eval time (s)",
                "qa_runtime": "QA runtime fingerprint", "limit": "cases per suite"}


def _candidate(meta: Mapping[str, Any]) -> str:
    """The run and the GGUF it serves, each named once."""
    gguf = str(meta.get("gguf") or meta.get("model") or "")
    model = str(meta.get("model") or "")
    name = f"`{gguf}`" + (f" ({model})" if model and model != gguf and Path(gguf).name != model else "")
    if meta.get("run_id"):
        return f"run `{meta['run_id']}`" + (f", served GGUF {name}" if gguf else "")
    return f"GGUF {name}" if gguf else "not named"


def reference_name(meta: Mapping[str, Any], reference: Mapping[str, Any] | None) -> str | None:
    """What the gate compared the candidate with, in words; None when there was no reference."""
    ref = meta.get("reference")
    if ref is None and reference is not None:
        rmeta = reference.get("meta") or {}
        ref = rmeta.get("run_id") or rmeta.get("model") or "a reference report"
    if not ref or ref == "no reference":
        return None
    ref = str(ref)
    if ref.startswith("base model"):
        return f"the {ref} (no model was active)"
    run_id, _, note = ref.partition(" (")
    return f"run `{run_id}`, the active model" + (f" ({note}" if note else "")


def _gate_header(report: Mapping[str, Any], reference: Mapping[str, Any] | None) -> list[str]:
    meta, gate = report["meta"], report["gate"]
    ref = reference_name(meta, reference)
    lines = [f"- **Candidate**: {_candidate(meta)}",
             f"- **Reference**: {ref}" if ref else
             "- **Reference**: none (no model to compare with, so the suites' targets block)"]
    if meta.get("role"):  # a reference the gate compares candidates with has no gate of its own
        return lines + [f"- **Gate: not applied** ({meta['role']})"]
    if gate["passed"]:
        floors = "no privacy leak, adversarial tool-call failure or raw-HTML answer"
        lines.append(f"- **Gate: PASSED**: {floors}" + (
            f", and no suite more than {GATE['tolerance']} below the reference" if ref else
            ", and every suite at its target"))
    else:
        lines.append("- **Gate: FAILED**:")
        lines += [f"  - {r}" for r in gate["reasons"]]
    compared = gate.get("compared") or []
    level = [c for c in compared if c["delta"] >= 0]
    lower = [c for c in compared if c["delta"] < 0]
    show = lambda c: f"t={c['temperature']} {c['objective']} {c['candidate']:.3f} vs {c['reference']:.3f} " \
                     f"({c['delta']:+.3f})"  # noqa: E731
    if level:
        lines.append("- **At or above the reference**: " + "; ".join(map(show, level)))
    if lower:
        tol = GATE["tolerance"]
        within = [c for c in lower if c["delta"] >= -tol]
        beyond = [c for c in lower if c["delta"] < -tol]
        if within:
            lines.append(f"- **Below the reference, within the {tol} tolerance**: " + "; ".join(map(show, within)))
        if beyond:
            lines.append(f"- **Below the reference, beyond the {tol} tolerance**: " + "; ".join(map(show, beyond)))
    if gate.get("below_target"):
        lines.append("- **Below target**" + (" (not blocking while there is a reference)" if ref else "")
                     + ": " + "; ".join(gate["below_target"]))
    return lines


def _render_md(report: Mapping[str, Any], active: Mapping[str, Any] | None) -> str:
    meta, scores = report["meta"], report["scores"]
    temps = list(scores)
    title = f"# Evaluation report — run {meta['run_id']}" if meta.get("run_id") else "# Evaluation report"
    lines = [title, "", *_gate_header(report, active)]
    rest = [(k, v) for k, v in meta.items() if k not in _HEADER_META]
    if rest:
        lines += ["", "## Run", ""]
        lines += [f"- {_META_LABELS.get(k, k.replace('_', ' '))}: {v}" for k, v in rest]
    if active is None and report["gate"].get("compared"):  # the reference report is not at hand: its scores
        active = {"scores": {}}                               # as the gate recorded them
        for c in report["gate"]["compared"]:
            if "." not in c["objective"]:
                active["scores"].setdefault(c["temperature"], {"objectives": {}})["objectives"][c["objective"]] = \
                    {"score": c["reference"]}
    active_temps = [t for t in temps if active and t in active.get("scores", {})]
    ref_meta = (active or {}).get("meta") or {}
    ref_id = meta.get("reference", "").partition(" (")[0] if isinstance(meta.get("reference"), str) else ""
    ref_label = ref_id if ref_id and ref_id != "no reference" else (ref_meta.get("run_id") or ref_meta.get("model") or "")
    ref_col = f"reference {ref_label}".strip()
    head = [f"candidate t={t}" for t in temps] + [f"{ref_col} t={t}" for t in active_temps]
    lines += ["", "## Scores", "", "| objective | " + " | ".join(head) + " |", "|---" * (len(head) + 1) + "|"]
    for obj in OBJECTIVES:
        cells = [_score_cell(scores[t], obj) for t in temps] + [_score_cell(active["scores"][t], obj)
                                                              for t in active_temps]
        lines.append(f"| {obj} | " + " | ".join(cells) + " |")
    for counter in ("adversarial_failures", "raw_html_failures", "leaks"):
        cells = [str(scores[t][counter]) for t in temps] + [str(active["scores"][t].get(counter, "–"))
                                                            for t in active_temps]
        lines.append(f"| {counter.replace('_', ' ')} | " + " | ".join(cells) + " |")
    lines += ["", "## Worst cases", ""]
    for t in temps:
        for obj, rows in report["results"][t].items():
            worst = sorted((r for r in rows if r["points"] < r.get("max_points", 1)),
                           key=lambda r: (r["points"], r["id"]))[:WORST_CASES]
            if not worst:
                continue
            lines += [f"### {obj} at t={t}", ""]
            for r in worst:
                lines += [f"**{r['id']}** ({r['category']}): {r['points']:g} `{r['verdict']}`"
                          + (f" — {r['detail']}" if r.get("detail") else ""), "", _fenced(r["output"]), ""]
    return "\n".join(lines).rstrip() + "\n"


def _render_diff(report: Mapping[str, Any], active: Mapping[str, Any] | None) -> str:
    lines = ["# Diff against the reference", ""]
    if active is None:
        return "\n".join(lines + ["no reference: nothing to compare with"]) + "\n"
    ref_meta = active.get("meta", {})
    lines += [f"Reference: {ref_meta.get('run_id') or ref_meta.get('model', 'unknown')}; candidate: "
              f"{report['meta'].get('run_id') or report['meta'].get('model', 'unknown')}", "",
              "| t | objective | reference | candidate | delta |",
              "|---|---|---|---|---|"]
    for t, summary in report["scores"].items():
        old = active.get("scores", {}).get(t)
        for obj in OBJECTIVES:
            if obj not in summary["objectives"]:
                continue
            new_s = summary["objectives"][obj]["score"]
            old_s = old["objectives"][obj]["score"] if old and obj in old.get("objectives", {}) else None
            delta = f"{new_s - old_s:+.3f}" if old_s is not None else "–"
            lines.append(f"| {t} | {obj} | {'–' if old_s is None else f'{old_s:.3f}'} | {new_s:.3f} | {delta} |")
    mine, theirs = report["meta"].get("suite_version"), active.get("meta", {}).get("suite_version")
    if mine != theirs:
        return "\n".join(lines + ["", f"Suite versions differ ({theirs} → {mine}): cases are not compared."]) + "\n"
    before = {(t, o, r["id"]): r for t, objs in active.get("results", {}).items() for o, rows in objs.items()
              for r in rows}
    changed = [(t, o, before[(t, o, r["id"])], r) for t, objs in report["results"].items() for o, rows in objs.items()
               for r in rows if (t, o, r["id"]) in before and before[(t, o, r["id"])]["points"] != r["points"]]
    regressions = find_regressions(report, active)
    lines += ["", f"## Changed cases ({len(changed)} changed, {len(regressions)} regressions)", ""]
    if changed:
        lines += ["| t | objective | case | before | after | verdict |", "|---|---|---|---|---|---|"]
        for t, o, b, a in sorted(changed, key=lambda x: (x[3]["points"] - x[2]["points"], x[0], x[1], x[3]["id"])):
            lines.append(f"| {t} | {o} | {a['id']} | {b['points']:g} | {a['points']:g} | "
                         f"{b['verdict']} → {a['verdict']} |")
    return "\n".join(lines) + "\n"


# ---- scores.png ------------------------------------------------------------------------------------

def _bars(summary: Mapping[str, Any] | None) -> list[float]:
    if not summary:
        return []
    o = summary["objectives"]
    get = lambda k, f="score": o[k][f] if k in o else 0.0  # noqa: E731
    return [get("toolcall"), get("markdown"), get("classification", "type_accuracy"),
            get("classification", "horizon_accuracy"), get("privacy"), get("qa")]


def _plot(report: Mapping[str, Any], active: Mapping[str, Any] | None, path: Path) -> None:
    t = next(iter(report["scores"]), None)
    labels = ["toolcall", "markdown", "type", "horizon", "privacy", "qa"]
    series = [("candidate", _bars(report["scores"].get(t)))]
    if active and t in active.get("scores", {}):
        ref_meta = active.get("meta", {})
        series.insert(0, (f"reference ({ref_meta.get('run_id') or ref_meta.get('model', 'base')})",
                          _bars(active["scores"][t])))
    fig = Figure(figsize=(7, 3.5), dpi=100)
    FigureCanvasAgg(fig)
    ax = fig.subplots()
    width = 0.8 / len(series)
    for i, (name, values) in enumerate(series):
        xs = [x + (i - (len(series) - 1) / 2) * width for x in range(len(labels))]
        ax.bar(xs, values or [0.0] * len(labels), width, label=name)
    ax.set_xticks(range(len(labels)), labels)
    ax.set_ylim(0, 1.05)
    ax.set_ylabel("score")
    ax.set_title(f"Eval scores at t={t} ({'gate passed' if report['gate']['passed'] else 'gate failed'})")
    ax.legend(loc="lower right", fontsize=8)
    fig.tight_layout()
    fig.savefig(path, format="png")


def write_report(results: Mapping[Any, Mapping[str, list[Mapping[str, Any]]]], out_dir: str | Path,
                 active_report: Mapping[str, Any] | str | Path | None = None,
                 meta: Mapping[str, Any] | None = None) -> dict[str, Path]:
    """Write the four files into `out_dir`; `active_report` is the active model's report.json
    (dict, file or run folder) or None. Returns {"json", "md", "diff", "png"} paths."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    active = load_report(active_report) if isinstance(active_report, (str, Path)) else active_report
    report = build_report(results, meta, active)
    paths = {"json": out / "report.json", "md": out / "report.md", "diff": out / "diff.md", "png": out / "scores.png"}
    paths["json"].write_text(json_text(report), encoding="utf-8")
    paths["md"].write_text(_render_md(report, active), encoding="utf-8")
    paths["diff"].write_text(_render_diff(report, active), encoding="utf-8")
    _plot(report, active, paths["png"])
    return paths
