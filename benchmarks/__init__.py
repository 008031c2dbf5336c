"""Benchmark scripts: each prints its figures and a fixed-format last line (see the README)."""

import os
import sys


def exit_quietly(code: int) -> None:
    """Flush and leave without interpreter teardown: DuckDB's bindings print leak noise after the last line."""
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)
