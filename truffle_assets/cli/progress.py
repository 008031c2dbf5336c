"""What a person watches while a long command runs, and the few lines it ends with.

On a terminal: one live line (rich) with the work done of the work planned, the current stage,
elapsed and remaining time. Anywhere else (a pipe, CI, a test): a few plain lines — one per chat
or stage finished — and never a cursor code. All of it goes to stderr; stdout is left to the
command's result (its summary, or its JSON with `--json`).
"""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import TextIO

from truffle_assets.plurals import duration, plural



def log_file_for(data_dir: Path) -> Path:
    """The log file of a data root: every Dagster event and library notice the console leaves out."""
    return Path(data_dir) / "logs" / "truffle.log"


class View:
    """A bar of `total` units of work with the current stage beside it; `line()` prints a finished step."""

    def __init__(self, unit: str, stream: TextIO | None = None, live: bool | None = None) -> None:
        self.unit, self.stream = unit, stream or sys.stderr
        self.live = self.stream.isatty() if live is None else live
        self.started = time.monotonic()
        self.total = self.done = 0
        self.stage = ""
        self._bar = None  # a rich Progress while live
        self._task = None

    def __enter__(self) -> View:
        if self.live:
            from rich.console import Console
            from rich.progress import (
                BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn,
            )

            self._bar = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                                 TextColumn(self.unit), TimeElapsedColumn(), TextColumn("left"),
                                 TimeRemainingColumn(), console=Console(file=self.stream), transient=True)
            self._bar.start()
            self._task = self._bar.add_task("starting", total=None)
        return self

    def __exit__(self, *exc) -> None:
        if self._bar is not None:
            self._bar.stop()
            self._bar = None

    @property
    def elapsed(self) -> float:
        return time.monotonic() - self.started

    def remaining(self) -> float | None:
        """Seconds left at the pace so far; None before anything is done."""
        if not self.done or self.done >= self.total:
            return None
        return self.elapsed / self.done * (self.total - self.done)

    def plan(self, total: int) -> None:
        self.total = total
        if self._bar is not None:
            self._bar.update(self._task, total=total or None)

    def advance(self, n: int = 1) -> None:
        self.done += n
        if self.done > self.total:  # more work than planned (a chain's checks run as steps of their own)
            self.plan(self.done)
        if self._bar is not None:
            self._bar.update(self._task, completed=self.done)

    def status(self, stage: str) -> None:
        self.stage = stage
        if self._bar is not None:
            self._bar.update(self._task, description=stage)

    def line(self, text: str) -> None:
        """A finished piece of work, kept above the live line (or printed, when there is none)."""
        if self._bar is not None:
            self._bar.console.print(text, highlight=False, markup=False)
        else:
            print(text, file=self.stream, flush=True)

    def clock(self) -> str:
        left = self.remaining()
        return duration(self.elapsed) + (f", about {duration(left)} left" if left is not None else "")


class IngestView(View):
    """`ingest_all(progress=...)`: the plan of chat × month runs, each run and step as it goes."""

    def __init__(self, stream: TextIO | None = None, live: bool | None = None) -> None:
        super().__init__("months", stream, live)
        self.chats: list[str] = []
        self.chats_done = 0
        self.current = ""
        self.failed_step: str | None = None

    def __call__(self, p) -> None:  # a runner.Progress
        if p.kind == "plan":
            self.chats = list(dict.fromkeys(chat for chat, _, _ in p.runs))
            months = sum(n for _, _, n in p.runs)
            self.plan(months)
            if p.runs:
                self.line(f"building {plural(months, 'month')} of {plural(len(self.chats), 'chat')} "
                          f"in {plural(len(p.runs), 'run')}")
        elif p.kind == "run_start":
            self.current, self.failed_step = (f"{p.chat} {p.label}" if p.chat else p.label), None
            self.status(self._where())
        elif p.kind == "step":
            self.status(self._where(p.step))
            if p.event == "STEP_FAILURE":
                self.failed_step = p.step
        elif p.kind == "run_end":
            self.advance(p.months)
            if not p.ok:
                self.line(f"  {self.current}: FAILED" + (f" in {self.failed_step}" if self.failed_step else ""))
            elif p.chat is None:
                self.line(f"  {p.label} built ({self.clock()})")
        elif p.kind == "note":  # said before the runs (what the LLM work will cost)
            self.line(p.label)
        elif p.kind == "chat_end" and p.entry.get("runs"):
            self.chats_done += 1
            runs = [r for r in p.entry["runs"] if r["success"]]
            if runs:
                rows, months = sum(r["rows"] for r in runs), sum(r["months"] for r in runs)
                self.line(f"  {p.chat}: {plural(rows, 'message')}, {plural(months, 'month')} "
                          f"[{self.chats_done}/{len(self.chats)} chats, {self.clock()}]")

    def _where(self, step: str | None = None) -> str:
        done = f"chats {self.chats_done}/{len(self.chats)}" if self.chats else ""
        return " · ".join(x for x in (done, self.current, step if step != self.current else None) if x)


class StepsView(View):
    """One run of a chain of assets (`truffle train`, `truffle eval`): a hook for `run_log.listening`."""

    def __init__(self, steps: int, stream: TextIO | None = None, live: bool | None = None) -> None:
        super().__init__("steps", stream, live)
        self.plan(steps)
        self.step_started: dict[str, float] = {}

    def __call__(self, event: str, step: str | None) -> None:
        if step is None:
            return
        if event == "STEP_START":
            self.step_started[step] = time.monotonic()
            self.status(step)
        elif event in ("STEP_SUCCESS", "STEP_FAILURE", "STEP_SKIPPED"):
            took = time.monotonic() - self.step_started.get(step, time.monotonic())
            self.advance()
            word = {"STEP_SUCCESS": "done", "STEP_FAILURE": "FAILED", "STEP_SKIPPED": "skipped"}[event]
            self.line(f"  {step}: {word} in {duration(took)} [{self.done}/{self.total} steps, {self.clock()}]")
