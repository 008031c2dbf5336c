"""The partitions every chat-level asset shares: one key per chat-month that holds messages.

Keys read `<chat>|<YYYY-MM>` and exist only for months with messages, so a complete ingest shows
every partition materialized. Dagster orders a dynamic partitions definition's keys by when they
were added, and a ranged run (single-run backfill) covers every key between its first and last in
that order: keys are added chat by chat, months in order, so each chat's months form one range and
a first ingest is one run per chat. A month added later to a known chat lands after other chats'
keys; `in_key_order` cuts runs where the real order has them, never across another chat's keys.

A month is the grain of the work; per-day digests (`truffle_assets.ingest.stage_days`) decide which
days inside a month are redone.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from datetime import date

import dagster as dg

from truffle_assets.ingest.months import month_start
from truffle_assets.ingest.planning import IngestPlan

# WhatsApp chat exports rarely reach back before 2014; days outside this window get no partition.
HISTORY_START = "2014-01"
MONTH_FMT = "%Y-%m"  # keys read "alice|2023-03"; a day key ("alice|2023-03-01") is never mistaken for one
RECOMPUTE_TAG = "truffle/recompute"  # "all": redo every day of the run's months, digests or not
CHAT_TAG = "truffle/chat"  # on every ranged run: the chat it covers
MONTHS_TAG = "truffle/months"  # and its months, "2023-01..2023-06" or "2023-03"

chat_months = dg.DynamicPartitionsDefinition(name="chat_months")
# the chats dimension of the chat × calendar-month layout this one replaces; an instance holding it is migrated
LEGACY_CHATS = "chats"


def chat_month_key(chat: str, month: date | str) -> str:
    """The key of `chat`'s month holding `month` (a date, or a "YYYY-MM" key)."""
    key = month if isinstance(month, str) else month_start(month).strftime(MONTH_FMT)
    return f"{chat}|{key}"


def split_key(key: str) -> tuple[str, date]:
    """`(chat, first day of the month)` from a partition key string."""
    chat, _, month = str(key).rpartition("|")
    return chat, date.fromisoformat(month + "-01")


def day_window() -> tuple[date, date]:
    """The first and last day that can have a partition: HISTORY_START through today."""
    return date.fromisoformat(HISTORY_START + "-01"), date.today()


def months_label(first: date, last: date) -> str:
    return f"{first:%Y-%m}" if (first.year, first.month) == (last.year, last.month) else f"{first:%Y-%m}..{last:%Y-%m}"


def chat_range_tags(chat: str, first: date, last: date, recompute: bool = False) -> dict[str, str]:
    """Tags that make one run cover `chat`'s keys from `first`'s month through `last`'s in key order
    (single-run backfill), and name the chat and months on the Runs page."""
    tags = {
        "dagster/asset_partition_range_start": chat_month_key(chat, first),
        "dagster/asset_partition_range_end": chat_month_key(chat, last),
        CHAT_TAG: chat,
        MONTHS_TAG: months_label(first, last),
    }
    return {**tags, RECOMPUTE_TAG: "all"} if recompute else tags


def months_by_chat(partition_keys: Iterable[str]) -> dict[str, list[date]]:
    """The run's partition keys grouped per chat, months sorted (one ranged run covers many months)."""
    out: dict[str, list[date]] = {}
    for key in partition_keys:
        chat, month = split_key(key)
        out.setdefault(chat, []).append(month)
    return {chat: sorted(ms) for chat, ms in sorted(out.items())}


def registered_chats(keys: Iterable[str]) -> set[str]:
    return {split_key(k)[0] for k in keys}


def keys_to_add(existing: Iterable[str], months: Mapping[str, Iterable[date]]) -> list[str]:
    """The keys `months` (chat -> months) needs that `existing` lacks, chat by chat, months in order."""
    have = set(existing)
    return [k for chat in sorted(months) for k in dict.fromkeys(chat_month_key(chat, m) for m in sorted(months[chat]))
            if k not in have]


def add_chat_months(instance: dg.DagsterInstance, months: Mapping[str, Iterable[date]]) -> list[str]:
    """Register `months` (chat -> months) as keys, new ones in chat-then-month order; returns those added."""
    new = keys_to_add(instance.get_dynamic_partitions(chat_months.name), months)
    if new:
        instance.add_dynamic_partitions(chat_months.name, new)
    return new


def plan_months(plan: IngestPlan) -> dict[str, list[date]]:
    """Every month the plan's chats need a key for: the months with messages, and any month a run is planned for."""
    return {c.chat: sorted({*c.months, *(m for r in c.ranges for m in r.months)}) for c in plan.chats}


def in_key_order(plan: IngestPlan, keys: Sequence[str]) -> IngestPlan:
    """The plan's runs cut where `keys` (the definition's order, new keys included) puts them: one run
    per stretch of the chat's planned months that no other key interrupts."""
    position = {k: i for i, k in enumerate(keys)}
    return plan.regrouped(lambda chat, month: position[chat_month_key(chat, month)])


LEGACY_LAYOUT = (
    "this Dagster instance holds chat × calendar-month partitions (every month since 2014 for every chat); "
    "registering each chat's months with messages as its partitions and requesting them once, so the UI "
    "matches the store (days the store already holds are kept as they are)"
)


def legacy_layout(instance: dg.DagsterInstance) -> bool:
    """True when the instance still holds the chat × calendar-month (or older chat × day) layout.

    Its materializations read like the new keys but none are registered: callers register every
    chat's months and request them once (`LEGACY_LAYOUT`), then `forget_legacy_layout`.
    """
    return bool(instance.get_dynamic_partitions(LEGACY_CHATS))


def forget_legacy_layout(instance: dg.DagsterInstance) -> None:
    """Drop the old layout's chat partitions once every chat's months are registered and requested."""
    for chat in instance.get_dynamic_partitions(LEGACY_CHATS):
        instance.delete_dynamic_partition(LEGACY_CHATS, chat)


def recompute_requested(context: dg.AssetExecutionContext) -> bool:
    """Whether the run asks every day of its months to be redone (`truffle ingest --full`, or the tag set in the UI)."""
    try:
        return context.run.tags.get(RECOMPUTE_TAG) == "all"
    except dg.DagsterError:  # a direct call in a test has no run
        return False
