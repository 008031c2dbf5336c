"""Metadata helpers shared by every stage.

A ranged run covers many chat-months; what is true of one month (its rows, the days redone) is
attached to that partition alone, and only store-wide figures go on every partition.
"""

import base64
from collections.abc import Callable
from datetime import date
from pathlib import Path

import dagster as dg

from truffle_assets.defs.partitions import chat_month_key
from truffle_assets.ingest.stage_days import DayWork


def png_md(png: bytes, alt: str) -> dg.MetadataValue:
    """A PNG inlined as a markdown image: the Dagster UI shows it in the materialization's metadata."""
    return dg.MetadataValue.md(f"![{alt}](data:image/png;base64,{base64.b64encode(png).decode()})")


def uri(location: str | Path) -> str:
    """`dagster/uri` for a local path (an absolute file:// URI, spaces escaped) or an object-store URI as given."""
    text = str(location)
    return text if "://" in text else Path(text).resolve().as_uri()


def month_counts(con, table: str, chats: list[str]) -> dict[tuple[str, date], int]:
    """Rows of `table` per (chat, month) for `chats`, as the store holds them now."""
    rows = con.execute(
        f"SELECT chat_id, CAST(date_trunc('month', day) AS DATE), count(*) FROM {table}"
        " WHERE list_contains(?, chat_id) GROUP BY ALL", [chats]).fetchall()
    return {(c, m): n for c, m, n in rows}


def describe_months(
    context: dg.AssetExecutionContext,
    parts: dict[str, list[date]],
    work: dict[str, DayWork],
    counts: dict[tuple[str, date], int],
    extra: Callable[[str, date], dict] | None = None,
) -> dict:
    """Attach each chat-month's own row count, days redone and days kept to its partition.

    A run of one partition gets them back to put in its result (direct calls in tests have no
    per-partition metadata); a ranged run attaches them per partition and gets {}.
    """
    per_key: dict[str, dict] = {}
    for chat, months in parts.items():
        for month in months:
            redone, kept = work[chat].in_month(month) if chat in work else (0, 0)
            meta = {"dagster/partition_row_count": counts.get((chat, month), 0), "days_redone": redone,
                    "days_kept": kept, "month": month.strftime("%Y-%m")}
            per_key[str(chat_month_key(chat, month))] = {**meta, **(extra(chat, month) if extra else {})}
    if len(per_key) == 1:
        return next(iter(per_key.values()))
    for key, meta in per_key.items():
        context.add_asset_metadata(meta, partition_key=key)
    return {}
