"""Summaries of measured latencies and per-query figures: nearest-rank percentiles and means by key."""

from __future__ import annotations

import math
import statistics
from collections.abc import Iterable


def percentile(values: list[float], q: float) -> float:
    """Nearest-rank percentile (q in 0..100) of `values`."""
    if not values:
        raise ValueError("no values")
    s = sorted(values)
    return s[max(0, min(len(s) - 1, math.ceil(q / 100 * len(s)) - 1))]


def mean_by_key(rows: Iterable[dict], keys: Iterable[str]) -> dict[str, float]:
    rows = list(rows)
    return {k: statistics.fmean(float(r.get(k) or 0) for r in rows) if rows else 0.0 for k in keys}
