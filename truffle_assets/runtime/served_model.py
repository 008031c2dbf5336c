"""The model an embedded llama.cpp server runs for the chat runtime, and following the registry.

    with ServedModel(registry_dir, n_ctx=4096) as served:   # llama.cpp on the registry's active model
        service = ChatService(cfg, endpoint=served.server.endpoint())
        served.follow(service)  # a promotion or rollback made by another process is served from then on

What is served is `llm.gguf.served`: an explicit GGUF (never switched), else the registry's
active model once the registry verifies (one that does not is refused at start), else the shipped
fine-tune installed in the shared models folder, else the Qwen base GGUF. Each llama.cpp server
serves its model under the model's id (a run id, or the GGUF's name) unless an alias is given, so
every answer names the model that wrote it. While following, a change to the registry's files is verified, a new `LlamaServer` is
started on the model it names and waited for, the service switches to it in one step
(`ChatService.switch_model`: endpoint, config and tokenizer together), and the old server is
stopped once the turns still running on it have ended (`ChatService.drain`). A registry that
fails to verify, or a model llama.cpp cannot load, leaves the current model serving and the error
in `status()` (`GET /api/health`) and the log. At most two llama.cpp servers run: the next change
is looked at once the old server is gone.
"""

from __future__ import annotations

import logging
import threading
import time
from datetime import datetime, UTC
from pathlib import Path
from typing import Any

from truffle_assets.llm.gguf import served
from truffle_assets.llm.server import LlamaServer, LlamaServerError
from truffle_assets.registry import RegistryError

log = logging.getLogger(__name__)

# A background look every 2 s rather than one at the start of a turn: a promotion takes effect
# without anyone asking first, no turn waits while llama.cpp loads the new model (seconds on two
# cores), and /api/health shows the switch as it happens. A look is five stat calls; the registry
# is verified (the GGUF hashed) only when one of its files changed.
POLL_S = 2.0
WATCHED = ("active.json", "audit.head", "audit.log", "model_history.jsonl", "audit.key")
DRAIN_MARGIN_S = 60.0


def fingerprint(root: Path) -> tuple:
    """What changes when anything in the registry does: each file's inode, size and mtime (ns)."""
    out = []
    for name in WATCHED:
        try:
            st = (root / name).stat()
        except OSError:
            out.append(None)
            continue
        out.append((st.st_ino, st.st_size, st.st_mtime_ns))
    return tuple(out)


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


class ServedModel:
    """The llama.cpp server the chat runs on (`server`), the model it serves and, once `follow`ed,
    a thread moving it to the registry's active model. `LlamaServer` kwargs (n_ctx, alias, ...) apply
    to every server it starts."""

    def __init__(self, registry_dir: str | Path, explicit: str | Path | None = None, *, interval: float = POLL_S,
                 **server_kwargs: Any) -> None:
        self.registry_dir = Path(registry_dir)
        self.explicit = explicit
        self.interval = interval
        self.server_kwargs = server_kwargs
        self.server: LlamaServer | None = None
        self._model: dict[str, Any] = {}
        self._error: str | None = None
        self._checked_at: str | None = None
        self._seen: tuple | None = None
        self._service: Any = None
        self._drain_s = 0.0
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    # ---- lifecycle -----------------------------------------------------------------------------------
    def start(self) -> ServedModel:
        # the files are looked at before they are read: a change made in between is seen on the first poll
        self._seen = fingerprint(self.registry_dir)
        gguf, model = served(self.explicit, self.registry_dir)
        self.server = LlamaServer(gguf, **self._server_kwargs(model)).start()
        self._model = model | {"since": _now()}
        return self

    def follow(self, service: Any) -> None:
        """Move `service` to the registry's active model whenever it changes (an explicit GGUF stays)."""
        if self.explicit or self._thread is not None:
            return
        self._service = service
        ep = service.config.endpoint
        # the longest a turn can wait on the model; a turn still running after that is not waited for
        self._drain_s = ep.timeout_s * (ep.max_retries + 1) * (service.config.max_recalls + 1) + DRAIN_MARGIN_S
        self._thread = threading.Thread(target=self._loop, name="truffle-served-model", daemon=True)
        self._thread.start()

    def close(self) -> None:
        self._stop.set()
        if self._thread is not None:  # a server being started is waited for, then stopped by the thread
            self._thread.join(timeout=float(self.server_kwargs.get("startup_timeout", 120.0)) + 15)
        with self._lock:
            server, self.server = self.server, None
        if server is not None:
            server.stop()

    def __enter__(self) -> ServedModel:
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def _server_kwargs(self, model: dict[str, Any]) -> dict[str, Any]:
        return {**self.server_kwargs, "alias": self.server_kwargs.get("alias") or model["id"]}

    # ---- status --------------------------------------------------------------------------------------
    def status(self) -> dict[str, Any]:
        """The model served now (id, description, source, file, run_id, base_model, sha256, since), whether
        the registry is followed,
        and the error that kept the last change from being served (None once a look succeeds)."""
        with self._lock:
            return {**self._model, "follows_registry": self._thread is not None, "error": self._error,
                    "checked_at": self._checked_at}

    # ---- following -----------------------------------------------------------------------------------
    def _loop(self) -> None:
        while not self._stop.wait(self.interval):
            try:
                self.check()
            except Exception:  # noqa: BLE001 - the chat keeps its model; the next look tries again
                log.exception("looking at the model registry failed")

    def check(self) -> bool:
        """One look at the registry: True when the service was switched to another model."""
        seen = fingerprint(self.registry_dir)
        if seen == self._seen:
            return False
        self._seen = seen
        try:
            gguf, model = served(None, self.registry_dir)
        except (RegistryError, OSError, ValueError, TypeError) as exc:  # AuditFailed, unreadable active.json
            return self._failed(f"{exc}; still serving {self._model.get('file')}")
        current = self._model
        if (Path(gguf), model["sha256"]) == (self.server.gguf, current.get("sha256")):
            self._failed(None)
            return False
        try:
            new = LlamaServer(gguf, **self._server_kwargs(model)).start()
        except LlamaServerError as exc:
            return self._failed(f"llama.cpp could not start on {model['file']} ({model['run_id']}); still serving "
                                f"{current.get('file')}: {exc}")
        if self._stop.is_set():  # serve is exiting
            new.stop()
            return False
        try:
            old_endpoint = self._service.switch_model(new.endpoint(), gguf)
        except Exception as exc:  # noqa: BLE001 - e.g. its tokenizer does not load: nothing was switched
            new.stop()
            return self._failed(f"could not switch to {model['file']}: {exc}; still serving {current.get('file')}")
        with self._lock:
            old, self.server = self.server, new
            self._model, self._error, self._checked_at = model | {"since": _now()}, None, _now()
        log.warning("now serving %s (%s, %s); was %s", model["file"], model["source"], model["run_id"] or "-",
                    current.get("file"))
        self._retire(old, old_endpoint)
        return True

    def _failed(self, error: str | None) -> bool:
        with self._lock:
            self._error, self._checked_at = error, _now()
        if error:
            log.error("model registry: %s", error)
        return False

    def _retire(self, server: LlamaServer, endpoint: Any) -> None:
        """Stop `server` once no turn runs on it (or the longest turn's time has passed, or serve exits)."""
        deadline = time.monotonic() + self._drain_s
        while not self._service.drain(endpoint, timeout=0.5):
            if self._stop.is_set():
                break
            if time.monotonic() > deadline:
                log.warning("stopping the old llama.cpp server on %s with a turn still running on it", server.gguf.name)
                break
        server.stop()
