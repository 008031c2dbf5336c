"""The abstention sweep scores each threshold from one set of answers, exactly as the gate would."""

from __future__ import annotations

from benchmarks.abstain_sweep import choose, sweep, withheld
from truffle_assets.evals.qa import says_absent
from truffle_assets.runtime.prompts import text


def _row(i, kind, correct, min_p, cited=True, refused=False):
    return {"id": f"q{i}", "source": "s", "kind": kind, "correct": correct, "cited": cited,
            "n_citations": int(cited), "precise_citations": int(cited and correct), "unsupported": False,
            "leak": False, "refused": refused, "fallback": None, "ms": 1000,
            "confidence": None if min_p is None else {"min_p": min_p, "mean_p": min_p}}


ROWS = [_row(0, "current", True, 0.9), _row(1, "current", False, 0.3), _row(2, "none", False, 0.2),
        _row(3, "none", False, 0.6), _row(4, "current", True, 0.25), _row(5, "secret", True, None, False, True)]


def test_a_withheld_claim_is_right_only_where_nothing_answers_and_cites_nothing():
    # the sweep scores the runtime's "not in memory" as the QA scorer does: it reads as absent
    assert says_absent(text("low_confidence"))
    w = {r["id"]: r for r in withheld(ROWS, 0.35)}
    assert w["q2"]["correct"] and not w["q1"]["correct"] and not w["q4"]["correct"]
    assert all(w[q]["n_citations"] == 0 and w[q]["abstained"] for q in ("q1", "q2", "q4"))
    assert w["q0"] == ROWS[0] and w["q3"] == ROWS[3] and w["q5"] == ROWS[5]  # sure claims and refusals stand
    assert withheld(ROWS, None) == ROWS


def test_each_threshold_counts_what_it_gains_and_loses_and_ties_go_to_the_smaller():
    by_t = {x["t"]: x for x in sweep(ROWS)}
    assert (by_t[None]["accuracy"], by_t[None]["none_right"], by_t[None]["lost"]) == (0.5, 0, 0)
    assert (by_t[0.25]["none_right"], by_t[0.25]["lost"], by_t[0.25]["abstained"]) == (1, 0, 1)
    assert by_t[0.25]["accuracy"] == round(4 / 6, 3)
    assert (by_t[0.3]["none_right"], by_t[0.3]["lost"]) == (1, 1)  # q4 (p 0.25) is withheld too
    assert by_t[0.3]["accuracy"] == 0.5
    assert choose(sweep(ROWS))["t"] == 0.25  # 0.25 is the smallest threshold with the best accuracy
