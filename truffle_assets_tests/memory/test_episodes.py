import re
from datetime import datetime, timedelta

import polars as pl
import pytest

from truffle_assets.memory.episodes import EPISODE_COLUMNS, approx_tokens, build_episodes
from truffle_assets.ingest.exports import load_chat, scan_exports
from truffle_assets.memory.rosetta import normalize_messages
from truffle_assets.memory.salience import score_episodes, term_document_counts
from truffle_assets.synth import write_corpus

T0 = datetime(2024, 3, 1, 10, 0)


def msgs(rows: list[tuple]) -> pl.DataFrame:
    """rows: (id, minutes after T0, author, text[, kind[, chat]])."""
    recs = []
    for r in rows:
        mid, minutes, author, text = r[:4]
        kind = r[4] if len(r) > 4 else "message"
        chat = r[5] if len(r) > 5 else "alice"
        ts = T0 + timedelta(minutes=minutes)
        recs.append({"id": mid, "chat_id": chat, "day": ts.date(), "ts": ts, "author": author,
                     "is_user": author == "Arjun", "kind": kind, "normalized_text": text})
    return pl.DataFrame(recs, schema={"id": pl.String, "chat_id": pl.String, "day": pl.Date, "ts": pl.Datetime("us"),
                                      "author": pl.String, "is_user": pl.Boolean, "kind": pl.String,
                                      "normalized_text": pl.String})


def test_contract_columns_and_null_salience():
    ep = build_episodes(msgs([("a", 0, "Arjun", "hi"), ("b", 1, "Alice", "hello")]))
    assert ep.columns == list(EPISODE_COLUMNS)
    assert ep.schema["message_ids"] == pl.List(pl.String) and ep.schema["start_ts"] == pl.Datetime("us")
    assert ep.height == 1 and ep["message_ids"][0].to_list() == ["a", "b"] and ep["n_messages"][0] == 2
    assert ep["text"][0] == "10:00 Arjun: hi\n10:01 Alice: hello"
    assert all(ep[c].null_count() == 1 for c in ("salience", "recency", "urgency"))
    empty = build_episodes(msgs([]))
    assert empty.columns == list(EPISODE_COLUMNS) and empty.height == 0


def test_split_at_gap_but_not_at_exactly_the_gap():
    ep = build_episodes(msgs([("a", 0, "Arjun", "x"), ("b", 30, "Alice", "y"), ("c", 61, "Alice", "z")]), gap_minutes=30)
    assert [ids.to_list() for ids in ep["message_ids"]] == [["a", "b"], ["c"]]


def test_never_spans_two_days_or_two_chats():
    m = msgs([("a", 13 * 60 + 50, "Arjun", "late"), ("b", 14 * 60 + 5, "Alice", "after midnight"),
              ("c", 14 * 60 + 6, "Bob", "other chat", "message", "bob")])
    ep = build_episodes(m, gap_minutes=120).sort("start_ts")
    assert [ids.to_list() for ids in ep["message_ids"]] == [["a"], ["b"], ["c"]]
    assert ep["day"].to_list()[0] != ep["day"].to_list()[1]


def test_token_budget_and_overlong_message():
    ten = lambda s: 10  # noqa: E731
    ep = build_episodes(msgs([(f"m{i}", i, "Alice", "word") for i in range(5)]), max_tokens=25, count_tokens=ten)
    assert ep["n_messages"].to_list() == [2, 2, 1] and max(ep["n_tokens"]) <= 25
    long = "blah " * 2000
    ep = build_episodes(msgs([("a", 0, "Alice", "short"), ("b", 1, "Arjun", long), ("c", 2, "Alice", "after")]),
                        max_tokens=200)
    assert [ids.to_list() for ids in ep["message_ids"]] == [["a"], ["b"], ["c"]]
    big = ep.row(1, named=True)
    assert big["n_tokens"] <= 200 and big["n_tokens"] == approx_tokens(big["text"])
    assert big["text"].startswith("10:01 Arjun: blah") and big["text"].endswith("[truncated]")


def test_one_line_per_message_for_every_kind():
    m = msgs([
        ("a", 0, "Alice", "line one\nline two\r\nline three\u2028four"), ("b", 1, "Arjun", "<Media omitted>", "media"),
        ("c", 2, "Arjun", "IMG-1.jpg (file attached)\nlook at this", "media"), ("d", 3, "Alice", "deleted", "deleted"),
        ("e", 4, None, "Alice added Bob", "system"), ("f", 5, "Alice", "", "message"),
        ("g", 6, "Alice", "POLL:\nWhere?\nOPTION: Goa (2 votes)", "poll"), ("h", 7, "Bob", None, "call"),
    ])
    ep = build_episodes(m).row(0, named=True)
    lines = ep["text"].split("\n")
    assert len(lines) == ep["n_messages"] == 8 and ep["text"].splitlines() == lines
    assert lines == [
        "10:00 Alice: line one / line two / line three / four", "10:01 Arjun: [media]",
        "10:02 Arjun: [media] look at this", "10:03 Alice: [deleted]", "10:04 System: [system] Alice added Bob",
        "10:05 Alice: [empty]", "10:06 Alice: [poll] POLL: / Where? / OPTION: Goa (2 votes)", "10:07 Bob: [call]",
    ]


def test_sorted_by_time_then_line_then_id():
    m = msgs([("z", 1, "Alice", "second"), ("y", 0, "Alice", "first"), ("a", 1, "Arjun", "third")])
    assert build_episodes(m)["message_ids"][0].to_list() == ["y", "a", "z"]
    m = m.with_columns(line_start=pl.Series([2, 1, 3]))  # export order wins within a minute
    assert build_episodes(m)["message_ids"][0].to_list() == ["y", "z", "a"]


def test_ids_stable_when_unchanged_and_new_when_a_message_changes():
    rows = [("a", 0, "Arjun", "hi"), ("b", 1, "Alice", "hey"), ("c", 120, "Arjun", "later"), ("d", 121, "Alice", "ok")]
    first = build_episodes(msgs(rows))
    again = build_episodes(msgs(rows).sample(fraction=1.0, shuffle=True, seed=3))
    assert first["id"].to_list() == again["id"].to_list()
    assert all(re.fullmatch(r"[0-9a-f]{16}", i) for i in first["id"])
    changed = build_episodes(msgs(rows[:3] + [("d", 121, "Alice", "ok!!")]))
    assert changed["id"][0] == first["id"][0] and changed["id"][1] != first["id"][1]


@pytest.fixture(scope="module")
def synth_messages(tmp_path_factory) -> pl.DataFrame:
    root = tmp_path_factory.mktemp("synth")
    write_corpus(root, chats=4, tokens=40_000, seed=7)
    frames = [load_chat(c, paths, user="Arjun Mehta").rows for c, paths in scan_exports(root).items()]
    rows = pl.concat(frames)
    streams = normalize_messages(rows.rename({"raw_text": "redacted_text"}))
    return rows.join(streams.select("id", "normalized_text"), on="id")


def test_synth_corpus_every_message_in_exactly_one_episode(synth_messages):
    m = synth_messages
    ep = build_episodes(m)
    ids = ep["message_ids"].explode()
    assert ids.len() == m.height and ids.n_unique() == m.height and set(ids) == set(m["id"])
    assert (ep["n_messages"] == ep["message_ids"].list.len()).all()
    assert (ep["text"].str.count_matches("\n") + 1 == ep["n_messages"]).all()
    assert (ep["start_ts"].dt.date() == ep["day"]).all() and (ep["end_ts"].dt.date() == ep["day"]).all()
    assert ep["n_tokens"].max() <= 1000 and ep["id"].n_unique() == ep.height
    ref = dict(m.group_by("chat_id").agg(pl.col("ts").max()).iter_rows())
    scored = score_episodes(ep, m, ref, term_document_counts(m))
    for c in ("salience", "recency", "user_centricity", "repetition", "density", "urgency"):
        assert scored[c].null_count() == 0 and scored[c].min() >= 0 and scored[c].max() <= 1
