"""The shapes of fact claims and consolidated facts, and the predicate classes consolidation obeys."""

from __future__ import annotations

import hashlib

import polars as pl

from truffle_assets.memory.facts.lexicon import PREDICATES

CLAIM_COLUMNS = ("id", "chat_id", "day", "subject", "predicate", "value", "category", "fact_text", "confidence",
                 "message_id", "ts", "source")
FACT_COLUMNS = ("id", "subject", "predicate", "value", "category", "fact_text", "confidence", "first_seen_at",
                "last_seen_at", "valid_from", "valid_to", "superseded_by", "evidence_message_ids", "chat_ids")
CLAIM_SCHEMA = {
    "id": pl.String, "chat_id": pl.String, "day": pl.Date, "subject": pl.String, "predicate": pl.String,
    "value": pl.String, "category": pl.String, "fact_text": pl.String, "confidence": pl.Float64,
    "message_id": pl.String, "ts": pl.Datetime("us"), "source": pl.String,
}
FACT_SCHEMA = {
    "id": pl.String, "subject": pl.String, "predicate": pl.String, "value": pl.String, "category": pl.String,
    "fact_text": pl.String, "confidence": pl.Float64, "first_seen_at": pl.Datetime("us"),
    "last_seen_at": pl.Datetime("us"), "valid_from": pl.Date, "valid_to": pl.Date, "superseded_by": pl.String,
    "evidence_message_ids": pl.List(pl.String), "chat_ids": pl.List(pl.String),
}


# One value at a time: a new, different value supersedes the current one.
SINGLE_VALUED = {p for p, info in PREDICATES.items() if info.single}
# Properties that hold for life (no valid_from from the first mention).
TIMELESS = {p for p, info in PREDICATES.items() if info.timeless}
# Claim predicates that end a fact rather than assert one: claim predicate -> fact predicate. Besides
# these, any "end:<predicate>" claim ends <predicate> (an empty value ends whatever is current).
ENDINGS = {"ex_partner": "partner"}
ENDING_PREFIX = "end:"


def ended_predicate(claim_predicate: str) -> str | None:
    if claim_predicate.startswith(ENDING_PREFIX):
        return claim_predicate[len(ENDING_PREFIX):]
    return ENDINGS.get(claim_predicate)


def stable_id(*parts: object) -> str:
    """Content-hash id: the same claim or fact gets the same id on every rebuild."""
    return hashlib.blake2b("\x1f".join(str(p) for p in parts).encode(), digest_size=10).hexdigest()
