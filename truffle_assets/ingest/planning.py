"""Which chats and months need a run: the one planner behind the exports sensor, `truffle ingest` and `truffle up`.

An export's per-day digests are compared with those of the days the whole chain has published
(`IngestedDays`, written by its last stage), so only months holding a changed day, or a month a
crashed run left half-built, are planned; a new chat gets
every month that has messages, and a month without messages is never planned. Consecutive
months are grouped into ranges, each one single-run backfill; inside the run, unchanged days
are skipped. Callers translate the plan into Dagster partition requests and runs, and may regroup
its months into the ranges their partition key order allows (`IngestPlan.regrouped`).
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass, field, replace
from datetime import date
from pathlib import Path

from truffle_assets.ingest.exports import load_chat
from truffle_assets.files import sha256_file
from truffle_assets.ingest.tombstones import Tombstones
from truffle_assets.ids import day_digest
from truffle_assets.ingest.months import month_start, months_between, months_of
from truffle_assets.parsing import ExportError


@dataclass(frozen=True)
class MonthRange:
    first: date  # first day of the first month
    last: date  # first day of the last month
    digest: str  # over the export's day digests in those months: run keys carry it
    changed_days: int  # days inside the range whose content differs from the store
    months: tuple[date, ...] = ()  # the planned months it covers, in the order its run takes them


@dataclass
class ChatPlan:
    chat: str
    days_in_export: int  # days with at least one message
    ranges: list[MonthRange]  # empty: the store is up to date
    outside: list[date] = field(default_factory=list)  # changed days that have no partition
    months: list[date] = field(default_factory=list)  # every month with messages inside the window
    changed: list[date] = field(default_factory=list, repr=False)  # the changed days inside the window
    digests: dict[str, str] = field(default_factory=dict, repr=False)  # the export's day digests
    written: int = 0  # messages the user wrote in it (every person's message when the user is unknown)


@dataclass
class IngestPlan:
    chats: list[ChatPlan]  # every chat that was read, in chat order
    unreadable: list[ExportError]  # chats left out because an export could not be read
    files: dict[str, dict[str, str]]  # chat -> {file: sha256} of the chats read or skipped: the sensor's next cursor

    def regrouped(self, position: Callable[[str, date], int]) -> IngestPlan:
        """The same plan with each chat's changed months grouped by `position` (chat, month -> place in
        the partition key order) instead of the calendar: one range per stretch of adjacent places."""
        return replace(self, chats=[
            replace(c, ranges=group_ranges(c.changed, c.digests, lambda m, chat=c.chat: position(chat, m)))
            for c in self.chats])

    def most_written_first(self) -> IngestPlan:
        """The chats the user writes to most come first, so their memory is there first."""
        return replace(self, chats=sorted(self.chats, key=lambda c: (-c.written, c.chat)))


def plan_ingest(
    exports: Mapping[str, list[Path]],
    stored: Callable[[str], dict[str, str]],
    window: tuple[date, date],
    *,
    registered: Collection[str] | None = None,
    seen: Mapping[str, Mapping[str, str]] | None = None,
    full: bool = False,
    only: Collection[str] | None = None,
    forget: Tombstones | None = None,
    user: str | None = None,
) -> IngestPlan:
    """Plan runs for `exports` (chat -> files) against `stored` (chat -> stored day digests).

    A chat is new, so planned over every month with messages, when `registered` does not hold it (the
    sensor, on its long-lived instance) or, with `registered` None (`truffle ingest`, whose
    instance may be ephemeral), when the store holds none of its days. `full` makes every chat
    new; whether its runs also redo unchanged days is the caller's choice (`RECOMPUTE_TAG`). With
    `seen` (chat -> {file: sha256}, the sensor's cursor) a known chat that has the same files
    with the same hashes is skipped without being parsed; one that lost a file (deleted, or given
    its own chat id by `chat_ids`) is read, so the days its messages left are planned.
    `only` limits the plan to those chats; `window` is the first and
    last day that have a partition. `forget` drops what the user forgot before digests are
    taken, so the days that held it are planned like days edited in WhatsApp. `user` (the exporting
    user's name) counts the messages they wrote in each chat (`ChatPlan.written`).
    """
    # a cursor from before chats were recorded (flat file -> hash) matches no chat: read once
    before = {c: dict(h) for c, h in (seen or {}).items() if isinstance(h, Mapping)}
    files = {c: h for c, h in before.items() if c in exports and only and c not in only}
    planned: list[ChatPlan] = []
    unreadable: list[ExportError] = []
    for chat in sorted(c for c in exports if not only or c in only):
        digests_stored = {} if full else stored(chat)
        new = full or (chat not in registered if registered is not None else not digests_stored)
        hashes = {str(p): sha256_file(p) for p in exports[chat]} if seen is not None else {}
        if hashes and not new and before.get(chat) == hashes:
            files[chat] = hashes
            continue
        try:
            load = load_chat(chat, exports[chat], user=user, forget=forget)
        except ExportError as exc:  # a half-copied or broken file must not hold up other chats
            unreadable.append(exc)
            continue
        digests = load.day_digests()
        days = changed_days(digests, digests_stored, new)
        inside, outside = split_window(days, window)
        held = months_of(inside)
        calendar = {m: i for i, m in enumerate(months_between(held[0], held[-1]))} if held else {}
        ranges = group_ranges(inside, digests, calendar.__getitem__)
        with_messages, _ = split_window([date.fromisoformat(d) for d in digests], window)
        written = int(load.rows["is_user"].sum() if user else load.rows["author"].is_not_null().sum())
        planned.append(ChatPlan(chat, len(load.days), ranges, outside, months_of(with_messages), inside, digests,
                                written))
        if hashes:
            files[chat] = hashes
    return IngestPlan(planned, unreadable, files)


def split_window(days: list[date], window: tuple[date, date]) -> tuple[list[date], list[date]]:
    """(days that have a partition, days that don't) for the window's first and last day."""
    first, last = window
    return [d for d in days if first <= d <= last], [d for d in days if not first <= d <= last]


def changed_days(digests: dict[str, str], stored: dict[str, str], is_new: bool) -> list[date]:
    """Days whose export digest differs from the stored one; a day gone from the export counts too.
    A new chat gets every day with messages (silent days are never planned)."""
    if is_new:
        return sorted(date.fromisoformat(d) for d in digests)
    return sorted(date.fromisoformat(d) for d in digests.keys() | stored.keys() if stored.get(d) != digests.get(d))


def group_ranges(days: list[date], digests: dict[str, str], position: Callable[[date], int]) -> list[MonthRange]:
    """The months of `days`, one range per stretch of consecutive `position`s (month -> place)."""
    groups: list[list[date]] = []
    for m in sorted(months_of(days), key=position):
        if groups and position(groups[-1][-1]) + 1 == position(m):
            groups[-1].append(m)
        else:
            groups.append([m])
    return [MonthRange(g[0], g[-1], range_digest(g, digests), sum(month_start(d) in g for d in days), tuple(g))
            for g in groups]


def range_digest(months: Collection[date], digests: dict[str, str]) -> str:
    """One digest for `months`: the same content asked twice gets the same run key."""
    return day_digest([f"{d}={h}" for d, h in sorted(digests.items()) if month_start(date.fromisoformat(d)) in months])
