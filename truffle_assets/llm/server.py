"""A local llama.cpp OpenAI-compatible server for one GGUF, and where the chat model is reached.

`LlamaServer(gguf)` runs `python -m llama_cpp.server` as a child process in its own process
group (so stopping it never signals the caller) that exits if the caller dies; it logs to a file
and is ready once `GET /v1/models` answers. No `--chat_format` is passed: llama-cpp-python then formats chats with
the GGUF's own `tokenizer.chat_template` (the serving template `gguf_export` wrote; a template
identical to a built-in one such as ChatML maps to that built-in, which renders the same). The
evaluation runner and the chat runtime both talk to it through the `openai` client, so a model is
scored on exactly the path it is served on.

`resolve_endpoint()` decides where the model lives: explicit arguments, then the environment
(`TRUFFLE_LLM_BASE_URL` / `TRUFFLE_LLM_MODEL` / `TRUFFLE_LLM_API_KEY`, or `OPENROUTER_API_KEY` for
OpenRouter), else `embedded=True`: the caller starts a `LlamaServer` on the GGUF (`open_endpoint()`
does both). No dagster import: the runtime reuses this module.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
import weakref
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from truffle_assets.llm.client import DEFAULT_MODEL, OPENROUTER_BASE_URL

DEFAULT_ALIAS = "local"
DUMMY_API_KEY = "none"  # the local server checks no key, the openai client insists on one
LOG_TAIL_CHARS = 3000

# llama_cpp.server's settings are pydantic BaseSettings: any of these names in the environment
# (case-insensitive) would silently configure the child (API_KEY would lock us out, PORT/HOST are
# read by its __main__ over the CLI). The child gets an environment without them.
_SERVER_SETTING_NAMES = frozenset("""
api_key cache cache_size cache_type chat_format chat_template_kwargs clip_model_path config_file
disable_ping_events draft_model draft_model_num_pred_tokens embedding flash_attn hf_model_repo_id
hf_pretrained_model_name_or_path hf_tokenizer_config_path host interrupt_requests kv_overrides
last_n_tokens_size logits_all lora_base lora_path main_gpu model model_alias models mul_mat_q n_batch
n_ctx n_gpu_layers n_threads n_threads_batch n_ubatch numa offload_kqv port root_path rope_freq_base
rope_freq_scale rope_scaling_type rpc_servers seed split_mode ssl_certfile ssl_keyfile tensor_split
type_k type_v use_mlock use_mmap verbose vocab_only yarn_attn_factor yarn_beta_fast yarn_beta_slow
yarn_ext_factor yarn_orig_ctx""".split())


class LlamaServerError(RuntimeError):
    """The server could not start (bad GGUF, port clash, timeout); the message holds its log tail."""


# ---- endpoint resolution ---------------------------------------------------------------------------

@dataclass(frozen=True)
class Endpoint:
    """An OpenAI-compatible endpoint. `embedded=True` means none is configured: start a
    `LlamaServer` on `gguf` and use its `endpoint()` (base_url is None until then)."""

    base_url: str | None
    model: str
    api_key: str = DUMMY_API_KEY
    embedded: bool = False
    gguf: str | None = None

    def client(self, **kwargs):
        """An `openai.OpenAI` client for this endpoint (kwargs: timeout, max_retries, ...)."""
        import openai

        if self.base_url is None:
            raise ValueError("embedded endpoint: start a LlamaServer on the GGUF first (see open_endpoint)")
        return openai.OpenAI(base_url=self.base_url, api_key=self.api_key or DUMMY_API_KEY, **kwargs)


def resolve_endpoint(base_url: str | None = None, model: str | None = None, api_key: str | None = None,
                     gguf: str | os.PathLike | None = None) -> Endpoint:
    """Explicit `base_url` > `TRUFFLE_LLM_BASE_URL` > `OPENROUTER_API_KEY` (OpenRouter, Qwen3-30B-A3B)
    > embedded llama.cpp on `gguf`. A remote endpoint without a key gets the dummy key."""
    env = os.environ
    url = base_url or env.get("TRUFFLE_LLM_BASE_URL") or None
    key = api_key or env.get("TRUFFLE_LLM_API_KEY") or None
    if url is None and env.get("OPENROUTER_API_KEY"):
        url = OPENROUTER_BASE_URL
    if url is not None:
        if key is None and "openrouter.ai" in url:
            key = env.get("OPENROUTER_API_KEY") or None
        return Endpoint(base_url=url.rstrip("/"), model=model or env.get("TRUFFLE_LLM_MODEL") or DEFAULT_MODEL,
                        api_key=key or DUMMY_API_KEY)
    return Endpoint(base_url=None, model=model or DEFAULT_ALIAS, api_key=DUMMY_API_KEY, embedded=True,
                    gguf=str(gguf) if gguf is not None else None)


@contextlib.contextmanager
def open_endpoint(endpoint: Endpoint, **server_kwargs) -> Iterator[Endpoint]:
    """Yield a live endpoint: the configured one as is, or a `LlamaServer` started on
    `endpoint.gguf` for an embedded one (stopped on exit)."""
    if not endpoint.embedded:
        yield endpoint
        return
    if not endpoint.gguf:
        raise LlamaServerError("no LLM endpoint configured (TRUFFLE_LLM_BASE_URL / OPENROUTER_API_KEY) "
                               "and no GGUF to serve locally")
    server_kwargs.setdefault("alias", endpoint.model)
    with LlamaServer(endpoint.gguf, **server_kwargs) as server:
        yield server.endpoint()


# ---- the server process ----------------------------------------------------------------------------

_LIVE: weakref.WeakSet[LlamaServer] = weakref.WeakSet()


@atexit.register
def _stop_all() -> None:
    for server in list(_LIVE):
        with contextlib.suppress(Exception):
            server.stop(grace=2.0)


def free_port(host: str = "127.0.0.1") -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((host, 0))
        return s.getsockname()[1]


def _child_env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if k.lower() not in _SERVER_SETTING_NAMES}


class LlamaServer:
    """`python -m llama_cpp.server` on one GGUF, bound to 127.0.0.1 on a free port.

    with LlamaServer("model.gguf") as srv:
        srv.client().chat.completions.create(model=srv.alias, messages=[...])

    `start()` blocks until `/v1/models` answers (a few seconds) or raises `LlamaServerError` with
    the log tail; `stop()` sends SIGTERM to the process group, then SIGKILL after `grace` seconds.
    Servers still running at interpreter exit (or garbage-collected) are stopped too.
    """

    def __init__(self, gguf: str | os.PathLike, *, alias: str = DEFAULT_ALIAS, n_ctx: int = 4096,
                 port: int | None = None, host: str = "127.0.0.1", n_threads: int = 1, n_threads_batch: int = 2,
                 log_path: str | os.PathLike | None = None, startup_timeout: float = 120.0,
                 extra_args: Sequence[str] = ()):
        self.gguf = Path(gguf)
        self.alias = alias
        self.n_ctx = n_ctx
        self.host = host
        self.n_threads, self.n_threads_batch = n_threads, n_threads_batch
        self.startup_timeout = startup_timeout
        self.extra_args = list(extra_args)
        self._fixed_port = port
        self.port: int | None = port
        self._own_log = log_path is None
        self.log_path: Path | None = Path(log_path) if log_path is not None else None
        self._proc: subprocess.Popen | None = None
        self._lock = threading.Lock()

    # -- properties ----------------------------------------------------------------------------------
    @property
    def base_url(self) -> str:
        if self.port is None:
            raise LlamaServerError("server not started")
        return f"http://{self.host}:{self.port}/v1"

    @property
    def pid(self) -> int | None:
        return self._proc.pid if self._proc else None

    @property
    def running(self) -> bool:
        return self._proc is not None and self._proc.poll() is None

    def endpoint(self) -> Endpoint:
        return Endpoint(base_url=self.base_url, model=self.alias, api_key=DUMMY_API_KEY)

    def client(self, **kwargs):
        """`openai.OpenAI` on this server (kwargs: timeout, max_retries, ...)."""
        return self.endpoint().client(**kwargs)

    def command(self) -> list[str]:
        # no --chat_format: llama-cpp-python then uses the GGUF's tokenizer.chat_template
        # parent_watch ends the server if this process dies without stopping it (SIGKILL, timeout)
        return [sys.executable, "-m", "truffle_assets.llm.parent_watch", str(os.getpid()), "llama_cpp.server",
                "--model", str(self.gguf), "--host", self.host, "--port", str(self.port),
                "--model_alias", self.alias, "--n_ctx", str(self.n_ctx),
                "--n_threads", str(self.n_threads), "--n_threads_batch", str(self.n_threads_batch),
                *self.extra_args]

    def log_tail(self, chars: int = LOG_TAIL_CHARS) -> str:
        try:
            return self.log_path.read_text(encoding="utf-8", errors="replace")[-chars:] if self.log_path else ""
        except OSError:
            return ""

    # -- lifecycle -----------------------------------------------------------------------------------
    def start(self) -> LlamaServer:
        with self._lock:
            if self.running:
                return self
            if not self.gguf.is_file():
                raise LlamaServerError(f"GGUF not found: {self.gguf}")
            for attempt in range(3):  # a free port can be taken between probe and bind: retry
                self._spawn()
                try:
                    self._wait_ready()
                    return self
                except LlamaServerError as e:
                    clash = self._fixed_port is None and "address already in use" in self.log_tail().lower()
                    self._terminate(grace=3.0)
                    if not clash or attempt == 2:
                        self._drop_own_log()  # the error carries its tail
                        raise e from None
        return self

    def _spawn(self) -> None:
        self.port = self._fixed_port or free_port(self.host)
        if self.log_path is None:
            fd, name = tempfile.mkstemp(prefix="llama-server-", suffix=".log")
            os.close(fd)
            self.log_path = Path(name)
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        with open(self.log_path, "ab") as log:
            log.write(f"$ {' '.join(self.command())}\n".encode())
            log.flush()
            self._proc = subprocess.Popen(self.command(), stdin=subprocess.DEVNULL, stdout=log,
                                          stderr=subprocess.STDOUT, start_new_session=True, env=_child_env())
        _LIVE.add(self)

    def _where(self) -> str:
        return "" if self._own_log else f" (log {self.log_path})"

    def _wait_ready(self) -> None:
        deadline = time.monotonic() + self.startup_timeout
        url = f"{self.base_url}/models"
        while True:
            code = self._proc.poll()
            if code is not None:
                raise LlamaServerError(f"llama.cpp server for {self.gguf} exited with code {code} before it was "
                                       f"ready{self._where()}:\n{self.log_tail()}")
            try:
                with urllib.request.urlopen(url, timeout=2) as resp:
                    if resp.status == 200:
                        return
            except (urllib.error.URLError, OSError):
                pass
            if time.monotonic() > deadline:
                raise LlamaServerError(f"llama.cpp server for {self.gguf} not ready on {url} after "
                                       f"{self.startup_timeout:.0f} s{self._where()}:\n{self.log_tail()}")
            time.sleep(0.2)

    def _terminate(self, grace: float) -> None:
        proc, self._proc = self._proc, None
        _LIVE.discard(self)
        if proc is None:
            return
        if proc.poll() is None:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(proc.pid, signal.SIGTERM)
            try:
                proc.wait(timeout=grace)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.killpg(proc.pid, signal.SIGKILL)
                proc.wait(timeout=10)

    def stop(self, grace: float = 10.0) -> None:
        """SIGTERM the server's process group, SIGKILL after `grace` s; idempotent. A log file this
        object created itself is removed (one given as `log_path` is kept)."""
        with self._lock:
            self._terminate(grace)
            self._drop_own_log()

    def _drop_own_log(self) -> None:
        if self._own_log and self.log_path is not None:
            with contextlib.suppress(OSError):
                self.log_path.unlink()
            self.log_path = None

    def __enter__(self) -> LlamaServer:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

    def __del__(self) -> None:
        with contextlib.suppress(Exception):
            if self._proc is not None:
                self._terminate(grace=2.0)

    def __repr__(self) -> str:
        state = f"running on {self.base_url}" if self.running else "stopped"
        return f"LlamaServer({str(self.gguf)!r}, alias={self.alias!r}, {state})"
