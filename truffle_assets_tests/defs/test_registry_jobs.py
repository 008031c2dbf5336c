"""The promote/rollback jobs on a tampered registry: the run fails with the audit's reason and the
registry is left as it was (appending would bury the evidence)."""

import dagster as dg

from truffle_assets.defs.registry.jobs import promote_model, rollback_model
from truffle_assets.defs.resources import ModelsResource
from truffle_assets.registry import verify
from truffle_assets_tests.test_registry import KEY, make_run


def test_jobs_refuse_a_registry_whose_audit_fails(tmp_path):
    models = ModelsResource(root=str(tmp_path), registry_dir=str(tmp_path / "registry"), audit_key=KEY)
    resources = {"models": models}
    instance = dg.DagsterInstance.ephemeral()
    for name in ("run-a", "run-b"):
        make_run(tmp_path, name)
        cfg = {"ops": {"promote_run": {"config": {"run_id": name}}}}
        assert promote_model.execute_in_process(run_config=cfg, instance=instance, resources=resources).success
    assert verify(models.registry_dir, key=KEY).ok and models.registry().active().run_id == "run-b"

    head = tmp_path / "registry" / "audit.head"
    head.unlink()  # tampering: the log's tail could now be cut unseen
    log = (tmp_path / "registry" / "audit.log").read_bytes()
    for job, cfg in ((rollback_model, {}), (promote_model, {"ops": {"promote_run": {"config": {"run_id": "run-a"}}}})):
        result = job.execute_in_process(run_config=cfg, instance=instance, resources=resources, raise_on_error=False)
        assert not result.success
        error = next(e for e in result.all_events if e.is_step_failure).event_specific_data.error.cause
        assert error.cls_name == "AuditFailed" and "audit.head missing" in error.message
    assert (tmp_path / "registry" / "audit.log").read_bytes() == log and not head.exists()
    assert models.registry().active().run_id == "run-b"
