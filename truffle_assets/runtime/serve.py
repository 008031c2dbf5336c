"""`truffle serve`: the chat API and web page on one port, with the model behind it.

    serve(RuntimeConfig(), host="127.0.0.1", port=8800)

The model endpoint is resolved by `llm_server.resolve_endpoint` (the config's endpoint, then
`TRUFFLE_LLM_BASE_URL` / `OPENROUTER_API_KEY`). When none is configured it is embedded: a
`LlamaServer` is started on `llm.gguf.served_gguf()`: the registry's active model or, before any
promotion, the shipped fine-tune installed once for every data root (the Qwen2.5-Coder-0.5B GGUF
when none is installed, or `TRUFFLE_DEFAULT_MODEL=base`), and stopped again when the server exits
(Ctrl-C / SIGTERM included). Unless `--gguf` names the file, a later `truffle promote` or `truffle
rollback` is served without a restart (`served_model.ServedModel`; `GET /api/health` names the
model). A host other than loopback is refused without a bearer token, and a weak token
(`limits.weak_token_reason`: under 16 characters or 8 distinct ones) on any host. The forget
routes run the pipeline's forget when the caller hands one in (`forgetter`: the `truffle` command
line passes the pipeline's; this module never imports the pipeline).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import signal
import socket
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from truffle_assets.llm import server as llm_server
from truffle_assets.net import is_loopback
from truffle_assets.runtime.limits import TOKEN_HINT, weak_token_reason

TOKEN_ENV = "TRUFFLE_API_TOKEN"


class ServeError(RuntimeError):
    pass


def check_bind(host: str, token: str | None) -> None:
    """A public bind needs a token, and any token given must be strong (`limits.weak_token_reason`)."""
    if not is_loopback(host) and not token:
        raise ServeError(f"refusing to serve on {host!r} without a token: anyone who can reach it could read "
                         f"your memory. Pass --token (or set {TOKEN_ENV}), or bind 127.0.0.1.")
    weak = weak_token_reason(token) if token is not None else None
    if weak:  # the message never repeats the token: it may be a real password typed by mistake
        raise ServeError(f"refusing to serve with a weak token: {weak}. Generate one with\n    {TOKEN_HINT}\n"
                         f"and pass it in ${TOKEN_ENV} (or --token).")


@contextlib.contextmanager
def _terminate_as_exit() -> Iterator[None]:
    """SIGTERM raises SystemExit, so `finally` blocks (stopping the llama server) run. uvicorn
    re-raises the signal after its own graceful shutdown with the handler it found: this one."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def _exit(signum: int, _frame: Any) -> None:
        raise SystemExit(128 + signum)

    previous = signal.signal(signal.SIGTERM, _exit)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def serve(config: Any, host: str = "127.0.0.1", port: int = 8800, token: str | None = None, *,
          n_ctx: int = 16_384, log_level: str = "info", forgetter: Any = None, mcp: bool = True,
          mcp_forget: bool = False) -> None:
    """Serve the chat API and page until interrupted; an embedded llama.cpp server lives exactly as
    long (`service.open_service`: the configured endpoint via `llm_server.resolve_endpoint`, else
    llama.cpp on `endpoint.gguf`, the registry's active model, the shared shipped fine-tune or the
    Qwen2.5-Coder-0.5B GGUF).
    `forgetter`: what `/api/forget` hands its work to (`forget_api.Forgetter`), else those routes answer 503.
    `mcp`: the MCP server at `/mcp` (streamable HTTP, the same token rule), with the forget tool when `mcp_forget`."""
    import uvicorn

    from truffle_assets.runtime.api import create_app
    from truffle_assets.runtime.service import open_service

    check_bind(host, token)
    with _terminate_as_exit():
        ep = config.endpoint
        endpoint = llm_server.resolve_endpoint(ep.base_url, ep.model, ep.api_key, ep.gguf)
        if endpoint.embedded:
            print("starting the embedded llama.cpp server …", file=sys.stderr, flush=True)
        with open_service(config, endpoint=endpoint, n_ctx=n_ctx, follow_registry=True) as service:
            ep = service.endpoint
            print(f"truffle: http://{host}:{port}/  (model {ep.model} at {ep.base_url})", file=sys.stderr, flush=True)
            served = service.model_status()
            if served["source"] != "endpoint":  # the embedded llama.cpp server
                follows = "; a promotion or rollback is served without a restart" if served["follows_registry"] else ""
                print(f"truffle: serving {served['description']} from {served['file']}{follows}", file=sys.stderr,
                      flush=True)
            keep = service.keeping()  # what this store keeps: the page shows the same line
            print(f"truffle: {keep.describe()} (in {service.config.store_dir}; change it on the page or with "
                  "`truffle logging`)", file=sys.stderr, flush=True)
            if mcp:
                print(f"truffle: MCP for other apps at http://{host}:{port}/mcp"
                      f"{' (with forget)' if mcp_forget else ''}", file=sys.stderr, flush=True)
            app = create_app(service, token=token, forgetter=forgetter, mcp=mcp, mcp_forget=mcp_forget)
            uvicorn.run(app, host=host, port=port, log_level=log_level)


# ---- CLI ----------------------------------------------------------------------------------------------

@contextlib.contextmanager
def in_thread(app: Any, *, lifespan: str = "on", timeout: float = 30.0) -> Iterator[str]:
    """uvicorn serving `app` on 127.0.0.1:<free port> in a daemon thread until the block ends; yields the
    base URL. For an app embedded in another process (benchmarks, tests); `lifespan="on"` runs the
    app's lifespan, where the MCP endpoint's sessions live."""
    import uvicorn

    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))  # bound before the thread starts: no race for the port
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan=lifespan))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + timeout
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            raise RuntimeError("uvicorn did not start")
        time.sleep(0.02)
    try:
        yield f"http://127.0.0.1:{sock.getsockname()[1]}"
    finally:
        server.should_exit = True
        thread.join(10)
        sock.close()


def add_serve_command(subparsers: argparse._SubParsersAction,
                      forgetter: Callable[[Path], Any] | None = None) -> argparse.ArgumentParser:
    """`truffle serve [--host --port --token]` plus the runtime's common options (`--published`,
    `--store`, `--base-url`, `--gguf`, `--n-ctx`, ...). The token may come from $TRUFFLE_API_TOKEN
    instead (a command-line token is visible to other local users in the process list).
    `forgetter(data_dir)` builds the `/api/forget` handler for the data root being served."""
    from truffle_assets.runtime.cli import _add_common

    sp = subparsers.add_parser("serve", help="serve the chat API (OpenAI-compatible) and the web page")
    sp.add_argument("--host", default="127.0.0.1", help="bind address (anything but loopback needs a token)")
    sp.add_argument("--port", type=int, default=8800, help="port of the chat page and the API")
    sp.add_argument("--token", default=None, help=f"bearer token every API call must carry (default ${TOKEN_ENV})")
    sp.add_argument("--no-mcp", dest="mcp", action="store_false", help="do not serve the MCP endpoint at /mcp")
    sp.add_argument("--mcp-forget", action="store_true",
                    help="offer the forget tool over MCP (a dry run first, then an explicit confirmation)")
    _add_common(sp)
    sp.set_defaults(func=cmd_serve, forgetter=forgetter)
    return sp


def cmd_serve(args: argparse.Namespace) -> int:
    from truffle_assets.feedback.settings import SettingsError  # an unreadable logging choice is not guessed at
    from truffle_assets.registry import AuditFailed  # a registry that fails its audit is not served
    from truffle_assets.runtime.cli import config_from_args

    token = args.token or os.environ.get(TOKEN_ENV) or None
    try:
        check_bind(args.host, token)
        config = config_from_args(args)
        make = getattr(args, "forgetter", None)
        forgetter = make(Path(config.published_dir).parent) if make else None  # published/ sits in the data root
        if args.mcp_forget and (forgetter is None or not args.mcp):
            raise ServeError("--mcp-forget needs the MCP endpoint and the pipeline's forget (drop --no-mcp)")
        serve(config, host=args.host, port=args.port, token=token, n_ctx=args.n_ctx, forgetter=forgetter,
              mcp=args.mcp, mcp_forget=args.mcp_forget)
    except (ServeError, llm_server.LlamaServerError, AuditFailed, SettingsError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:  # Ctrl-C: uvicorn and the llama server have already stopped
        return 0
    return 0
