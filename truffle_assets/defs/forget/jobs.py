"""`forget_memory`: the Dagster run that finishes a forget, so the lineage shows it.

By the time it runs, the tombstone is recorded and the chat × month chain has rebuilt the days that
held the forgotten items (runs tagged `truffle/forget`). This run removes what the chain cannot:
LanceDB's old table versions (time travel would still return the rows), the forgotten chat's
ingestion accounting; then it proves nothing is left in DuckDB or in any retained LanceDB version,
appends the forget to the audit chain (kinds and counts, never content) and marks the tombstone
done. A run that finds something left fails, and a re-run of the same forget finishes it.
"""

import dagster as dg

from truffle_assets import store
from truffle_assets.defs.resources import (
    DuckDBStore, ExportsResource, IndexResource, ModelsResource, PublishedResource,
)
from truffle_assets.forget.caches import purge_index_versions
from truffle_assets.forget.inventory import left_in_index, left_in_store
from truffle_assets.registry import AuditFailed

FORGET_TAG = "truffle/forget"  # on the forget's own run and on the chain runs it caused


class ForgetConfig(dg.Config):
    tombstone_id: str
    message_ids: list[str] = []
    fact_ids: list[str] = []
    removed: dict[str, int] = {}  # counted before the rebuild, per store


@dg.op(description="Drop LanceDB's old versions and the chat's ingestion accounting, prove nothing of the "
                   "forgotten items is left, audit the forget, mark its tombstone done.")
def finish_forget(context: dg.OpExecutionContext, config: ForgetConfig, duckdb: DuckDBStore, index: IndexResource,
                  exports: ExportsResource, models: ModelsResource, published: PublishedResource) -> dict:
    tombstones = exports.tombstones()
    t = next((t for t in tombstones.load() if t.id == config.tombstone_id), None)
    if t is None:
        raise dg.Failure(f"no tombstone {config.tombstone_id} in {tombstones.path} (un-forgotten meanwhile?)")
    removed = dict(config.removed)
    with store.writer_lock(duckdb.path):  # no index write may land between the cleanup and the check
        removed["lance_old_versions"] = purge_index_versions(index.root)
        index.open().publish(published.path("latest.json"))  # the compaction made the versions to read
        if t.kind == "chat":
            with duckdb.connect() as con:  # its accounting quotes quarantined lines of the file
                removed["ingestion_jobs"] = len(con.execute(
                    "DELETE FROM ingestion_jobs WHERE chat_id = ? RETURNING 1", [t.value]).fetchall())
        left = left_in_store(duckdb.path, set(config.message_ids), set(config.fact_ids))
        left.update(left_in_index(index.root, set(config.message_ids)))
    versions = left.pop("lance_versions_checked", 0)
    if any(left.values()):
        raise dg.Failure(f"forget {t.describe()}: still present after the rebuild: "
                         f"{ {k: v for k, v in left.items() if v} }; re-run the same forget to finish it",
                         metadata={"left": dg.MetadataValue.json(left)})
    try:
        seq = models.registry().record_forget(t.kind, t.id, removed, who=f"dagster:{context.run.run_id[:8]}")
        audit = f"line {seq}"
    except AuditFailed as exc:  # the data still goes; a tampered log is reported, not appended to
        audit = f"not written: {exc}"
        context.log.warning(audit)
    tombstones.mark_done(t.id)
    summary = {"tombstone": t.id, "what": t.describe(), "removed": removed, "audit": audit,
               "lance_versions_checked": versions}
    for key in ("messages", "memory_index", "facts"):  # seen on each asset's page, beside its runs
        context.log_event(dg.AssetObservation(asset_key=key, metadata={
            "forget": t.describe(), "tombstone": t.id, "removed": dg.MetadataValue.json(removed)}))
    context.add_output_metadata({"what": t.describe(), "removed": dg.MetadataValue.json(removed), "audit": audit,
                                 "left_everywhere": dg.MetadataValue.json(left),
                                 "lance_versions_checked": versions})
    return summary


@dg.job(tags={FORGET_TAG: "finish"},
        description="Finish a forget: purge LanceDB versions, verify every store, audit, mark the tombstone done.")
def forget_memory() -> None:
    finish_forget()
