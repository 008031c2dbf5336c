"""The project's instance settings, read back from an instance loaded from dagster.yaml as `truffle up`
and `dagster dev` load it (the PostgreSQL file is checked in `test_postgres_instance`)."""

from __future__ import annotations

import shutil

import dagster as dg

from truffle_assets import paths


def test_dagster_yaml_settings(tmp_path):
    shutil.copy(paths.PROJECT_ROOT / "dagster.yaml", tmp_path / "dagster.yaml")
    with dg.DagsterInstance.from_config(str(tmp_path)) as instance:
        assert not instance.nux_enabled  # the UI asks `shouldShowNux`: no "Join the community" dialog
        assert not instance.telemetry_enabled
        assert instance.get_concurrency_config().pool_config.default_pool_limit == 1
