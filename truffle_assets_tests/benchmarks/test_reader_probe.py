"""The reader probe's judge reads P(yes) from log-probabilities and scores withheld answers as the QA scorer would."""

from __future__ import annotations

import math

from benchmarks.reader_probe import auc, claim, name, p_yes, withheld
from truffle_assets.evals.qa import Question, score_answer


def test_p_yes_normalizes_over_the_yes_and_no_tokens_whatever_their_case_or_spacing():
    top = [{"token": "Yes", "logprob": math.log(0.3)}, {"token": " yes", "logprob": math.log(0.1)},
           {"token": "No", "logprob": math.log(0.4)}, {"token": "Maybe", "logprob": math.log(0.2)}]
    assert p_yes(top) == 0.5  # (0.3 + 0.1) / (0.3 + 0.1 + 0.4)
    assert p_yes([{"token": "The", "logprob": 0.0}]) == 0.5  # neither word: no opinion


def test_the_judged_claim_drops_citations_and_the_uncertainty_note():
    body = "You work at Tata Projects [msg:d4b0cb405dcbece281e0].\n\nUncertain: [msg:d4b0cb405dcbece281e0] — weak"
    assert claim(body) == "You work at Tata Projects."


def test_auc_counts_ties_as_half_and_orders_right_over_wrong():
    assert auc([0.9, 0.8], [0.1, 0.2]) == 1.0
    assert auc([0.1], [0.9]) == 0.0
    assert auc([0.5, 0.6], [0.5]) == 0.75
    assert math.isnan(auc([], [0.3]))


def _row(kind, body, keys=(), cites=("aa11bb22cc",)):
    q = Question(id="q", question="Where do I work?", kind=kind, keys=list(keys), evidence=["aa11bb22cc"])
    s = score_answer(q, body, list(cites), {"aa11bb22cc": "I joined Razorpay"})
    return {"id": q.id, "source": "s", "kind": kind, "refused": False, "fallback": None, "ms": 1, **s}


def test_an_answer_under_the_threshold_is_withheld_right_only_where_nothing_answers():
    rows = [_row("current", "You work at Razorpay [msg:aa11bb22cc].", ["Razorpay"]),
            _row("none", "You work at Zoho [msg:aa11bb22cc]."),
            _row("current", "You work at Zoho [msg:aa11bb22cc].", ["Razorpay"])]
    assert [r["correct"] for r in rows] == [True, False, False]
    w = withheld(rows, [0.9, 0.2, None], 0.5)
    assert w[0] == rows[0] and w[2] == rows[2]  # above the threshold, or nothing judged: it stands
    assert w[1]["correct"] and w[1]["n_citations"] == 0 and not w[1]["cited"]
    lost = withheld(rows, [0.2, 0.9, 0.9], 0.5)
    assert not lost[0]["correct"] and lost[0]["precise_citations"] == 0


def test_a_reader_is_named_by_its_run_folder_or_file():
    assert name("models/runs/20261201-013907-e62e794c/gguf/model-f16.gguf") == "20261201-013907-e62e794c"
    assert name("models/qwen2.5-coder-1.5b.gguf:nudge") == "qwen2.5-coder-1.5b+nudge"


def test_stored_replies_to_unanswerable_questions_are_read_again_with_todays_scorer():
    from benchmarks.reader_probe import rescored

    rows = [{"kind": "none", "answer": "Not in my memory.", "correct": False, "unsupported": True},
            {"kind": "none", "answer": "Your cat is Bruno [msg:aa11bb22cc].", "correct": False, "unsupported": True},
            {"kind": "current", "answer": "Not in my memory.", "correct": False, "unsupported": False}]
    again = rescored(rows)
    assert again[0]["correct"] and not again[0]["unsupported"]
    assert again[1] == rows[1] | {"correct": False, "unsupported": True}
    assert again[2] is rows[2]  # an answerable question's score needs its keys: it stands
