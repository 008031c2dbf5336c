import json
import threading
from pathlib import Path

import pytest

from truffle_assets.feedback.turns import (StoreError, append_feedback, load_turns, read_store,
                                             write_turn)

Q = [{"role": "user", "content": "when is Rohan's exam?"}]


def turn(root: Path, tid: str, day: str = "2024-05-10", **kw) -> None:
    kw.setdefault("messages", Q)
    kw.setdefault("answer", f"answer {tid}")
    write_turn(root, tid, "conv-1", ts=f"{day}T09:00:00+00:00", **kw)


def test_round_trip_joins_metadata_content_and_feedback(tmp_path):
    turn(tmp_path, "t1", model="qwen-0.5b", retrieval_ids=["m1", "m2"], principals=["user"])
    append_feedback(tmp_path, "t1", 1, "spot on", ts="2024-05-12T10:00:00+00:00")  # rated two days later
    [t] = load_turns(tmp_path)
    assert (t.turn_id, t.conversation_id, t.day) == ("t1", "conv-1", "2024-05-10")
    assert t.messages == Q and t.answer == "answer t1" and t.has_content
    assert t.meta["retrieval_ids"] == ["m1", "m2"] and t.meta["model"] == "qwen-0.5b"
    assert t.meta["prompt_hash"] and t.reroll_of is None and t.principals == ["user"]
    assert t.rating == 1 and t.feedback[0].note == "spot on"


def test_feedback_change_of_mind_last_wins_and_history_kept(tmp_path):
    turn(tmp_path, "t1")
    append_feedback(tmp_path, "t1", 1, ts="2024-05-10T09:01:00+00:00")
    append_feedback(tmp_path, "t1", 0, ts="2024-05-10T09:02:00+00:00")
    append_feedback(tmp_path, "t1", -1, "actually wrong date", ts="2024-05-11T08:00:00+00:00")
    [t] = load_turns(tmp_path)
    assert t.rating == -1
    assert [f.rating for f in t.feedback] == [1, 0, -1]
    with pytest.raises(ValueError):
        append_feedback(tmp_path, "t1", 2)


def test_torn_last_line_is_skipped_and_counted(tmp_path):
    turn(tmp_path, "t1")
    turn(tmp_path, "t2")
    path = tmp_path / "turns" / "2024-05-10.jsonl"
    with path.open("ab") as f:  # a writer that died mid-append
        f.write(b'{"turn_id":"t3","conversation_id":"co')
    read = read_store(tmp_path)
    assert [t.turn_id for t in read.turns] == ["t1", "t2"]
    assert read.torn_lines == [f"{path}:3"]


def test_malformed_middle_line_names_file_and_line(tmp_path):
    turn(tmp_path, "t1")
    path = tmp_path / "content" / "2024-05-10.jsonl"
    with path.open("ab") as f:
        f.write(b'{"turn_id":"t2","messa\n')  # a torn line that later appends buried
    turn(tmp_path, "t3")
    with pytest.raises(StoreError, match=rf"{path}:2: malformed"):
        load_turns(tmp_path)


def test_content_disabled_turns_have_no_content_and_are_counted(tmp_path):
    turn(tmp_path, "t1")
    turn(tmp_path, "t2", keep_content=False)
    read = read_store(tmp_path)
    assert [t.has_content for t in read.turns] == [True, False]
    assert read.turns[1].messages is None and read.missing_content == 1
    assert not (tmp_path / "content" / "2024-05-10.jsonl").read_text().count("t2")


def test_date_range_is_inclusive_and_ignores_other_days(tmp_path):
    for day in ("2024-05-09", "2024-05-10", "2024-05-11", "2024-05-12"):
        turn(tmp_path, f"t{day[-2:]}", day=day)
    append_feedback(tmp_path, "t09", -1, ts="2024-05-10T00:00:00+00:00")  # turn outside the range
    read = read_store(tmp_path, since="2024-05-10", until="2024-05-11")
    assert [t.turn_id for t in read.turns] == ["t10", "t11"]
    assert all(t.rating is None for t in read.turns) and read.files_read == 2 + 4 + 1  # content: one day either side


def test_concurrent_appends_never_interleave(tmp_path):
    def writer(n: int) -> None:
        for i in range(200):
            append_feedback(tmp_path, f"w{n}-{i}", 1, "x" * 3000, ts="2024-05-10T00:00:00+00:00")

    threads = [threading.Thread(target=writer, args=(n,)) for n in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    lines = (tmp_path / "feedback" / "2024-05-10.jsonl").read_text().splitlines()
    assert len(lines) == 800 and all(json.loads(ln)["note"] == "x" * 3000 for ln in lines)
