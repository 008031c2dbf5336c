"""`truffle mcp`: the MCP server over stdio, for desktop clients that start it as a child process.

JSON-RPC owns the process's stdout, and one stray line (a print, a progress bar, llama.cpp's log)
would break the client's connection. So the protocol gets private copies of file descriptors 0
and 1, and fd 1 is then pointed at stderr and fd 0 at /dev/null: whatever the process or a
library writes to stdout, at the Python or the C level, lands on stderr (the client's log).

Search and the other lookups read the published memory and need no model. The chat model behind
`ask` starts on the first `ask` (the embedded llama.cpp server takes seconds to minutes on a
small machine) and stops when the server does.
"""

from __future__ import annotations

import contextlib
import os
import sys
import threading
from collections.abc import Iterator
from typing import IO, Any

import anyio


@contextlib.contextmanager
def protocol_streams() -> Iterator[tuple[IO[str], IO[str]]]:
    """(input, output) text streams on private copies of fds 0 and 1; meanwhile fd 1 writes to stderr
    and fd 0 reads nothing. The descriptors are restored on the way out."""
    sys.stdout.flush()
    saved_in, saved_out = os.dup(0), os.dup(1)
    proto_in, proto_out = os.dup(0), os.dup(1)
    os.dup2(2, 1)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    reader = open(proto_in, encoding="utf-8", errors="replace", closefd=True)  # noqa: SIM115 - closed below
    writer = open(proto_out, "w", encoding="utf-8", newline="\n", closefd=True)  # noqa: SIM115
    try:
        yield reader, writer
    finally:
        for stream in (writer, reader):
            with contextlib.suppress(OSError, ValueError):
                stream.close()
        sys.stdout.flush()
        os.dup2(saved_out, 1)
        os.dup2(saved_in, 0)
        os.close(saved_out)
        os.close(saved_in)


class LazyModel:
    """The executor `ask` runs on: a service on a live model endpoint, opened on first use."""

    def __init__(self, config: Any, n_ctx: int, make_executor: Any) -> None:
        self.config, self.n_ctx, self.make_executor = config, n_ctx, make_executor
        self._stack = contextlib.ExitStack()
        self._executor: Any = None
        self._lock = threading.Lock()

    def __call__(self) -> Any:
        with self._lock:
            if self._executor is None:
                from truffle_assets.runtime.service import open_service

                print("truffle mcp: starting the chat model for ask …", file=sys.stderr, flush=True)
                service = self._stack.enter_context(open_service(self.config, n_ctx=self.n_ctx))
                self._executor = self.make_executor(service)
            return self._executor

    def close(self) -> None:
        self._stack.close()


def run_stdio(config: Any, *, allow_forget: bool = False, forgetter: Any = None, n_ctx: int = 16_384) -> None:
    """Serve MCP on stdin/stdout until the client closes the connection."""
    from mcp.server.stdio import stdio_server

    from truffle_assets.runtime.mcp.server import build_server
    from truffle_assets.runtime.service import ChatService
    from truffle_assets.runtime.tool_exec import ToolExecutor

    with protocol_streams() as (reader, writer):
        service = ChatService(config)
        limits = config.api
        model = LazyModel(config, n_ctx, ToolExecutor)
        server = build_server(ToolExecutor(service), service=service, limits=limits,
                              allow_forget=allow_forget, forgetter=forgetter, ask_executor=model)

        async def main() -> None:
            async with stdio_server(anyio.wrap_file(reader), anyio.wrap_file(writer)) as (read, write):
                await server.run(read, write, server.create_initialization_options())

        try:
            anyio.run(main)
        finally:
            model.close()
