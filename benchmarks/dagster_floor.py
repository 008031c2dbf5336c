"""What Dagster alone costs for an ingest's runs: the same chain with every asset body empty.

    .venv/bin/python benchmarks/dagster_floor.py --report ingest.json   # replay `truffle ingest --json`'s runs

Each chat × month asset is replaced by a no-op with the same key, dependencies, partitions, pool,
backfill policy and checks (every check passes), and the ingest report's ranges run again, one
`materialize` per range as `truffle ingest` does, on a fresh SQLite instance holding the project's
dagster.yaml. No asset work is done, so the wall time is the floor Dagster puts under that ingest:
run creation, one planned and one materialized event per (asset, month), step and check events.
first_answer_bench.py runs it after the real ingest, over the same ranges.

Last line: `dagster_floor_s=<s> runs=<n> materializations=<m>`.
"""

import argparse
import json
import shutil
import sys
import tempfile
import time
from datetime import date
from pathlib import Path

import dagster as dg

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from truffle_assets.defs.partitions import add_chat_months, chat_range_tags, split_key  # noqa: E402
from truffle_assets.ingest.months import months_between  # noqa: E402
from truffle_assets.defs.pipeline import CHAT_MONTH_ASSETS  # noqa: E402


def noop(asset: dg.AssetsDefinition) -> dg.AssetsDefinition:
    """`asset` with its body emptied: every output materializes, every check passes, nothing is computed."""
    specs, checks = list(asset.specs), list(asset.check_specs)

    @dg.multi_asset(name=asset.node_def.name, specs=specs, check_specs=checks, partitions_def=asset.partitions_def,
                    backfill_policy=asset.backfill_policy, pool=asset.node_def.pool)
    def _noop():
        for spec in specs:
            yield dg.MaterializeResult(asset_key=spec.key)
        for check in checks:
            yield dg.AssetCheckResult(asset_key=check.asset_key, check_name=check.name, passed=True)

    return _noop


def ranges(report: dict) -> list[tuple[str, date, date]]:
    """(chat, first month, last month) of every run an ingest report lists, in its order."""
    return [(chat, date.fromisoformat(r["first_month"] + "-01"), date.fromisoformat(r["last_month"] + "-01"))
            for chat, entry in report["chats"].items() for r in entry["runs"]]


def floor(report: dict) -> dict:
    """Replay `report`'s ranges with the no-op chain on a fresh SQLite instance; seconds and counts."""
    home = Path(tempfile.mkdtemp(prefix="truffle-dagster-floor-"))
    shutil.copy(ROOT / "dagster.yaml", home / "dagster.yaml")
    assets = [noop(a) for a in CHAT_MONTH_ASSETS]
    todo = ranges(report)
    try:
        with dg.DagsterInstance.from_config(str(home)) as instance:
            spans: dict = {}
            for chat, entry in report["chats"].items():  # the runs' own keys; a report without them: every month between
                for r in entry["runs"]:
                    first, last = (date.fromisoformat(m + "-01") for m in (r["first_month"], r["last_month"]))
                    spans.setdefault(chat, []).extend(
                        [split_key(k)[1] for k in r["partitions"]] if "partitions" in r else months_between(first, last))
            add_chat_months(instance, spans)
            t0 = time.perf_counter()
            mats = 0
            for chat, first, last in todo:
                result = dg.materialize(assets, instance=instance, tags=chat_range_tags(chat, first, last))
                mats += len(result.get_asset_materialization_events())
            took = time.perf_counter() - t0
    finally:
        shutil.rmtree(home, ignore_errors=True)
    return {"seconds": took, "runs": len(todo), "materializations": mats}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--report", type=Path, required=True, help="the JSON `truffle ingest` printed")
    args = ap.parse_args()
    out = floor(json.loads(args.report.read_text()))
    print(f"dagster_floor_s={out['seconds']:.1f} runs={out['runs']} materializations={out['materializations']}")


if __name__ == "__main__":
    main()
