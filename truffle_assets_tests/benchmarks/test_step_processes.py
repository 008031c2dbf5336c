"""The step-process benchmark's parts: a code-location load as a step process does it, and the sample range it runs."""

from __future__ import annotations

from benchmarks.step_processes import ROOT, load, sample
from truffle_assets.ingest.exports import scan_exports
from truffle_assets.parsing.parser import parse_file


def test_a_load_reports_its_seconds_and_that_no_heavy_library_came_with_it():
    seconds, heavy = load(ROOT)
    assert 0 < seconds < 60 and heavy == []


def test_the_sample_is_one_chat_and_its_busiest_month(tmp_path):
    folder, chat, month = sample(tmp_path / "exports")
    ((found, (path, *_)),) = scan_exports(folder).items()
    months = [f"{ts:%Y-%m}" for ts in parse_file(path).frame["ts"]]
    assert found == chat and months.count(month) == max(months.count(m) for m in set(months)) > 0
