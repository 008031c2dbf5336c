"""Salience drift measures (`evals.salience_drift`) on a tiny store built with the memory stages' own functions:
a store against itself shows no drift, a store whose older episodes were scored before the later
messages arrived (what an incremental run leaves) shows it, and the as-of rescoring reproduces it."""

import zipfile
from datetime import datetime, timedelta

import duckdb
import polars as pl
import pytest

from truffle_assets.evals import salience_drift as sd
from truffle_assets.index import MemoryIndex, raw_rows_from, summary_rows_from
from truffle_assets.memory.episodes import build_episodes
from truffle_assets.memory.rosetta import normalize_messages
from truffle_assets.memory.salience import score_episodes, term_document_counts
from truffle_assets.memory.summaries import rollups, summarize_episodes
from truffle_assets.parsing import parse_file
from truffle_assets.pii import redact_messages
from truffle_assets.retrieval import RetrievalWeights, retrieve
from truffle_assets_tests.index.memory_fixtures import shared_embedder

CUT = datetime(2024, 3, 1)
TEXTS = [  # (the user's?, text): some repeat across days, some name events, some are urgent
    (False, "Are you free on Saturday for the cricket match?"), (True, "Yes! I will bring the bat"),
    (False, "My sister's wedding is in Jaipur next month"), (True, "Congrats!! I booked my flight"),
    (False, "The cricket match got moved to Sunday 7am"), (True, "Sorry, my exam results come out Monday"),
    (False, "Urgent: call me when you can, mom is in hospital"), (True, "Calling now, I hope she is ok"),
    (False, "Let's plan a trip to Goa in December"), (True, "I love that idea, I'll check the rent"),
]


def _messages() -> pl.DataFrame:
    rows, n = [], 0
    for month in (1, 2, 3):
        for day in (2, 9, 16, 23):
            t = datetime(2024, month, day, 18, 0)
            for k in range(4):
                mine, text = TEXTS[(n + k) % len(TEXTS)]
                rows.append(dict(id=f"m{n:03d}", chat_id="alice", day=t.date(), ts=t + timedelta(minutes=3 * k),
                                 author="Arjun" if mine else "Alice", is_user=mine, kind="message", raw_text=text,
                                 line_start=n + 1))
                n += 1
            n += 3  # the next day starts on another text
    return pl.DataFrame(rows)


def _score(eps: pl.DataFrame, msgs: pl.DataFrame, streams: pl.DataFrame) -> pl.DataFrame:
    """What the `episodes` asset does: whole-chat inputs from the messages the store holds now."""
    m = msgs.join(streams.select("id", "normalized_text"), on="id")
    return score_episodes(eps, m, {"alice": m["ts"].max()},
                          term_document_counts(m.select("id", "chat_id", "is_user", "normalized_text")),
                          user_names=["Arjun"])


def _build(root, incremental: bool) -> tuple:
    """A store (DuckDB + published index) of `_messages()`: in one go, or the months before CUT
    first and then the rest, each step scoring only its own days."""
    msgs = _messages()
    streams = normalize_messages(redact_messages(msgs))
    steps = [msgs.filter(pl.col("ts") < CUT), msgs.filter(pl.col("ts") >= CUT)] if incremental else [msgs]
    held, eps = msgs.clear(), []
    for step in steps:
        held = pl.concat([held, step])
        new = build_episodes(step.join(streams.select("id", "normalized_text"), on="id"))
        eps.append(_score(new, held, streams))
    eps = pl.concat(eps)
    summ, _ = summarize_episodes(eps, None)
    db = root / "memory.duckdb"
    with duckdb.connect(str(db)) as con:
        for name, frame in (("messages", msgs), ("message_streams", streams), ("episodes", eps),
                            ("summaries", summ), ("rollups", rollups(summ, eps))):
            con.register("_f", frame)
            con.execute(f"CREATE TABLE {name} AS SELECT * FROM _f")
            con.unregister("_f")
    idx = MemoryIndex(root / "index", shared_embedder())
    idx.upsert_partitions("alice", msgs["day"].unique().to_list(), raw_rows_from(msgs, streams, eps),
                          summary_rows_from(summ, eps))
    idx.refresh_indexes()
    idx.publish(root / "latest.json")
    return db, root / "latest.json"


@pytest.fixture(scope="module")
def stores(tmp_path_factory):
    clean, inc = tmp_path_factory.mktemp("clean"), tmp_path_factory.mktemp("incremental")
    return _build(clean, False), _build(inc, True)


QUESTIONS = ["When is the cricket match?", "Who is in hospital?", "Where is the wedding?", "What did I book?"]
GOLD = [["m000", "m004"], ["m006"], ["m002"], None]


def test_a_store_against_itself_shows_no_drift(stores):
    (db, ptr), _ = stores
    eps = sd.read_episodes(db)
    d = sd.salience_drift(eps, eps)
    assert d["episodes"] == eps.height > 0 and d["drifted"] == 0
    assert all(d[c]["max"] == 0 for c in ("salience", *sd.COMPONENTS))
    assert sd.tier_changes(sd.summary_tiers(db), sd.summary_tiers(db))["changed"] == 0
    runs = sd.rankings(ptr, QUESTIONS, embedder=shared_embedder())
    r = sd.ranking_impact(runs, sd.rankings(ptr, QUESTIONS, embedder=shared_embedder()), GOLD)
    assert r["overlap"] == r["identical"] == 1.0 and r["recall_base"] == r["recall_other"] > 0
    assert r["with_gold"] == 3 and r["questions"] == 4


def test_older_episodes_scored_before_later_messages_drift(stores):
    (db, _), (inc_db, _) = stores
    clean, inc = sd.read_episodes(db), sd.read_episodes(inc_db)
    d = sd.salience_drift(clean, inc)
    assert d["episodes"] == clean.height == inc.height  # same messages, same episodes
    old = clean.filter(pl.col("day") < CUT.date())["id"].to_list()
    assert 0 < d["drifted"] <= len(old) < clean.height
    assert d["salience"]["mean"] > 0 and d["recency"]["max"] > 0
    # recency as of the cut is higher: every old episode's recency went up, none of the new ones moved
    j = clean.join(inc, on="id", suffix="_inc")
    assert (j.filter(pl.col("id").is_in(old))["recency_inc"] > j.filter(pl.col("id").is_in(old))["recency"]).all()
    new = j.filter(~pl.col("id").is_in(old))
    assert new.height and (new["salience"] == new["salience_inc"]).all()
    # the stored summary tiers follow the thresholds the benchmark counts with
    assert sd.summary_tiers(inc_db) == sd.tiers_from(inc)
    assert sd.tier_changes(sd.summary_tiers(db), sd.summary_tiers(inc_db))["changed"] == sum(
        sd.tier_of(a) != sd.tier_of(b) for a, b in zip(j["salience"], j["salience_inc"]))


def test_rescoring_as_of_the_runs_reproduces_both_stores(stores):
    (db, _), (inc_db, _) = stores
    clean, inc = sd.read_episodes(db), sd.read_episodes(inc_db)
    runs = [{"chats": {"alice": {"runs": [{"first_month": "2024-01", "last_month": "2024-02"}]}}},
            {"chats": {"alice": {"runs": [{"first_month": "2024-03", "last_month": "2024-03"}]}}}]
    as_of = sd.built_as_of(clean, runs)
    assert set(as_of) == {CUT, datetime(2024, 4, 1)}
    assert sd.salience_drift(inc, sd.rescore(db, clean, as_of))["salience"]["max"] < 1e-6
    assert sd.salience_drift(clean, sd.rescore(db, clean, [None] * clean.height))["salience"]["max"] < 1e-6
    last = {"alice": clean["end_ts"].max()}
    monthly = sd.schedule_as_of(clean, 1, last)
    assert monthly == [None if d.month == 3 else datetime(2024, d.month + 1, 1) for d in clean["day"]]
    assert sd.schedule_as_of(clean, 12, last) == [None] * clean.height  # the only yearly export holds everything
    assert sd.salience_drift(clean, sd.rescore(db, clean, monthly))["drifted"] > 0


def test_salience_ab_reranks_the_same_candidates(stores):
    (db, ptr), _ = stores
    eps = sd.read_episodes(db)
    own = dict(zip(eps["id"], eps["salience"]))
    last = eps.sort("end_ts")["id"][-1]
    boost = {e: float(e == last) for e in eps["id"]}  # only the newest episode is salient
    loud = RetrievalWeights(salience=20.0)  # enough to outweigh what the questions match
    ab = sd.salience_ab(ptr, QUESTIONS, {"own": own, "boost": boost}, embedder=shared_embedder(), weights=loud)
    assert ab["own"] == [retrieve(q, MemoryIndex.open(ptr, shared_embedder()), k=sd.K, weights=loud).message_ids
                         for q in QUESTIONS]
    newest = set(eps.filter(pl.col("id") == last)["message_ids"][0])
    assert all(newest & set(top[:len(newest)]) for top in ab["boost"])  # the boosted episode leads every list
    assert sd.ranking_impact(ab["own"], ab["boost"], GOLD)["overlap"] < 1.0


def test_ranking_impact_of_a_known_change():
    a = [[f"m{i}" for i in range(10)], ["x", "y"]]
    b = [[f"m{i}" for i in range(9)] + ["z"], ["x", "y"]]
    r = sd.ranking_impact(a, b, [["m9"], None])
    assert r["recall_base"] == 1.0 and r["recall_other"] == 0.0 and r["with_gold"] == 1
    assert r["overlap"] == pytest.approx((9 / 11 + 1) / 2) and r["identical"] == 0.5


def test_truncated_exports_keep_whole_lines_before_the_cut(tmp_path):
    src = tmp_path / "src"
    src.mkdir()
    android = [f"{d:02d}/{m:02d}/2024, 10:0{k} - {'Arjun' if k % 2 else 'Alice'}: hello {m}-{d}-{k}"
               for m in (1, 2, 3) for d in (5, 20) for k in range(3)]
    android.insert(3, "a second line of the message before it")
    (src / "WhatsApp Chat with Alice.txt").write_bytes(("\r\n".join(android) + "\r\n").encode())
    ios = "".join(f"[{d:02d}/0{m}/2024, 09:00:00] Bob: hi {m}/{d}\n" for m in (1, 2, 3) for d in (3, 4, 13))
    with zipfile.ZipFile(src / "WhatsApp Chat - Bob.zip", "w") as zf:
        zf.writestr("_chat.txt", ios)
    late = "".join(f"[{d:02d}/04/2024, 09:00:00] Cara: hi {d}\n" for d in (13, 14))
    (src / "WhatsApp Chat with Cara.txt").write_text(late)

    kept = sd.truncate_exports(src, tmp_path / "dst", CUT)
    assert kept == {"WhatsApp Chat with Alice.txt": (12, 6), "WhatsApp Chat - Bob.zip": (6, 3),
                    "WhatsApp Chat with Cara.txt": (0, 2)}
    assert not (tmp_path / "dst" / "WhatsApp Chat with Cara.txt").exists()  # a chat that starts later
    for name, n in (("WhatsApp Chat with Alice.txt", 12), ("WhatsApp Chat - Bob.zip", 6)):
        cut_entries, all_entries = parse_file(tmp_path / "dst" / name).entries, parse_file(src / name).entries
        assert [e.to_row() for e in cut_entries] == [e.to_row() for e in all_entries[:n]]
        assert all(e.ts < CUT for e in cut_entries) and all_entries[n].ts >= CUT
    assert (tmp_path / "dst" / "WhatsApp Chat with Alice.txt").read_bytes().endswith(b"hello 2-20-2\r\n")


def test_cut_time_is_the_next_month_boundary():
    truth = {"chats": [{"first": "2021-01-10T08:00:00", "last": "2022-01-10T08:00:00"},
                       {"first": "2021-06-01T00:00:00", "last": "2021-12-31T23:00:00"}]}
    assert sd.cut_time(truth, 0.5) == datetime(2021, 8, 1)  # half way is 2021-07-11 20:00
    assert sd.cut_time(truth, 0.0) == datetime(2021, 2, 1)
    assert sd.cut_time(truth, 0.97) == datetime(2022, 1, 1)
    assert sd.cut_time({"chats": [{"first": "2021-03-01T00:00:00", "last": "2021-05-01T00:00:00"}]}, 0.0) == \
        datetime(2021, 3, 1)  # already on a boundary
