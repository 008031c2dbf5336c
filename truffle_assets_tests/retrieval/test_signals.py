"""Per-candidate signals on hand-made rows: speaker, dates, recency, salience, context, and `measure`."""

from datetime import date, datetime, timedelta, UTC

import numpy as np
import pytest

from truffle_assets.retrieval.models import RetrievalWeights
from truffle_assets.retrieval.query import query_terms
from truffle_assets.retrieval.signals import (
    answer_match,
    asks,
    context_scores,
    date_match,
    measure,
    recency,
    salience,
    speaker_match,
)


def row(mid: str = "m", chat: str = "c", ts: datetime | None = datetime(2023, 6, 3, 12), author: str = "Jon",
        **extra) -> dict:
    return {"message_id": mid, "chat_id": chat, "ts": ts, "author": author, **extra}


def test_speaker_only_when_the_query_singles_someone_out():
    rows = [row(author="Jon"), row(author="Gina"), row(author=None)]
    assert speaker_match(rows, ["Jon"], ["Gina", "Jon"]).tolist() == [1.0, 0.0, 0.0]
    assert speaker_match(rows, ["Gina", "Jon"], ["Gina", "Jon"]).tolist() == [0.0, 0.0, 0.0]  # everyone named
    assert speaker_match(rows, [], ["Gina", "Jon"]).tolist() == [0.0, 0.0, 0.0]


def test_date_exact_day_scores_one_and_the_padding_half():
    rows = [row(ts=datetime(2023, 6, 3, 23, 59)), row(ts=datetime(2023, 6, 4, 8)), row(ts=datetime(2023, 6, 6)),
            row(ts=None)]
    day = [(date(2023, 6, 3), date(2023, 6, 3))]
    assert date_match(rows, day, pad_days=1).tolist() == [1.0, 0.5, 0.0, 0.0]
    assert date_match(rows, day, pad_days=0).tolist() == [1.0, 0.0, 0.0, 0.0]
    assert date_match(rows, [], pad_days=1).tolist() == [0.0, 0.0, 0.0, 0.0]


def test_date_takes_the_best_of_several_spans():
    rows = [row(ts=datetime(2023, 6, 3)), row(ts=datetime(2023, 8, 20))]
    spans = [(date(2023, 6, 2), date(2023, 6, 2)), (date(2023, 8, 1), date(2023, 8, 31))]  # a day and a month
    assert date_match(rows, spans, pad_days=1).tolist() == [0.5, 1.0]


def test_recency_halves_every_half_life_from_the_chat_watermark():
    wm = {"c": "2023-06-30T12:00:00", "d": "2023-06-03T12:00:00"}
    rows = [row(chat="c", ts=datetime(2023, 6, 20, 12)), row(chat="d"), row(chat="unknown"), row(ts=None)]
    assert recency(rows, wm, None, half_life_days=10).tolist() == pytest.approx([0.5, 1.0, 1.0, 1.0])


def test_recency_from_now_and_never_above_one():
    now = datetime(2023, 6, 13, 12, tzinfo=UTC)  # aware `now` is compared as naive
    rows = [row(), row(ts=datetime(2023, 6, 20))]  # the second is "in the future" of now
    assert recency(rows, {"c": "2023-06-30T00:00:00"}, now, half_life_days=5).tolist() == pytest.approx([0.25, 1.0])


def test_salience_is_clipped_and_missing_is_zero():
    rows = [row(salience=0.8), row(salience=None), row(), row(salience=1.7), row(salience=-0.2)]
    assert salience(rows).tolist() == [0.8, 0.0, 0.0, 1.0, 0.0]


def test_context_blends_each_candidate_with_its_episode_neighbours():
    q = np.asarray([1.0, 0.0], dtype=np.float32)
    prev, own, nxt = (np.asarray(v, dtype=np.float32) for v in ([1.0, 0.0], [0.0, 1.0], [1.0, 0.0]))
    seq = {"e": [{"message_id": "p", "vector": prev}, {"message_id": "o", "vector": own},
                 {"message_id": "n", "vector": nxt}]}
    pos = {"p": ("e", 0), "o": ("e", 1), "n": ("e", 2)}
    rows = [{"message_id": "o"}, {"message_id": "x"}]  # x: outside any episode, keeps its own cosine
    V = np.stack([own, np.asarray([0.6, 0.8], dtype=np.float32)])
    ctx = context_scores(seq, pos, rows, V, q)
    assert ctx[0] == pytest.approx(2 / np.sqrt(8))  # 2·own + prev + next = (2, 2)
    assert ctx[1] == pytest.approx(0.6)


def test_measure_aligns_every_signal_with_the_rows():
    terms = query_terms("What did Jon say on 3 June, 2023?", ["Gina", "Jon"])
    assert terms.named == ["Jon"] and terms.dates == [(date(2023, 6, 3), date(2023, 6, 3))]
    rows = [row("a", salience=0.5, lex=0.7), row("b", author="Gina", ts=datetime(2023, 6, 1))]
    V = np.asarray([[1.0, 0.0], [0.0, 1.0]], dtype=np.float32)
    q = np.asarray([0.6, 0.8], dtype=np.float32)
    wm = {"c": (datetime(2023, 6, 3, 12) + timedelta(days=90)).isoformat()}
    s = measure(rows, V, q, np.asarray([0.1, 0.2]), {"b": 0.9}, terms, wm, None, RetrievalWeights())
    assert s.semantic.tolist() == pytest.approx([0.6, 0.8]) and s.context.tolist() == [0.1, 0.2]
    assert s.lexical.tolist() == [0.7, 0.0] and s.lexical_present.tolist() == [True, False]
    assert s.summary.tolist() == [0.0, 0.9] and s.speaker.tolist() == [1.0, 0.0]
    assert s.recency[0] == pytest.approx(0.5) and s.salience.tolist() == [0.5, 0.0]
    assert s.date.tolist() == [1.0, 0.0]
    off = measure(rows, V, q, np.zeros(2), {}, terms, wm, None, RetrievalWeights(date=0.0))
    assert off.date.tolist() == [0.0, 0.0]  # a zero weight skips the date signal altogether
    when = query_terms("When did Jon go?", ["Gina", "Jon"])
    said = [row("a", text="I went yesterday"), row("b", text="ok")]
    args = (said, V, q, np.zeros(2), {}, when, wm, None)
    assert measure(*args, RetrievalWeights(answer=0.0)).answer.tolist() == [0.0, 0.0]  # and so does the answer's
    assert measure(*args, RetrievalWeights(answer=0.2)).answer.tolist() == [1.0, 0.0]
    assert measure(*args, RetrievalWeights(fusion="learned")).answer.tolist() == [1.0, 0.0]  # a learned feature


def test_answer_match_wants_the_tag_the_question_asks_for():
    rows = [row(keys="yesterday kdate"), row(keys="paris kplace"), row(keys=None), row()]
    when = query_terms("When did Jon go to the support group?", ["Jon", "Gina"])
    assert when.wanted == ("kdate",) and "kdate" in when.keys.split() and "support" in when.keys
    assert answer_match(rows, when.wanted).tolist() == [1.0, 0.0, 0.0, 0.0]
    assert answer_match(rows, ("kdate", "kplace")).tolist() == [1.0, 1.0, 0.0, 0.0]


def test_answer_match_reads_time_expressions_when_the_index_computed_no_keys():
    rows = [row(text="I went to the support group yesterday"), row(text="It was so powerful"),
            row(text="See you last weekend?", keys=""), row(text="Paris was lovely", keys="paris kplace")]
    assert answer_match(rows, ("kdate",)).tolist() == [1.0, 0.0, 1.0, 0.0]
    assert answer_match(rows, ("kplace",)).tolist() == [0.0, 0.0, 0.0, 1.0]  # places need the NER keys
    assert answer_match(rows, ()).tolist() == [0.0] * 4  # "What did Jon paint?" wants no tag


def test_asks_is_the_share_of_sentences_that_are_questions():
    assert asks("How did you two meet?") == 1.0
    assert asks("We met in an engineering class in college. It's been great!") == 0.0
    assert asks("Congrats! What books do you enjoy?") == 0.5
    assert asks("wait, really?? when") == 0.5  # "??" ends one question; the bare "when" is a fragment
    assert asks("") == 0.0 and asks(None) == 0.0
    rows = [row("a", text="How did you two meet?"), row("b", text="In a class. Then it blossomed.")]
    s = measure(rows, np.eye(2, dtype=np.float32), np.asarray([1.0, 0.0], dtype=np.float32), np.zeros(2), {},
                query_terms("How did Jon meet his wife?", ["Jon", "Gina"]), {}, None, RetrievalWeights())
    assert s.asks.tolist() == [1.0, 0.0]


def test_speaker_match_for_a_question_about_the_owner():
    rows = [row("a", author="Varun", is_user=True), row("b", author="Mom", is_user=False), row("c", author="Varun")]
    assert speaker_match(rows, [], ["Varun", "Mom"], about_self=True).tolist() == [1.0, 0.0, 0.0]
    assert speaker_match(rows, [], ["Varun", "Mom"]).tolist() == [0.0, 0.0, 0.0]
    assert speaker_match(rows, ["Mom"], ["Varun", "Mom"], about_self=True).tolist() == [0.0, 1.0, 0.0]
