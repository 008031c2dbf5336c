"""Promotion and rollback as Dagster jobs: the same registry calls as `truffle promote` / `rollback`.

Both refuse (the run fails with `AuditFailed`, nothing written) when the registry's audit does not
verify: appending to a tampered log would bury the evidence under fresh, valid lines."""

from pathlib import Path

import dagster as dg

from truffle_assets.defs.resources import ModelsResource
from truffle_assets.registry import read_gate


class PromoteConfig(dg.Config):
    run_id: str = ""  # empty = the current candidate
    force: bool = False  # promote although the gate failed (needs a reason; logged as forced)
    reason: str = ""


class RollbackConfig(dg.Config):
    reason: str = ""


@dg.op(description="Make a finished run the model the runtime serves, if its eval gate passed (or --force) "
                   "and the registry's audit verifies.")
def promote_run(context: dg.OpExecutionContext, config: PromoteConfig, models: ModelsResource) -> None:
    run_dir = Path(models.root) / "runs" / config.run_id if config.run_id else models.candidate_dir()
    active = models.registry().promote(run_dir, gate_passed=read_gate(run_dir) is True, force=config.force,
                                       reason=config.reason, who=f"dagster:{context.run.run_id[:8]}")
    context.log.info(f"active model is now {active.run_id} ({active.gguf_path}); forced={active.forced}")


@dg.op(description="Restore the model that was active before the current one, if the registry's audit verifies.")
def rollback_active(context: dg.OpExecutionContext, config: RollbackConfig, models: ModelsResource) -> None:
    active = models.registry().rollback(reason=config.reason, who=f"dagster:{context.run.run_id[:8]}")
    context.log.info(f"rolled back: active model is now {active.run_id}")


@dg.job(description="Promote a training run (default: the candidate) to the active model.")
def promote_model() -> None:
    promote_run()


@dg.job(description="Roll the active model back to the previous one in model_history.")
def rollback_model() -> None:
    rollback_active()
