"""Retention, enforced: a daily schedule runs `prune_runtime_store`, which deletes what the chat
runtime kept once it is older than the person's window, and the copies derived from it.

The window is the person's saved choice (`feedback.settings`: `<store>/settings.json`, else
`$TRUFFLE_RETENTION_DAYS`, else 90 days). What went is recorded on the run as counts and day
names only, never content: day files and records per kind (turns, content, feedback), retrieval
traces, and the transcript rows dropped from the SFT/DPO datasets, whose rewrite is recorded as a
new materialization of `sft_dataset` / `dpo_dataset` so the UI shows the files as they now are.
"""

import dagster as dg

from truffle_assets.defs.resources import ModelsResource
from truffle_assets.feedback.retention import prune_retrieval_log, prune_store
from truffle_assets.feedback.settings import resolve
from truffle_assets.training.datasets import prune_datasets


@dg.op(
    out=dg.Out(dg.Nothing),
    description="Delete runtime store day files (turns, content, feedback) and retrieval traces older than the "
                "retention window, then drop the dataset rows of turns no longer in the store; record the counts.",
)
def prune_runtime_store(context: dg.OpExecutionContext, models: ModelsResource):
    keep, sources = resolve(models.runtime_dir)
    store = prune_store(models.runtime_dir, keep.retention_days)
    traces = prune_retrieval_log(models.runtime_dir, store.cutoff)
    datasets = prune_datasets({k: models.dataset_dir(k) for k in ("sft", "dpo")}, models.runtime_dir)
    for kind, pruned in datasets.items():
        if pruned.manifest is None:
            continue
        counts = pruned.manifest.row_counts
        context.log_event(dg.AssetMaterialization(
            asset_key=f"{kind}_dataset",
            description=f"rewritten by retention: {pruned.rows_removed} transcript rows of pruned turns dropped",
            metadata={"dagster/row_count": counts.train + counts.eval, "dagster/uri": f"file://{models.dataset_dir(kind)}",
                      "train_rows": counts.train, "eval_rows": counts.eval,
                      "rows_by_source": dg.MetadataValue.json(counts.by_source),
                      "content_hash": pruned.manifest.content_hash, "rows_removed_by_retention": pruned.rows_removed}))
    removed = {**{f"{s}_records": n for s, n in store.records.items()},
               **{f"{s}_day_files": len(d) for s, d in store.days.items()},
               "retrieval_traces": traces,
               **{f"{k}_dataset_rows": p.rows_removed for k, p in datasets.items()}}
    what = ", ".join(f"{k} {v}" for k, v in removed.items() if v) or "nothing"
    context.log.info(f"retention {keep.retention_days} days: removed from before {store.cutoff}: {what}")
    yield dg.Output(None, metadata={
        "retention_days": keep.retention_days,
        "retention_from": sources["retention_days"],  # default | env | saved
        "cutoff": store.cutoff.isoformat(),
        "removed": dg.MetadataValue.json(removed),
        "days_removed": dg.MetadataValue.json(store.days_removed),
        **{f"removed/{k}": v for k, v in removed.items()},
    })


@dg.job(description="Enforce the retention window of the chat runtime's store (and the datasets built from it).")
def runtime_retention() -> None:
    prune_runtime_store()


runtime_retention_schedule = dg.ScheduleDefinition(
    name="runtime_retention_daily",
    job=runtime_retention,
    cron_schedule="30 3 * * *",
    default_status=dg.DefaultScheduleStatus.RUNNING,
    description="Every night: delete what the chat runtime kept past the person's retention window.",
)
