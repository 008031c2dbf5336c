"""`benchmarks/qa_eval.py` as a person runs it: `--rescore` scores recorded answers again with no
model, and `--base-from` refuses answers asked through another runtime before building anything."""

import json
import subprocess
import sys

import pytest

from truffle_assets.paths import PROJECT_ROOT

pytestmark = pytest.mark.subprocess


def qa_eval(*argv: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "benchmarks.qa_eval", *argv], cwd=PROJECT_ROOT,
                          capture_output=True, text=True, timeout=300)


def _row(question, kind, keys, answer, correct, **kw):
    return {"id": question, "source": "heldout-natural", "kind": kind, "question": question, "keys": keys,
            "answer": answer, "citations": ["ab12"], "fallback": None, "refused": False, "ms": 1000,
            "correct": correct, "cited": True, "n_citations": 1, "precise_citations": 0,
            "unsupported": False, "leak": False, "evidence_shown": True, **kw}


def _results(tmp_path, rows):
    path = tmp_path / "qa.json"
    path.write_text(json.dumps({"models": {}, "summary": {}, "rows": {"base": rows, "tuned": rows}}))
    return path


def test_rescore_applies_todays_rules_and_leaves_the_file_alone(tmp_path):
    rows = [_row("How many days a week do I go to the office?", "current", ["3 days a week"],
                 "You go to the office 5 days a week [msg:ab12].", True),  # a wrong number scored right
            _row("Where do I work now?", "current", ["Razorpay"], "You work at Razorpay [msg:ab12].", True),
            _row("Am I vegetarian?", "yesno", [], "No, you eat chicken now [msg:ab12].", True),
            _row("Who am I married to?", "current", ["Ishita"], "I am Ishita.", True)]  # a name given to the user
    results = _results(tmp_path, rows)
    proc = qa_eval("--rescore", str(results))
    assert proc.returncode == 0, proc.stderr
    assert "4 answers scored differently today" in proc.stdout  # two answers, once per model
    assert proc.stdout.strip().splitlines()[-1] == ("qa_accuracy_base=0.500 qa_accuracy=0.500 "
                                                    "cited_share=1.000 citation_precision=0.000")
    assert json.loads(results.read_text())["rows"]["base"][0]["correct"] is True


def test_base_answers_from_another_runtime_are_refused_before_any_memory_is_built(tmp_path):
    earlier = tmp_path / "qa.json"
    for runtime, shown in (("another-runtime", "another-runtime"), (None, "(not recorded)")):
        earlier.write_text(json.dumps({"models": {"base": {}}, "summary": {}, "rows": {"base": []},
                                       **({"runtime": runtime} if runtime else {})}))
        proc = qa_eval("--base-from", str(earlier), "--tuned", str(tmp_path / "m.gguf"), "--work", str(tmp_path))
        assert proc.returncode == 2 and "ask the base again" in proc.stderr and shown in proc.stderr
        assert not (tmp_path / "stores").exists()  # refused before any memory was built or model asked
