"""Ingest stage: the export folder as an observed source, and `messages` per chat × day."""

import hashlib
from collections import defaultdict
from datetime import date

import dagster as dg
import polars as pl

from truffle_assets.defs.partitions import chat_days, split_key
from truffle_assets.defs.resources import DuckDBStore, ExportsResource
from truffle_assets.exports import load_chat
from truffle_assets.files import sha256_file
from truffle_assets.pii import redact_text
from truffle_assets.store import replace_days

MAX_QUARANTINE_SHARE = 0.01  # more than 1% unreadable lines means the parser misread the format


@dg.observable_source_asset(
    group_name="ingest",
    description="WhatsApp .txt/.zip exports dropped into data/exports; its data version is the hash of every file.",
)
def whatsapp_exports(exports: ExportsResource) -> dg.ObserveResult:
    chats = exports.chats()
    files = sorted((str(p), sha256_file(p)) for paths in chats.values() for p in paths)
    version = hashlib.sha256("\n".join(f"{p}\t{h}" for p, h in files).encode()).hexdigest()[:16]
    return dg.ObserveResult(
        data_version=dg.DataVersion(version),
        metadata={"files": len(files), "chats": dg.MetadataValue.json(sorted(chats)), "dagster/uri": exports.exports_dir},
    )


def _preview(rows: pl.DataFrame, n: int = 10) -> str:
    """A markdown peek at the rows, PII-redacted: metadata is not a place for secrets."""
    lines = ["| ts | author | kind | text |", "|---|---|---|---|"]
    for r in rows.head(n).iter_rows(named=True):
        text = redact_text(r["raw_text"]).text[:80].replace("|", "\\|").replace("\n", " ⏎ ")
        lines.append(f"| {r['ts']} | {r['author'] or ''} | {r['kind']} | {text} |")
    return "\n".join(lines)


@dg.asset(
    partitions_def=chat_days,
    deps=[whatsapp_exports],
    group_name="ingest",
    kinds={"duckdb", "polars"},
    pool="duckdb",
    backfill_policy=dg.BackfillPolicy.single_run(),
    code_version="1",
    check_specs=[
        dg.AssetCheckSpec("quarantine_below_threshold", asset="messages",
                          description=f"At most {MAX_QUARANTINE_SHARE:.0%} of an export's lines quarantined."),
        dg.AssetCheckSpec("timestamps_within_partition_day", asset="messages",
                          description="Every stored message's timestamp falls on its partition's day."),
        dg.AssetCheckSpec("ids_unique", asset="messages", description="Message ids are unique in the store."),
    ],
    description=(
        "Parsed WhatsApp messages (raw text byte-exact, stable ids, line ranges back into the export) in "
        "DuckDB table `messages`. Each (chat, day) is replaced atomically, so re-runs are idempotent."
    ),
)
def messages(context: dg.AssetExecutionContext, exports: ExportsResource, duckdb: DuckDBStore) -> dg.MaterializeResult:
    wanted: dict[str, set[date]] = defaultdict(set)
    for key in context.partition_keys:
        chat, day = split_key(key)
        wanted[chat].add(day)
    chats = exports.chats()
    user = exports.user()
    if user is None:
        context.log.warning("could not tell which author is the user; set exports.user_name")
    written: list[pl.DataFrame] = []
    jobs: list[dict] = []
    with duckdb.connect() as con:
        for chat, days in sorted(wanted.items()):
            if chat not in chats:
                raise dg.Failure(f"no export in {exports.exports_dir} maps to chat {chat!r}")
            load = load_chat(chat, chats[chat], user)
            rows = load.rows_for(days)
            chat_jobs = [
                {**j, "run_id": _run_id(context), "first_day": min(days), "last_day": max(days),
                 "days_written": len(days), "rows_written": rows.height}
                for j in load.jobs
            ]
            replace_days(con, chat, sorted(days), rows, chat_jobs)
            exports.ingested().update(chat, days, rows)
            written.append(rows)
            jobs.extend(chat_jobs)
        all_days = {(c, d) for c, ds in wanted.items() for d in ds}
        outside, dupes, total = _store_checks(con, all_days)
    rows = pl.concat(written) if written else pl.DataFrame()
    worst = max(jobs, key=lambda j: j["quarantined_lines"] / max(j["lines_total"], 1), default=None)
    worst_share = worst["quarantined_lines"] / max(worst["lines_total"], 1) if worst else 0.0
    kinds = dict(rows.group_by("kind").len().iter_rows()) if rows.height else {}
    return dg.MaterializeResult(
        metadata={
            "dagster/partition_row_count": rows.height,
            "dagster/row_count": total,
            "dagster/table_name": "messages",
            "dagster/uri": f"duckdb:///{duckdb.path}",
            "first_day": str(min(d for _, d in all_days)) if all_days else "",
            "last_day": str(max(d for _, d in all_days)) if all_days else "",
            "chats": dg.MetadataValue.json(sorted(wanted)),
            "user": user or "",
            "kinds": dg.MetadataValue.json(kinds),
            "quarantined_lines": sum(j["quarantined_lines"] for j in jobs),
            "preview": dg.MetadataValue.md(_preview(rows) if rows.height else "_no messages on these days_"),
        },
        check_results=[
            dg.AssetCheckResult(
                check_name="quarantine_below_threshold", passed=worst_share <= MAX_QUARANTINE_SHARE,
                severity=dg.AssetCheckSeverity.WARN,
                metadata={"worst_share": worst_share, "worst_file": worst["source_file"] if worst else ""},
            ),
            dg.AssetCheckResult(check_name="timestamps_within_partition_day", passed=outside == 0,
                                metadata={"rows_outside_day": outside}),
            dg.AssetCheckResult(check_name="ids_unique", passed=dupes == 0, metadata={"duplicate_ids": dupes}),
        ],
    )


def _run_id(context: dg.AssetExecutionContext) -> str:
    try:
        return context.run.run_id  # context.run_id is deprecated on assets (dagster 1.13)
    except dg.DagsterError:  # a direct call in a test has no run (DagsterInvalidPropertyError)
        return "direct-invocation"


def _store_checks(con, chat_days_written: set[tuple[str, date]]) -> tuple[int, int, int]:
    """Checks run against what DuckDB now holds, not against what we meant to write."""
    pairs = pl.DataFrame({"chat_id": [c for c, _ in chat_days_written], "day": [d for _, d in chat_days_written]},
                         schema={"chat_id": pl.String, "day": pl.Date})
    con.register("written_days", pairs)
    outside = con.execute(
        "SELECT count(*) FROM messages m JOIN written_days w USING (chat_id, day) WHERE CAST(m.ts AS DATE) <> m.day"
    ).fetchall()[0][0]  # DuckDB 2 wants results drained before the next statement
    con.unregister("written_days")
    dupes, total = con.execute("SELECT count(*) - count(DISTINCT id), count(*) FROM messages").fetchall()[0]
    return outside, dupes, total
