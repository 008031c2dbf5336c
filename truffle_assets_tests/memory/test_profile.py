"""The user profile snapshot: current confident facts, a 'previously' list, a token budget, atomic versioned writes."""

import json
import os
from datetime import date, datetime

import polars as pl

from truffle_assets.memory.facts.schema import FACT_SCHEMA
from truffle_assets.files import json_text
from truffle_assets.memory.profile import build_profile, estimate_tokens, published_facts, write_profile

USER = "Arjun Mehta"
NOW = datetime(2024, 12, 1, 12, 0)


def _fact(i, predicate, value, category="identity", confidence=0.9, valid_to=None, superseded_by=None, subject=USER,
          evidence=("m1",)):
    return {"id": f"f{i}", "subject": subject, "predicate": predicate, "value": value, "category": category,
            "fact_text": f"{subject} {predicate} {value}.", "confidence": confidence,
            "first_seen_at": datetime(2020, 1, 1), "last_seen_at": datetime(2021, 1, 1), "valid_from": date(2020, 1, 1),
            "valid_to": valid_to, "superseded_by": superseded_by, "evidence_message_ids": list(evidence),
            "chat_ids": ["c1"]}


def _facts(rows):
    return pl.DataFrame(rows, schema=FACT_SCHEMA)


def sample():
    return _facts([
        _fact(1, "lives_in", "Pune", valid_to=date(2022, 8, 22), superseded_by="f2"),
        _fact(2, "lives_in", "Bengaluru", evidence=("m2", "m3")),
        _fact(3, "favourite", "pani puri", "preference", 0.95),
        _fact(4, "goal", "learn Spanish", "goal", 0.85),
        _fact(5, "trip", "Goa", "event", 0.4),  # not confident enough
        _fact(6, "lives_in", "Delhi", subject="Rohan Verma"),  # someone else
    ])


def test_build_profile_groups_current_confident_facts():
    p = build_profile(sample(), USER, NOW)
    ids = {c: [e["fact_id"] for e in es] for c, es in p["facts"].items()}
    assert ids == {"identity": ["f2"], "preference": ["f3"], "goal": ["f4"]}
    blr = p["facts"]["identity"][0]
    assert blr["evidence"] == 2 and blr["value"] == "Bengaluru"
    assert [x["fact_id"] for x in p["previously"]] == ["f1"] and p["previously"][0]["superseded_by"] == "f2"
    assert p["previously"][0]["until"] == "2022-08-22"
    assert p["token_estimate"] == estimate_tokens(p) or abs(p["token_estimate"] - estimate_tokens(p)) <= 2
    assert p["user"] == USER and p["generated_at"] == NOW.isoformat()


def test_profile_fits_the_token_budget_dropping_least_confident():
    rows = [_fact(i, "friend", f"Friend number {i} " + "x" * 120, "relationship", 0.6 + i / 1000) for i in range(400)]
    full = build_profile(_facts(rows), USER, NOW, max_tokens=10**9)
    assert full["token_estimate"] > 5000
    p = build_profile(_facts(rows), USER, NOW)
    assert p["token_estimate"] <= 5000
    assert len(json.dumps(p, ensure_ascii=False, separators=(",", ":"))) / 4 <= 5000
    kept = [e["confidence"] for e in p["facts"]["relationship"]]
    dropped_max = max(r["confidence"] for r in rows if r["id"] not in {e["fact_id"] for e in p["facts"]["relationship"]})
    assert min(kept) >= round(dropped_max, 2)  # the lowest-confidence facts went first
    small = build_profile(_facts(rows), USER, NOW, max_tokens=500)
    assert small["token_estimate"] <= 500


def test_write_profile_is_atomic_and_versions_only_on_change(tmp_path):
    path = tmp_path / "profile" / "user.json"
    p1 = write_profile(path, build_profile(sample(), USER, NOW))
    assert p1["version"] == 1 and len(p1["content_hash"]) == 16
    assert json.loads(path.read_text()) == p1
    assert path.read_text().startswith('{\n  "user": ')  # indented like every published file
    # same content, later timestamp: same version, same hash
    p2 = write_profile(path, build_profile(sample(), USER, datetime(2024, 12, 2)))
    assert p2["version"] == 1 and p2["content_hash"] == p1["content_hash"]
    # new fact: version bump
    more = pl.concat([sample(), _facts([_fact(7, "pet", "Coco", "relationship")])])
    p3 = write_profile(path, build_profile(more, USER, NOW))
    assert p3["version"] == 2 and p3["content_hash"] != p1["content_hash"]
    assert json.loads(path.read_text())["version"] == 2
    assert sorted(os.listdir(path.parent)) == ["user.json"]  # no temp files left behind


def test_write_profile_never_leaves_a_partial_file(tmp_path, monkeypatch):
    path = tmp_path / "user.json"
    write_profile(path, build_profile(sample(), USER, NOW))
    before = path.read_text()

    def boom(src, dst):
        raise OSError("disk full")

    monkeypatch.setattr(os, "replace", boom)
    more = pl.concat([sample(), _facts([_fact(7, "pet", "Coco", "relationship")])])
    try:
        write_profile(path, build_profile(more, USER, NOW))
    except OSError:
        pass
    assert path.read_text() == before
    assert os.listdir(tmp_path) == ["user.json"]


def test_profile_from_extracted_facts():
    from truffle_assets.memory.facts.consolidation import consolidate
    from truffle_assets.memory.facts.extraction import extract_claims

    msgs = pl.DataFrame({
        "id": ["a", "b", "c"], "chat_id": ["x", "x", "y"],
        "day": [date(2021, 1, 1), date(2022, 9, 1), date(2022, 9, 2)],
        "ts": [datetime(2021, 1, 1, 9), datetime(2022, 9, 1, 9), datetime(2022, 9, 2, 9)],
        "author": [USER] * 3, "is_user": [True] * 3,
        "normalized_text": ["I live in Pune", "We moved to Mumbai last week", "Kabir is my elder brother"],
    })
    p = build_profile(consolidate(extract_claims(msgs)), USER, NOW)
    assert [e["value"] for e in p["facts"]["home"]] == ["Mumbai"]
    assert [e["value"] for e in p["facts"]["relationship"]] == ["Kabir"]
    assert [x["value"] for x in p["previously"]] == ["Pune"]


def test_the_people_the_user_writes_to_most(tmp_path):
    import duckdb

    from truffle_assets.memory.profile import CLOSEST_PEOPLE_SQL, closest_people

    con = duckdb.connect(str(tmp_path / "m.duckdb"))
    con.execute("CREATE TABLE messages (id VARCHAR, chat_id VARCHAR, author VARCHAR, is_user BOOLEAN, kind VARCHAR,"
                " ts TIMESTAMP)")
    t = datetime(2024, 1, 1, 9)
    rows = [(f"d{i}", "didi", USER, True, "message", t) for i in range(6)] + [("d9", "didi", "Asha", False, "message", t)]
    rows += [(f"s{i}", "sid", USER, True, "message", t) for i in range(3)] + [("s9", "sid", "Sid", False, "message", t)]
    rows += [("x1", "sid", None, False, "system", t)]  # a system line is nobody
    rows += [(f"g{i}", "group", USER, True, "message", t) for i in range(20)]  # a group is no one person
    rows += [("g21", "group", "A", False, "message", t), ("g22", "group", "B", False, "message", t)]
    con.executemany("INSERT INTO messages VALUES (?, ?, ?, ?, ?, ?)", rows)
    people = closest_people(con.execute(CLOSEST_PEOPLE_SQL, [5]).fetchall())
    assert [(p["name"], p["your_messages"]) for p in people] == [("Asha", 6), ("Sid", 3)]
    assert abs(people[0]["share"] - 6 / 9) < 1e-3
    p = build_profile(sample(), USER, NOW, people=people)
    assert [x["name"] for x in p["people"]] == ["Asha", "Sid"]


def test_published_facts_name_each_fact_by_fact_id_only():
    rows = published_facts(sample())
    assert [r["fact_id"] for r in rows] == [f"f{i}" for i in range(1, 7)]
    assert all("id" not in r for r in rows)
    assert json.loads(json_text(rows[0]))["first_seen_at"] == "2020-01-01T00:00:00"  # ISO 8601, with its T
    assert published_facts(_facts([])) == []
