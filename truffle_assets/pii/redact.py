"""Message-level redaction: typed placeholders, sensitivity, and the `message_pii` frame.

Sensitivity (documented choice):
- 'secret': anything that alone grants access to money or identity — card, cvv, account, otp,
  password, pin, aadhaar, pan. IFSC next to an account number is covered by the account.
- 'pii': contact/routing identifiers that identify a person but unlock nothing — email, phone,
  upi, ifsc alone.
- 'none': nothing detected.
Spans are stored as offsets on raw_text with their type only; values never leave raw_text.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

import polars as pl

from truffle_assets.pii.detectors import PREFILTER, Span, detect

PLACEHOLDERS: dict[str, str] = {
    "card": "[CARD]", "cvv": "[CVV]", "account": "[ACCOUNT]", "ifsc": "[IFSC]", "upi": "[UPI]", "otp": "[OTP]",
    "aadhaar": "[AADHAAR]", "pan": "[PAN]", "password": "[PASSWORD]", "pin": "[PIN]", "email": "[EMAIL]",
    "phone": "[PHONE]",
}
SECRET_TYPES = frozenset({"card", "cvv", "account", "otp", "password", "pin", "aadhaar", "pan"})
OUTPUT_COLUMNS = ("id", "chat_id", "day", "redacted_text", "pii_types", "sensitivity", "spans")


@dataclass(frozen=True, slots=True)
class Redaction:
    text: str  # redacted
    types: list[str]  # sorted unique
    spans: list[Span]  # on the original text
    sensitivity: str  # 'none' | 'pii' | 'secret'


def sensitivity_of(types: list[str] | set[str]) -> str:
    if any(t in SECRET_TYPES for t in types):
        return "secret"
    return "pii" if types else "none"


def redact_text(text: str, prev_text: str | None = None) -> Redaction:
    spans = detect(text or "", prev_text)
    if not spans:
        return Redaction(text or "", [], [], "none")
    out, pos = [], 0
    for s in spans:
        out.append(text[pos:s.start])
        out.append(PLACEHOLDERS[s.type])
        pos = s.end
    out.append(text[pos:])
    types = sorted({s.type for s in spans})
    return Redaction("".join(out), types, spans, sensitivity_of(types))


def redacted_authors(msgs: pl.DataFrame) -> dict[str, str]:
    """Author name -> its redacted form: names can be phone numbers (unsaved contacts), and
    downstream of the PII stage only redacted text flows."""
    return {a: redact_text(a).text for a in msgs["author"].drop_nulls().unique().to_list()}


def spans_json(spans: list[Span]) -> str:
    return json.dumps([{"type": s.type, "start": s.start, "end": s.end} for s in spans], separators=(",", ":"))


def redact_messages(messages: pl.DataFrame) -> pl.DataFrame:
    """`message_pii` rows for `messages` (any mix of chats/days), in input order.

    OTP context is the previous message of the same chat by `ts` (ties: input order). Only rows the
    vectorised prefilter lets through go through Python; the rest are copied as 'none'.
    """
    n = messages.height
    base = messages.select("id", "chat_id", "day", "ts", pl.col("raw_text").fill_null("")).with_row_index("_i")
    prev = (
        base.sort(["chat_id", "ts", "_i"])
        .with_columns(_prev=pl.col("raw_text").shift(1).over("chat_id"))
        .select("_i", "_prev")
    )
    hits = base.filter(pl.col("raw_text").str.contains(PREFILTER)).join(prev, on="_i", how="left")
    idx, red, types, sens, spans = [], [], [], [], []
    for i, text, p in zip(hits["_i"].to_list(), hits["raw_text"].to_list(), hits["_prev"].to_list()):
        r = redact_text(text, p)
        if not r.spans:
            continue
        idx.append(i)
        red.append(r.text)
        types.append(r.types)
        sens.append(r.sensitivity)
        spans.append(spans_json(r.spans))
    found = pl.DataFrame(
        {"_i": idx, "_red": red, "_types": types, "_sens": sens, "_spans": spans},
        schema={"_i": pl.UInt32, "_red": pl.String, "_types": pl.List(pl.String), "_sens": pl.String,
                "_spans": pl.String},
    )
    out = base.join(found, on="_i", how="left").sort("_i")
    empty = pl.lit([], dtype=pl.List(pl.String))
    out = out.select(
        "id", "chat_id", "day",
        pl.coalesce("_red", "raw_text").alias("redacted_text"),
        pl.when(pl.col("_types").is_null()).then(empty).otherwise(pl.col("_types")).alias("pii_types"),
        pl.col("_sens").fill_null("none").alias("sensitivity"),
        pl.col("_spans").fill_null("[]").alias("spans"),
    )
    assert out.height == n
    return out
