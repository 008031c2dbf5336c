"""The runtime bench's pure helpers: percentiles, query generation, the last line (no model, no pipeline)."""

import pytest

from benchmarks import runtime_bench as rb
from truffle_assets.runtime import privacy

TRUTH = {
    "user": "Arjun Mehta",
    "facts": [
        {"predicate": "favourite_food", "value": "pani puri", "stated_by": ["Arjun Mehta", "Mummy"],
         "stated_at": ["2021-04-14T16:33:52"]},
        {"predicate": "pet", "value": "Coco (indie dog)", "stated_by": ["Arjun Mehta"], "stated_at": ["2021-02-17T12:48:04"]},
    ],
    "chats": [
        {"title": "Priya Sharma", "group": False, "members": ["Arjun Mehta", "Priya Sharma"]},
        {"title": "Mehta Parivaar", "group": True, "members": ["Arjun Mehta", "Mummy", "Papa"]},
    ],
}


def test_percentile_nearest_rank():
    vals = list(range(1, 101))
    assert rb.percentile(vals, 50) == 50
    assert rb.percentile(vals, 95) == 95
    assert rb.percentile([3.0], 95) == 3.0
    assert rb.percentile([5, 1, 4, 2, 3], 100) == 5
    with pytest.raises(ValueError):
        rb.percentile([], 50)


def test_build_queries_from_truth():
    qs, dropped = rb.build_queries(TRUTH, 40, refuse=privacy.secret_request)
    assert len(qs) == 40 and dropped == 0
    assert "What is my favourite food?" in qs
    assert "What did Mummy say about pani puri?" in qs
    assert "What happened on 14 April 2021?" in qs
    assert "Who is in the Mehta Parivaar group?" in qs
    assert "What did I talk about with Priya Sharma recently?" in qs
    assert "What did Papa say recently?" in qs
    assert not any("Arjun Mehta say" in q for q in qs)  # the user is never asked about as a member
    first = qs[:4]  # the sources are interleaved: fact, chat, member, generic
    assert first[0].startswith("What is my") and first[3] == rb.GENERIC[0]


def test_build_queries_cycles_and_filters():
    small = {"user": "U", "facts": [], "chats": []}
    qs, _ = rb.build_queries(small, len(rb.GENERIC) + 3)
    assert len(qs) == len(rb.GENERIC) + 3 and qs[-1].startswith("Remind me: ") and len(set(qs)) == len(qs)
    qs, dropped = rb.build_queries(small, 10, refuse=lambda q: "birthday" in q)
    assert dropped == 1 and not any("birthday" in q for q in qs)


def test_mean_and_last_line():
    assert rb.mean_by_key([{"raw": 10, "profile": 2}, {"raw": 20}], ["raw", "profile"]) == {"raw": 15.0, "profile": 1.0}
    assert rb.last_line(12.34, 56.78) == "retrieval_p95_ms=12.3 mem0_p95_ms=56.8 ratio=4.60"
    assert rb.last_line(12.34, None) == "retrieval_p95_ms=12.3 mem0_p95_ms=na ratio=na"
