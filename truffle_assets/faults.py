"""Crash points for fault tests: `TRUFFLE_CRASH_AT=<point>[#n]` kills this process with SIGKILL
the n-th time (default the first) execution passes `point`.

A kill -9 at a chosen boundary is the only honest way to prove a re-run converges: no cleanup
code runs, exactly as when a laptop lid closes. Unset, a crash point costs one dict lookup.
"""

import os
import signal

ENV = "TRUFFLE_CRASH_AT"
_passed: dict[str, int] = {}


def crash_point(point: str) -> None:
    wanted = os.environ.get(ENV)
    if not wanted:
        return
    name, _, nth = wanted.partition("#")
    if name != point:
        return
    _passed[point] = _passed.get(point, 0) + 1
    if _passed[point] == int(nth or 1):
        os.kill(os.getpid(), signal.SIGKILL)
