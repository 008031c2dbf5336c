"""The held-out fact sets (benchmarks/heldout) are frozen and say what they claim.

Any change to a held-out file fails here until MANIFEST.sha256 is rewritten (authoring/build.py
--manifest), so a change is a visible, reviewed commit, never a side effect of tuning. Each
annotation must point at a line that holds its speaker and text, every export must parse with no
quarantined line, and the set must keep the sizes the issue asks for.
"""

import hashlib
import json
from collections import Counter
from pathlib import Path

import pytest

from truffle_assets.parsing import parse_file
from truffle_assets_tests.benchmarks.annotated_exports import check_annotated_lines, check_exports, raw_lines
from truffle_assets_tests.conftest import FIXTURES

HELDOUT = Path(__file__).resolve().parents[2] / "benchmarks" / "heldout"
NATURAL = HELDOUT / "natural"
USER = "Varun Khanna"


def load(path: Path) -> dict:
    return json.loads(path.read_text(encoding="utf-8"))


def frozen_files() -> list[str]:
    return sorted(p.relative_to(HELDOUT).as_posix() for p in HELDOUT.rglob("*")
                  if p.is_file() and p.name != "MANIFEST.sha256" and "__pycache__" not in p.parts)


def entries_by_line(path: Path) -> dict:
    return {e.line_start: e for e in parse_file(path).entries}


def test_manifest_covers_every_file_with_its_current_hash():
    listed = {}
    for row in (HELDOUT / "MANIFEST.sha256").read_text(encoding="utf-8").splitlines():
        digest, name = row.split("  ", 1)
        listed[name] = digest
    assert sorted(listed) == frozen_files(), "files added or removed without updating MANIFEST.sha256"
    changed = [n for n, d in listed.items() if hashlib.sha256((HELDOUT / n).read_bytes()).hexdigest() != d]
    assert not changed, f"held-out files changed without updating MANIFEST.sha256: {changed}"


def test_natural_exports_parse_with_no_quarantined_line_and_the_user_in_every_chat():
    check_exports(NATURAL, load(NATURAL / "annotations.json"), USER)


def test_every_natural_annotation_points_at_its_speaker_and_text():
    check_annotated_lines(NATURAL, load(NATURAL / "annotations.json"))


def test_natural_set_meets_the_minimums_and_its_summary():
    doc = load(NATURAL / "annotations.json")
    facts = {f["id"]: f for f in doc["facts"]}
    assert len(facts) == len(doc["facts"]), "duplicate fact ids"
    assert all(f["subject"] == "user" and f["speaker"] == USER for f in facts.values())
    assert len(facts) >= 150
    assert len(doc["chats"]) >= 8
    languages = Counter(f["language"] for f in facts.values())
    assert set(languages) == {"en", "hinglish"} and min(languages.values()) >= 40, languages
    changes = [f for f in facts.values() if f["supersedes"]]
    assert len(changes) >= 10
    for f in changes:  # a change ends the fact it replaces, and comes after it
        old = facts[f["supersedes"]]
        assert old["valid_to"] is not None, f["id"]
        assert old["valid_from"] is None or old["valid_from"] <= f["valid_from"], f["id"]
    assert all(d["subject"] and d["claim"] and d["why_not"] for d in doc["distractors"])
    assert len(doc["distractors"]) >= 30
    assert len(doc["questions"]) >= 40
    assert all(i in facts for q in doc["questions"] for i in q["fact_ids"])
    assert sum(1 for q in doc["questions"] if q["answer"] is None) >= 3
    summary = doc["summary"]
    assert summary["facts"] == len(facts) and summary["changes_over_time"] == len(changes)
    assert summary["facts_by_category"] == dict(sorted(Counter(f["category"] for f in facts.values()).items()))
    assert summary["facts_by_language"] == dict(sorted(languages.items()))
    assert summary["distractors"] == len(doc["distractors"])


def test_fixture_annotations_cover_every_fixture_file_and_point_at_their_text():
    if not (FIXTURES / "EXPECTED.json").is_file():
        pytest.fail(f"WhatsApp fixture directory not found: {FIXTURES} (set TRUFFLE_FIXTURES)", pytrace=False)
    doc = load(HELDOUT / "fixtures" / "annotations.json")
    on_disk = sorted(str(p.relative_to(FIXTURES)) for p in FIXTURES.rglob("*")
                     if p.is_file() and p.name not in ("EXPECTED.json", "SOURCES.md"))
    assert [f["file"] for f in doc["files"]] == on_disk, "a fixture file was added or removed since annotation"
    assert doc["files_read"] == len(on_disk)
    for f in doc["files"]:
        assert hashlib.sha256((FIXTURES / f["file"]).read_bytes()).hexdigest() == f["sha256"], \
            f'{f["file"]} changed since it was annotated'
        assert f["facts"] or f["note"], f'{f["file"]}: no facts and no note saying why'
    per_file = Counter(x["file"] for x in doc["facts"])
    assert {f["file"]: f["facts"] for f in doc["files"] if f["facts"]} == dict(per_file)
    for x in doc["facts"]:
        path = FIXTURES / x["file"]
        entry = entries_by_line(path).get(x["line"])
        assert entry is not None and (entry.author, entry.text) == (x["speaker"], x["text"]), f'{x["file"]}:{x["line"]}'
        assert x["text"].split("\n")[0] in raw_lines(path)[x["line"] - 1], f'{x["file"]}:{x["line"]}'
        assert x["explicit"] or x["context_line"], x["id"]
    assert doc["summary"]["facts"] == len(doc["facts"])
