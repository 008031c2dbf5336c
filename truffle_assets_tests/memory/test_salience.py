from datetime import datetime, timedelta

import polars as pl
import pytest

from truffle_assets.memory.episodes import EPISODE_COLUMNS, build_episodes
from truffle_assets.memory.salience import SALIENCE_WEIGHTS, salience_histogram_png, score_episodes, term_document_counts

COMPONENTS = ("recency", "user_centricity", "repetition", "density", "urgency")
DAY = datetime(2024, 5, 10, 9, 0)


def frame(rows: list[tuple]) -> pl.DataFrame:
    """rows: (id, timestamp, author, text[, chat]); the user is Arjun Mehta."""
    recs = [{"id": r[0], "chat_id": r[4] if len(r) > 4 else "rohan", "day": r[1].date(), "ts": r[1], "author": r[2],
             "is_user": r[2] == "Arjun Mehta", "kind": "message", "normalized_text": r[3]} for r in rows]
    return pl.DataFrame(recs)


def at(minutes: int, day: datetime = DAY) -> datetime:
    return day + timedelta(minutes=minutes)


SMALL_TALK = [("s1", at(0), "Rohan Verma", "haha"), ("s2", at(1), "Rohan Verma", "lol"),
              ("s3", at(2), "Arjun Mehta", "ok"), ("s4", at(3), "Rohan Verma", "hmm nice")]
BIG_NEWS = [
    ("b1", at(300), "Arjun Mehta", "URGENT: I got the offer from Google!! Moving to Bangalore on 15 June 😭🎉"),
    ("b2", at(301), "Rohan Verma", "Congrats Arjun!! So proud of you ❤️"),
    ("b3", at(302), "Arjun Mehta", "Mujhe asap flat dhundhna hai, my exam results also came"),
]


def scored(rows, **kw) -> pl.DataFrame:
    m = frame(rows)
    ref = kw.pop("ref", None) or dict(m.group_by("chat_id").agg(pl.col("ts").max()).iter_rows())
    return score_episodes(build_episodes(m), m, ref, **kw).sort("start_ts")


def test_components_in_unit_interval_and_weighted_sum():
    out = scored(SMALL_TALK + BIG_NEWS)
    assert out.columns == list(EPISODE_COLUMNS) and out.height == 2
    for c in COMPONENTS + ("salience",):
        assert out[c].null_count() == 0 and 0.0 <= out[c].min() and out[c].max() <= 1.0
    assert sum(SALIENCE_WEIGHTS.values()) == pytest.approx(1.0)
    for r in out.iter_rows(named=True):
        assert r["salience"] == pytest.approx(sum(SALIENCE_WEIGHTS[c] * r[c] for c in COMPONENTS), abs=1e-5)


def test_user_centric_urgent_event_dense_episode_outranks_small_talk():
    small, big = scored(SMALL_TALK + BIG_NEWS).iter_rows(named=True)
    assert big["salience"] > small["salience"] + 0.2
    for c in ("user_centricity", "density", "urgency"):
        assert big[c] > small[c], c
    assert small["density"] == 0 and small["urgency"] == 0


def test_recency_halves_every_half_life_and_falls_back_to_latest_episode():
    old = [("o1", at(0, DAY - timedelta(days=180)), "Rohan Verma", "hello")]
    new = [("n1", at(0), "Rohan Verma", "hello again")]
    out = scored(old + new, ref={})
    assert out["recency"].to_list() == pytest.approx([0.5, 1.0], abs=1e-4)
    out = scored(old + new, ref={"rohan": DAY + timedelta(days=360)}, half_life_days=90)
    assert out["recency"].to_list() == pytest.approx([0.5 ** 6, 0.5 ** 4], abs=1e-4)


def test_term_counts_and_repetition_of_recurring_terms():
    rows = [(f"w{i}", at(0, DAY - timedelta(days=i + 1)), "Rohan Verma", "wedding venue booking done") for i in range(4)]
    rows += [("x1", at(0), "Rohan Verma", "wedding venue finalised"), ("y1", at(300), "Rohan Verma", "purple giraffe dance")]
    counts = term_document_counts(frame(rows))
    assert counts["rohan"]["wedding"] == 5 and counts["rohan"]["giraffe"] == 1 and counts["rohan"][""] == 6
    out = scored(rows, term_counts=counts)
    recurring = out.filter(pl.col("message_ids").list.first() == "x1")["repetition"][0]
    unique = out.filter(pl.col("message_ids").list.first() == "y1")["repetition"][0]
    assert recurring > 0.3 and unique == 0


def test_partition_scores_do_not_depend_on_the_batch():
    rows = SMALL_TALK + BIG_NEWS + [("p1", at(0, DAY - timedelta(days=3)), "Rohan Verma", "Google offer letter came?")]
    m = frame(rows)
    ref = {"rohan": m["ts"].max()}
    counts = term_document_counts(m)
    full = score_episodes(build_episodes(m), m, ref, counts)
    one_day = m.filter(pl.col("day") == DAY.date())
    part = score_episodes(build_episodes(one_day), one_day, ref, counts)
    assert part.sort("id").equals(full.filter(pl.col("day") == DAY.date()).sort("id"))


def test_second_person_and_name_mentions_count_as_user_centric():
    aimed = [("a1", at(0), "Rohan Verma", "Arjun kahan hai?"), ("a2", at(1), "Rohan Verma", "are you coming?")]
    aside = [("a1", at(0), "Rohan Verma", "Priya kahan hai?"), ("a2", at(1), "Rohan Verma", "is she coming?")]
    names = {"user_names": ["Arjun Mehta"]}
    assert scored(aimed, **names)["user_centricity"][0] == pytest.approx(0.5)  # no user messages, all about them
    assert scored(aside, **names)["user_centricity"][0] == 0
    own = scored([("u1", at(0), "Arjun Mehta", "main thak gaya"), ("u2", at(1), "Arjun Mehta", "mujhe neend aa rahi")])
    assert own["user_centricity"][0] == pytest.approx(1.0)


def test_histogram_png():
    png = salience_histogram_png([0.1, 0.2, 0.2, 0.9])
    assert png.startswith(b"\x89PNG\r\n\x1a\n") and 1000 < len(png) < 60_000
    assert salience_histogram_png([]).startswith(b"\x89PNG")
