"""Benchmark scripts: each prints its figures and a fixed-format last line (see the README)."""

import os
import sys


LLM_VARS = ("TRUFFLE_LLM_BASE_URL", "TRUFFLE_LLM_MODEL", "TRUFFLE_LLM_API_KEY", "OPENROUTER_API_KEY")


def offline_build() -> None:
    """Measure the offline build: no model hub, no telemetry, and no LLM endpoint for the memory tiers
    (an endpoint in the shell would change what is built)."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("DAGSTER_TELEMETRY_DISABLED", "1")
    for var in LLM_VARS:
        os.environ.pop(var, None)


def exit_quietly(code: int) -> None:
    """Flush and leave without interpreter teardown: DuckDB's bindings print leak noise after the last line."""
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)
