"""Crash points for fault tests: the places a run can die after writing and before Dagster records it.

A point fires in one of two ways:

- `TRUFFLE_CRASH_AT=<point>[#n]` in a process's environment kills that process with SIGKILL the
  n-th time (default the first) execution passes `point`: no cleanup code runs, exactly as when a
  laptop lid closes. This proves what only a dead process shows (a run left STARTED, its pool slot
  held, a DuckDB file never closed).
- `armed("<point>[#n]")` in this process makes the n-th pass raise `Crash`. Dagster records the step
  as failed (it catches whatever a step raises), and the ingest runner calls `stop_if_crashed()`
  after each run, so the crash leaves the runner as a kill would end the process: nothing after it
  runs. The memory on disk is what a kill leaves, since no crash point sits inside an open
  transaction; a re-run then has the same work to redo, at the cost of no new process.

Unarmed and unset, a crash point costs one dict lookup.
"""

from __future__ import annotations

import os
import signal
from collections.abc import Iterator
from contextlib import contextmanager

ENV = "TRUFFLE_CRASH_AT"
_passed: dict[str, int] = {}
_armed: list[str] = []  # the in-process point, "<point>[#n]"; empty when none is armed
_fired: list[BaseException] = []


class Crash(BaseException):
    """An armed crash point fired in this process. A BaseException, so no `except Exception` tidies up
    after it."""


def crash_point(point: str) -> None:
    wanted = _armed[0] if _armed else os.environ.get(ENV)
    if not wanted:
        return
    name, _, nth = wanted.partition("#")
    if name != point:
        return
    _passed[point] = _passed.get(point, 0) + 1
    if _passed[point] != int(nth or 1):
        return
    if _armed:
        _fired.append(Crash(wanted))
        raise _fired[-1]
    os.kill(os.getpid(), signal.SIGKILL)


@contextmanager
def armed(point: str) -> Iterator[None]:
    """Within this block the n-th pass of `point` ("<point>[#n]") raises `Crash` in this process."""
    _armed[:] = [point]
    _passed.clear()
    _fired.clear()
    try:
        yield
    finally:
        _armed.clear()
        _passed.clear()
        _fired.clear()


def stop_if_crashed() -> None:
    """Raise the armed crash again once it has fired: a runner calls this between runs, so a crash
    inside one run ends the runner's work as a kill ends the process."""
    if _fired:
        raise _fired[-1]
