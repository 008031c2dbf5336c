"""`truffle serve`: refuses a public bind without a token; with no endpoint configured it runs the
embedded llama.cpp server on a GGUF and stops it again on SIGTERM."""

from __future__ import annotations

import argparse
import json
import os
import re
import signal
import sys
import time
import urllib.error
import urllib.request

import pytest

from truffle_assets.llm.server import free_port
from truffle_assets.runtime import RuntimeConfig
from truffle_assets.net import is_loopback
from truffle_assets.runtime.serve import ServeError, add_serve_command, check_bind, serve
from truffle_assets.llm.gguf import qwen_gguf
from truffle_assets_tests.runtime_api.conftest import serve_process

ENV_ENDPOINT = ("TRUFFLE_LLM_BASE_URL", "TRUFFLE_LLM_MODEL", "TRUFFLE_LLM_API_KEY", "OPENROUTER_API_KEY",
                "TRUFFLE_API_TOKEN")
RUN_SERVE = ("import argparse, sys; from truffle_assets.runtime.serve import add_serve_command; "
             "p = argparse.ArgumentParser(prog='truffle'); add_serve_command(p.add_subparsers()); "
             "a = p.parse_args(sys.argv[1:]); sys.exit(a.func(a))")


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="truffle")
    add_serve_command(p.add_subparsers(dest="command", required=True))
    return p


def test_public_bind_needs_a_token(monkeypatch, capsys):
    monkeypatch.delenv("TRUFFLE_API_TOKEN", raising=False)
    assert is_loopback("127.0.0.1") and is_loopback("localhost") and is_loopback("::1") and is_loopback("127.0.0.5")
    assert not is_loopback("0.0.0.0") and not is_loopback("192.168.1.4") and not is_loopback("my-laptop.lan")
    with pytest.raises(ServeError, match="without a token"):
        serve(RuntimeConfig(), host="0.0.0.0", port=free_port())
    args = parser().parse_args(["serve", "--host", "0.0.0.0"])
    assert (args.host, args.port, args.token) == ("0.0.0.0", 8800, None)
    assert args.func(args) == 2
    assert "refusing to serve on '0.0.0.0' without a token" in capsys.readouterr().err


@pytest.mark.parametrize("weak", ["#", "short-Tk4xQ9", "a" * 40, "abab" * 10, "1234567" * 4])
def test_weak_tokens_are_refused_with_how_to_make_one(weak, monkeypatch, capsys):
    monkeypatch.setenv("TRUFFLE_API_TOKEN", weak)  # the env token is checked like --token
    args = parser().parse_args(["serve", "--port", str(free_port())])
    assert args.func(args) == 2
    err = capsys.readouterr().err
    assert "refusing to serve with a weak token" in err and "secrets.token_urlsafe(32)" in err
    assert weak not in err  # never repeated: it may be a real password
    with pytest.raises(ServeError, match="weak token"):
        serve(RuntimeConfig(), host="127.0.0.1", port=free_port(), token=weak)


def test_strong_token_passes_the_bind_check():
    import secrets

    check_bind("0.0.0.0", secrets.token_urlsafe(32))
    check_bind("127.0.0.1", None)  # loopback needs no token


def _get(url: str, token: str | None = None, timeout: float = 5) -> tuple[int, dict | str]:
    req = urllib.request.Request(url, headers={"Authorization": f"Bearer {token}"} if token else {})
    try:
        with urllib.request.urlopen(req, timeout=timeout) as r:
            body = r.read().decode()
            return r.status, json.loads(body) if "json" in r.headers.get("content-type", "") else body
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read().decode() or "{}")


@pytest.mark.llama
@pytest.mark.subprocess
def test_embedded_llama_lives_and_dies_with_the_server(tmp_path):
    gguf = qwen_gguf()
    port, token = free_port(), "serve-Tk4xQ9mZr2Lp7VwB"
    env = {k: v for k, v in os.environ.items() if k not in ENV_ENDPOINT} | {"HF_HUB_OFFLINE": "1",
                                                                            "TRUFFLE_API_TOKEN": token}
    log = tmp_path / "serve.log"
    argv = [sys.executable, "-c", RUN_SERVE, "serve", "--port", str(port), "--published", str(tmp_path / "published"),
            "--store", str(tmp_path / "runtime"), "--gguf", str(gguf), "--n-ctx", "1024"]
    with serve_process(argv, env, log) as proc:
        base = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 120
        while True:
            assert proc.poll() is None, log.read_text()[-3000:]
            try:
                if _get(base + "/", timeout=2)[0] == 200:
                    break
            except (urllib.error.URLError, OSError):
                pass
            assert time.monotonic() < deadline, log.read_text()[-3000:]
            time.sleep(0.25)
        llama_url = re.search(r"model (\S+) at (http://127\.0\.0\.1:\d+/v1)", log.read_text()).group(2)
        assert _get(f"{llama_url}/models")[0] == 200  # the embedded llama.cpp server is up
        assert _get(f"{base}/v1/models")[0] == 401  # the token came from $TRUFFLE_API_TOKEN
        status, models = _get(f"{base}/v1/models", token)
        assert status == 200 and models["data"][0]["id"] == gguf.stem  # --gguf: served under the file's name
        assert models["data"][0]["description"] == f"{gguf.stem} (GGUF given with --gguf)"

        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=30) in (0, 128 + signal.SIGTERM), log.read_text()[-3000:]
        with pytest.raises((urllib.error.URLError, OSError)):
            urllib.request.urlopen(f"{llama_url}/models", timeout=2)  # stopped with it
