"""Reading a Dagster instance's event log the way the ingest benchmarks report it.

A step's compute is its start to its first materialization event; the rest of the step is one
materialization event per partition. A run's wall outside its steps is launch, planning and end.
"""

from collections import defaultdict

import dagster as dg


def event_split(instance: dg.DagsterInstance) -> dict:
    """Per step key, seconds of step (start → success) and of compute (start → first materialization),
    summed over every run in the instance, with run counts, run walls and the time runs spend outside steps."""
    step_s: dict[str, float] = defaultdict(float)
    compute_s: dict[str, float] = defaultdict(float)
    events = materializations = 0
    run_walls: list[float] = []
    run_overheads: list[float] = []  # run wall minus its steps: launch, planning events, run end
    first_ts = float("inf")
    for run in instance.get_runs():
        records = instance.all_logs(run.run_id)
        events += len(records)
        ts = [r.timestamp for r in records]
        first_ts = min(first_ts, min(ts))
        run_walls.append(max(ts) - min(ts))
        started: dict[str, float] = {}
        first_mat: dict[str, float] = {}
        in_steps = 0.0
        for r in records:
            ev = r.dagster_event
            if ev is None or r.step_key is None:
                continue
            kind = ev.event_type_value
            if kind == "STEP_START":
                started[r.step_key] = r.timestamp
            elif kind == "ASSET_MATERIALIZATION":
                materializations += 1
                first_mat.setdefault(r.step_key, r.timestamp)
            elif kind in ("STEP_SUCCESS", "STEP_FAILURE") and r.step_key in started:
                end = r.timestamp
                step_s[r.step_key] += end - started[r.step_key]
                compute_s[r.step_key] += first_mat.get(r.step_key, end) - started[r.step_key]
                in_steps += end - started[r.step_key]
        run_overheads.append(run_walls[-1] - in_steps)
    return {"runs": len(run_walls), "events": events, "materializations": materializations,
            "run_walls": run_walls, "run_overheads": run_overheads, "first_event_ts": first_ts,
            "step_s": dict(step_s), "compute_s": dict(compute_s)}
