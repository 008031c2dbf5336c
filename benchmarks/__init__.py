"""Product benchmarks: each script measures one figure of the product (ingest speed, recall, fact
extraction, privacy, latency, crash safety, fine-tuning) and prints its figures with a fixed-format
last line; `docs/benchmarks.md` says what each measures, how to run it and its latest figure.
`results/` keeps the latest output of each; `heldout/`, `devset/` and `devset2/` are the annotated
chat sets. The logic they score with lives in `truffle_assets.evals`."""

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
