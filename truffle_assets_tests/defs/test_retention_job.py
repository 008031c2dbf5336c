"""The daily retention schedule, ticked and run in a real Dagster instance: old day files, traces and
the dataset rows made from them go, and the run records what went as counts and days, never content."""

from __future__ import annotations

import json
from datetime import datetime, timedelta, UTC

import dagster as dg

from truffle_assets.definitions import defs
from truffle_assets.defs.feedback.jobs import runtime_retention, runtime_retention_schedule
from truffle_assets.defs.resources import ModelsResource
from truffle_assets.feedback.settings import save
from truffle_assets.feedback.turns import append_feedback, load_turns, write_turn
from truffle_assets.retrieval.log import RetrievalLog
from truffle_assets.training.datasets import build_datasets, check_manifest, write_dataset

TODAY = datetime.now(UTC).date()
OLD, KEPT = TODAY - timedelta(days=31), TODAY - timedelta(days=30)
SECRET_ANSWER = "Your locker code is under the blue mug"


def _turn(store, tid, day, answer, rating=None, **kw):
    write_turn(store, tid, "c1", messages=[{"role": "system", "content": "memory"},
                                           {"role": "user", "content": f"question {tid}"}],
               answer=answer, ts=f"{day}T09:00:00+00:00", model="qwen", **kw)
    if rating is not None:
        append_feedback(store, tid, rating, "a note", ts=f"{day}T09:05:00+00:00")


def test_schedule_is_registered_and_running_by_default():
    schedule = defs.get_schedule_def("runtime_retention_daily")
    assert schedule.job_name == "runtime_retention" and schedule.cron_schedule == "30 3 * * *"
    assert schedule.default_status == dg.DefaultScheduleStatus.RUNNING
    assert defs.get_job_def("runtime_retention").resource_defs["models"] is not None


def test_scheduled_run_prunes_store_traces_and_datasets(tmp_path):
    store, training = tmp_path / "data" / "runtime", tmp_path / "data" / "training"
    _turn(store, "old-a", OLD, SECRET_ANSWER, rating=1)
    _turn(store, "old-b", OLD, "An old answer", rating=-1)
    _turn(store, "kept-c", KEPT, "A kept answer", rating=1, reroll_of="old-b")
    save(store, {"transcripts": True, "content": True, "feedback": True, "retention_days": 30})
    log = RetrievalLog(store / "retrieval.duckdb")
    for q in ("where is my locker code", "a recent question"):
        log.write(query=q, params={}, item_ids=["m1"], scores=[1.0], uncertain=[False], latency_ms=1.0, timing={},
                  index_versions={})
    import duckdb
    with duckdb.connect(str(store / "retrieval.duckdb")) as con:
        con.execute("UPDATE retrieval_logs SET logged_at = logged_at - INTERVAL 40 DAY WHERE query LIKE 'where%'")
    build = build_datasets(load_turns(store))
    write_dataset(build.sft_rows, training / "sft", "sft")
    write_dataset(build.dpo_rows, training / "dpo", "dpo")
    assert len(build.sft_rows) == 2 and len(build.dpo_rows) == 1  # old-a, kept-c; kept-c > old-b

    models = ModelsResource(runtime_dir=str(store), datasets_dir=str(training), root=str(tmp_path / "models"),
                            registry_dir=str(tmp_path / "registry"))
    with dg.instance_for_test() as instance:
        tick = runtime_retention_schedule.evaluate_tick(dg.build_schedule_context(instance=instance))
        [request] = tick.run_requests
        job = dg.Definitions(jobs=[runtime_retention], resources={"models": models}).get_job_def("runtime_retention")
        result = job.execute_in_process(instance=instance, run_config=request.run_config, tags=request.tags)
        assert result.success

        output = next(e for e in result.events_for_node("prune_runtime_store") if e.event_type_value == "STEP_OUTPUT")
        meta = {k: v.value for k, v in output.step_output_data.metadata.items()}
        assert meta["retention_days"] == 30 and meta["retention_from"] == "saved"
        assert meta["cutoff"] == KEPT.isoformat() and meta["days_removed"] == [OLD.isoformat()]
        assert meta["removed"] == {"turns_records": 2, "content_records": 2, "feedback_records": 2,
                                   "turns_day_files": 1, "content_day_files": 1, "feedback_day_files": 1,
                                   "retrieval_traces": 1, "sft_dataset_rows": 1, "dpo_dataset_rows": 1}
        assert meta["removed/turns_records"] == 2

        # the rewritten datasets are new materializations, so the UI shows the files as they now are
        sft_event = instance.get_latest_materialization_event(dg.AssetKey("sft_dataset"))
        sft_meta = sft_event.asset_materialization.metadata
        assert sft_meta["rows_removed_by_retention"].value == 1 and sft_meta["dagster/row_count"].value == 1
        assert sft_meta["content_hash"].value == check_manifest(training / "sft").content_hash

        # what went is counted, never quoted: no stored text anywhere in the run's event log
        logged = json.dumps([str(r.event_log_entry) for r in instance.get_records_for_run(result.run_id).records])
        assert "sft_dataset_rows" in logged  # the metadata is in what is searched
        assert "locker" not in logged and "An old answer" not in logged and "a note" not in logged

    assert [t.turn_id for t in load_turns(store)] == ["kept-c"]
    assert not (store / "turns" / f"{OLD}.jsonl").exists() and (store / "turns" / f"{KEPT}.jsonl").exists()
    with duckdb.connect(str(store / "retrieval.duckdb"), read_only=True) as con:
        assert con.execute("SELECT query FROM retrieval_logs").fetchall() == [("a recent question",)]
    rows = [json.loads(line) for line in (training / "sft" / "train.jsonl").read_text().splitlines()] + \
           [json.loads(line) for line in (training / "sft" / "eval.jsonl").read_text().splitlines()]
    assert [r["source_id"] for r in rows] == ["kept-c"]
