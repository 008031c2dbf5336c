"""The model a turn runs on: the served endpoint, its tokenizer and the config that goes with them.

A model switch (`switch_model`: a promotion or rollback the embedded server follows,
`served_model.ServedModel`) replaces the three at once, and each turn holds what it started on
(`lease`) until it ends, so the old server stops only once `drain` says no turn is left on it.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any, NamedTuple
from urllib.parse import urlsplit

from truffle_assets.llm.gguf import describe
from truffle_assets.llm.server import Endpoint, resolve_endpoint
from truffle_assets.net import url_is_loopback
from truffle_assets.runtime.config import RuntimeConfig
from truffle_assets.runtime.tokens import TokenCounter


class Serving(NamedTuple):
    """What a turn runs on, read in one step (`ModelLease.serving`): a model switch replaces all
    three at once, so no turn pairs one model's endpoint with another's tokenizer."""

    config: RuntimeConfig
    endpoint: Endpoint
    counter: TokenCounter


class ModelLease:
    """The served model and the config it is served with (`config` is replaced, never edited)."""

    def __init__(self, config: RuntimeConfig, *, counter: TokenCounter | None = None,
                 endpoint: Endpoint | None = None) -> None:
        self.config = config
        ep = config.endpoint
        # `open_service` passes the endpoint it already resolved (and started): resolved once per serve
        self.endpoint = endpoint or resolve_endpoint(ep.base_url, ep.model, ep.api_key, ep.gguf)
        self._counter = counter
        # config, endpoint and counter change together (`switch_model`); turns count per endpoint
        self._lock = threading.RLock()
        self._idle = threading.Condition(self._lock)
        self._running: dict[Endpoint, int] = {}
        self.served = None  # `served_model.ServedModel` when open_service started llama.cpp

    @property
    def model(self) -> str:
        return self.endpoint.model

    def tokenizer_source(self) -> tuple[str, str | None]:
        """(GGUF or tokenizer folder, proxy_for): the served model's own tokenizer when known; for a
        remote endpoint (OpenRouter) the local Qwen2.5 GGUF, labelled as a proxy for the remote model."""
        cfg = self.config
        if cfg.tokenizer:
            return cfg.tokenizer, None
        if cfg.endpoint.gguf or self.endpoint.gguf:
            return str(cfg.endpoint.gguf or self.endpoint.gguf), None
        from truffle_assets.llm.gguf import active_gguf, qwen_gguf

        local = self.endpoint.base_url is None or url_is_loopback(self.endpoint.base_url)
        if local:
            active = None
            with contextlib.suppress(Exception):  # an unreadable registry falls back to the base tokenizer
                active = active_gguf(cfg.registry_dir)
            if active and Path(active).is_file():
                return active, None
        return str(qwen_gguf()), (None if local and self.endpoint.embedded else self.endpoint.model)

    @property
    def counter(self) -> TokenCounter:
        with self._lock:
            if self._counter is None:
                src, proxy = self.tokenizer_source()
                self._counter = TokenCounter.load(src, proxy_for=proxy)
            return self._counter

    def serving(self) -> Serving:
        with self._lock:
            return Serving(self.config, self.endpoint, self.counter)

    def switch_model(self, endpoint: Endpoint, gguf: str) -> Endpoint:
        """From the next turn on, ask `endpoint` (llama.cpp on `gguf`) and count with that GGUF's
        tokenizer (unless one is configured); returns the endpoint it replaced. Turns already running
        finish on theirs: `drain` says when none is left."""
        counter = TokenCounter.load(self.config.tokenizer or gguf)  # loaded first: no turn waits for it
        with self._lock:
            old = self.endpoint
            ep = self.config.endpoint.model_copy(update={"base_url": endpoint.base_url, "model": endpoint.model,
                                                         "gguf": str(gguf)})
            self.config = self.config.model_copy(update={"endpoint": ep})
            self.endpoint, self._counter = endpoint, counter
        return old

    @contextlib.contextmanager
    def lease(self, serving: Serving | None = None) -> Iterator[Serving]:
        """The model a turn runs on, held until the turn ends: `serving` while it is still the current
        endpoint, else what is served now. A switch stops the old server once `drain` says it is free."""
        with self._lock:
            current = self.serving()
            if serving is None or serving.endpoint != current.endpoint:
                serving = current
            self._running[serving.endpoint] = self._running.get(serving.endpoint, 0) + 1
        try:
            yield serving
        finally:
            with self._lock:
                left = self._running.pop(serving.endpoint) - 1
                if left:
                    self._running[serving.endpoint] = left
                self._idle.notify_all()

    def drain(self, endpoint: Endpoint, timeout: float) -> bool:
        """Wait up to `timeout` s for the turns running on `endpoint` to end; True when none is left."""
        with self._idle:
            return self._idle.wait_for(lambda: not self._running.get(endpoint), timeout)

    def model_status(self) -> dict[str, Any]:
        """The model served now, as `GET /api/health` reports it (`ServedModel.status` when embedded):
        `id` is the name it answers under, `description` says what it is (`llm.gguf.describe`)."""
        if self.served is not None:
            return {"name": self.model, **self.served.status()}
        gguf = self.config.endpoint.gguf
        status = {"name": self.model, "id": self.model, "source": "endpoint", "file": Path(gguf).name if gguf else None,
                  "base_url": _shown_url(self.endpoint.base_url), "follows_registry": False, "error": None}
        return status | {"description": describe(status)}

    def update(self, **fields: Any) -> None:
        """Replace config fields (the store settings' overrides) without touching the model."""
        with self._lock:
            self.config = self.config.model_copy(update=fields)


def _shown_url(url: str | None) -> str | None:
    """The endpoint's host and path, without credentials or query: what a person needs to know it."""
    if not url:
        return None
    parts = urlsplit(url)
    return f"{parts.hostname or ''}{f':{parts.port}' if parts.port else ''}{parts.path}".rstrip("/") or url
