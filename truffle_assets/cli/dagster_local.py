"""The local Dagster instance the commands record their runs in."""

from __future__ import annotations

import os
import shutil
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from truffle_assets import paths
from truffle_assets.paths import PROJECT_ROOT


def local_dagster_home() -> Path:
    """`$DAGSTER_HOME`, else the data root's instance folder, with the project's dagster.yaml in it."""
    home = Path(os.environ.setdefault("DAGSTER_HOME", str(paths.dagster_home())))
    home.mkdir(parents=True, exist_ok=True)
    shutil.copy(PROJECT_ROOT / "dagster.yaml", home / "dagster.yaml")
    return home


@contextmanager
def quiet_runs(data_dir: Path, verbose: bool = False) -> Iterator[Path]:
    """In-process Dagster runs started inside print nothing: their events, and library noise, go to
    the data root's log file (yielded), and to the console too with `verbose`."""
    from truffle_assets.cli.progress import log_file_for
    from truffle_assets.defs.run_log import run_console
    from truffle_assets.quiet import quiet_console

    log_file = log_file_for(data_dir)
    quiet_console(verbose, log_file)
    with run_console(log_file, verbose):
        yield log_file


def materialize_locally(selection: list, run_config: dict, resources: dict | None = None, verbose: bool = False,
                        command: str = "run"):
    """Materialize `selection` on the local instance with the project's resources (`resources`
    replacing some), offline; the run's result, failures included. A progress view of its steps on
    stderr; Dagster's events and library output in the data root's log file (and on the console
    with `verbose`); a failed step named on stderr with the log file."""
    import dagster as dg

    from truffle_assets.cli.progress import StepsView
    from truffle_assets.defs.run_log import failures, listening, materialize

    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    local_dagster_home()
    view = StepsView(len(selection), live=False if verbose else None)
    with quiet_runs(paths.data_root(), verbose) as log_file, listening(view), view:
        from truffle_assets.definitions import defs

        result = materialize(selection, dg.DagsterInstance.get(), defs.resources | (resources or {}),
                             run_config=run_config)
    if not result.success:
        print(f"truffle {command}: FAILED" + "".join(f"\n  failed: {f}" for f in failures(result))
              + f"\n  every event of run {result.run_id}: {log_file}", file=sys.stderr)
    return result
