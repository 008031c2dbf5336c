"""Where the event stream of an in-process run goes.

Every run is recorded on its instance (the UI shows it) whatever happens here. Its console logger
— Dagster prints a DEBUG line per event by default — follows the innermost `run_console(...)`:
every event appended to `log_file`, printed on the console only with `verbose`. Inside
`listening(hook)` each event is also handed to `hook(event_type, step_key)`, for a progress view.
Outside `run_console` a run prints as Dagster prints it.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import dagster as dg

RUN_JOB_NAME = "__ephemeral_asset_job__"  # the name `dg.materialize` gives its job: runs not of a named job
EventHook = Callable[[str, str | None], None]


@dataclass(frozen=True)
class _Console:
    log_file: Path | None = None
    verbose: bool = True
    hooks: tuple[EventHook, ...] = ()


_console = _Console()  # Dagster's own behaviour: every event on the console


@contextmanager
def _using(console: _Console) -> Iterator[None]:
    global _console
    outer, _console = _console, console
    try:
        yield
    finally:
        _console = outer


def run_console(log_file: Path | None = None, verbose: bool = False):
    """In-process runs started inside: every event appended to `log_file`, on the console only if `verbose`."""
    if log_file:
        Path(log_file).parent.mkdir(parents=True, exist_ok=True)
    return _using(_Console(Path(log_file) if log_file else None, verbose, _console.hooks))


def listening(hook: EventHook):
    """In-process runs started inside also hand each event to `hook`."""
    return _using(_Console(_console.log_file, _console.verbose, (*_console.hooks, hook)))


class _EventHook(logging.Handler):
    def __init__(self, hook: EventHook) -> None:
        super().__init__(logging.DEBUG)
        self.hook = hook

    def emit(self, record: logging.LogRecord) -> None:
        event = (getattr(record, "dagster_meta", None) or {}).get("dagster_event")
        if event is not None:
            self.hook(event.event_type_value, event.step_key)


@dg.logger(description="Dagster's console lines, or the log file and a progress hook inside run_console().")
def truffle_console(init_context) -> logging.Logger:
    console = _console
    if console.verbose:
        logger = dg.colored_console_logger.logger_fn(
            dg.build_init_logger_context(logger_config={"name": "dagster", "log_level": "DEBUG"}))
    else:
        logger = logging.getLoggerClass()("dagster", level=logging.DEBUG)  # not registered: no propagation
    if console.log_file is not None:
        handler = logging.FileHandler(console.log_file, encoding="utf-8", delay=True)
        handler.setFormatter(logging.Formatter("%(asctime)s - %(name)s - %(levelname)s - %(message)s"))
        logger.addHandler(handler)
    for hook in console.hooks:
        logger.addHandler(_EventHook(hook))
    return logger


def materialize(assets: list, instance: dg.DagsterInstance, resources: dict, tags: dict | None = None,
                run_config: dict | None = None, job: dg.UnresolvedAssetJobDefinition | None = None,
                selection: list | None = None) -> dg.ExecuteInProcessResult:
    """`dg.materialize(..., raise_on_error=False)` with `truffle_console` as the run's logger.

    With `job` (an asset job over `assets`, as declared in the definitions) the run belongs to that job,
    and `selection` (some of `assets`) narrows it as a subset launched from the UI would."""
    job = job or dg.define_asset_job(RUN_JOB_NAME)
    defs = dg.Definitions(assets=assets, resources=resources, jobs=[job], loggers={"console": truffle_console})
    return defs.resolve_job_def(job.name).execute_in_process(
        run_config={**(run_config or {}), "loggers": {"console": {}}}, instance=instance, tags=tags,
        asset_selection=[a.key for a in selection] if selection is not None else None, raise_on_error=False)


def execute(job: dg.JobDefinition, run_config: dict | None = None, **kw) -> dg.ExecuteInProcessResult:
    """`job.execute_in_process(...)` with `truffle_console` as the run's logger."""
    return job.with_logger_defs({"console": truffle_console}).execute_in_process(
        run_config={**(run_config or {}), "loggers": {"console": {}}}, **kw)


def _first_paragraph(message: str, limit: int = 240) -> str:
    """An error's text up to its first blank line, on one line, its class without the module path."""
    head = (message or "failed").strip().split("\n\n")[0]
    text = " ".join(line.strip() for line in head.splitlines() if line.strip())
    cls, sep, rest = text.partition(": ")
    if sep and "." in cls and " " not in cls:  # dagster._core.errors.DagsterAssetCheckFailedError -> its name
        text = f"{cls.rsplit('.', 1)[1]}: {rest}"
    return text if len(text) <= limit else text[: limit - 1] + "…"


def failures(result: dg.ExecuteInProcessResult) -> list[str]:
    """One line per failed step: its name and the error's first line."""
    out = []
    for ev in result.get_step_failure_events():
        err = ev.step_failure_data.error
        while err is not None and err.cause is not None and err.cls_name.startswith("Dagster"):
            err = err.cause  # Dagster's wrapper around the asset's own exception
        out.append(f"{ev.step_key}: {_first_paragraph(err.message or err.cls_name if err else '')}")
    if not out and not result.success:
        out.append("the run failed before any step ran")
    return out
