"""A reader that gives one person exclusive roles in one message makes no relationship fact of that name."""

from datetime import datetime, timedelta

import polars as pl

from truffle_assets.memory.facts.coherence import contradictions
from truffle_assets.memory.facts.consolidation import consolidate
from truffle_assets.memory.facts.extraction import extract_claims
from truffle_assets.memory.summaries import FactOut, _claim
from truffle_assets_tests.memory.facts.frames import USER, claims, messages

T = datetime(2024, 3, 2, 18, 30)


def model_claims(facts: list[tuple[str, str, str]], line: str = "Kabir and I got engaged!! Ring pics soon") -> pl.DataFrame:
    """(predicate, value, category) facts a model answered for one message, validated the way tier C does."""
    ep = {"id": "e1", "chat_id": "c1", "day": T.date(), "start_ts": T, "message_ids": ["m0"]}
    rows = [_claim(ep, FactOut(subject=USER, predicate=p, value=v, category=cat, fact_text=f"{USER} {p} {v}",
                               confidence=0.8, evidence_message_ids=["m1"]), ["m0"], [f"[18:30] {USER}: {line}"])
            for p, v, cat in facts]
    assert all(r is not None for r in rows)
    return pl.DataFrame(rows).with_columns(pl.col("ts").cast(pl.Datetime("us")))


def test_one_name_in_exclusive_roles_from_one_message_makes_no_relationship_fact():
    said = model_claims([("partner", "Kabir", "relationship"), ("mother", "Kabir", "relationship"),
                         ("sister", "Kabir", "relationship"), ("pet", "Kabir", "relationship"),
                         ("best_friend", "Kabir", "relationship"), ("relationship_status", "engaged", "relationship")])
    [c] = contradictions(said)
    assert (c["source"], c["message_id"], c["value"]) == ("llm", "m0", "Kabir")
    assert c["roles"] == ["mother", "partner", "pet", "sister"]
    assert len(c["claim_ids"]) == 5  # the friendship goes too: the reading of that name is unreliable
    f = consolidate(said)
    assert set(zip(f["predicate"], f["value"])) == {("relationship_status", "engaged")}


def test_roles_that_combine_or_come_from_different_messages_or_readers_are_kept():
    sister_friend = model_claims([("sister", "Riya", "relationship"), ("best_friend", "Riya", "relationship"),
                                  ("family", "Riya", "relationship")], "Riya is my sister and my best friend")
    fiance = model_claims([("fiance", "Kabir", "relationship"), ("partner", "Kabir", "relationship")])
    assert contradictions(sister_friend) == [] and contradictions(fiance) == []
    assert consolidate(sister_friend).height == 3
    # two messages, or the offline reader beside the model: later readings are consolidation's business
    apart = claims([("partner", "Kabir", T, "m1"), ("brother", "Kabir", T + timedelta(days=3), "m2")])
    readers = pl.concat([claims([("partner", "Kabir", T, "m0")]).with_columns(category=pl.lit("relationship")),
                         model_claims([("brother", "Kabir", "relationship")])])
    assert contradictions(apart) == [] and contradictions(readers) == []
    assert set(consolidate(readers)["predicate"]) == {"partner", "brother"}


def test_the_offline_reader_does_not_contradict_itself():
    df = messages([(USER, "Kabir is my fiancé, we got engaged last month", T),
                   (USER, "My sister Riya is also my best friend", T + timedelta(hours=1)),
                   (USER, "Our dog Bruno turned 3", T + timedelta(hours=2))])
    said = extract_claims(df)
    assert said.height >= 2
    assert contradictions(said) == []
