"""`truffle serve`: the chat API and web page on one port, with the model behind it.

    serve(RuntimeConfig(), host="127.0.0.1", port=8800)

The model endpoint is resolved by `llm_server.resolve_endpoint` (the config's endpoint, then
`TRUFFLE_LLM_BASE_URL` / `OPENROUTER_API_KEY`). When none is configured it is embedded: a
`LlamaServer` is started on the active fine-tuned model (`data/models/registry/active.json`) or,
before any promotion, on the Qwen2.5-Coder-0.5B GGUF, and stopped again when the server exits
(Ctrl-C / SIGTERM included). A host other than loopback is refused without a bearer token.
"""

from __future__ import annotations

import argparse
import contextlib
import ipaddress
import logging
import os
import signal
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from truffle_assets import llm_server

log = logging.getLogger(__name__)

TOKEN_ENV = "TRUFFLE_API_TOKEN"
DEFAULT_REGISTRY = Path("data/models/registry")


class ServeError(RuntimeError):
    pass


def is_loopback(host: str) -> bool:
    if host.strip().lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False  # a hostname or 0.0.0.0 / :: : reachable from elsewhere


def check_bind(host: str, token: str | None) -> None:
    if not is_loopback(host) and not token:
        raise ServeError(f"refusing to serve on {host!r} without a token: anyone who can reach it could read "
                         f"your memory. Pass --token (or set {TOKEN_ENV}), or bind 127.0.0.1.")


def default_gguf(registry_root: str | Path = DEFAULT_REGISTRY) -> Path:
    """The active model's GGUF (registry `active.json`), else the shipped Qwen2.5-Coder-0.5B GGUF."""
    active = Path(registry_root) / "active.json"
    if active.is_file():
        from truffle_assets.training.registry import Registry

        model = Registry(registry_root).active()
        if model is not None:
            gguf = Path(model.gguf_path)
            if gguf.is_file():
                return gguf
            log.warning("active model %s: GGUF %s is missing; serving the base model", model.run_id, gguf)
    from truffle_assets.training.base_models import qwen_gguf

    return qwen_gguf()


def _endpoint_cfg(config: Any) -> Any:
    return getattr(config, "endpoint", None) or config


def resolve(config: Any, registry_root: str | Path = DEFAULT_REGISTRY) -> llm_server.Endpoint:
    """The config's endpoint through `resolve_endpoint`; an embedded one gets its GGUF filled in."""
    ep = _endpoint_cfg(config)
    endpoint = llm_server.resolve_endpoint(base_url=getattr(ep, "base_url", None), model=getattr(ep, "model", None),
                                           api_key=getattr(ep, "api_key", None), gguf=getattr(ep, "gguf", None))
    if endpoint.embedded and not endpoint.gguf:
        endpoint = llm_server.Endpoint(base_url=None, model=endpoint.model, api_key=endpoint.api_key,
                                       embedded=True, gguf=str(default_gguf(registry_root)))
    return endpoint


def with_endpoint(config: Any, endpoint: llm_server.Endpoint, gguf: str | None) -> Any:
    """A copy of the runtime config pointing at the live `endpoint` (and the served GGUF, whose
    tokenizer the runtime counts with)."""
    values = {"base_url": endpoint.base_url, "model": endpoint.model, "api_key": endpoint.api_key}
    if gguf:
        values["gguf"] = gguf
    ep = getattr(config, "endpoint", None)
    if ep is not None:
        known = type(ep).model_fields
        return config.model_copy(update={"endpoint": ep.model_copy(update={k: v for k, v in values.items() if k in known})})
    known = type(config).model_fields
    return config.model_copy(update={k: v for k, v in values.items() if k in known})


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
          registry_root: str | Path = DEFAULT_REGISTRY, log_level: str = "info") -> None:
    """Serve the chat API and page until interrupted; an embedded llama.cpp server lives exactly as long."""
    import uvicorn

    from truffle_assets.runtime.api import create_app
    from truffle_assets.runtime.service import ChatService

    check_bind(host, token)
    llama: llm_server.LlamaServer | None = None
    with _terminate_as_exit():
        try:
            endpoint = resolve(config, registry_root)
            gguf = endpoint.gguf
            if endpoint.embedded:
                llama = llm_server.LlamaServer(gguf, alias=endpoint.model)
                print(f"starting llama.cpp on {gguf} …", file=sys.stderr, flush=True)
                llama.start()
                endpoint = llama.endpoint()
            service = ChatService(with_endpoint(config, endpoint, gguf))
            app = create_app(service, token=token)
            print(f"truffle: http://{host}:{port}/  (model {endpoint.model} at {endpoint.base_url})",
                  file=sys.stderr, flush=True)
            uvicorn.run(app, host=host, port=port, log_level=log_level)
        finally:
            if llama is not None:
                llama.stop()


# ---- CLI ----------------------------------------------------------------------------------------------

def add_serve_command(subparsers: argparse._SubParsersAction) -> argparse.ArgumentParser:
    """`truffle serve [--host --port --token]`; the token may come from $TRUFFLE_API_TOKEN instead
    (a command-line token is visible to other local users in the process list)."""
    sp = subparsers.add_parser("serve", help="serve the chat API (OpenAI-compatible) and web page")
    sp.add_argument("--host", default="127.0.0.1", help="bind address (non-loopback needs a token)")
    sp.add_argument("--port", type=int, default=8800)
    sp.add_argument("--token", default=None, help=f"bearer token every API call must carry (default ${TOKEN_ENV})")
    sp.set_defaults(func=cmd_serve)
    return sp


def cmd_serve(args: argparse.Namespace) -> int:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    from truffle_assets.runtime.config import RuntimeConfig

    token = args.token or os.environ.get(TOKEN_ENV) or None
    try:
        check_bind(args.host, token)
        serve(RuntimeConfig(), host=args.host, port=args.port, token=token)
    except (ServeError, llm_server.LlamaServerError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:  # Ctrl-C: uvicorn and the llama server have already stopped
        return 0
    return 0
