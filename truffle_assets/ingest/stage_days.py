"""Per-day input digests: which days of a run's months each stage must redo.

Every stage records, per (chat, day) it wrote, a digest of what that day was built from: the
export's day digest for `messages`, and for each later stage a hash of its upstream stages'
digests and its own settings. A run over a month redoes only the days whose expected digest
differs from the recorded one, so unchanged days keep their rows, ids and vectors; a day whose
messages are gone is cleared. The digests (table `stage_days`, created with the store's schema)
are written in the transaction that writes the rows.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import date

import duckdb
import polars as pl

from truffle_assets.ids import day_digest

IN_MONTHS = "chat_id = ? AND list_contains(?::DATE[], CAST(date_trunc('month', day) AS DATE))"


@dataclass
class DayWork:
    """The days of one chat's months a stage redoes: day -> new digest, None where the day is cleared."""

    todo: dict[date, str | None]
    kept: list[date]  # days of those months already up to date: not touched

    @property
    def days(self) -> list[date]:
        return sorted(self.todo)

    def in_month(self, month: date) -> tuple[int, int]:
        """(days redone, days kept) within `month` (its first day)."""
        same = lambda d: (d.year, d.month) == (month.year, month.month)  # noqa: E731
        return sum(map(same, self.todo)), sum(map(same, self.kept))


def recorded(con: duckdb.DuckDBPyConnection, stage: str, chat_id: str, months: Sequence[date]) -> dict[date, str]:
    rows = con.execute(f"SELECT day, digest FROM stage_days WHERE stage = ? AND {IN_MONTHS}",
                       [stage, chat_id, list(months)]).fetchall()
    return dict(rows)


def derived(con: duckdb.DuckDBPyConnection, upstreams: Sequence[str], chat_id: str, months: Sequence[date],
            salt: str = "") -> dict[date, str]:
    """What a stage reading `upstreams` should have recorded for each day they hold."""
    ups = [recorded(con, u, chat_id, months) for u in upstreams]
    days = set().union(*ups)
    return {d: day_digest([salt, *(u.get(d, "-") for u in ups)]) for d in days}


def diff(expected: Mapping[date, str], have: Mapping[date, str], force: bool = False) -> DayWork:
    todo: dict[date, str | None] = {d: h for d, h in expected.items() if force or have.get(d) != h}
    todo.update({d: None for d in have if d not in expected})
    return DayWork(todo, sorted(expected.keys() - todo.keys()))


def plan(con: duckdb.DuckDBPyConnection, stage: str, upstreams: Sequence[str], chat_id: str,
         months: Sequence[date], salt: str = "", force: bool = False) -> DayWork:
    return diff(derived(con, upstreams, chat_id, months, salt), recorded(con, stage, chat_id, months), force)


def record(con: duckdb.DuckDBPyConnection, stage: str, chat_id: str, work: DayWork) -> None:
    """Store the digests of the days just redone. Call inside the transaction that wrote their rows."""
    con.execute("DELETE FROM stage_days WHERE stage = ? AND chat_id = ? AND list_contains(?::DATE[], day)",
                [stage, chat_id, work.days])
    done = {d: h for d, h in sorted(work.todo.items()) if h is not None}
    if done:
        rows = pl.DataFrame({"stage": stage, "chat_id": chat_id, "day": list(done), "digest": list(done.values())},
                            schema={"stage": pl.String, "chat_id": pl.String, "day": pl.Date, "digest": pl.String})
        con.register("_stage_days", rows)
        con.execute("INSERT INTO stage_days SELECT stage, chat_id, day, digest FROM _stage_days")
        con.unregister("_stage_days")


def stage_digest(con: duckdb.DuckDBPyConnection, stage: str) -> str:
    """One digest over every day `stage` has recorded: what a whole-memory asset built from it
    (the profile from `facts`) keeps, to tell whether it is behind."""
    rows = con.execute("SELECT chat_id, day, digest FROM stage_days WHERE stage = ? ORDER BY ALL", [stage]).fetchall()
    return day_digest([f"{c}|{d}|{h}" for c, d, h in rows])
