"""Fusion on plain arrays: normalisers, weighted sum / RRF, episode blend, ranking, weak support."""

import numpy as np
import pytest

from truffle_assets.retrieval.fusion import blend_episode_best, fuse, is_uncertain, minmax, mmr, rank, rrf
from truffle_assets.retrieval.models import RetrievalWeights
from truffle_assets.retrieval.signals import Signals

ONLY = dict(semantic=0.0, lexical=0.0, context=0.0, summary=0.0, speaker=0.0, recency=0.0, salience=0.0,
            date=0.0, episode=0.0, fusion="score")


def signals(n: int = 3, **arrays) -> Signals:
    fields = dict(semantic=np.zeros(n), lexical=np.zeros(n), lexical_present=np.zeros(n, dtype=bool),
                  context=np.zeros(n), summary=np.zeros(n), speaker=np.zeros(n), recency=np.zeros(n),
                  salience=np.zeros(n), date=np.zeros(n), keys=np.zeros(n), answer=np.zeros(n))
    fields.update({k: np.asarray(v) for k, v in arrays.items()})
    return Signals(**fields)


def test_asking_lines_are_docked_outside_the_mean():
    s = signals(semantic=[0.9, 0.5, 0.1], lexical=[1.0, 0.9, 0.0])
    s.asks = np.asarray([1.0, 0.0, 0.5])
    w = RetrievalWeights(**{**ONLY, "semantic": 1.0, "lexical": 1.0, "asking": 0.2})
    plain = fuse(s, w.model_copy(update={"asking": 0.0}))
    assert plain.tolist() == pytest.approx([1.0, 0.7, 0.0])
    # the question line loses its lead to the statement; the penalty never raises a score
    assert fuse(s, w).tolist() == pytest.approx([0.8, 0.7, -0.1])
    s.asks = None  # signals measured without it (older callers): no penalty
    assert fuse(s, w).tolist() == pytest.approx(plain.tolist())


def test_minmax_scales_to_unit_range_and_flattens_constants():
    assert minmax(np.asarray([2.0, 4.0, 3.0])).tolist() == [0.0, 1.0, 0.5]
    assert minmax(np.asarray([0.7, 0.7])).tolist() == [0.0, 0.0]
    assert minmax(np.asarray([])).size == 0


def test_rrf_top_rank_is_one_and_absent_signals_score_zero():
    out = rrf(np.asarray([0.2, 0.9, 0.5]), k=60)
    assert out.tolist() == pytest.approx([61 / 63, 1.0, 61 / 62])
    assert rrf(np.asarray([0.2, 0.9, 0.5]), k=60, present=np.asarray([True, False, True]))[1] == 0.0
    assert rrf(np.asarray([0.5, 0.5]), k=1).tolist() == [1.0, 2 / 3]  # ties: earlier candidate ranks first


def test_score_fusion_is_a_weighted_mean_of_normalised_signals():
    s = signals(semantic=[0.2, 0.6, 0.4], lexical=[1.0, 0.0, 0.5], speaker=[0.0, 1.0, 0.0])
    w = RetrievalWeights(**{**ONLY, "semantic": 1.0, "lexical": 2.0, "speaker": 1.0})
    # semantic min-maxed to [0, 1, 0.5]; lexical already 0..1 and taken as is
    assert fuse(s, w).tolist() == pytest.approx([2.0 / 4, 2.0 / 4, 1.5 / 4])


def test_all_zero_weights_do_not_divide_by_zero():
    assert fuse(signals(speaker=[1.0, 0.0, 0.0]), RetrievalWeights(**ONLY)).tolist() == [0.0, 0.0, 0.0]


def test_rrf_fusion_ranks_each_signal():
    s = signals(semantic=[0.9, 0.1, 0.5], lexical=[0.0, 1.0, 0.0], lexical_present=[False, True, False])
    w = RetrievalWeights(**{**ONLY, "semantic": 1.0, "lexical": 1.0, "fusion": "rrf"}, rrf_k=1)
    # semantic ranks 1, 3, 2 -> 1, 1/2, 2/3; lexical only for the second -> 0, 1, 0
    assert fuse(s, w).tolist() == pytest.approx([0.5, 0.75, 1 / 3])


def test_episode_blend_lifts_lines_of_the_best_episode():
    fused = np.asarray([0.9, 0.1, 0.3, 0.2])
    out = blend_episode_best(fused, ["e1", "e1", "e2", None], weight=0.5)
    assert out.tolist() == pytest.approx([(0.9 + 0.45) / 1.5, (0.1 + 0.45) / 1.5, (0.3 + 0.15) / 1.5, 0.2])
    assert blend_episode_best(fused, ["e1", "e1", "e2", None], weight=0.0) is fused


def test_rank_is_stable_on_ties_and_cut_at_k():
    V = np.eye(4, dtype=np.float32)
    assert rank(np.asarray([0.5, 0.9, 0.5, 0.1]), V, 3, mmr_lambda=1.0) == [1, 0, 2]


def test_mmr_passes_over_a_near_duplicate():
    V = np.asarray([[1.0, 0.0], [0.999, 0.045], [0.0, 1.0]], dtype=np.float32)
    scores = np.asarray([1.0, 0.95, 0.7])
    assert rank(scores, V, 2, mmr_lambda=1.0) == [0, 1]
    assert mmr(scores, V, 2, lam=0.5) == [0, 2]
    assert rank(scores, V, 2, mmr_lambda=0.5) == [0, 2]


def test_uncertain_when_no_signal_fires_or_one_fires_weakly():
    assert is_uncertain(0.39, 0.0, 0.0, base=0.9, below=0.45)  # nothing clears 0.4
    assert is_uncertain(0.5, 0.0, 0.0, base=0.3, below=0.45)  # one signal, low fused score
    assert not is_uncertain(0.5, 0.0, 0.0, base=0.5, below=0.45)
    assert not is_uncertain(0.5, 0.4, 0.0, base=0.1, below=0.45)  # two signals agree
    assert not is_uncertain(0.0, 0.0, 0.4, base=0.45, below=0.45)  # the bar is inclusive


def test_learned_fusion_reads_the_committed_weights_and_rejects_other_features(tmp_path):
    import json

    from truffle_assets.retrieval.fusion import FEATURES, LEARNED, features, learned, learned_model

    coef, _ = learned_model(str(LEARNED))
    assert coef.shape == (len(FEATURES),)
    s = signals(semantic=[0.2, 0.9, 0.5], lexical=[0.0, 1.0, 0.3], keys=[0.0, 1.0, 0.0], answer=[0.0, 1.0, 0.0])
    X = features(s)
    assert X.shape == (3, len(FEATURES)) and X.min() >= 0.0 and X.max() <= 1.0
    p = learned(s)
    assert ((p > 0) & (p < 1)).all()
    assert np.argsort(-p).tolist() == np.argsort(-(X @ coef)).tolist()  # a monotone map of the linear score
    bad = tmp_path / "w.json"
    bad.write_text(json.dumps({"features": ["semantic"], "coef": [1.0], "intercept": 0.0}))
    with pytest.raises(ValueError, match="w.json"):
        learned_model(str(bad))


def test_learned_fusion_ranks_through_retrieve_weights():
    s = signals(2, semantic=[0.1, 0.9], lexical=[0.0, 1.0], context=[0.1, 0.9])
    assert fuse(s, RetrievalWeights(fusion="learned"))[1] > fuse(s, RetrievalWeights(fusion="learned"))[0]


def test_per_episode_cap_lets_other_episodes_in_first():
    fused = np.asarray([0.9, 0.8, 0.7, 0.6, 0.5, 0.4])
    eps = ["e1", "e1", "e1", "e2", None, None]
    assert rank(fused, None, 4, 1.0, eps, per_episode=0) == [0, 1, 2, 3]
    assert rank(fused, None, 4, 1.0, eps, per_episode=2) == [0, 1, 3, 4]  # e1's third line waits
    assert rank(fused, None, 6, 1.0, eps, per_episode=1) == [0, 3, 4, 5, 1, 2]  # capped lines fill up the rest
