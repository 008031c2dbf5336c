"""The partitions every chat-level asset shares: chats (dynamic) × months.

A month is the grain of the work: runs request only months that hold messages, and per-day
digests (`truffle_assets.ingest.stage_days`) decide which days inside a month are redone.
"""

from __future__ import annotations

from datetime import date

import dagster as dg

from truffle_assets.ingest.months import month_start

# WhatsApp chat exports rarely reach back before 2014: ~155 months per chat.
HISTORY_START = "2014-01"
MONTH_FMT = "%Y-%m"  # keys read "2023-03"; a day key ("2023-03-01") is never mistaken for one
RECOMPUTE_TAG = "truffle/recompute"  # "all": redo every day of the run's months, digests or not

chats = dg.DynamicPartitionsDefinition(name="chats")
months = dg.MonthlyPartitionsDefinition(start_date=HISTORY_START, fmt=MONTH_FMT, end_offset=1)  # this month included
chat_months = dg.MultiPartitionsDefinition({"chat": chats, "month": months})


def chat_month_key(chat: str, month: date | str) -> dg.MultiPartitionKey:
    """The key of `chat`'s month holding `month` (a date, or a "YYYY-MM" key)."""
    key = month if isinstance(month, str) else month_start(month).strftime(MONTH_FMT)
    return dg.MultiPartitionKey({"chat": chat, "month": key})


def split_key(key: str) -> tuple[str, date]:
    """`(chat, first day of the month)` from a partition key string, the same in direct calls and real runs."""
    dims = chat_months.get_partition_key_from_str(key).keys_by_dimension
    return dims["chat"], date.fromisoformat(dims["month"] + "-01")


def day_window() -> tuple[date, date]:
    """The first and last day that have a partition: HISTORY_START through today."""
    return date.fromisoformat(HISTORY_START + "-01"), date.today()


def chat_range_tags(chat: str, first: date, last: date, recompute: bool = False) -> dict[str, str]:
    """Tags that make one run cover `chat`'s months from `first`'s through `last`'s (single-run backfill)."""
    tags = {
        "dagster/asset_partition_range_start": str(chat_month_key(chat, first)),
        "dagster/asset_partition_range_end": str(chat_month_key(chat, last)),
    }
    return {**tags, RECOMPUTE_TAG: "all"} if recompute else tags


def months_by_chat(partition_keys: list[str]) -> dict[str, list[date]]:
    """The run's partition keys grouped per chat, months sorted (one ranged run covers many months)."""
    out: dict[str, list[date]] = {}
    for key in partition_keys:
        chat, month = split_key(key)
        out.setdefault(chat, []).append(month)
    return {chat: sorted(ms) for chat, ms in sorted(out.items())}


def daily_instance(instance: dg.DagsterInstance) -> bool:
    """True when the instance's `messages` materializations are chat × day keys from before months.

    Such an instance shows none of the store's months as materialized; callers re-request every
    active month once (with a message), after which month keys exist and this is False.
    """
    keys = instance.get_materialized_partitions(dg.AssetKey("messages"))
    dims = [k.split("|")[-1] for k in keys]
    return any(len(d) == 10 for d in dims) and not any(len(d) == 7 for d in dims)


def recompute_requested(context: dg.AssetExecutionContext) -> bool:
    """Whether the run asks every day of its months to be redone (`truffle ingest --full`, or the tag set in the UI)."""
    try:
        return context.run.tags.get(RECOMPUTE_TAG) == "all"
    except dg.DagsterError:  # a direct call in a test has no run
        return False
