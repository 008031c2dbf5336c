"""Watch data/exports: register new chat-months and re-ingest only the months whose messages changed.

The cursor remembers each export's hash, so an unchanged file is not even parsed. What runs is
decided by `truffle_assets.ingest.planning` (shared with `truffle ingest`); this sensor turns the plan
into partition requests (new keys, chat by chat) and run requests of the `chat_memory` job, cut where
the partition key order puts them (`in_key_order`). Run keys carry the digests: ticking again, or
replaying an old cursor, never launches the same work twice.
"""

import json

import dagster as dg

from truffle_assets.defs.ingest.assets import unreadable_observation
from truffle_assets.defs.recovery import reap_dead_runs
from truffle_assets.defs.partitions import (
    HISTORY_START, LEGACY_CHATS, LEGACY_LAYOUT, busy_chats, chat_months, chat_range_tags, day_window, in_key_order,
    key_order, layout, legacy_layout, plan_months, registered_chats,
)
from truffle_assets.defs.pipeline import chat_memory
from truffle_assets.defs.resources import ExportsResource
from truffle_assets.ingest.planning import MonthRange, plan_ingest


def run_request(chat: str, months: MonthRange) -> dg.RunRequest:
    """One ranged (single-run backfill) request for the whole chat × month chain: new messages flow
    through to the memory index in the same run."""
    return dg.RunRequest(run_key=f"{chat}:{months.first:%Y-%m}:{months.last:%Y-%m}:{months.digest}",
                         tags=chat_range_tags(chat, months.first, months.last))


@dg.sensor(
    job=chat_memory,
    minimum_interval_seconds=30,
    default_status=dg.DefaultSensorStatus.RUNNING,
    description="Registers the chat-months of new exports in data/exports and requests runs for the months that changed.",
)
def exports_sensor(context: dg.SensorEvaluationContext, exports: ExportsResource) -> dg.SensorResult:
    cursor = json.loads(context.cursor) if context.cursor else {}
    seen: dict[str, dict[str, str]] = cursor.get("files", {})  # chat -> {file: sha256}
    for run_id in reap_dead_runs(context.instance):  # their pool slots would hold up every run requested here
        context.log.warning(f"run {run_id} was left running by a process that is gone; marked failed")
    keys = context.instance.get_dynamic_partitions(chat_months.name)
    migrate = legacy_layout(context.instance)
    if migrate:
        context.log.warning(LEGACY_LAYOUT)
    scan = exports.scan()
    plan = plan_ingest(scan.chats, exports.ingested().load, day_window(), registered=registered_chats(keys),
                       seen=seen, full=migrate, forget=exports.tombstones())
    # the daemon applies the partition requests, in this order, before it launches the runs
    gone, new_keys = layout(keys, plan_months(plan), busy_chats(context.instance))
    plan = in_key_order(plan, key_order(keys, gone, new_keys))
    for exc in plan.unreadable:
        context.log.warning(str(exc))
    for col in scan.collisions:
        context.log.warning(f"chat name collision: {col}")
    for c in plan.chats:
        if c.outside:
            context.log.warning(f"{c.chat}: {len(c.outside)} days outside {HISTORY_START}..today have no partition; skipped")
    runs = [run_request(c.chat, months) for c in plan.chats for months in c.ranges]
    partition_requests = [chat_months.build_delete_request(gone)] if gone else []
    partition_requests += [chat_months.build_add_request(new_keys)] if new_keys else []
    if migrate:  # every chat's months are registered and requested in this tick
        partition_requests.append(dg.DeleteDynamicPartitionsRequest(
            LEGACY_CHATS, context.instance.get_dynamic_partitions(LEGACY_CHATS)))
    # an unreadable file is not in `plan.files`, so it is read again next tick: report it on
    # `whatsapp_exports` only when the set changes
    bad = sorted(str(e) for e in [*plan.unreadable, *scan.collisions])
    return dg.SensorResult(
        run_requests=runs,
        dynamic_partitions_requests=partition_requests,
        asset_events=[unreadable_observation(plan.unreadable, exports.exports_dir, scan.collisions)]
        if bad != cursor.get("bad", []) else [],
        cursor=json.dumps({"files": plan.files, "bad": bad}, separators=(",", ":")),
        skip_reason=None if runs or new_keys else dg.SkipReason(
            "no new or changed exports" + (f"; unreadable: {[str(e) for e in plan.unreadable]}" if plan.unreadable else "")),
    )
