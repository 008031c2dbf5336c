"""The candidate-statement detector on written messages: what may state a fact about the user."""

import polars as pl

from truffle_assets.memory.candidates import detect, episode_candidates, messages_by_id

USER, OTHER = True, False


def kinds(rows):
    return [k for k, _ in detect(rows)]


def test_first_person_statements_in_english_hinglish_and_devanagari():
    assert kinds([
        (USER, "I started at Brightwave last month"),
        (USER, "we adopted a beagle puppy"),
        (USER, "mera naya office Whitefield mein hai"),
        (USER, "मैं अब पुणे में रहता हूँ"),
        (USER, "gym ja rahi hu roz subah"),
    ]) == ["first_person"] * 5


def test_small_talk_greetings_and_media_are_not_candidates():
    assert kinds([
        (USER, "ok"),
        (USER, "haha yes"),
        (USER, "good morning"),
        (USER, "<Media omitted>"),
        (OTHER, "I'm outside your building"),  # someone else's first person is about them
        (OTHER, "see you at 8 then"),
    ]) == [None] * 6


def test_an_answer_to_a_question_put_to_the_user():
    rows = [
        (OTHER, "where are you working these days?"),
        (USER, "Northwind, the data platform team"),
        (OTHER, "nice, and how long is your commute?"),
        (USER, "haha"),  # trivial: the question still waits for its answer
        (USER, "forty minutes by metro"),
        (USER, "anyway"),
    ]
    found = detect(rows)
    assert [k for k, _ in found] == [None, "answer", None, None, "answer", None]
    assert found[0][1] and found[2][1]  # the questions are marked


def test_address_terms_either_way():
    assert kinds([(USER, "haan didi, kal aata hu"), (OTHER, "happy birthday bhaiya!")])[1] == "address"
    assert kinds([(OTHER, "thanks didi")]) == ["address"]


def test_announcements_without_a_pronoun_and_the_reactions_to_them():
    assert kinds([
        (USER, "promotion ho gaya!! senior analyst from Monday"),
        (USER, "finally moved to the new flat"),
        (OTHER, "congrats on the new job!!"),
        (OTHER, "congrats"),  # a bare word says nothing of what happened
    ]) == ["announcement", "announcement", "announcement", None]


def test_episode_candidates_send_the_question_an_answer_needs_and_the_news_a_reaction_follows():
    msgs = pl.DataFrame({
        "id": ["a", "b", "c", "d", "e", "f"],
        "is_user": [False, False, True, False, True, False],
        "normalized_text": ["hey", "which city are you in now?", "Pune since March", "lol ok",
                            "got the offer from Acme", "congratulations!! so proud of you"],
    })
    c = episode_candidates(["a", "b", "c", "d", "e", "f"], messages_by_id(msgs))
    assert c.candidates == (2, 4, 5)
    assert c.lines == (1, 2, 4, 5)  # the question before the answer; the reaction's news is already in
    assert c.kinds == {"answer": 1, "announcement": 2}
    assert not episode_candidates(["a", "d"], messages_by_id(msgs)).any
