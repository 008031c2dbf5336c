"""Re-export training data once enough new turns have been rated in the chat runtime."""

import json
from pathlib import Path

import dagster as dg

from truffle_assets.defs.feedback.assets import feedback, runtime_days, transcripts
from truffle_assets.defs.resources import ModelsResource
from truffle_assets.defs.training.assets import dpo_dataset, sft_dataset
from truffle_assets.feedback.turns import read_store


def _file_sizes(runtime_dir: Path) -> dict[str, int]:
    return {f"{p.parent.name}/{p.name}": p.stat().st_size
            for sub in ("turns", "content", "feedback") for p in sorted((runtime_dir / sub).glob("*.jsonl"))}


@dg.sensor(
    minimum_interval_seconds=300,
    default_status=dg.DefaultSensorStatus.RUNNING,
    description="Counts turns with a thumbs up or down in the runtime store; when at least "
                "`models.min_new_rated_turns` are new since the last request, re-materializes the changed "
                "transcript/feedback days and the SFT/DPO datasets.",
)
def rated_turns_sensor(context: dg.SensorEvaluationContext, models: ModelsResource) -> dg.SensorResult:
    cursor = json.loads(context.cursor) if context.cursor else {"rated": 0, "files": {}}
    root = Path(models.runtime_dir)
    rated = sum(t.rating in (-1, 1) for t in read_store(root).turns)
    new = rated - cursor["rated"]
    if new < models.min_new_rated_turns:
        return dg.SensorResult(skip_reason=f"{new} new rated turns (< {models.min_new_rated_turns})")
    sizes = _file_sizes(root)
    changed_days = sorted({name.split("/")[1].removesuffix(".jsonl") for name, size in sizes.items()
                           if cursor["files"].get(name) != size})
    valid = set(runtime_days.get_partition_keys())
    requests = [dg.RunRequest(run_key=f"runtime-{day}-{rated}", partition_key=day, asset_selection=[transcripts.key, feedback.key])
                for day in changed_days if day in valid]
    requests.append(dg.RunRequest(run_key=f"datasets-{rated}", asset_selection=[sft_dataset.key, dpo_dataset.key]))
    return dg.SensorResult(run_requests=requests, cursor=json.dumps({"rated": rated, "files": sizes}))
