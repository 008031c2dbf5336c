"""The LoCoMo -> WhatsApp export converter (`evals.locomo`) on a small slice of one conversation (skipped without the data)."""

import re
from datetime import datetime

import pytest

from truffle_assets.evals import locomo as lc
from truffle_assets.ingest.exports import load_chat
from truffle_assets.parsing import parse_file

pytestmark = pytest.mark.skipif(lc.locomo_path() is None, reason="shared/benchmarks/locomo/locomo10.json not present")


@pytest.fixture(scope="module")
def sample() -> dict:
    """conv-41 sessions 3-4 (multi-line turns and shared images), plus session 4 moved to 11:50 pm."""
    full = next(s for s in lc.load_locomo() if s["sample_id"] == "conv-41")
    c = full["conversation"]
    conv = {"speaker_a": c["speaker_a"], "speaker_b": c["speaker_b"]}
    for n in (3, 4):
        conv[f"session_{n}"] = c[f"session_{n}"]
        conv[f"session_{n}_date_time"] = c[f"session_{n}_date_time"]
    conv["session_4_date_time"] = re.sub(r"^.*? on", "11:50 pm on", c["session_4_date_time"])
    return {"sample_id": "conv-41", "conversation": conv, "qa": []}


def test_every_turn_is_one_message(sample, tmp_path):
    res = lc.convert(sample, tmp_path)
    turns = [t for n in (3, 4) for t in sample["conversation"][f"session_{n}"]]
    assert res.path.name == "WhatsApp Chat with LoCoMo conv-41.txt" and res.chat_id == "locomo-conv-41"
    assert list(res.dia_message) == [t["dia_id"] for t in turns]
    assert any("\n" in t["text"] for t in turns) and any(t.get("blip_caption") for t in turns)

    entries = parse_file(res.path).entries
    assert len(entries) == len(turns)
    for t, e in zip(turns, entries):
        assert e.author == t["speaker"] and e.kind == "message"
        assert e.line_start == res.dia_line[t["dia_id"]]
        assert e.text.startswith(t["text"].split("\n")[0])
        if t.get("blip_caption"):
            assert e.text.endswith(f"[shares {t['blip_caption']}]")
    # the pipeline's own loader agrees on the ids
    rows = load_chat(res.chat_id, [res.path])
    assert set(rows.rows["id"].to_list()) == set(res.dia_message.values())


def test_times_increase_and_stay_in_the_day(sample, tmp_path):
    res = lc.convert(sample, tmp_path)
    s3 = [t["dia_id"] for t in sample["conversation"]["session_3"]]
    s4 = [t["dia_id"] for t in sample["conversation"]["session_4"]]
    start3 = lc.parse_session_time(sample["conversation"]["session_3_date_time"])
    assert res.times[s3[0]] == start3
    assert all((res.times[b] - res.times[a]).seconds == 60 for a, b in zip(s3, s3[1:]))
    late = lc.parse_session_time(sample["conversation"]["session_4_date_time"])
    assert late.hour == 23 and len(s4) > 10  # 11:50 pm + n minutes would cross midnight
    assert res.times[s4[-1]] == late.replace(minute=59) and res.times[s4[0]].date() == late.date()


def test_helpers():
    assert lc.parse_session_time("1:56 pm on 8 May, 2023") == datetime(2023, 5, 8, 13, 56)
    assert lc.parse_session_time("12:09 am on 13 September, 2023") == datetime(2023, 9, 13, 0, 9)
    assert lc.normalize_evidence(["D8:6; D9:17", "D:11:26", "D30:05", "D", "D1:3", "D1:3"]) == [
        "D8:6", "D9:17", "D11:26", "D30:5", "D1:3"]
    assert lc.turn_text({"text": "look", "blip_caption": "a photo of a cat"}) == "look [shares a photo of a cat]"
