"""The second development (tuning) fact set (benchmarks/devset2) says what it claims.

Each annotation must point at a line that holds its speaker and text, every export must parse with no
quarantined line and be what authoring/build.py makes of its chat script, the manifest must match the
files, and the set must keep the sizes asked for. Unlike the held-out set it may change; a change goes
through build.py so the exports, annotations and manifest move together.
"""

import hashlib
import importlib.util
import json
import sys
from collections import Counter
from pathlib import Path

from truffle_assets.parsing import parse_file
from truffle_assets_tests.benchmarks.annotated_exports import check_annotated_lines, check_exports

DEVSET = Path(__file__).resolve().parents[2] / "benchmarks" / "devset2"
NATURAL = DEVSET / "natural"
USER = "Aakash Bhandari"
KINDS = {"other_person", "plan", "negation", "hypothetical", "joke", "hedge", "quote", "address", "question",
         "secondhand"}


def load() -> dict:
    return json.loads((NATURAL / "annotations.json").read_text(encoding="utf-8"))


def set_files() -> list[str]:
    return sorted(p.relative_to(DEVSET).as_posix() for p in DEVSET.rglob("*")
                  if p.is_file() and p.name != "MANIFEST.sha256" and "__pycache__" not in p.parts)


def build_module():
    """authoring/build.py as a module, without leaving its sys.path or bytecode setting behind."""
    path, flag = list(sys.path), sys.dont_write_bytecode
    try:
        spec = importlib.util.spec_from_file_location("devset2_build", DEVSET / "authoring" / "build.py")
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        return mod
    finally:
        sys.path[:], sys.dont_write_bytecode = path, flag


def test_manifest_covers_every_file_with_its_current_hash():
    listed = dict(reversed(row.split("  ", 1))
                  for row in (DEVSET / "MANIFEST.sha256").read_text(encoding="utf-8").splitlines())
    assert sorted(listed) == set_files(), "files added or removed without re-running authoring/build.py"
    changed = [n for n, d in listed.items() if hashlib.sha256((DEVSET / n).read_bytes()).hexdigest() != d]
    assert not changed, f"dev-set files changed without re-running authoring/build.py: {changed}"


def test_exports_are_what_build_makes_of_the_chat_scripts(tmp_path):
    build = build_module()
    for src in sorted((DEVSET / "authoring").glob("*.chat")):
        _, _, out = build.render(src, tmp_path)
        assert out.read_bytes() == (NATURAL / out.name).read_bytes(), f"{out.name} differs from {src.name}"


def test_exports_parse_with_no_quarantined_line_and_the_user_in_every_chat():
    check_exports(NATURAL, load(), USER)


def test_every_annotation_points_at_its_speaker_and_text():
    doc = load()
    entries = check_annotated_lines(NATURAL, doc)
    for f in doc["facts"]:  # a context line is an earlier message in the same chat
        if f["context_line"]:
            assert f["context_line"] < f["line"] and entries[NATURAL / f["chat_file"]][f["context_line"]].author, f["id"]


def test_set_meets_the_minimums_and_its_summary():
    doc = load()
    facts = {f["id"]: f for f in doc["facts"]}
    assert len(facts) == len(doc["facts"]), "duplicate fact ids"
    assert all(f["subject"] == "user" and f["speaker"] == USER for f in facts.values())
    assert len(facts) >= 120
    languages = Counter(f["language"] for f in facts.values())
    assert set(languages) == {"en", "hinglish"} and languages["hinglish"] >= 45, languages
    assert len(doc["chats"]) >= 8 and sum(c["messages"] for c in doc["chats"]) >= 450
    assert sum(c["user_messages"] for c in doc["chats"]) >= 200
    groups = [n for n in (p.name for p in NATURAL.glob("*.txt"))
              if len({e.author for e in parse_file(NATURAL / n).entries if e.author}) > 2]
    assert len(groups) >= 2, groups
    assert len({c["format"] for c in doc["chats"]}) >= 3
    changes = [f for f in facts.values() if f["supersedes"]]
    assert len(changes) >= 20
    for f in changes:  # a change ends the fact it replaces, and comes after it
        old = facts[f["supersedes"]]
        assert old["valid_to"] is not None, f["id"]
        assert old["valid_from"] is None or old["valid_from"] <= f["valid_from"], f["id"]
    assert sum(len(f["also_stated"]) for f in facts.values()) >= 15
    assert len(doc["distractors"]) >= 40
    assert all(d["kind"] in KINDS and d["subject"] and d["claim"] and d["why_not"] for d in doc["distractors"])
    assert len({d["kind"] for d in doc["distractors"]}) == len(KINDS), "every distractor kind is represented"
    assert all(i in facts for q in doc["questions"] for i in q["fact_ids"])
    summary = doc["summary"]
    assert summary["facts"] == len(facts) and summary["changes_over_time"] == len(changes)
    assert summary["facts_by_language"] == dict(sorted(languages.items()))
    assert summary["facts_by_category"] == dict(sorted(Counter(f["category"] for f in facts.values()).items()))
    assert summary["distractors"] == len(doc["distractors"])
    assert summary["restatements"] == sum(len(f["also_stated"]) for f in facts.values())
    assert summary["messages"] == sum(c["messages"] for c in doc["chats"])
    assert summary["user_messages"] == sum(c["user_messages"] for c in doc["chats"])
    assert summary["distractors_by_kind"] == dict(sorted(Counter(d["kind"] for d in doc["distractors"]).items()))
