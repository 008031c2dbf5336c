import json
from pathlib import Path

import pytest

from truffle_assets.training.datasets import ManifestError, build_datasets, check_manifest, write_dataset
from truffle_assets.training.schemas import SCHEMA_VERSION, row_id, split_for
from truffle_assets.feedback.turns import Turn, append_feedback, load_turns, write_turn

SYSTEM = {"role": "system", "content": "You are Arjun's memory."}


def q(text: str) -> list[dict]:
    return [SYSTEM, {"role": "user", "content": text}]


def turn(root: Path, tid: str, answer: str, rating: int | None = None, minute: int = 0, **kw) -> None:
    kw.setdefault("messages", q("when is Rohan's exam?"))
    write_turn(root, tid, "conv-1", answer=answer, ts=f"2024-05-10T09:{minute:02d}:00+00:00", **kw)
    if rating is not None:
        append_feedback(root, tid, rating, ts=f"2024-05-10T10:{minute:02d}:00+00:00")


def sft_pack_row(n: int, **over) -> dict:
    call = '{"toolCalls":[{"name":"search_memory","arguments":{"query":"flat"}}]}'
    messages = [{"role": "user", "content": f"find the flat {n}"}, {"role": "assistant", "content": call}]
    sid = f"toolcall/{n}"
    row = {"id": row_id("synthetic", sid, messages), "source": "synthetic", "source_id": sid, "kind": "toolcall",
           "messages": messages, "split": split_for(sid)}
    return row | over


def test_transcripts_feedback_and_rerolls(tmp_path):
    turn(tmp_path, "good", "The exam is on 13 March.", rating=1)
    turn(tmp_path, "unrated", "Rohan moved to Pune.", messages=q("where is Rohan?"))
    turn(tmp_path, "bad", "No idea.", rating=-1, minute=1)
    turn(tmp_path, "reroll1", "It is on 13/03.", rating=1, minute=2, reroll_of="bad")
    turn(tmp_path, "reroll2", "Sometime in March.", rating=0, minute=3, reroll_of="reroll1")
    turn(tmp_path, "reroll3", "13 March, at 10.", rating=1, minute=4, reroll_of="reroll2")  # ties reroll1
    turn(tmp_path, "denied", "Priya's number is ...", rating=1, minute=5, principals=["denied"])
    turn(tmp_path, "redacted", "[REDACTED]", minute=6, principals=["redacted"], reroll_of="good")
    turn(tmp_path, "no-content", "kept nowhere", minute=7, keep_content=False)
    build = build_datasets(load_turns(tmp_path), [], [])

    sft = {r["source_id"]: r for r in build.sft_rows}
    assert set(sft) == {"good", "unrated", "reroll1", "reroll2", "reroll3"}
    assert sft["good"]["kind"] == "transcript" and sft["good"]["source"] == "transcript"
    assert sft["good"]["messages"] == [*q("when is Rohan's exam?"),
                                       {"role": "assistant", "content": "The exam is on 13 March."}]
    assert sft["good"]["split"] == split_for("good")

    pairs = {(r["chosen"], r["rejected"]) for r in build.dpo_rows}
    assert pairs == {("It is on 13/03.", "No idea."), ("It is on 13/03.", "Sometime in March."),
                     ("13 March, at 10.", "No idea."), ("13 March, at 10.", "Sometime in March."),
                     ("Sometime in March.", "No idea.")}
    first = next(r for r in build.dpo_rows if r["rejected"] == "No idea." and r["chosen"] == "It is on 13/03.")
    assert first["prompt"] == q("when is Rohan's exam?") and first["source_id"] == "reroll1>bad"

    s = build.stats
    assert (s.turns, s.missing_content, s.dropped_principal, s.dropped_thumbs_down) == (9, 1, 2, 1)
    assert (s.sft_transcript, s.dpo_transcript, s.reroll_ties, s.invalid) == (5, 5, 1, 0)
    assert build.invalid == []


def test_change_of_mind_decides_sft_membership(tmp_path):
    turn(tmp_path, "t1", "The exam is on 13 March.", rating=-1)
    append_feedback(tmp_path, "t1", 1, ts="2024-05-11T08:00:00+00:00")
    turn(tmp_path, "t2", "The exam is on 14 March.", rating=1, minute=1)
    append_feedback(tmp_path, "t2", -1, ts="2024-05-11T08:00:00+00:00")
    build = build_datasets(load_turns(tmp_path))
    assert [r["source_id"] for r in build.sft_rows] == ["t1"] and build.stats.dropped_thumbs_down == 1


def test_pack_is_appended_and_invalid_rows_are_reported_not_dropped(tmp_path):
    turn(tmp_path, "t1", "The exam is on 13 March.")
    good = sft_pack_row(1)
    no_answer = sft_pack_row(2, messages=[{"role": "user", "content": "hi"}, {"role": "assistant", "content": " "}])
    wrong_split = sft_pack_row(3, split="eval" if split_for("toolcall/3") == "train" else "train")
    bad_kind = sft_pack_row(4, kind="smalltalk")
    duplicate = dict(good)
    dpo_same = {"id": "0" * 16, "source": "synthetic", "source_id": "write_refusal/1", "kind": "write_refusal",
                "prompt": [{"role": "user", "content": "delete Priya"}], "chosen": "I can't.", "rejected": "I can't.",
                "split": split_for("write_refusal/1")}
    build = build_datasets(load_turns(tmp_path), [good, no_answer, wrong_split, bad_kind, duplicate], [dpo_same])

    assert [r["source_id"] for r in build.sft_rows] == ["t1", "toolcall/1"] and build.dpo_rows == []
    reasons = {inv.row["source_id"] + "#" + str(i): inv.reason for i, inv in enumerate(build.invalid)}
    assert len(build.invalid) == build.stats.invalid == 5
    text = "\n".join(reasons.values())
    for expected in ("non-empty assistant", "belongs in", "kind", "duplicate id", "same answer"):
        assert expected in text, expected
    assert build.stats.pack_sft == 5 and build.stats.pack_dpo == 1


def test_split_is_deterministic_and_about_ten_percent():
    turns = [Turn(turn_id=f"turn-{i:04d}", conversation_id="c", ts=None, day="2024-05-10", meta={},
                  messages=q(f"question {i}"), answer=f"answer {i}") for i in range(1000)]
    a, b = build_datasets(turns), build_datasets(list(reversed(turns)))
    split_a = {r["source_id"]: r["split"] for r in a.sft_rows}
    assert split_a == {r["source_id"]: r["split"] for r in b.sft_rows}
    n_eval = sum(s == "eval" for s in split_a.values())
    assert 70 <= n_eval <= 130
    assert sum(r["split"] == "eval" for r in build_datasets(turns, eval_percent=0).sft_rows) == 0


@pytest.fixture
def dataset(tmp_path) -> tuple[Path, list[dict]]:
    turns = [Turn(turn_id=f"turn-{i}", conversation_id="c", ts=None, day="2024-05-10", meta={},
                  messages=q(f"question {i}"), answer=f"answer {i} ✓") for i in range(40)]
    rows = build_datasets(turns, [sft_pack_row(n) for n in range(20)]).sft_rows
    out = tmp_path / "datasets" / "sft"
    write_dataset(rows, out, "sft", {"source_date_range": ("2024-05-01", "2024-05-10"), "pack_version": 3,
                                     "turns": 40})
    return out, rows


def test_manifest_round_trip(dataset):
    out, rows = dataset
    m = check_manifest(out)
    n_eval = sum(r["split"] == "eval" for r in rows)
    assert (m.row_counts.train, m.row_counts.eval) == (60 - n_eval, n_eval) and 0 < n_eval < 20
    assert m.row_counts.by_kind == {"toolcall": 20, "transcript": 40}
    assert m.row_counts.by_source == {"synthetic": 20, "transcript": 40}
    assert m.source_date_range == ("2024-05-01", "2024-05-10") and m.pack_version == 3
    assert m.schema_version == SCHEMA_VERSION and m.extra == {"turns": 40} and m.kind == "sft"
    train = [json.loads(ln) for ln in (out / "train.jsonl").read_text().splitlines()]
    assert train == [r for r in rows if r["split"] == "train"]
    assert json.loads((out / "manifest.json").read_text())["content_hash"] == m.content_hash


def test_forgotten_turns_never_become_rows_and_the_manifest_counts_them(tmp_path):
    turn(tmp_path, "kept", "The exam is on 13 March.", rating=1)
    turn(tmp_path, "gone", "It is on 13/03.", rating=1, minute=1)
    turn(tmp_path, "gone-reroll", "Sometime in March.", rating=-1, minute=2, reroll_of="gone")
    # "purged": forgotten, and no longer in the store; still counted for the window it was in
    build = build_datasets(load_turns(tmp_path), forgotten={"gone", "gone-reroll", "purged"})
    assert [r["source_id"] for r in build.sft_rows] == ["kept"] and build.dpo_rows == []
    assert build.stats.dropped_forgotten == 3 and build.stats.dropped_thumbs_down == 0
    assert build.dropped("sft") == {"forgotten": 3, "missing_content": 0, "principal": 0, "thumbs_down": 0}
    out = tmp_path / "sft"
    m = write_dataset(build.sft_rows, out, "sft", {"dropped": build.dropped("sft"), "turns": 3})
    assert check_manifest(out) == m and m.dropped["forgotten"] == 3 and m.extra == {"turns": 3}
    # a manifest written before `dropped` existed still reads
    old = json.loads((out / "manifest.json").read_text())
    del old["dropped"]
    (out / "manifest.json").write_text(json.dumps(old))
    assert check_manifest(out).dropped == {}


def test_one_edited_byte_fails_the_check(dataset):
    out, _ = dataset
    path = out / "train.jsonl"
    data = bytearray(path.read_bytes())
    i = data.index(b"answer 7")
    data[i + 7] = ord("8")  # still valid JSON, still a valid row
    path.write_bytes(bytes(data))
    with pytest.raises(ManifestError, match="content_hash mismatch"):
        check_manifest(out)


def test_moved_line_missing_file_and_stale_schema_fail_the_check(dataset):
    out, _ = dataset
    train, ev = (out / "train.jsonl").read_text().splitlines(True), (out / "eval.jsonl").read_text()
    (out / "train.jsonl").write_text("".join(train[:-1]))
    (out / "eval.jsonl").write_text(train[-1] + ev)
    with pytest.raises(ManifestError, match="content_hash"):
        check_manifest(out)
    (out / "eval.jsonl").unlink()
    with pytest.raises(ManifestError, match="missing"):
        check_manifest(out)
    manifest = json.loads((out / "manifest.json").read_text()) | {"schema_version": SCHEMA_VERSION + 1}
    (out / "manifest.json").write_text(json.dumps(manifest))
    with pytest.raises(ManifestError, match="rebuild"):
        check_manifest(out)


def test_failed_rewrite_keeps_the_previous_dataset(dataset):
    out, rows = dataset
    before = check_manifest(out)
    with pytest.raises(ValueError):
        write_dataset([*rows, sft_pack_row(99, messages=[{"role": "user", "content": "x"}])], out, "sft",
                      {"pack_version": 3})
    assert check_manifest(out) == before
    assert [p.name for p in out.parent.iterdir()] == ["sft"]  # no temp dirs left behind

    after = write_dataset(rows[:10], out, "sft", {"pack_version": 3})  # a successful rewrite replaces it
    assert check_manifest(out) == after and after.row_counts.train + after.row_counts.eval == 10
    assert [p.name for p in out.parent.iterdir()] == ["sft"]
