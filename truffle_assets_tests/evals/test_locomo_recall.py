"""LoCoMo evidence recall (`evals.locomo`) on hand-made rankings (no data needed)."""

import pytest

from truffle_assets.evals import locomo as lr

SESSION = {"a1": 1, "a2": 1, "a3": 1, "b1": 2, "c1": 3, "d1": 4}


def test_turn_recall_counts_evidence_turns_in_the_top_k():
    assert lr.recall(["a1", "b1", "c1"], ["b1", "d1"], 2) == 0.5
    assert lr.recall(["a1", "b1", "c1"], ["b1", "d1"], 10) == 0.5


def test_strict_session_recall_only_sees_the_sessions_of_the_top_k_turns():
    ranked = ["a1", "a2", "a3", "b1", "c1"]
    assert lr.session_recall(ranked, frozenset({1, 3}), SESSION, 3) == 0.5  # three turns, one session


def test_session_units_rank_each_session_at_its_best_turn():
    ranked = ["a1", "a2", "a3", "b1", "c1"]
    # as units the same ranking reads 1, 2, 3: both evidence sessions are in the first 3
    assert lr.session_unit_recall(ranked, frozenset({1, 3}), SESSION, 3) == 1.0
    assert lr.session_unit_recall(ranked, frozenset({1, 3}), SESSION, 2) == 0.5
    # a session none of whose turns was retrieved is missed, however large k is
    assert lr.session_unit_recall(ranked, frozenset({4}), SESSION, 10) == 0.0
    assert lr.session_unit_recall(["zz"] + ranked, frozenset({2}), SESSION, 2) == 1.0  # unknown ids are skipped


@pytest.mark.parametrize("conv,dev", [("conv-26", True), ("conv-41", True), ("conv-44", False)])
def test_dev_conversations_are_the_tuning_ones(conv, dev):
    assert (conv in lr.DEV_CONVS) is dev
