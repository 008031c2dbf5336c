"""Kin address in a one-to-one chat: a weak claim per message, only when it is a habit, never in groups."""

from datetime import datetime, timedelta

import polars as pl

from truffle_assets.memory.facts.consolidation import consolidate
from truffle_assets.memory.facts.extraction import extract_claims
from truffle_assets_tests.memory.facts.frames import USER


def chat(rows, chat_id="c1"):
    t = datetime(2024, 1, 1, 9)
    out = [{"id": f"{chat_id}-{i}", "chat_id": chat_id, "day": (t + timedelta(hours=i)).date(),
            "ts": t + timedelta(hours=i), "author": a, "is_user": a == USER, "normalized_text": x}
           for i, (a, x) in enumerate(rows)]
    return pl.DataFrame(out, schema={"id": pl.String, "chat_id": pl.String, "day": pl.Date, "ts": pl.Datetime("us"),
                                     "author": pl.String, "is_user": pl.Boolean, "normalized_text": pl.String})


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
