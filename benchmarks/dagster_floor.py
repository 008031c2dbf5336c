"""What Dagster alone costs for an ingest's runs: the same chain with every asset body empty.

    .venv/bin/python benchmarks/dagster_floor.py --report ingest.json   # replay `truffle ingest --json`'s runs
    .venv/bin/python benchmarks/dagster_floor.py --report ingest.json --settings all              # each event setting
    .venv/bin/python benchmarks/dagster_floor.py --report ingest.json --settings all --postgres   # on PostgreSQL

Each chat × month asset is replaced by a no-op with the same key, dependencies, partitions, pool,
backfill policy and checks (every check passes), and the ingest report's ranges run again, one
`materialize` per range as `truffle ingest` does, on a fresh SQLite instance holding the project's
dagster.yaml. No asset work is done, so the wall time is the floor Dagster puts under that ingest:
run creation, one planned and one materialized event per (asset, month), step and check events.
first_answer_bench.py runs it after the real ingest, over the same ranges.

`--settings` replays the ranges under Dagster's event settings (SETTINGS), one instance each,
interleaved range by range so a shared CPU's load falls on every setting alike:
`subset` (DAGSTER_EMIT_PARTITION_SUBSET_IN_PLANNED_EVENTS: one planned event per asset for a
ranged run instead of one per partition; Dagster's OSS storages then cannot mark a failed run's
partitions as failed) and `batch` (DAGSTER_EVENT_BATCH_SIZE: a step's materializations and a run's
planned events are handed to the storage in batches; only PostgreSQL's event log writes
materialization batches as one insert, SQLite stores them one by one). `--postgres` runs on the
server scripts/postgres.sh starts (its DAGSTER_PG_* variables set), with dagster.postgres.yaml.

Last line per setting: `setting=<name> dagster_floor_s=<s> runs=<n> materializations=<m>
events=<stored events> vs_default=<s / default's s>` (one line, `dagster_floor_s=...`, without
`--settings`).
"""

import argparse
import json
import os
import shutil
import sys
import tempfile
import time
from contextlib import ExitStack, contextmanager
from datetime import date
from pathlib import Path

import dagster as dg

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from truffle_assets.defs.partitions import add_chat_months, chat_range_tags, split_key  # noqa: E402
from truffle_assets.ingest.months import months_between  # noqa: E402
from truffle_assets.defs.pipeline import CHAT_MONTH_ASSETS  # noqa: E402

SUBSET, BATCH = "DAGSTER_EMIT_PARTITION_SUBSET_IN_PLANNED_EVENTS", "DAGSTER_EVENT_BATCH_SIZE"
SETTINGS = {  # name -> the environment Dagster reads on every event (neither is cached)
    "default": {},
    "subset": {SUBSET: "true"},
    "batch": {BATCH: "1000"},
    "subset+batch": {SUBSET: "true", BATCH: "1000"},
}


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


@contextmanager
def environment(values: dict[str, str]):
    """`values` set in os.environ inside, every event setting of SETTINGS cleared but those."""
    saved = {k: os.environ.get(k) for k in (SUBSET, BATCH)}
    for k in saved:
        os.environ.pop(k, None)
    os.environ.update(values)
    try:
        yield
    finally:
        for k, v in saved.items():
            os.environ.pop(k, None) if v is None else os.environ.__setitem__(k, v)


@contextmanager
def fresh_instance(postgres: bool):
    """A new instance with the project's settings: SQLite in a temporary folder, or PostgreSQL
    (dagster.postgres.yaml, emptied first) on the server the DAGSTER_PG_* variables name."""
    home = Path(tempfile.mkdtemp(prefix="truffle-dagster-floor-"))
    shutil.copy(ROOT / ("dagster.postgres.yaml" if postgres else "dagster.yaml"), home / "dagster.yaml")
    try:
        with dg.DagsterInstance.from_config(str(home)) as instance:
            if postgres:
                instance.wipe()
            yield instance
    finally:
        shutil.rmtree(home, ignore_errors=True)


def floor(report: dict) -> dict:
    """Replay `report`'s ranges with the no-op chain on a fresh SQLite instance; seconds and counts."""
    return floors(report, ["default"])["default"]


def floors(report: dict, settings: list[str], postgres: bool = False) -> dict:
    """Replay `report`'s ranges with the no-op chain under each of `settings` (names in SETTINGS);
    per setting, seconds and counts. SQLite: a fresh instance per setting. PostgreSQL: one database,
    so one instance shared by the settings. The settings take turns range by range, each
    starting a round in turn."""
    assets = [noop(a) for a in CHAT_MONTH_ASSETS]
    todo = ranges(report)
    out = {name: {"seconds": 0.0, "runs": len(todo), "materializations": 0, "run_ids": []} for name in settings}
    with ExitStack() as stack:
        shared = stack.enter_context(fresh_instance(True)) if postgres else None
        instances = {name: shared if postgres else stack.enter_context(fresh_instance(False)) for name in settings}
        spans: dict = {}
        for chat, entry in report["chats"].items():  # the runs' own keys; a report without them: every month between
            for r in entry["runs"]:
                first, last = (date.fromisoformat(m + "-01") for m in (r["first_month"], r["last_month"]))
                spans.setdefault(chat, []).extend(
                    [split_key(k)[1] for k in r["partitions"]] if "partitions" in r else months_between(first, last))
        for instance in set(instances.values()):
            add_chat_months(instance, spans)
        for i, (chat, first, last) in enumerate(todo):
            for name in settings[i % len(settings):] + settings[:i % len(settings)]:  # none always goes first
                with environment(SETTINGS[name]):
                    t0 = time.perf_counter()
                    result = dg.materialize(assets, instance=instances[name], tags=chat_range_tags(chat, first, last))
                    out[name]["seconds"] += time.perf_counter() - t0
                out[name]["materializations"] += len(result.get_asset_materialization_events())
                out[name]["run_ids"].append(result.run_id)
        for name in settings:
            out[name]["events"] = sum(len(instances[name].all_logs(r)) for r in out[name].pop("run_ids"))
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--report", type=Path, required=True, help="the JSON `truffle ingest` printed")
    ap.add_argument("--settings", nargs="+", choices=[*SETTINGS, "all"],
                    help="replay under each of these event settings, interleaved ('all': every one)")
    ap.add_argument("--postgres", action="store_true", help="on the PostgreSQL server DAGSTER_PG_* names")
    args = ap.parse_args()
    report = json.loads(args.report.read_text())
    if not args.settings and not args.postgres:
        out = floor(report)
        print(f"dagster_floor_s={out['seconds']:.1f} runs={out['runs']} materializations={out['materializations']}")
        return
    names = list(SETTINGS) if "all" in (args.settings or []) else list(dict.fromkeys(args.settings or ["default"]))
    out = floors(report, names, args.postgres)
    base = out.get("default", {}).get("seconds")
    for name in names:
        o = out[name]
        print(f"setting={name} dagster_floor_s={o['seconds']:.1f} runs={o['runs']} "
              f"materializations={o['materializations']} events={o['events']}"
              + (f" vs_default={o['seconds'] / base:.3f}" if base else ""))


if __name__ == "__main__":
    main()
