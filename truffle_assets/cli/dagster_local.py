"""The local Dagster instance the commands record their runs in."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from truffle_assets import paths
from truffle_assets.paths import PROJECT_ROOT


def local_dagster_home() -> Path:
    """`$DAGSTER_HOME`, else the data root's instance folder, with the project's dagster.yaml in it."""
    home = Path(os.environ.setdefault("DAGSTER_HOME", str(paths.dagster_home())))
    home.mkdir(parents=True, exist_ok=True)
    shutil.copy(PROJECT_ROOT / "dagster.yaml", home / "dagster.yaml")
    return home


def materialize_locally(selection: list, run_config: dict, resources: dict | None = None):
    """Materialize `selection` on the local instance with the project's resources (`resources`
    replacing some), offline; the run's result, failures included."""
    import dagster as dg

    from truffle_assets.definitions import defs

    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    local_dagster_home()
    return dg.materialize(selection, instance=dg.DagsterInstance.get(), resources=defs.resources | (resources or {}),
                          run_config=run_config, raise_on_error=False)
