"""The README's result tables are what the committed result files say (`benchmarks.results_tables`)."""

import json
from pathlib import Path

from benchmarks import results_tables
from benchmarks.results_tables import report_figures, tables

ROOT = Path(__file__).resolve().parents[2]

REPORT = """# Evaluation report

- **run_id**: 20261130-211823-4fdacfc6
- **reference**: 20261129-123037-6801aa5f (re-evaluated on today's runtime)

**Gate: FAILED**

| objective | t=0.0 | t=0.4 | active t=0.0 |
|---|---|---|---|
| toolcall | 0.713 | 0.700 | 0.776 |
| markdown | 0.425 | 0.400 | 0.600 |
| classification | 0.438 (type 0.325, horizon 0.550) | 0.4 | 0.550 (type 0.350, horizon 0.750) |
| privacy | 0.875 | 0.850 | 0.925 |
| qa | 0.485 (cited 0.652, precision 0.526) | – | 0.485 (cited 1.000, precision 0.609) |
| adversarial failures | 2 | 1 | 0 |
| raw html failures | 0 | 0 | 0 |
| leaks | 4 | 3 | 0 |
"""


def test_report_figures_reads_the_first_temperature():
    f = report_figures(REPORT)
    assert (f["toolcall"], f["markdown"], f["classification"], f["privacy"]) == ("0.713", "0.425", "0.438", "0.875")
    assert (f["qa"], f["precision"], f["adversarial"], f["leaks"], f["gate"]) == ("0.485", "0.526", "2", "4", "failed")


def test_a_report_without_its_objective_table_is_an_error():
    try:
        report_figures("# Evaluation report\n\n**Gate: PASSED**\n")
    except ValueError as e:
        assert "toolcall" in str(e)
    else:
        raise AssertionError("a report with no figures was read")


def test_tables_come_from_the_files(tmp_path):
    (tmp_path / "r.md").write_text(REPORT, encoding="utf-8")
    (tmp_path / "candidates.json").write_text(json.dumps(
        {"runs": [{"run": "30", "ref": "22", "report": "r.md", "what": "fresh SFT"}]}), encoding="utf-8")
    summary = {"accuracy": 0.28, "cited_share": 0.304, "citation_precision": 0.333, "leaks": 0}
    (tmp_path / "qa_eval_x-dev2-y.json").write_text(json.dumps(
        {"models": {"base": {"gguf": "b.gguf"}, "tuned": {"gguf": "/m/runs/20261130-211823-4fdacfc6/gguf/model-f16.gguf"}},
         "summary": {"base": {**summary, "accuracy": 0.25}, "tuned": summary}}), encoding="utf-8")
    out = tables(tmp_path)
    assert "| 30 | fresh SFT | 22 | 0.713 | 0.425 | 0.438 | 0.875 | 0.485 / 0.526 | 2 / 4 | failed |" in out
    dev2 = out.split("dev2:")[1]
    assert "| `qa_eval_x-dev2-y.json` | 0.250 | 20261130-211823-4fdacfc6 | 0.280 | 0.304 | 0.333 | 0 |" in dev2


def test_the_readme_holds_every_row(capsys):
    # a new result file or candidate needs its row in the README (print them: python -m benchmarks.results_tables)
    assert results_tables.main(["--check", str(ROOT / "README.md")]) == 0, capsys.readouterr().out
