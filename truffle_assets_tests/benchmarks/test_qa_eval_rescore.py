"""`qa_eval.py --rescore`: recorded answers scored again by today's scorer, with no model."""

import json

from benchmarks.qa_eval import main as qa_eval


def _row(question, kind, keys, answer, correct, **kw):
    return {"id": question, "source": "heldout-natural", "kind": kind, "question": question, "keys": keys,
            "answer": answer, "citations": ["ab12"], "fallback": None, "refused": False, "ms": 1000,
            "correct": correct, "cited": True, "n_citations": 1, "precise_citations": 0,
            "unsupported": False, "leak": False, "evidence_shown": True, **kw}


def test_rescore_applies_todays_number_rule(tmp_path, capsys):
    rows = [_row("How many days a week do I go to the office?", "current", ["3 days a week"],
                 "You go to the office 5 days a week [msg:ab12].", True),  # what the old scorer said
            _row("Where do I work now?", "current", ["Razorpay"], "You work at Razorpay [msg:ab12].", True),
            _row("Am I vegetarian?", "yesno", [], "No, you eat chicken now [msg:ab12].", True)]
    results = tmp_path / "qa.json"
    results.write_text(json.dumps({"models": {}, "summary": {}, "rows": {"base": rows, "tuned": rows}}))
    assert qa_eval(["--rescore", str(results)]) == 0
    out = capsys.readouterr().out
    assert "2 answers scored differently today" in out  # the office answer, once per model
    assert out.strip().splitlines()[-1] == ("qa_accuracy_base=0.667 qa_accuracy=0.667 "
                                            "cited_share=1.000 citation_precision=0.000")
    assert json.loads(results.read_text())["rows"]["base"][0]["correct"] is True  # the file is left as it was


def test_rescore_does_not_count_a_name_given_to_the_user(tmp_path, capsys):
    rows = [_row("Who am I married to?", "current", ["Ishita"], "I am Ishita.", True),
            _row("Who is my wife?", "current", ["Ishita"], "You are married to Ishita [msg:ab12].", True)]
    results = tmp_path / "qa.json"
    results.write_text(json.dumps({"models": {}, "summary": {}, "rows": {"base": rows, "tuned": rows}}))
    assert qa_eval(["--rescore", str(results)]) == 0
    out = capsys.readouterr().out
    assert "2 answers scored differently today" in out
    assert out.strip().splitlines()[-1].startswith("qa_accuracy_base=0.500 qa_accuracy=0.500 ")


def test_base_answers_from_another_runtime_are_refused(tmp_path, capsys, monkeypatch):
    """`--base-from` reuses the base's answers only when they went through today's runtime and a
    memory built by today's extractor: otherwise the base and the tuned model read different prompts."""
    import pytest

    from truffle_assets.evals import qa
    from truffle_assets.memory.facts import extraction

    earlier = tmp_path / "qa.json"
    earlier.write_text(json.dumps({"models": {"base": {}}, "runtime": qa.runtime_fingerprint(),
                                   "summary": {}, "rows": {"base": []}}))
    monkeypatch.setattr(extraction, "EXTRACTOR_VERSION", "parse-next")  # a new extractor: a new memory
    with pytest.raises(SystemExit):
        qa_eval(["--base-from", str(earlier), "--tuned", str(tmp_path / "m.gguf"), "--work", str(tmp_path)])
    assert "ask the base again" in capsys.readouterr().err
    assert not (tmp_path / "stores").exists()  # refused before any memory was built or model asked
    monkeypatch.undo()
    earlier.write_text(json.dumps({"models": {"base": {}}, "summary": {}, "rows": {"base": []}}))
    with pytest.raises(SystemExit):  # a results file from before runtimes were recorded
        qa_eval(["--base-from", str(earlier), "--tuned", str(tmp_path / "m.gguf"), "--work", str(tmp_path)])
    assert "(not recorded)" in capsys.readouterr().err
