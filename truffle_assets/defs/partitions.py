"""The partitions every chat-level asset shares: one key per chat-month that holds messages.

Keys read `<chat>|<YYYY-MM>` and exist only for months with messages, so a complete ingest shows
every partition materialized. Dagster orders a dynamic partitions definition's keys by when they
were added, and a ranged run (single-run backfill) covers every key between its first and last in
that order: keys are added chat by chat, months in order, so each chat's months form one range and
a first ingest is one run per chat. A known chat that gains a month is moved to the end (its keys
deleted and added again, months in order; materializations belong to the key strings and stay), so
a re-export's changed last month and its new one are still one run. A chat that a live run covers
is not moved, and `in_key_order` cuts runs where the real order has them, never across another
chat's keys.

A month is the grain of the work; per-day digests (`truffle_assets.ingest.stage_days`) decide which
days inside a month are redone.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping, Sequence
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


def layout(existing: Sequence[str], months: Mapping[str, Iterable[date]], busy: Collection[str] = ()
           ) -> tuple[list[str], list[str]]:
    """(keys to delete, keys to add, in order) that register `months` (chat -> months): new chats' keys
    appended chat by chat; a known chat gaining a month moved to the end with all its months in
    order, unless it is `busy` (a live run covers it) or already at the end."""
    new = keys_to_add(existing, months)
    moved = set()
    for chat in registered_chats(new) & registered_chats(existing) - set(busy):
        mine = [k for k in existing if split_key(k)[0] == chat]
        if existing[-len(mine):] != mine:
            moved.add(chat)
    gone = [k for k in existing if split_key(k)[0] in moved]
    added: list[str] = []
    for chat in sorted(registered_chats(new) | moved):
        keys = [k for k in [*gone, *new] if split_key(k)[0] == chat]
        added += sorted(keys, key=lambda k: split_key(k)[1]) if chat in moved else keys
    return gone, added


def key_order(existing: Sequence[str], gone: Sequence[str], added: Sequence[str]) -> list[str]:
    """The definition's key order once `layout`'s deletions and additions are applied."""
    dropped = set(gone)
    return [*(k for k in existing if k not in dropped), *added]


def busy_chats(instance: dg.DagsterInstance) -> set[str]:
    """Chats whose keys a queued or running run covers: moving their keys could change its range.
    A live run over several chats makes every chat busy."""
    live = instance.get_run_records(dg.RunsFilter(statuses=[
        dg.DagsterRunStatus.QUEUED, dg.DagsterRunStatus.NOT_STARTED, dg.DagsterRunStatus.STARTING,
        dg.DagsterRunStatus.STARTED, dg.DagsterRunStatus.CANCELING]))
    out: set[str] = set()
    for record in live:
        tags = record.dagster_run.tags
        ends = [tags[t] for t in ("dagster/asset_partition_range_start", "dagster/asset_partition_range_end",
                                  "dagster/partition") if "|" in tags.get(t, "")]
        chats = {split_key(k)[0] for k in ends}
        if len(chats) > 1:
            return registered_chats(instance.get_dynamic_partitions(chat_months.name))
        out |= chats
    return out


def add_chat_months(instance: dg.DagsterInstance, months: Mapping[str, Iterable[date]]) -> list[str]:
    """Register `months` (chat -> months) as `layout` lays them out; returns the keys added."""
    gone, added = layout(instance.get_dynamic_partitions(chat_months.name), months, busy_chats(instance))
    for key in gone:
        instance.delete_dynamic_partition(chat_months.name, key)
    if added:
        instance.add_dynamic_partitions(chat_months.name, added)
    return added


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
