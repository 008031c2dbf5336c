"""The development (tuning) fact sets (benchmarks/devset, benchmarks/devset2) say what they claim.

Each annotation must point at a line that holds its speaker and text, every export must parse with no
quarantined line and be what authoring/build.py makes of its chat script, the manifest must match the
files, and each set must keep the sizes asked for. Unlike the held-out set they may change; a change
goes through build.py so the exports, annotations and manifest move together.
"""

import hashlib
import importlib.util
import json
import sys
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import pytest

from truffle_assets.parsing import parse_file
from truffle_assets_tests.benchmarks.annotated_exports import check_annotated_lines, check_exports

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"
KINDS = {"other_person", "plan", "negation", "hypothetical", "joke", "hedge", "quote", "address", "question",
         "secondhand"}


@dataclass(frozen=True)
class DevSet:
    name: str
    user: str
    facts: int  # the minimums its author was asked for
    hinglish: int
    messages: int
    user_messages: int
    changes: int
    restatements: int
    distractors: int

    @property
    def root(self) -> Path:
        return BENCHMARKS / self.name

    @property
    def natural(self) -> Path:
        return self.root / "natural"


SETS = [DevSet("devset", "Mehak Sethi", facts=150, hinglish=50, messages=600, user_messages=0, changes=25,
               restatements=0, distractors=50),
        DevSet("devset2", "Aakash Bhandari", facts=120, hinglish=45, messages=450, user_messages=200, changes=20,
               restatements=15, distractors=40)]


@pytest.fixture(params=SETS, ids=lambda s: s.name)
def dev(request) -> DevSet:
    return request.param


def load(dev: DevSet) -> dict:
    return json.loads((dev.natural / "annotations.json").read_text(encoding="utf-8"))


def set_files(dev: DevSet) -> list[str]:
    return sorted(p.relative_to(dev.root).as_posix() for p in dev.root.rglob("*")
                  if p.is_file() and p.name != "MANIFEST.sha256" and "__pycache__" not in p.parts)


def build_module(dev: DevSet):
    """authoring/build.py as a module, without leaving its sys.path, modules or bytecode setting behind."""
    path, flag, modules = list(sys.path), sys.dont_write_bytecode, dict(sys.modules)
    try:
        spec = importlib.util.spec_from_file_location(f"{dev.name}_build", dev.root / "authoring" / "build.py")
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        return mod
    finally:
        sys.path[:], sys.dont_write_bytecode = path, flag
        for name in set(sys.modules) - set(modules):
            if name in ("questions", "devset_builder"):
                del sys.modules[name]


def test_manifest_covers_every_file_with_its_current_hash(dev):
    listed = dict(reversed(row.split("  ", 1))
                  for row in (dev.root / "MANIFEST.sha256").read_text(encoding="utf-8").splitlines())
    assert sorted(listed) == set_files(dev), "files added or removed without re-running authoring/build.py"
    changed = [n for n, d in listed.items() if hashlib.sha256((dev.root / n).read_bytes()).hexdigest() != d]
    assert not changed, f"dev-set files changed without re-running authoring/build.py: {changed}"


def test_exports_are_what_build_makes_of_the_chat_scripts(dev, tmp_path):
    build = build_module(dev)
    for src in sorted((dev.root / "authoring").glob("*.chat")):
        _, _, out = build.render(src, tmp_path)
        assert out.read_bytes() == (dev.natural / out.name).read_bytes(), f"{out.name} differs from {src.name}"


def test_exports_parse_with_no_quarantined_line_and_the_user_in_every_chat(dev):
    check_exports(dev.natural, load(dev), dev.user)


def test_every_annotation_points_at_its_speaker_and_text(dev):
    doc = load(dev)
    entries = check_annotated_lines(dev.natural, doc)
    for f in doc["facts"]:  # a context line is an earlier message in the same chat
        if f["context_line"]:
            assert f["context_line"] < f["line"] and entries[dev.natural / f["chat_file"]][f["context_line"]].author, f["id"]


def test_set_meets_the_minimums_and_its_summary(dev):
    doc = load(dev)
    facts = {f["id"]: f for f in doc["facts"]}
    assert len(facts) == len(doc["facts"]), "duplicate fact ids"
    assert all(f["subject"] == "user" and f["speaker"] == dev.user for f in facts.values())
    assert len(facts) >= dev.facts
    languages = Counter(f["language"] for f in facts.values())
    assert set(languages) == {"en", "hinglish"} and languages["hinglish"] >= dev.hinglish, languages
    assert len(doc["chats"]) >= 8 and sum(c["messages"] for c in doc["chats"]) >= dev.messages
    assert sum(c["user_messages"] for c in doc["chats"]) >= dev.user_messages
    groups = [n for n in (p.name for p in dev.natural.glob("*.txt"))
              if len({e.author for e in parse_file(dev.natural / n).entries if e.author}) > 2]
    assert len(groups) >= 2, groups
    assert len({c["format"] for c in doc["chats"]}) >= 3
    changes = [f for f in facts.values() if f["supersedes"]]
    assert len(changes) >= dev.changes
    for f in changes:  # a change ends the fact it replaces, and comes after it
        old = facts[f["supersedes"]]
        assert old["valid_to"] is not None, f["id"]
        assert old["valid_from"] is None or old["valid_from"] <= f["valid_from"], f["id"]
    restatements = sum(len(f["also_stated"]) for f in facts.values())
    assert restatements >= dev.restatements
    assert len(doc["distractors"]) >= dev.distractors
    assert all(d["kind"] in KINDS and d["subject"] and d["claim"] and d["why_not"] for d in doc["distractors"])
    assert len({d["kind"] for d in doc["distractors"]}) == len(KINDS), "every distractor kind is represented"
    assert all(i in facts for q in doc["questions"] for i in q["fact_ids"])
    summary = doc["summary"]
    assert summary["facts"] == len(facts) and summary["changes_over_time"] == len(changes)
    assert summary["facts_by_language"] == dict(sorted(languages.items()))
    assert summary["facts_by_category"] == dict(sorted(Counter(f["category"] for f in facts.values()).items()))
    assert summary["distractors"] == len(doc["distractors"])
    assert summary["restatements"] == restatements
    assert summary["messages"] == sum(c["messages"] for c in doc["chats"])
    assert summary["user_messages"] == sum(c["user_messages"] for c in doc["chats"])
    assert summary["distractors_by_kind"] == dict(sorted(Counter(d["kind"] for d in doc["distractors"]).items()))
