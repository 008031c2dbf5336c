"""`python -m truffle_assets.llm.parent_watch <parent pid> <module> [args...]`: run `<module>` as
`__main__` and exit as soon as the process that started it is gone.

`LlamaServer` starts the llama.cpp server in its own session, so a parent that dies without
running its cleanup (SIGKILL, a `timeout`, an OOM kill) would leave the server holding gigabytes
and a port. `prctl(PR_SET_PDEATHSIG)` is no answer here: it fires when the spawning *thread*
ends, and the chat service starts its server from a request thread. Polling the parent pid costs
one syscall a second.
"""

from __future__ import annotations

import os
import runpy
import sys
import threading
import time

POLL_S = 1.0


def watch(parent: int, poll_s: float = POLL_S) -> None:
    """Block until this process's parent is no longer `parent` (it died and we were re-parented)."""
    while os.getppid() == parent:
        time.sleep(poll_s)


def main(argv: list[str]) -> None:
    if len(argv) < 2 or not argv[0].isdigit():
        raise SystemExit("usage: python -m truffle_assets.llm.parent_watch <parent pid> <module> [args...]")
    parent, module = int(argv[0]), argv[1]

    def _exit_when_orphaned() -> None:
        watch(parent)
        os._exit(0)  # no cleanup to run: the server holds nothing that outlives the process

    threading.Thread(target=_exit_when_orphaned, name="parent-watch", daemon=True).start()
    sys.argv = [module, *argv[2:]]
    runpy.run_module(module, run_name="__main__", alter_sys=True)


if __name__ == "__main__":
    main(sys.argv[1:])
