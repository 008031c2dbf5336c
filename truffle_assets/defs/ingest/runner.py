"""`truffle ingest`: the sensor's work, done now, from the command line.

Every chat is registered as a partition. A chat the store has never seen is materialized as one
single-run backfill over its whole history; a known chat only over the stretches of days whose
digests differ from what the store holds (`--full` redoes everything). Each range runs the whole
chat × day chain (messages → PII → streams → episodes → summaries → facts → index); the profile
follows once at the end. Runs execute in-process and are recorded in the local instance
($DAGSTER_HOME) so the UI shows them.
"""

import os
from pathlib import Path

import dagster as dg

from truffle_assets.defs.partitions import chat_range_tags, chats, within_partitions
from truffle_assets.defs.pipeline import CHAT_DAY_ASSETS, WHOLE_MEMORY_ASSETS
from truffle_assets.defs.resources import (
    DuckDBStore, ExportsResource, IndexResource, LLMResource, PublishedResource,
)
from truffle_assets.exports import changed_days, contiguous_ranges, load_chat


def ingest_all(
    exports_dir: Path,
    db_path: Path,
    user_name: str | None = None,
    chats_wanted: list[str] | None = None,
    instance_kind: str | None = None,
    cache_dir: Path | None = None,
    instance: dg.DagsterInstance | None = None,
    full: bool = False,
    llm: LLMResource | None = None,
    memory: bool = True,
) -> dict:
    if instance is None:
        local = instance_kind == "local" or (instance_kind is None and os.environ.get("DAGSTER_HOME"))
        instance = dg.DagsterInstance.get() if local else dg.DagsterInstance.ephemeral()
    cache_dir = cache_dir or Path(db_path).parent / "cache"
    exports = ExportsResource(exports_dir=str(exports_dir), cache_dir=str(cache_dir), user_name=user_name)
    data_dir = Path(db_path).parent
    resources = {
        "exports": exports, "duckdb": DuckDBStore(path=str(db_path)),
        "llm": llm or LLMResource(cache_dir=str(cache_dir / "llm")),
        "index": IndexResource(root=str(data_dir / "index")),
        "published": PublishedResource(dir=str(data_dir / "published")),
    }
    selection = CHAT_DAY_ASSETS if memory else CHAT_DAY_ASSETS[:1]
    found = exports.chats()
    selected = sorted(c for c in found if not chats_wanted or c in chats_wanted)
    known = set(instance.get_dynamic_partitions(chats.name))
    instance.add_dynamic_partitions(chats.name, [c for c in selected if c not in known])
    report: dict = {"chats": {}, "failed": 0, "user": exports.user()}
    for chat in selected:
        load = load_chat(chat, found[chat])
        digests = load.day_digests()
        stored = {} if full else exports.ingested().load(chat)
        days, _ = within_partitions(changed_days(load.days, digests, stored, not stored))
        entry: dict = {"days_in_export": len(load.days), "runs": []}
        for first, last in contiguous_ranges(days):
            result = dg.materialize(
                selection, instance=instance, resources=resources,
                tags=chat_range_tags(chat, first, last), raise_on_error=False,
            )
            mats = result.asset_materializations_for_node("messages") if result.success else []
            entry["runs"].append({
                "first_day": first, "last_day": last, "run_id": result.run_id, "success": result.success,
                "rows": mats[0].metadata["dagster/partition_row_count"].value if mats else 0,
            })
            report["failed"] += not result.success
        entry["status"] = "ingested" if entry["runs"] else "up to date"
        report["chats"][chat] = entry
    if memory and any(e["runs"] for e in report["chats"].values()):
        result = dg.materialize(WHOLE_MEMORY_ASSETS, instance=instance, resources=resources, raise_on_error=False)
        report["profile"] = {"run_id": result.run_id, "success": result.success}
        report["failed"] += not result.success
    return report
