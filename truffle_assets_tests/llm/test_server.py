"""The llama.cpp server wrapper against a real server on a tiny GGUF (no mocks)."""

import gc
import os
import socket
import subprocess
import sys
import time

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")

pytest.importorskip("llama_cpp.server", reason="llama-cpp-python[server] is not installed")

from truffle_assets.llm.client import DEFAULT_MODEL, OPENROUTER_BASE_URL  # noqa: E402
from truffle_assets.llm.server import (  # noqa: E402
    DUMMY_API_KEY,
    Endpoint,
    LlamaServer,
    LlamaServerError,
    open_endpoint,
    resolve_endpoint,
)
from truffle_assets_tests.model_fixtures import shared_tiny_gguf  # noqa: E402

MESSAGES = [{"role": "system", "content": "You are terse."}, {"role": "user", "content": "What did Alice say?"}]


@pytest.fixture(scope="module")
def gguf(tmp_path_factory):
    return shared_tiny_gguf(tmp_path_factory)


def _gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    return False


def _exited(pid: int) -> bool:
    """Gone, or a zombie its new parent (whatever adopted the orphan) has not reaped yet."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] == "Z"
    except FileNotFoundError:
        return True


def _port_free(port: int) -> bool:
    """Nothing listens there and a new server could bind it (TIME_WAIT leftovers allowed, as uvicorn does)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        if s.connect_ex(("127.0.0.1", port)) == 0:
            return False
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def test_serves_chat_and_stream_then_stops(gguf, tmp_path):
    log = tmp_path / "server.log"
    with LlamaServer(gguf, alias="tiny", n_ctx=1024, log_path=log) as srv:
        pid, port = srv.pid, srv.port
        assert srv.running and srv.base_url == f"http://127.0.0.1:{port}/v1"
        client = srv.client(timeout=60, max_retries=0)
        assert [m.id for m in client.models.list().data] == ["tiny"]

        resp = client.chat.completions.create(model=srv.alias, messages=MESSAGES, max_tokens=8, temperature=0,
                                              seed=0)
        assert isinstance(resp.choices[0].message.content, str)
        assert resp.usage.prompt_tokens > 10 and resp.usage.completion_tokens <= 8

        chunks = list(client.chat.completions.create(model=srv.alias, messages=MESSAGES, max_tokens=8,
                                                     temperature=0, seed=0, stream=True))
        streamed = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
        assert len(chunks) >= 2 and isinstance(streamed, str)
        assert chunks[-1].choices[0].finish_reason in ("stop", "length")

        # no --chat_format: llama-cpp-python formats with the GGUF's own tokenizer.chat_template
        text = log.read_text()
        assert "--chat_format" not in text and "Using gguf chat template" in text
        assert "--n_threads 1 --n_threads_batch 2" in text
        client.close()
    assert not srv.running and _gone(pid) and _port_free(port)
    assert log.exists()  # a log the caller named is kept
    srv.stop()  # idempotent


def test_garbage_collected_server_is_stopped(gguf):
    srv = LlamaServer(gguf, n_ctx=256).start()
    pid, log = srv.pid, srv.log_path
    del srv
    gc.collect()
    assert _gone(pid)
    assert log.exists()  # __del__ only kills; stop() removes its own temp log
    log.unlink()


def test_server_exits_when_its_parent_is_killed(gguf):
    # SIGKILL runs no atexit or __del__: the server must notice on its own that its parent is gone
    code = ("import sys, time\nfrom truffle_assets.llm.server import LlamaServer\n"
            f"srv = LlamaServer({str(gguf)!r}, n_ctx=256).start()\n"
            "print(srv.pid, srv.port, flush=True)\ntime.sleep(600)\n")
    parent = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    try:
        pid, port = map(int, parent.stdout.readline().split())
        assert not _gone(pid) and not _port_free(port)
    finally:
        parent.kill()
        parent.wait()
    deadline = time.monotonic() + 30  # the poll is 1 s; the port closes as the process is torn down
    while not (_exited(pid) and _port_free(port)) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert _exited(pid), f"llama.cpp server {pid} outlived its killed parent"
    assert _port_free(port), subprocess.run(["ss", "-tanp"], capture_output=True, text=True).stdout


def test_missing_gguf_names_the_file(tmp_path):
    missing = tmp_path / "nope.gguf"
    with pytest.raises(LlamaServerError, match="nope.gguf"):
        LlamaServer(missing).start()


def test_corrupt_gguf_fails_fast_with_log_tail(tmp_path):
    bad = tmp_path / "corrupt.gguf"
    bad.write_bytes(b"GGUF" + os.urandom(4096))
    srv = LlamaServer(bad, startup_timeout=60)
    with pytest.raises(LlamaServerError, match="corrupt.gguf") as err:
        srv.start()
    assert "exited with code" in str(err.value) and "Failed to load model" in str(err.value)  # log tail
    assert not srv.running and srv.log_path is None  # its temp log is gone with it


@pytest.fixture
def clean_env(monkeypatch):
    for k in ("TRUFFLE_LLM_BASE_URL", "TRUFFLE_LLM_MODEL", "TRUFFLE_LLM_API_KEY", "OPENROUTER_API_KEY"):
        monkeypatch.delenv(k, raising=False)
    return monkeypatch


def test_resolve_endpoint_explicit_env_openrouter_embedded(clean_env, tmp_path):
    ep = resolve_endpoint(gguf=tmp_path / "m.gguf")
    assert ep.embedded and ep.base_url is None and ep.gguf == str(tmp_path / "m.gguf") and ep.model == "local"

    clean_env.setenv("OPENROUTER_API_KEY", "sk-or-test")
    ep = resolve_endpoint(gguf=tmp_path / "m.gguf")
    assert ep == Endpoint(OPENROUTER_BASE_URL, DEFAULT_MODEL, "sk-or-test")
    assert ep.model == "qwen/qwen3-30b-a3b-instruct-2507"

    clean_env.setenv("TRUFFLE_LLM_BASE_URL", "http://127.0.0.1:9999/v1/")
    clean_env.setenv("TRUFFLE_LLM_MODEL", "local")
    ep = resolve_endpoint(gguf=tmp_path / "m.gguf")
    assert (ep.base_url, ep.model, ep.api_key, ep.embedded) == ("http://127.0.0.1:9999/v1", "local", DUMMY_API_KEY,
                                                                 False)

    ep = resolve_endpoint(base_url="http://h:1/v1", model="m", api_key="k")
    assert ep == Endpoint("http://h:1/v1", "m", "k")
    with open_endpoint(ep) as live:  # a configured endpoint is used as is
        assert live is ep


def test_open_endpoint_without_gguf_or_config_is_clear(clean_env):
    with pytest.raises(LlamaServerError, match="no LLM endpoint configured"):
        with open_endpoint(resolve_endpoint()):
            pass
