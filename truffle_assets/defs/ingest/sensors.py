"""Watch data/exports: register new chats and re-ingest only the days whose messages changed.

The cursor remembers each export's hash, so an unchanged file is not even parsed. A new or
changed file is parsed and its per-day digests are compared with what the store holds (published
by the `messages` asset), so only differing days get a run. Run keys carry the digests: ticking
again, or replaying an old cursor, never launches the same work twice.
"""

import json
from datetime import date, timedelta

import dagster as dg

from truffle_assets.defs.partitions import HISTORY_START, chat_range_tags, chats, within_partitions
from truffle_assets.defs.pipeline import CHAT_DAY_ASSETS, CHAT_DAY_KEYS
from truffle_assets.defs.resources import ExportsResource
from truffle_assets.ids import day_digest
from truffle_assets.exports import changed_days, contiguous_ranges, load_chat
from truffle_assets.parsing import ExportError
from truffle_assets.files import sha256_file


def plan_runs(chat: str, changed: list[date], digests: dict[str, str]) -> list[dg.RunRequest]:
    """One ranged (single-run backfill) request per stretch of consecutive changed days, for the
    whole chat × day chain: new messages flow through to the memory index in the same run."""
    requests = []
    for first, last in contiguous_ranges(changed):
        span = [digests.get(str(first + timedelta(days=i)), "-") for i in range((last - first).days + 1)]
        key = f"{chat}:{first}:{last}:{day_digest(span)}"
        requests.append(dg.RunRequest(run_key=key, asset_selection=CHAT_DAY_KEYS, tags=chat_range_tags(chat, first, last)))
    return requests


@dg.sensor(
    asset_selection=CHAT_DAY_ASSETS,
    minimum_interval_seconds=30,
    default_status=dg.DefaultSensorStatus.RUNNING,
    description="Registers chats for new exports in data/exports and requests runs for the days that changed.",
)
def exports_sensor(context: dg.SensorEvaluationContext, exports: ExportsResource) -> dg.SensorResult:
    files: dict[str, str] = json.loads(context.cursor).get("files", {}) if context.cursor else {}
    known = set(context.instance.get_dynamic_partitions(chats.name))
    new_chats: list[str] = []
    runs: list[dg.RunRequest] = []
    unreadable: list[str] = []
    for chat, paths in sorted(exports.chats().items()):
        hashes = {str(p): sha256_file(p) for p in paths}
        if chat in known and all(files.get(p) == h for p, h in hashes.items()):
            continue
        try:
            load = load_chat(chat, paths)
        except ExportError as exc:  # a half-copied or broken file must not hold up other chats
            context.log.warning(str(exc))
            unreadable.append(str(exc))
            continue
        digests = load.day_digests()
        days = changed_days(load.days, digests, exports.ingested().load(chat), chat not in known)
        if chat not in known:
            new_chats.append(chat)
        days, outside = within_partitions(days)
        if outside:
            context.log.warning(f"{chat}: {len(outside)} days outside {HISTORY_START}..today have no partition; skipped")
        runs.extend(plan_runs(chat, days, digests))
        files.update(hashes)
    return dg.SensorResult(
        run_requests=runs,
        dynamic_partitions_requests=[chats.build_add_request(new_chats)] if new_chats else [],
        cursor=json.dumps({"files": files}, separators=(",", ":")),
        skip_reason=None if runs or new_chats else dg.SkipReason(
            "no new or changed exports" + (f"; unreadable: {unreadable}" if unreadable else "")),
    )
