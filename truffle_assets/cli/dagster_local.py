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


# Dagster reads these from the environment on every event, in this process and in the `dagster dev`
# it starts (`truffle up`), whose daemon and run workers inherit them. A step's materializations and
# a run's planned events reach the event log as batches: PostgreSQL writes a batch of
# materializations as one insert (about a fifth off Dagster's cost per ingest run,
# benchmarks/dagster_floor.py), SQLite still one by one. A failed run's partitions still read as
# failed. DAGSTER_EMIT_PARTITION_SUBSET_IN_PLANNED_EVENTS is left off: one planned event per asset
# instead of per partition is cheaper, but Dagster's SQLite and PostgreSQL event logs then no longer
# mark a failed run's partitions as failed.
DAGSTER_EVENT_ENV = {"DAGSTER_EVENT_BATCH_SIZE": "1000"}


def event_settings() -> None:
    """Dagster's event settings (DAGSTER_EVENT_ENV), where the environment does not set them."""
    for name, value in DAGSTER_EVENT_ENV.items():
        os.environ.setdefault(name, value)


def local_dagster_home() -> Path:
    """`$DAGSTER_HOME`, else the data root's instance folder, with the project's dagster.yaml in it,
    and Dagster's event settings for the `dagster dev` a command starts after it."""
    event_settings()
    home = Path(os.environ.setdefault("DAGSTER_HOME", str(paths.dagster_home())))
    home.mkdir(parents=True, exist_ok=True)
    shutil.copy(PROJECT_ROOT / "dagster.yaml", home / "dagster.yaml")
    return home


@contextmanager
def quiet_runs(data_dir: Path, verbose: bool = False) -> Iterator[Path]:
    """In-process Dagster runs started inside print nothing: their events, and library noise, go to
    the data root's log file (yielded), and to the console too with `verbose`. They run under
    Dagster's event settings (DAGSTER_EVENT_ENV)."""
    from truffle_assets.cli.progress import log_file_for
    from truffle_assets.defs.run_log import run_console
    from truffle_assets.quiet import quiet_console

    event_settings()
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


def serve_ui(port: int, log_file: Path, verbose: bool, say, also: str = "") -> int:
    """`dagster dev` on 127.0.0.1 until it exits or this process is asked to stop (Ctrl-C or `kill`), then
    stopped as Ctrl-C stops it: its webserver, daemon and code server go with it.

    A signal only sets a flag here: raised as KeyboardInterrupt it could land between the fork and
    `Popen` returning and leave a `dagster dev` nobody stops. Setting Python handlers also gives the
    child default ones: Dagster's in-process runs leave SIGTERM with SIGINT's disposition, which is
    "ignore" when a shell started `truffle up` in the background, and `dagster dev` would inherit it.
    """
    import signal
    import subprocess
    import threading

    from truffle_assets.cli.chat_server import output_to

    stop = threading.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda *_: stop.set())
    with output_to(log_file, verbose) as sink:
        ui = subprocess.Popen([str(Path(sys.executable).with_name("dagster")), "dev", "-w",
                               str(PROJECT_ROOT / "workspace.yaml"), "-h", "127.0.0.1", "-p", str(port)],
                              cwd=PROJECT_ROOT, stdout=sink, stderr=sink)
    # the webserver's global asset lineage page; `also`: what else Ctrl-C stops
    say(f"Dagster UI: http://127.0.0.1:{port}/asset-groups  (Ctrl-C stops it{also})")
    while ui.poll() is None and not stop.wait(0.5):
        pass
    if ui.poll() is None:
        ui.send_signal(signal.SIGINT)
        try:
            ui.wait(timeout=30)
        except subprocess.TimeoutExpired:
            ui.kill()
            ui.wait()
        raise KeyboardInterrupt
    if ui.returncode:
        print(f"truffle up: the Dagster UI exited with {ui.returncode}; its output: {log_file}", file=sys.stderr)
    return ui.returncode
