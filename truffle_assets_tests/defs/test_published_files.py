"""What the pipeline publishes reads as one format: every JSON file indented, one id field per
fact (`fact_id`), every timestamp in ISO 8601 with its 'T' — on the files a real build wrote."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path

# a string that begins with a date and a time of day, however they are joined
STAMP = re.compile(r"\d{4}-\d{2}-\d{2}\D\d{2}:\d{2}")
ISO = re.compile(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2})?")


def strings(obj) -> Iterator[str]:
    """Every string value (and key) anywhere in a JSON document."""
    if isinstance(obj, str):
        yield obj
    elif isinstance(obj, dict):
        for k, v in obj.items():
            yield k
            yield from strings(v)
    elif isinstance(obj, list):
        for v in obj:
            yield from strings(v)


def published_json(world) -> dict[str, str]:
    files = {p.name: p.read_text(encoding="utf-8") for p in sorted(Path(world.published).rglob("*.json"))}
    assert {"latest.json", "profile.json", "facts.json"} <= set(files)
    return files


def test_every_published_json_file_is_indented(world):
    for name, text in published_json(world).items():
        doc = json.loads(text)
        assert isinstance(doc, dict), name
        assert text.startswith("{\n  \"") and text.endswith("}\n"), f"{name} is not indented JSON"
        assert text.count("\n") > len(doc), name  # a line per key at least, never one long line


def test_each_fact_has_one_id_field_fact_id(world):
    facts = json.loads((world.published / "facts.json").read_text())["facts"]
    prof = json.loads((world.published / "profile.json").read_text())
    entries = [e for es in prof["facts"].values() for e in es] + prof["previously"]
    assert facts and entries
    for f in facts + entries:
        assert "fact_id" in f and "id" not in f, f
    assert {e["fact_id"] for e in entries} <= {f["fact_id"] for f in facts}


def test_every_timestamp_in_published_json_is_iso_8601(world):
    seen = 0
    for name, text in published_json(world).items():
        for s in strings(json.loads(text)):
            if STAMP.match(s):
                assert ISO.fullmatch(s), f"{name}: {s!r} is not ISO 8601"
                seen += 1
    assert seen >= 3  # facts' first/last seen, the pointer's watermarks and publish time, the profile's time


def test_the_runtime_reads_an_older_facts_json_as_fact_id_with_iso_timestamps(tmp_path):
    """A memory published in the older layout (`id` beside `fact_id`, '2023-09-14 09:12:00', minified)."""
    from truffle_assets.runtime.published import load_facts, read_profile

    old = {"version": 1, "facts": [{"id": "f1", "fact_id": "f1", "fact_text": "Lives in: Pune",
                                    "first_seen_at": "2023-09-14 09:12:00", "valid_from": "2023-09-14",
                                    "valid_to": None}]}
    (tmp_path / "facts.json").write_text(json.dumps(old, separators=(",", ":")))
    (tmp_path / "profile.json").write_text(json.dumps({"version": 1, "facts": {"home": [{"id": "f1", "text": "x"}]},
                                                       "previously": [{"id": "f0", "text": "y"}]}))
    assert load_facts(tmp_path) == {"f1": {"fact_id": "f1", "fact_text": "Lives in: Pune",
                                           "first_seen_at": "2023-09-14T09:12:00", "valid_from": "2023-09-14",
                                           "valid_to": None}}
    prof = read_profile(tmp_path)
    assert prof["facts"]["home"] == [{"fact_id": "f1", "text": "x"}]
    assert prof["previously"] == [{"fact_id": "f0", "text": "y"}]


def test_a_facts_json_in_the_older_layout_is_rebuilt_by_the_next_ingest(world, tmp_path):
    from truffle_assets.defs.ingest.runner import profile_behind
    from truffle_assets_tests.defs.conftest import clone_store

    root = clone_store(world, tmp_path / "root")
    pub = root / "published"
    pub.mkdir()
    blob = json.loads((world.published / "facts.json").read_text())
    (pub / "facts.json").write_text(json.dumps(blob))
    assert not profile_behind(root / "memory.duckdb", pub)
    old = {k: v for k, v in blob.items() if k != "format"}
    old["facts"] = [{"id": f["fact_id"], **f} for f in blob["facts"]]
    (pub / "facts.json").write_text(json.dumps(old))
    assert profile_behind(root / "memory.duckdb", pub)
