"""`truffle ingest`: the sensor's work, done now, from the command line.

Every chat is registered as a partition and materialized as one single-run backfill over its
whole history, in-process, recorded in the local instance ($DAGSTER_HOME) so the UI shows it.
"""

import os
from datetime import date, timedelta
from pathlib import Path

import dagster as dg

from truffle_assets.defs.ingest.assets import messages
from truffle_assets.defs.partitions import HISTORY_START, chat_range_tags, chats
from truffle_assets.defs.resources import DuckDBStore, ExportsResource
from truffle_assets.ingest import load_chat


def ingest_all(
    exports_dir: Path,
    db_path: Path,
    user_name: str | None = None,
    chats_wanted: list[str] | None = None,
    instance_kind: str | None = None,
    cache_dir: Path | None = None,
    instance: dg.DagsterInstance | None = None,
) -> dict:
    if instance is None:
        local = instance_kind == "local" or (instance_kind is None and os.environ.get("DAGSTER_HOME"))
        instance = dg.DagsterInstance.get() if local else dg.DagsterInstance.ephemeral()
    cache_dir = cache_dir or Path(db_path).parent / "cache"
    exports = ExportsResource(exports_dir=str(exports_dir), cache_dir=str(cache_dir), user_name=user_name)
    resources = {"exports": exports, "duckdb": DuckDBStore(path=str(db_path))}
    found = exports.chats()
    selected = sorted(c for c in found if not chats_wanted or c in chats_wanted)
    known = set(instance.get_dynamic_partitions(chats.name))
    instance.add_dynamic_partitions(chats.name, [c for c in selected if c not in known])
    start, today = date.fromisoformat(HISTORY_START), date.today()
    report: dict = {"chats": {}, "failed": 0, "user": exports.user()}
    for chat in selected:
        days = [d for d in load_chat(chat, found[chat]).days if start <= d <= today]
        if not days:
            report["chats"][chat] = {"days": 0, "skipped": "no messages inside the partition window"}
            continue
        result = dg.materialize(
            [messages], instance=instance, resources=resources,
            tags=chat_range_tags(chat, days[0], days[-1]), raise_on_error=False,
        )
        mats = result.asset_materializations_for_node("messages") if result.success else []
        rows = mats[0].metadata["dagster/partition_row_count"].value if mats else 0
        report["chats"][chat] = {
            "first_day": days[0], "last_day": days[-1], "partitions": (days[-1] - days[0] + timedelta(days=1)).days,
            "rows": rows, "run_id": result.run_id, "success": result.success,
        }
        report["failed"] += not result.success
    return report
