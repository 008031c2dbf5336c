"""Questions from a synthetic corpus's ground truth (`evals.truth_questions`)."""

from truffle_assets.evals import truth_questions as tq
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


def test_build_queries_from_truth():
    qs, dropped = tq.build_queries(TRUTH, 40, refuse=privacy.secret_request)
    assert len(qs) == 40 and dropped == 0
    assert "What is my favourite food?" in qs
    assert "What did Mummy say about pani puri?" in qs
    assert "What happened on 14 April 2021?" in qs
    assert "Who is in the Mehta Parivaar group?" in qs
    assert "What did I talk about with Priya Sharma recently?" in qs
    assert "What did Papa say recently?" in qs
    assert not any("Arjun Mehta say" in q for q in qs)  # the user is never asked about as a member
    first = qs[:4]  # the sources are interleaved: fact, chat, member, generic
    assert first[0].startswith("What is my") and first[3] == tq.GENERIC[0]


def test_build_queries_cycles_and_filters():
    small = {"user": "U", "facts": [], "chats": []}
    qs, _ = tq.build_queries(small, len(tq.GENERIC) + 3)
    assert len(qs) == len(tq.GENERIC) + 3 and qs[-1].startswith("Remind me: ") and len(set(qs)) == len(qs)
    qs, dropped = tq.build_queries(small, 10, refuse=lambda q: "birthday" in q)
    assert dropped == 1 and not any("birthday" in q for q in qs)
