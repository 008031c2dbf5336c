"""Latency summaries (`evals.latency`): nearest-rank percentiles and means by key."""

import pytest

from truffle_assets.evals import latency


def test_percentile_nearest_rank():
    vals = list(range(1, 101))
    assert latency.percentile(vals, 50) == 50
    assert latency.percentile(vals, 95) == 95
    assert latency.percentile([3.0], 95) == 3.0
    assert latency.percentile([5, 1, 4, 2, 3], 100) == 5
    with pytest.raises(ValueError):
        latency.percentile([], 50)


def test_mean_by_key_counts_a_missing_key_as_zero():
    assert latency.mean_by_key([{"raw": 10, "profile": 2}, {"raw": 20}], ["raw", "profile"]) == {"raw": 15.0, "profile": 1.0}
    assert latency.mean_by_key([], ["raw"]) == {"raw": 0.0}
