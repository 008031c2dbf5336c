"""`truffle up`'s chat server: started as soon as one chat's memory is in, beside the rest of the build.

The shipped fine-tune is rebuilt in the background while the first chats ingest (`ShippedInstall`);
the chat server (`truffle serve`, its own process group) starts once a chat is published and that
rebuild is over, so the model it loads is the one that stays (`ChatOpener`). Children's output goes
to the log file unless `--verbose`.
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from contextlib import contextmanager
from pathlib import Path

from truffle_assets.paths import PROJECT_ROOT, SHIPPED_DIR

Say = Callable[[str], None]


def _truffle() -> str:
    return str(Path(sys.executable).with_name("truffle"))


@contextmanager
def output_to(log_file: Path, verbose: bool):
    """Where a child process's output goes: the console with --verbose, else the end of the log file."""
    if verbose:
        yield None
        return
    log_file.parent.mkdir(parents=True, exist_ok=True)
    with open(log_file, "a", encoding="utf-8") as sink:
        yield sink


class ShippedInstall:
    """`truffle install-shipped` in the background when a fine-tune is shipped (it returns at once when
    it is already installed); `wait()` reports a failure the way setup does: the base model is served."""

    def __init__(self, log_file: Path, verbose: bool = False) -> None:
        self.log_file, self.proc = log_file, None
        if any(SHIPPED_DIR.glob("*/ship.json")):
            with output_to(log_file, verbose) as sink:
                self.proc = subprocess.Popen([_truffle(), "install-shipped"], cwd=PROJECT_ROOT,
                                             stdout=sink, stderr=sink, start_new_session=True)

    def wait(self) -> None:
        if self.proc is not None and self.proc.wait() != 0:
            print(f"warning: the shipped fine-tuned model was NOT installed (exit {self.proc.returncode}; its output: "
                  f"{self.log_file}); the base model is served. Retry with: truffle install-shipped",
                  file=sys.stderr, flush=True)


def start_chat(port: int, log_file: Path, verbose: bool = False, say: Say = print,
               timeout_s: float = 300.0) -> subprocess.Popen | None:
    """`truffle serve` in the background (own process group) until its API answers."""
    import urllib.request

    with output_to(log_file, verbose) as sink:
        proc = subprocess.Popen([_truffle(), "serve", "--port", str(port)],
                                cwd=PROJECT_ROOT, start_new_session=True, stdout=sink, stderr=sink)
    say(f"starting the chat server (a model load takes a minute; its output: {log_file})")
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            print(f"warning: the chat server exited with {proc.returncode}; its output: {log_file}", file=sys.stderr)
            return None
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/v1/models", timeout=2):
                return proc
        except OSError:
            time.sleep(1)
    print(f"warning: the chat server did not answer within {timeout_s:.0f} s; its output: {log_file}", file=sys.stderr)
    return proc


def chat_line(port: int, building: str | None = None) -> str:
    return (f"Chat: http://127.0.0.1:{port}/  (OpenAI-compatible API at http://127.0.0.1:{port}/v1; "
            f"CLI: truffle ask / truffle chat)" + (f"\n  {building}; the page shows the rest as it comes in"
                                                   if building else ""))


def yield_to_answers(niceness: int = 10) -> None:
    """Lower this process's CPU priority, every thread of it, so the chat server answers first while the
    rest of the memory builds (on Linux `nice` is per thread; elsewhere the calling thread's is lowered).
    The Dagster UI `truffle up` starts afterwards inherits it: answers keep coming first."""
    tasks = Path("/proc/self/task")
    tids = [int(t.name) for t in tasks.iterdir()] if tasks.is_dir() else [0]
    for tid in tids:
        try:
            os.setpriority(os.PRIO_PROCESS, tid, max(os.getpriority(os.PRIO_PROCESS, tid), niceness))
        except OSError:  # a thread that just ended
            pass


class ChatOpener:
    """A progress hook for the ingest: at the first chat whose memory is in, starts the chat server in a
    thread (after `shipped`), so a person can ask while the other chats build."""

    def __init__(self, port: int, log_file: Path, verbose: bool, say: Say, shipped: ShippedInstall,
                 published_dir: Path) -> None:
        self.port, self.log_file, self.verbose, self.say = port, log_file, verbose, say
        self.shipped, self.published_dir = shipped, published_dir
        self.proc: subprocess.Popen | None = None
        self._thread: threading.Thread | None = None

    def __call__(self, p) -> None:  # a runner.Progress
        ok = p.kind == "chat_end" and all(r["success"] for r in p.entry.get("runs", []))
        if ok and self._thread is None:
            self._thread = threading.Thread(target=self._open, name="chat-opener", daemon=True)
            self._thread.start()

    def _open(self) -> None:
        from truffle_assets.runtime.coverage_api import coverage, summary_line

        self.shipped.wait()
        self.proc = start_chat(self.port, self.log_file, self.verbose, self.say)
        if self.proc is not None:
            building = summary_line(coverage(self.published_dir))
            if building:
                yield_to_answers()
            self.say(chat_line(self.port, building))

    def wait(self) -> subprocess.Popen | None:
        """The chat server once the build is over: started now if no chat got in while it ran."""
        if self._thread is None:
            self._open()
        else:
            self._thread.join()
        return self.proc
