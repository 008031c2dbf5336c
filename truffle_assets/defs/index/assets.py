"""Index stage: redacted, normalized memory in LanceDB (vectors + BM25) and the published pointer."""

import time

import dagster as dg
import polars as pl

from truffle_assets.faults import crash_point
from truffle_assets import store
from truffle_assets.ingest import stage_days
from truffle_assets.defs.chat_months import PARTITIONED, month_work
from truffle_assets.defs.memory.assets import episodes, message_pii, message_streams, summaries
from truffle_assets.defs.metadata import describe_months, uri
from truffle_assets.defs.resources import DuckDBStore, ExportsResource, IndexResource, PublishedResource
from truffle_assets.forget.caches import purge_index_versions
from truffle_assets.index.lance import raw_rows_from, summary_rows_from
from truffle_assets.pii.redact import redacted_authors


@dg.asset(
    **{**PARTITIONED, "group_name": "index"},
    deps=[message_pii, message_streams, episodes, summaries],
    kinds={"lancedb", "duckdb"},
    code_version="3",  # 2: `shown_text` (the redacted raw text) beside the search text; 3: the English gloss in passages
    description=(
        "LanceDB tables `raw_episodes_index` (one row per message: redacted, normalized text for search and "
        "the redacted raw text the runtime shows, episode id, chat/day/ts, salience, MiniLM vector) and "
        "`episodic_summaries` (one row per summary with its message ids), each with a native BM25 index. "
        "Each run replaces the days of its chat-months whose inputs changed, re-embeds only texts not already "
        "indexed, then publishes latest.json: table versions and a watermark per chat, which is all the chat "
        "runtime reads."
    ),
)
def memory_index(context: dg.AssetExecutionContext, duckdb: DuckDBStore, index: IndexResource,
                 published: PublishedResource, exports: ExportsResource) -> dg.MaterializeResult:
    idx = index.open()
    added = {"raw_episodes_index": 0, "episodic_summaries": 0}
    embedded = dropped = versions_removed = 0
    t0 = time.perf_counter()
    with duckdb.connect() as con:
        # message_pii gives `shown_text`; adding it changed every day's digest, so an index built
        # before it rewrites each day once (vectors reused: the embedded text is unchanged)
        parts, work = month_work(context, con, "memory_index",
                                 ["message_pii", "message_streams", "episodes", "summaries"],
                                 idx.embedder.model_name)
        for chat, w in work.items():
            if not w.todo:  # every day of its months is already indexed
                continue
            days = w.days
            msgs = store.read_days(con, "messages", chat, days, "id, chat_id, day, ts, author, is_user, kind")
            streams = store.read_days(con, "message_streams", chat, days, "id, normalized_text")
            pii = store.read_days(con, "message_pii", chat, days, "id, redacted_text")
            eps = store.read_days(con, "episodes", chat, days)
            summ = store.read_days(con, "summaries", chat, days)
            names = redacted_authors(msgs)
            raw = raw_rows_from(msgs.with_columns(pl.col("author").replace(names)), streams, eps, pii)
            stats = idx.upsert_partitions(chat, days, raw, summary_rows_from(summ, eps))
            crash_point("memory_index:lance_written")
            with store.transaction(con):  # after the LanceDB write: a crash in between only redoes the days
                stage_days.record(con, "memory_index", chat, w)
            for table in added:
                added[table] += stats[table]["added"]
                embedded += stats[table]["embedded"]
            dropped += stats["raw_episodes_index"]["dropped_messages"]
        exported = {chat: stage_days.recorded(con, "messages", chat, months) for chat, months in parts.items()}
    t_write = time.perf_counter() - t0
    refreshed = idx.refresh_indexes()
    pointer = idx.publish(published.path("latest.json"))
    if dropped:  # messages deleted from a re-export (or forgotten): no old version may still return them
        versions_removed = purge_index_versions(idx.root)
        pointer = idx.publish(published.path("latest.json"))
    crash_point("memory_index:published")
    for chat, months in parts.items():  # only now is the whole chain through for these months
        exports.ingested().publish_months(chat, months, exported[chat])
    own = describe_months(context, parts, work, idx.month_counts(list(parts)))
    crash_point("memory_index")  # written, not yet recorded by Dagster
    return dg.MaterializeResult(metadata={
        **own,
        "dagster/row_count": pointer["rows"].get("raw_episodes_index", 0),
        "dagster/table_name": "raw_episodes_index",
        "dagster/uri": uri(idx.root),
        "rows_written": added["raw_episodes_index"],
        "summary_rows_added": added["episodic_summaries"],
        "texts_embedded": embedded,
        "messages_dropped": dropped,  # gone from the export or forgotten; their old versions were removed
        "old_versions_removed": versions_removed,
        "embedding_model": pointer["embedding_model"],
        "table_versions": dg.MetadataValue.json(pointer["tables"]),
        "watermarks": dg.MetadataValue.json(pointer["watermarks"]),
        "indexes": dg.MetadataValue.json(refreshed),
        "write_seconds": round(t_write, 2),
        "pointer": dg.MetadataValue.path(str(published.path("latest.json"))),
    })
