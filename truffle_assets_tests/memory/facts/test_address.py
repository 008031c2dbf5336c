"""Kin address in a one-to-one chat: a weak claim per message, only when it is a habit, never in groups."""

import polars as pl

from truffle_assets.memory.facts.consolidation import consolidate
from truffle_assets.memory.facts.extraction import extract_claims
from truffle_assets_tests.memory.facts.frames import USER, chat


def test_a_sister_known_only_from_how_she_is_addressed():
    df = chat([(USER, "didi, did you reach?"), ("Anjali Rao", "yes!"), (USER, "ok didi, call me later"),
               (USER, "haan didi")])
    c = extract_claims(df).filter(pl.col("source") == "address")
    assert set(zip(c["predicate"], c["value"])) == {("sister", "Anjali Rao")}
    assert sorted(c["message_id"]) == ["c1-0", "c1-2", "c1-3"]  # every addressing message is evidence
    f = consolidate(extract_claims(df)).filter(pl.col("predicate") == "sister")
    assert f["value"].to_list() == ["Anjali Rao"] and f["confidence"][0] > 0.6  # three together clear the cut


def test_no_kin_claim_from_mentions_groups_or_one_passing_word():
    mention = chat([(USER, "my mom said hi"), ("Dev", "say hi to aunty"), (USER, "mummy ki tabiyat theek hai")])
    assert extract_claims(mention).filter(pl.col("source") == "address").height == 0
    once = chat([(USER, "thanks bhaiya!"), ("Dev", "np")])
    assert extract_claims(once).filter(pl.col("source") == "address").height == 0
    group = chat([(USER, "papa, see this"), ("A", "nice"), ("B", "wow"), (USER, "papa, call me")])
    assert extract_claims(group).filter(pl.col("source") == "address").height == 0
    bro = chat([(USER, "bro, you coming?"), ("Dev", "ya"), (USER, "ok bro")])  # friends say bro too
    assert extract_claims(bro).filter(pl.col("source") == "address").height == 0


def test_di_after_a_verb_and_a_kin_title_after_a_name_are_no_address():
    from truffle_assets.memory.facts.address import _addressed

    assert _addressed("haan di, kal aa rahi hu") == {"sister"}
    assert _addressed("thanks di!") == {"sister"}
    assert _addressed("photo bhej di.") == set()  # "sent it": a verb group
    assert _addressed("jai mata di") == set()
    assert _addressed("cook rakhi hai, Lakshmi didi.") == set()  # a title for the cook, not the listener


def test_spouses_answering_in_kind_are_married_one_joke_is_not():
    df = chat([("Kabir Shah", "good morning wife ☀️"), (USER, "good morning husband, chai?"), ("Kabir Shah", "always")])
    c = extract_claims(df).filter(pl.col("source") == "address")
    assert set(zip(c["predicate"], c["value"], c["message_id"])) == {
        ("partner", "Kabir Shah", "c1-1"), ("relationship_status", "married", "c1-1")}
    joke = chat([("Kabir Shah", "you forgot my birthday"), (USER, "sorry husband 😂 treat on me"), ("Kabir Shah", "lol")])
    assert extract_claims(joke).filter(pl.col("source") == "address").height == 0  # once, unanswered: a joke
    about = chat([("Kabir Shah", "how's your husband?"), (USER, "my husband is fine, thanks"), ("Kabir Shah", "good")])
    assert extract_claims(about).filter(pl.col("source") == "address").height == 0  # a mention, not address


def test_got_married_and_being_engaged_are_read_and_busy_is_not():
    from datetime import date

    from truffle_assets.memory.facts.extraction import claims_from_text

    def got(text):
        return {(c["predicate"], c["value"]) for c in claims_from_text(text, USER, date(2024, 2, 1))}

    assert {("relationship_status", "married"), ("partner", "Kabir")} <= got("I got married to Kabir last week")
    assert ("relationship_status", "engaged") in got("I'm engaged!! still shaking")
    assert not {p for p, _ in got("I'm engaged in a client project all week")} & {"relationship_status", "partner"}


def test_a_parent_saved_under_a_kin_word_says_nothing_and_a_kin_title_is_no_part_of_a_name():
    mummy = chat([(USER, "good morning mummy"), ("Mummy", "gm beta"), (USER, "ok mummy, call karti hu")])
    assert extract_claims(mummy).filter(pl.col("source") == "address").height == 0  # "mother: Mummy" says nothing
    didi = chat([(USER, "haan didi"), ("Didi", "kab aa rahi hai"), (USER, "ok didi, sunday")])
    c = extract_claims(didi).filter(pl.col("source") == "address")
    assert set(zip(c["predicate"], c["value"])) == {("sister", "Didi")}  # a sister is news, even unnamed
    brother = chat([(USER, "haan bhaiya!"), ("Ankit Bhaiya 🇦🇺", "kya haal"), (USER, "thanks bhaiya")])
    c = extract_claims(brother).filter(pl.col("source") == "address")
    assert set(zip(c["predicate"], c["value"])) == {("brother", "Ankit")}
