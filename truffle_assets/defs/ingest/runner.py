"""`truffle ingest`: the sensor's work, done now, from the command line.

Every chat-month with messages is registered as a partition key. Which months run comes from
`truffle_assets.ingest.planning`, the planner the exports sensor uses too: a chat the store has never
seen is materialized over every month that has messages, in one single-run backfill over its keys;
a known chat only over the months holding a day whose digest differs from what the store holds, one
run per stretch of those months adjacent in the key order, and inside those only the changed days
are redone (`--full` redoes every day). Each range runs the
whole chat × month chain (messages → PII → streams → episodes → summaries → facts → index); the
profile follows once at the end. Runs execute in-process, in this one process, and are recorded
in the local instance ($DAGSTER_HOME) so the UI shows them.
"""

import json
import os
import sys
from collections.abc import Callable
from contextlib import nullcontext
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path

import dagster as dg

from truffle_assets import faults, store
from truffle_assets.ingest import stage_days
from truffle_assets.ingest.build_status import BuildStatus
from truffle_assets.defs.ingest.assets import unreadable_observation
from truffle_assets.defs.recovery import fail_own_runs, owner_tags, reap_dead_runs
from truffle_assets.defs.run_log import failures, listening, materialize
from truffle_assets.defs.partitions import (
    LEGACY_LAYOUT, add_chat_months, chat_months, chat_range_tags, day_window, forget_legacy_layout, in_key_order,
    legacy_layout, months_label, plan_months,
)
from truffle_assets.defs.memory.assets import SummariesConfig, facts
from truffle_assets.memory.profile import FACTS_FORMAT
from truffle_assets.defs.pipeline import CHAT_MONTH_ASSETS, WHOLE_MEMORY_ASSETS, chat_memory, memory_profile
from truffle_assets.defs.resources import (
    DuckDBStore, ExportsResource, IndexResource, LLMResource, PublishedResource,
)
from truffle_assets.ingest.planning import plan_ingest


@dataclass(frozen=True)
class Progress:
    """What the runner tells a progress view, as it happens.

    kind: "plan" (`runs` lists every planned run as (chat, label, months)), "note" (`label` is a line
    to show before the runs), "run_start",
    "step" (`step` is an asset starting, `event` its Dagster event type), "run_end" (`ok`),
    "chat_end" (`entry` is the chat's report entry). `chat` is None for the whole-memory run.
    """
    kind: str
    chat: str | None = None
    label: str = ""
    months: int = 0
    ok: bool = True
    step: str | None = None
    event: str = ""
    runs: list = field(default_factory=list)
    entry: dict = field(default_factory=dict)


ProgressHook = Callable[[Progress], None]


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
    refacts: tuple[str, date] | None = None,
    tags: dict[str, str] | None = None,
    progress: ProgressHook | None = None,
) -> dict:
    """`refacts` (chat, month): also re-consolidate facts there and rebuild the profile, though no
    day changed (a forgotten fact). `tags` go on every run (a forget marks the runs it caused).
    `progress` hears of the plan, each run and each step as they happen."""
    if instance is None:
        local = instance_kind == "local" or (instance_kind is None and os.environ.get("DAGSTER_HOME"))
        instance = dg.DagsterInstance.get() if local else dg.DagsterInstance.ephemeral()
    for run_id in reap_dead_runs(instance):  # or their pool slots would block every run below
        print(f"truffle ingest: run {run_id} was left running by a process that is gone; marked failed",
              file=sys.stderr, flush=True)
    data_dir = Path(db_path).parent
    cache_dir = cache_dir or data_dir / "cache"
    where = {"exports_dir": str(exports_dir), "cache_dir": str(cache_dir), "forget_dir": str(data_dir / "forget"),
             "store_path": str(db_path)}
    # detected once here and pinned, so the ranged runs' `messages` steps do not each re-detect it
    user = ExportsResource(**where, user_name=user_name).user()
    exports = ExportsResource(**where, user_name=user)
    resources = {
        "exports": exports, "duckdb": DuckDBStore(path=str(db_path)),
        "llm": llm or LLMResource.from_env(cache_dir=str(cache_dir / "llm")),
        "index": IndexResource(root=str(data_dir / "index")),
        "published": PublishedResource(dir=str(data_dir / "published")),
    }
    selection = CHAT_MONTH_ASSETS if memory else CHAT_MONTH_ASSETS[:1]
    # no `registered`: an ephemeral instance knows no chats, so only the store says which are new
    migrate = not full and legacy_layout(instance)
    if migrate:
        print(f"truffle ingest: {LEGACY_LAYOUT}", file=sys.stderr, flush=True)
    scan = exports.scan()
    plan = plan_ingest(scan.chats, exports.ingested().load, day_window(), full=full or migrate,
                       only=chats_wanted, forget=exports.tombstones(), user=user)
    for exc in plan.unreadable:  # reported, and every other chat still runs
        print(f"truffle ingest: skipped {exc}", file=sys.stderr, flush=True)
    for col in scan.collisions:  # kept apart, not merged
        print(f"truffle ingest: chat name collision: {col}", file=sys.stderr, flush=True)
    instance.report_runless_asset_event(unreadable_observation(plan.unreadable, exports.exports_dir, scan.collisions))
    wanted = plan_months(plan)
    if refacts is not None:  # a forgotten fact's month, though no day of it changed
        wanted.setdefault(refacts[0], []).append(refacts[1])
    add_chat_months(instance, wanted)
    plan = in_key_order(plan, instance.get_dynamic_partitions(chat_months.name)).most_written_first()
    llm_plan = llm_cost(plan, scan.chats, user, exports.tombstones(), resources["llm"].config_now(),
                        progress or (lambda p: None)) if memory else None
    try:
        report = _run_plan(plan, instance, resources, selection, full, memory, user, db_path, data_dir,
                           refacts, tags or {}, progress) | {"collisions": [c.as_dict() for c in scan.collisions]}
        if llm_plan is not None:
            report["llm_plan"] = llm_plan
    except KeyboardInterrupt:  # Ctrl-C or SIGTERM: leave no run STARTED; a plain re-run converges
        for run_id in fail_own_runs(instance, "interrupted (Ctrl-C or SIGTERM)"):
            print(f"truffle ingest: interrupted; run {run_id} marked failed", file=sys.stderr, flush=True)
        raise
    if migrate and not report["failed"] and not chats_wanted:
        forget_legacy_layout(instance)
    return report


def llm_cost(plan, chats: dict, user: str | None, forget, config, tell: ProgressHook) -> dict | None:
    """With an LLM endpoint configured, tell before any run what the memory build will ask of it (from
    the days the plan redoes, the summaries' default tiers); None without one: the offline build
    reads nothing more."""
    if not config.enabled:
        return None
    import polars as pl

    from truffle_assets.ingest.exports import load_chat
    from truffle_assets.memory.llm_facts import plan_for_messages

    frames = [load_chat(c.chat, chats[c.chat], user=user, forget=forget).rows.filter(pl.col("day").is_in(c.changed))
              for c in plan.chats if c.ranges and c.chat in chats]
    tiers = SummariesConfig()
    work = plan_for_messages(pl.concat(frames, how="vertical_relaxed") if frames else pl.DataFrame(),
                             config, tiers.tier_b, tiers.tier_c)
    budget = f"each run stops at {config.max_tokens_per_run:,} tokens or ${config.max_cost_usd:g}"
    tell(Progress("note", label=f"LLM work ({config.model}): {work.describe(config)}; {budget}"))
    return work.as_dict()


def _run_plan(plan, instance: dg.DagsterInstance, resources: dict, selection: list, full: bool, memory: bool,
              user: str | None, db_path: Path, data_dir: Path, refacts: tuple[str, date] | None = None,
              tags: dict[str, str] | None = None, progress: ProgressHook | None = None) -> dict:
    tags = tags or {}
    tell = progress or (lambda p: None)
    report: dict = {"chats": {}, "failed": 0, "user": user,
                    "unreadable": [e.as_dict() for e in plan.unreadable]}
    tell(Progress("plan", runs=[(c.chat, months_label(r.first, r.last), len(r.months))
                                for c in plan.chats for r in c.ranges]))
    todo = [c.chat for c in plan.chats if c.ranges]
    # build.json follows the chats as they end; a crash or Ctrl-C leaves it failed, not building
    with BuildStatus(data_dir / "published", [c.chat for c in plan.chats], todo, record=memory and bool(todo)) as build:
        for c in plan.chats:
            entry: dict = {"days_in_export": c.days_in_export, "runs": []}
            if c.ranges:
                build.chat_started(c.chat)
            for months in c.ranges:
                label, n = months_label(months.first, months.last), len(months.months)
                tell(Progress("run_start", c.chat, label, n))
                result = _materialize(selection, instance, resources,
                                      {**chat_range_tags(c.chat, months.first, months.last, recompute=full), **tags},
                                      progress)
                mats = result.asset_materializations_for_node("messages") if result.success else []
                entry["runs"].append({
                    "first_month": f"{months.first:%Y-%m}", "last_month": f"{months.last:%Y-%m}", "run_id": result.run_id,
                    "success": result.success, "months": len(mats), "partitions": [m.partition for m in mats],
                    "days_redone": sum(m.metadata["days_redone"].value for m in mats),
                    "rows": sum(m.metadata["dagster/partition_row_count"].value for m in mats),
                } | ({} if result.success else {"errors": failures(result)}))
                report["failed"] += not result.success
                tell(Progress("run_end", c.chat, label, n, ok=result.success))
            entry["status"] = "ingested" if entry["runs"] else "up to date"
            report["chats"][c.chat] = entry
            if c.ranges:
                build.chat_ended(c.chat, all(r["success"] for r in entry["runs"]))
            tell(Progress("chat_end", c.chat, entry=entry))
        if refacts is not None:
            chat, month = refacts
            tell(Progress("run_start", chat, "facts"))
            result = _materialize([facts], instance, resources, {**chat_range_tags(chat, month, month), **tags}, progress)
            report["facts"] = _whole(result)
            report["failed"] += not result.success
            tell(Progress("run_end", chat, "facts", ok=result.success))
        if memory and (any(e["runs"] for e in report["chats"].values()) or refacts is not None
                       or profile_behind(db_path, data_dir / "published")):
            tell(Progress("run_start", None, "profile"))
            build.profile_started()
            result = _materialize(WHOLE_MEMORY_ASSETS, instance, resources, tags, progress, job=memory_profile)
            report["profile"] = _whole(result)
            report["failed"] += not result.success
            tell(Progress("run_end", None, "profile", ok=result.success))
        build.finished(ok=not report["failed"])
    report["status"] = "failed" if report["failed"] else "partial" if plan.unreadable else "ok"
    return report


def _whole(result: dg.ExecuteInProcessResult) -> dict:
    return {"run_id": result.run_id, "success": result.success} | ({} if result.success else {"errors": failures(result)})


def _materialize(assets: list, instance: dg.DagsterInstance, resources: dict, tags: dict,
                 progress: ProgressHook | None = None, job=chat_memory) -> dg.ExecuteInProcessResult:
    """One in-process run of `job` (`assets` of it) owned by this process; a run that failed on
    Ctrl-C/SIGTERM ends the ingest. Its events go where the caller's `run_console` sends them; each
    step starting is told to `progress`."""
    def on_event(event: str, step: str | None) -> None:
        if step is not None and event in ("STEP_START", "STEP_FAILURE"):
            progress(Progress("step", step=step, event=event))

    with listening(on_event) if progress else nullcontext():
        whole = CHAT_MONTH_ASSETS if job is chat_memory else assets
        result = materialize(whole, instance, resources, {**tags, **owner_tags()}, job=job,
                             selection=None if assets == whole else assets)
    faults.stop_if_crashed()  # an armed in-process crash point fired: stop here, as a killed process would
    if not result.success and interrupted(result):  # Dagster turned the signal into a failed step
        raise KeyboardInterrupt
    return result


def interrupted(result: dg.ExecuteInProcessResult) -> bool:
    """Whether the run failed because this process was interrupted: during a run Dagster holds
    SIGINT/SIGTERM itself and fails the step, so the loop over ranges must stop here."""
    def by_interrupt(err) -> bool:  # DuckDB reports the signal as its own "Query interrupted" error
        return err is not None and (err.cls_name in ("DagsterExecutionInterruptedError", "KeyboardInterrupt")
                                    or "interrupted" in (err.message or "").lower()
                                    or by_interrupt(err.cause) or by_interrupt(err.context))

    return any(e.is_step_failure and by_interrupt(e.step_failure_data.error) for e in result.all_events)


def profile_behind(db_path: Path, published_dir: Path) -> bool:
    """Whether the published profile was built from other facts than the store holds: a crash
    after the last chat's run and before `profile` leaves nothing planned, and this catches it.
    A facts.json in an older layout (`FACTS_FORMAT`) is behind too."""
    if not Path(db_path).exists():
        return False
    try:
        blob = json.loads((published_dir / "facts.json").read_text())
        built = blob.get("inputs") if blob.get("format") == FACTS_FORMAT else None
    except (OSError, ValueError, AttributeError):
        built = None
    with store.connect(db_path) as con:  # read-write: a crashed writer's WAL is replayed first
        return built != stage_days.stage_digest(con, "facts")
