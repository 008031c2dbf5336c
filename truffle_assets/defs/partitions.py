"""The partitions every chat-level asset shares: chats (dynamic) × days."""

from __future__ import annotations

from datetime import date

import dagster as dg

# WhatsApp chat exports rarely reach back before 2014; 10 chats × ~12 years stays near 44k
# keys, well inside Dagster's 100k-per-asset guidance.
HISTORY_START = "2014-01-01"

chats = dg.DynamicPartitionsDefinition(name="chats")
days = dg.DailyPartitionsDefinition(start_date=HISTORY_START, end_offset=1)  # today included
chat_days = dg.MultiPartitionsDefinition({"chat": chats, "day": days})


def chat_day_key(chat: str, day: date | str) -> dg.MultiPartitionKey:
    return dg.MultiPartitionKey({"chat": chat, "day": str(day)})


def split_key(key: str) -> tuple[str, date]:
    """`(chat, day)` from a partition key string, the same in direct calls and real runs."""
    mk = chat_days.get_partition_key_from_str(key)
    dims = mk.keys_by_dimension
    return dims["chat"], date.fromisoformat(dims["day"])


def day_window() -> tuple[date, date]:
    """The first and last day that have a partition: HISTORY_START through today."""
    return date.fromisoformat(HISTORY_START), date.today()


def chat_range_tags(chat: str, first: date, last: date) -> dict[str, str]:
    """Tags that make one run cover all `chat`'s days from `first` to `last` (single-run backfill)."""
    return {
        "dagster/asset_partition_range_start": str(chat_day_key(chat, first)),
        "dagster/asset_partition_range_end": str(chat_day_key(chat, last)),
    }


def days_by_chat(partition_keys: list[str]) -> dict[str, list[date]]:
    """The run's partition keys grouped per chat, days sorted (one ranged run covers many days)."""
    out: dict[str, list[date]] = {}
    for key in partition_keys:
        chat, day = split_key(key)
        out.setdefault(chat, []).append(day)
    return {chat: sorted(ds) for chat, ds in sorted(out.items())}
