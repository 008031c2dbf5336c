"""Calendar months as the first day of each month: the grain runs are planned and partitioned at."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import date


def month_start(d: date) -> date:
    return d.replace(day=1)


def next_month(m: date) -> date:
    return date(m.year + m.month // 12, m.month % 12 + 1, 1)


def months_of(days: Iterable[date]) -> list[date]:
    """The distinct months `days` fall in, sorted."""
    return sorted({month_start(d) for d in days})


def contiguous_months(months: Iterable[date]) -> list[tuple[date, date]]:
    """Runs of consecutive calendar months as (first, last) month starts."""
    out: list[tuple[date, date]] = []
    for m in sorted(set(months)):
        if out and next_month(out[-1][1]) == m:
            out[-1] = (out[-1][0], m)
        else:
            out.append((m, m))
    return out


def months_between(first: date, last: date) -> list[date]:
    """Every calendar month from `first`'s through `last`'s."""
    out: list[date] = []
    m = month_start(first)
    while m <= last:
        out.append(m)
        m = next_month(m)
    return out
