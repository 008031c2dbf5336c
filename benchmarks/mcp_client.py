"""The official MCP client against Truffle's server, for the benchmarks: over HTTP (the app served by
uvicorn in a thread, its lifespan on, or `truffle serve` as a child process) and over stdio (`truffle
mcp` as a child process)."""

from __future__ import annotations

import contextlib
import json
import socket
import sys
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any


def serve_app(app: Any, timeout: float = 30.0):
    """uvicorn serving `app` (lifespan on) on 127.0.0.1:<free port> in a daemon thread; yields the base URL."""
    from truffle_assets.runtime.serve import in_thread

    return in_thread(app, lifespan="on", timeout=timeout)


@contextlib.contextmanager
def serve_process(args: list[str], env: dict[str, str], log: Path, timeout: float = 300.0) -> Iterator[str]:
    """`python -m truffle_assets.cli <args> --port <free port>` (a `truffle serve`) until it answers; yields
    its base URL, stops it (SIGTERM, then SIGKILL) on the way out."""
    import os
    import signal
    import subprocess
    import urllib.request

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    url = f"http://127.0.0.1:{port}"
    with log.open("ab") as out:
        proc = subprocess.Popen([sys.executable, "-m", "truffle_assets.cli", *args, "--port", str(port)], env=env,
                                stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        deadline = time.monotonic() + timeout
        while True:
            try:
                urllib.request.urlopen(f"{url}/favicon.ico", timeout=2)
                break
            except OSError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(f"truffle serve did not start (see {log})") from None
                time.sleep(0.5)
        yield url
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(30)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait(10)


@contextlib.asynccontextmanager
async def http_session(url: str, token: str | None = None) -> AsyncIterator[Any]:
    """An initialized `ClientSession` on `<url>/mcp` over streamable HTTP."""
    import httpx
    from mcp import ClientSession
    from mcp.client.streamable_http import streamable_http_client

    headers = {"Authorization": f"Bearer {token}"} if token else {}
    async with (httpx.AsyncClient(headers=headers, timeout=httpx.Timeout(30, read=600)) as http,
                streamable_http_client(f"{url}/mcp", http_client=http) as (read, write, _),
                ClientSession(read, write) as session):
        await session.initialize()
        yield session


@contextlib.asynccontextmanager
async def stdio_session(args: list[str], env: dict[str, str], errlog: Path) -> AsyncIterator[Any]:
    """An initialized `ClientSession` on `python -m truffle_assets.cli mcp <args>` over stdio."""
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    params = StdioServerParameters(command=sys.executable, args=["-m", "truffle_assets.cli", "mcp", *args], env=env)
    with errlog.open("a") as err:
        async with stdio_client(params, errlog=err) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            yield session


def result_text(result: Any) -> str:
    """Everything a tool result shows a client: its structured content and its text blocks."""
    parts = [json.dumps(result.structuredContent, ensure_ascii=False)] if result.structuredContent else []
    return "\n".join(parts + [c.text for c in result.content if getattr(c, "text", None)])
