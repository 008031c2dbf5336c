"""Frames the fact tests build: messages as the extractor reads them, claims as consolidation reads them."""

from datetime import datetime, timedelta

import polars as pl

from truffle_assets.memory.facts.schema import CLAIM_SCHEMA

USER = "Arjun Mehta"


def messages(rows: list[tuple[str, str | None, datetime]]) -> pl.DataFrame:
    """(author, text, ts) rows; ids m0, m1, ... and chats alternating c2/c1."""
    out = []
    for i, (author, text, ts) in enumerate(rows):
        out.append({"id": f"m{i}", "chat_id": "c1" if i % 2 else "c2", "day": ts.date(), "ts": ts, "author": author,
                    "is_user": author == USER, "normalized_text": text})
    return pl.DataFrame(out, schema={"id": pl.String, "chat_id": pl.String, "day": pl.Date, "ts": pl.Datetime("us"),
                                     "author": pl.String, "is_user": pl.Boolean, "normalized_text": pl.String})


def chat(rows: list[tuple[str, str]], gap: timedelta = timedelta(hours=1), chat_id: str = "c1") -> pl.DataFrame:
    """(author, text) rows of one chat, `gap` apart from 2024-01-01 09:00; ids <chat_id>-0, -1, ..."""
    t = datetime(2024, 1, 1, 9)
    out = [{"id": f"{chat_id}-{i}", "chat_id": chat_id, "day": (t + gap * i).date(), "ts": t + gap * i, "author": a,
            "is_user": a == USER, "normalized_text": x} for i, (a, x) in enumerate(rows)]
    return pl.DataFrame(out, schema={"id": pl.String, "chat_id": pl.String, "day": pl.Date, "ts": pl.Datetime("us"),
                                     "author": pl.String, "is_user": pl.Boolean, "normalized_text": pl.String})


def claims(rows: list[tuple], subject: str = USER) -> pl.DataFrame:
    """(predicate, value, ts[, message_id[, confidence]]) rows; claim i is message m<i> at 0.8 unless given."""
    out = []
    for i, (predicate, value, ts, *rest) in enumerate(rows):
        mid = rest[0] if rest else f"m{i}"
        conf = rest[1] if len(rest) > 1 else 0.8
        out.append({"id": f"k{i}", "chat_id": "c1", "day": ts.date(), "subject": subject, "predicate": predicate,
                    "value": value, "category": "test", "fact_text": f"{predicate}: {value}", "confidence": conf,
                    "message_id": mid, "ts": ts, "source": "rules"})
    return pl.DataFrame(out, schema=CLAIM_SCHEMA)
