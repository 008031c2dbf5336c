"""Ingest stage: the export folder as an observed source, and `messages` per chat × month."""

import hashlib
from datetime import date

import dagster as dg
import polars as pl

from truffle_assets.faults import crash_point
from truffle_assets import store
from truffle_assets.ingest import stage_days
from truffle_assets.defs.metadata import describe_months, month_counts, uri
from truffle_assets.defs.partitions import chat_months, months_by_chat, recompute_requested
from truffle_assets.defs.resources import DuckDBStore, ExportsResource
from truffle_assets.ingest.exports import day_digests, load_chat
from truffle_assets.files import sha256_file
from truffle_assets.parsing.limits import MAX_MESSAGE_CHARS
from truffle_assets.pii import redact_text

MAX_QUARANTINE_SHARE = 0.01  # more than 1% unreadable lines means the parser misread the format


@dg.observable_source_asset(
    group_name="ingest",
    description="WhatsApp .txt/.zip exports dropped into data/exports; its data version is the hash of every file.",
)
def whatsapp_exports(exports: ExportsResource) -> dg.ObserveResult:
    scan = exports.scan()
    chats = scan.chats
    files = sorted((str(p), sha256_file(p)) for paths in chats.values() for p in paths)
    version = hashlib.sha256("\n".join(f"{p}\t{h}" for p, h in files).encode()).hexdigest()[:16]
    return dg.ObserveResult(
        data_version=dg.DataVersion(version),
        metadata={"files": len(files), "chats": dg.MetadataValue.json(sorted(chats)),
                  "id_collisions": dg.MetadataValue.json([c.as_dict() for c in scan.collisions]),
                  "dagster/uri": uri(exports.exports_dir)},
    )


def unreadable_observation(errors: list, exports_dir: str, collisions: list = ()) -> dg.AssetObservation:
    """What the UI shows on `whatsapp_exports` after a plan: each export that could not be read, where
    and why (the other chats ran), and each chat name kept off an id another name has
    (`chat_ids.IdCollision`: its own chat, not merged). Empty lists clear an earlier report."""
    listed = [e.as_dict() for e in errors]
    return dg.AssetObservation(asset_key=whatsapp_exports.key, metadata={
        "unreadable_files": len(listed), "unreadable": dg.MetadataValue.json(listed),
        "id_collisions": dg.MetadataValue.json([c.as_dict() for c in collisions]),
        "dagster/uri": uri(exports_dir)})


def _preview(rows: pl.DataFrame, n: int = 10) -> str:
    """A markdown peek at the rows, PII-redacted: metadata is not a place for secrets. Only a head of
    each text is redacted (the PII detectors' time grows faster than a text's length), wide enough
    that anything cut at its end lies past what is shown."""
    lines = ["| ts | author | kind | text |", "|---|---|---|---|"]
    for r in rows.head(n).iter_rows(named=True):
        text = redact_text(r["raw_text"][:1000]).text[:80].replace("|", "\\|").replace("\n", " ⏎ ")
        lines.append(f"| {r['ts']} | {r['author'] or ''} | {r['kind']} | {text} |")
    return "\n".join(lines)


@dg.asset(
    partitions_def=chat_months,
    deps=[whatsapp_exports],
    group_name="ingest",
    kinds={"duckdb", "polars"},
    pool="duckdb",
    backfill_policy=dg.BackfillPolicy.single_run(),
    code_version="2",
    check_specs=[
        dg.AssetCheckSpec("quarantine_below_threshold", asset="messages",
                          description=f"At most {MAX_QUARANTINE_SHARE:.0%} of an export's lines quarantined."),
        dg.AssetCheckSpec("timestamps_match_day", asset="messages",
                          description="Every message of the run's months has its timestamp on its stored day."),
        dg.AssetCheckSpec("ids_unique", asset="messages", description="Message ids are unique in the store."),
    ],
    description=(
        "Parsed WhatsApp messages (raw text byte-exact, stable ids, line ranges back into the export) in "
        "DuckDB table `messages`, per chat × month. Inside a month only the days whose content changed are "
        "replaced, each atomically with its digest, so re-runs are idempotent and other days stay untouched."
    ),
)
def messages(context: dg.AssetExecutionContext, exports: ExportsResource, duckdb: DuckDBStore) -> dg.MaterializeResult:
    parts = months_by_chat(context.partition_keys)
    force = recompute_requested(context)
    chats = exports.chats()
    user = exports.user()
    if user is None:
        context.log.warning("could not tell which author is the user; set exports.user_name")
    work: dict[str, stage_days.DayWork] = {}
    jobs: list[dict] = []
    previews: dict[tuple[str, date], str] = {}
    truncated = 0
    with duckdb.connect() as con:
        for chat, months in parts.items():
            if chat not in chats:
                raise dg.Failure(f"no export in {exports.exports_dir} maps to chat {chat!r}")
            load = load_chat(chat, chats[chat], user, exports.tombstones())
            if load.truncated:
                context.log.warning(f"{len(load.truncated)} message(s) over {MAX_MESSAGE_CHARS:,} characters kept "
                                    f"truncated: {', '.join(load.truncated[:10])}")
            truncated += len(load.truncated)
            in_run = load.rows.filter(pl.col("day").dt.truncate("1mo").is_in(months))
            expected = {date.fromisoformat(d): h for d, h in day_digests(in_run).items()}
            work[chat] = w = stage_days.diff(expected, stage_days.recorded(con, "messages", chat, months), force)
            rows = in_run.filter(pl.col("day").is_in(w.days))
            chat_jobs = [
                {**j, "run_id": _run_id(context), "first_day": min(months), "last_day": max(months),
                 "days_written": len(w.todo), "rows_written": rows.height}
                for j in load.jobs
            ]
            with store.transaction(con):
                store.replace_days(con, chat, w.days, rows, chat_jobs)
                stage_days.record(con, "messages", chat, w)
            jobs.extend(chat_jobs)
            for (month,), grp in in_run.group_by(pl.col("day").dt.truncate("1mo")):
                previews[chat, month] = _preview(grp.sort("ts"))
        outside, dupes, total = _store_checks(con, parts)
        counts = month_counts(con, "messages", list(parts))
    own = describe_months(context, parts, work, counts, lambda chat, month: {
        "preview": dg.MetadataValue.md(previews.get((chat, month), "_no messages in this month_"))})
    worst = max(jobs, key=lambda j: j["quarantined_lines"] / max(j["lines_total"], 1), default=None)
    worst_share = worst["quarantined_lines"] / max(worst["lines_total"], 1) if worst else 0.0
    crash_point("messages")  # written, not yet recorded by Dagster
    return dg.MaterializeResult(
        metadata={
            "dagster/row_count": total,
            "dagster/table_name": "messages",
            "dagster/uri": uri(duckdb.path),
            "user": user or "",
            "quarantined_lines": sum(j["quarantined_lines"] for j in jobs),
            "truncated_messages": truncated,
            **own,
        },
        check_results=[
            dg.AssetCheckResult(
                check_name="quarantine_below_threshold", passed=worst_share <= MAX_QUARANTINE_SHARE,
                severity=dg.AssetCheckSeverity.WARN,
                metadata={"worst_share": worst_share, "worst_file": worst["source_file"] if worst else ""},
            ),
            dg.AssetCheckResult(check_name="timestamps_match_day", passed=outside == 0,
                                metadata={"rows_off_their_day": outside}),
            dg.AssetCheckResult(check_name="ids_unique", passed=dupes == 0, metadata={"duplicate_ids": dupes}),
        ],
    )


def _run_id(context: dg.AssetExecutionContext) -> str:
    try:
        return context.run.run_id  # context.run_id is deprecated on assets (dagster 1.13)
    except dg.DagsterError:  # a direct call in a test has no run (DagsterInvalidPropertyError)
        return "direct-invocation"


def _store_checks(con, parts: dict[str, list[date]]) -> tuple[int, int, int]:
    """Checks run against what DuckDB now holds, not against what we meant to write."""
    outside = sum(con.execute(
        f"SELECT count(*) FROM messages WHERE {stage_days.IN_MONTHS} AND CAST(ts AS DATE) <> day", [chat, months]
    ).fetchall()[0][0] for chat, months in parts.items())  # DuckDB 2 wants results drained before the next statement
    dupes, total = con.execute("SELECT count(*) - count(DISTINCT id), count(*) FROM messages").fetchall()[0]
    return outside, dupes, total
