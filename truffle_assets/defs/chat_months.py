"""What every chat × month asset of the memory and index stages shares: its asset settings, the
days a run must redo (`truffle_assets.ingest.stage_days`), and the figures its materialization
reports about the DuckDB table it writes."""

import dagster as dg

from truffle_assets import store
from truffle_assets.defs.metadata import describe_months, month_counts, uri
from truffle_assets.defs.partitions import chat_months, months_by_chat, recompute_requested
from truffle_assets.defs.resources import DuckDBStore
from truffle_assets.ingest import stage_days
from truffle_assets.memory.tables import TABLES

PARTITIONED = dict(
    partitions_def=chat_months,
    group_name="memory",
    pool="duckdb",
    backfill_policy=dg.BackfillPolicy.single_run(),
)


def ensure_tables(con, *tables: str) -> None:
    for t in tables:
        store.ensure_table(con, t, TABLES[t])


def month_work(context: dg.AssetExecutionContext, con, stage: str, upstreams: list[str], salt: str = ""
               ) -> tuple[dict[str, list], dict[str, stage_days.DayWork]]:
    """The run's months per chat, and per chat the days of them `stage` must redo."""
    parts = months_by_chat(context.partition_keys)
    force = recompute_requested(context)
    return parts, {chat: stage_days.plan(con, stage, upstreams, chat, months, salt, force)
                   for chat, months in parts.items()}


def store_metadata(context: dg.AssetExecutionContext, con, table: str, parts: dict, work: dict,
                   written: int, duckdb: DuckDBStore) -> dict:
    """Per-month figures onto each partition; returns the store-wide ones every partition shares."""
    own = describe_months(context, parts, work, month_counts(con, table, list(parts)))
    return {
        **own,
        "dagster/row_count": row_count(con, table),
        "dagster/table_name": table,
        "dagster/uri": uri(duckdb.path),
        "rows_written": written,
    }


def row_count(con, table: str) -> int:
    return con.execute(f"SELECT count(*) FROM {table}").fetchall()[0][0]
