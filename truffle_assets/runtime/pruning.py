"""Store retention: the runtime store's day files and retrieval traces past the retention window go."""

from __future__ import annotations

from datetime import date, datetime

from truffle_assets.feedback.retention import StorePrune, prune_retrieval_log, prune_store
from truffle_assets.runtime.config import RuntimeConfig


def prune(config: RuntimeConfig, retention_days: int, now: datetime | date | None = None) -> StorePrune:
    """Delete store day files and retrieval traces older than `retention_days`; what went (the daily
    Dagster job `runtime_retention` does this and also prunes the datasets)."""
    report = prune_store(config.store_dir, retention_days, now)
    report.records["retrieval_traces"] = prune_retrieval_log(config.store_dir, report.cutoff)
    return report
