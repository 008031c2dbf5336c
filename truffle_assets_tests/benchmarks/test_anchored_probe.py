"""The anchored-question probe's report: answers off vs on per model, and what retrieval gained or lost."""

from __future__ import annotations

from benchmarks.anchored_probe import show
from truffle_assets.evals.qa import Question, score_answer


def _row(question, body, right_key, cite="aa11"):
    q = Question(id="q", question=question, kind="temporal", keys=[right_key], evidence=["aa11"])
    s = score_answer(q, body, [cite], {"aa11": f"I was at {right_key}"})
    return {"id": q.id, "source": "s", "kind": "temporal", "question": question, "answer": body, "refused": False,
            "fallback": None, "ms": 1000, "evidence_shown": cite == "aa11", **s}


def test_the_last_line_counts_right_answers_per_setting_and_the_prompts_that_show_the_fact(capsys):
    q = "Where did I work before Northwind?"
    res = {"shown": {"off": {"s21|a": False, "s21|b": True}, "on": {"s21|a": True, "s21|b": True}},
           "answers": {"tuned": {"off": [_row(q, "You worked at Northwind [msg:bb22].", "Zentrix", "bb22")],
                                 "on": [_row(q, "You worked at Zentrix [msg:aa11].", "Zentrix")]}}}
    line = show(res)
    assert line == "anchored tuned off=0/1 on=1/1 shown off=1/2 on=2/2"
    out = capsys.readouterr().out
    assert "gained: s21|a" in out and "lost:" not in out
    assert "-- ok  'Where did I work before Northwind?'" in out
