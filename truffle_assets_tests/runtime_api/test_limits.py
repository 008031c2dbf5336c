"""The API's limits against real uvicorn servers: oversize bodies (declared and chunked) refused with
413 without being read or echoed, the bearer token checked before any of it, OpenAI-style errors for
every status (Starlette's own 404/405 too), NaN/Infinity rejected, long questions refused."""

from __future__ import annotations

import http.client
import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from truffle_assets.llm.server import free_port
from truffle_assets.runtime import RuntimeConfig
from truffle_assets.runtime.api import create_app
from truffle_assets.runtime.limits import MAX_BODY_BYTES, MAX_QUESTION_CHARS, ApiLimits
from truffle_assets_tests.runtime_api.conftest import QUESTION, TOKEN, live_server
from truffle_assets_tests.runtime_api.test_serve import ENV_ENDPOINT, RUN_SERVE

AUTH = {"Authorization": f"Bearer {TOKEN}"}
JSON_AUTH = {**AUTH, "Content-Type": "application/json"}
MARKER = b"PAYLOAD-7b1e-"  # must never come back in an error body


def assert_openai_error(r: httpx.Response, status: int, type_: str, code: str | None = None) -> dict:
    assert r.status_code == status, r.text[:500]
    assert r.headers["content-type"] == "application/json"
    body = r.json()
    assert set(body["error"]) == {"message", "type", "param", "code"} and body["error"]["message"], body
    assert body["error"]["type"] == type_ and (code is None or body["error"]["code"] == code), body
    assert MARKER not in r.content and b"Traceback" not in r.content
    return body["error"]


def big_body(size: int) -> bytes:
    head, tail = b'{"messages": [{"role": "user", "content": "', b'"}]}'
    return head + (MARKER * (size // len(MARKER) + 1))[:size] + tail


def chunks(body: bytes, size: int = 64 * 1024) -> Iterator[bytes]:
    """An iterator body: httpx sends it chunked, without a Content-Length."""
    for i in range(0, len(body), size):
        yield body[i:i + size]


def _kb(pid: int, field: str) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    raise KeyError(field)


@pytest.fixture
def served(memory, llm, tmp_path) -> Iterator[tuple[str, int]]:
    """`truffle serve` in its own process (so its RSS is its own) over the fake LLM; (url, pid)."""
    port = free_port()
    env = {k: v for k, v in os.environ.items() if k not in ENV_ENDPOINT} | {
        "HF_HUB_OFFLINE": "1", "TRUFFLE_API_TOKEN": TOKEN, "TRUFFLE_HOME": str(tmp_path / "home")}
    log = tmp_path / "serve.log"
    with open(log, "wb") as out:
        proc = subprocess.Popen([sys.executable, "-c", RUN_SERVE, "serve", "--port", str(port), "--published",
                                 str(memory), "--store", str(tmp_path / "runtime"), "--base-url", llm.base_url,
                                 "--model", "fake-model"], stdout=out, stderr=subprocess.STDOUT, env=env)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            assert proc.poll() is None, log.read_text()[-3000:]
            try:
                if httpx.get(url + "/", timeout=2).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            assert time.monotonic() < deadline, log.read_text()[-3000:]
            time.sleep(0.1)
        yield url, proc.pid
    finally:
        proc.terminate()
        proc.wait(20)
    assert MARKER.decode() not in log.read_text()  # nor in the server's log


def test_oversize_bodies_are_refused_unread_and_unechoed(served, llm):
    url, pid = served
    rss0, hwm0 = _kb(pid, "VmRSS"), _kb(pid, "VmHWM")
    body = big_body(20 * 1024 * 1024)
    with httpx.Client(base_url=url, timeout=60) as client:
        t = time.perf_counter()
        declared = client.post("/v1/chat/completions", content=body, headers=JSON_AUTH)
        declared_s = time.perf_counter() - t
        err = assert_openai_error(declared, 413, "invalid_request_error", "request_too_large")
        assert str(MAX_BODY_BYTES) in err["message"]
        chunked = client.post("/v1/chat/completions", content=chunks(body), headers=JSON_AUTH)
        assert "content-length" not in chunked.request.headers  # really sent chunked
        assert_openai_error(chunked, 413, "invalid_request_error", "request_too_large")
        # no token: 401 before the size or the JSON is looked at, declared or chunked
        for content in (body, chunks(body), b"{not json"):
            assert_openai_error(client.post("/v1/chat/completions", content=content), 401, "authentication_error")
        # just under the limit still reaches validation (and is not echoed there either)
        under = b'{"messages": "' + (MARKER * (MAX_BODY_BYTES // len(MARKER) - 2)) + b'"}'
        assert len(under) <= MAX_BODY_BYTES
        assert_openai_error(client.post("/v1/chat/completions", content=under, headers=AUTH), 422,
                            "invalid_request_error")
        grew_mb, peak_mb = (_kb(pid, "VmRSS") - rss0) / 1024, (_kb(pid, "VmHWM") - hwm0) / 1024
        print(f"413 for a declared 20 MB body in {declared_s:.2f}s; server RSS +{grew_mb:.0f} MB, "
              f"peak +{peak_mb:.0f} MB")
        # a 20 MB body read whole is 20 MB+ per copy (the probe saw +2.6 GB for one question)
        assert grew_mb < 100 and peak_mb < 100
        # and the server still answers (this loads the tokenizer and index: measured above, not here)
        ok = client.post("/v1/chat/completions", headers=AUTH,
                         json={"messages": [{"role": "user", "content": QUESTION}]})
        assert ok.status_code == 200 and ok.json()["choices"][0]["message"]["content"]


@pytest.fixture
def small(make_service, llm) -> Iterator[tuple[str, object]]:
    """A live server with a strong token and small limits (4 KiB bodies, 100-character messages)."""
    svc = make_service(llm.base_url, api={"max_body_bytes": 4096, "max_question_chars": 100})
    with live_server(create_app(svc, token=TOKEN)) as url:
        yield url, svc


def test_limits_come_from_the_config_and_errors_are_openai_style(small, llm):
    url, _ = small
    with httpx.Client(base_url=url, timeout=30) as c:
        post = lambda content: c.post("/v1/chat/completions", content=content, headers=JSON_AUTH)  # noqa: E731
        assert_openai_error(post(big_body(5000)), 413, "invalid_request_error", "request_too_large")
        assert_openai_error(post(chunks(big_body(5000), 512)), 413, "invalid_request_error", "request_too_large")
        # a message over max_question_chars never reaches the model
        before = llm.requests
        long_q = json.dumps({"messages": [{"role": "user", "content": (MARKER.decode() * 10)[:101]}]})
        err = assert_openai_error(post(long_q), 400, "invalid_request_error", "question_too_long")
        assert err["param"] == "messages.0.content" and "limit is 100" in err["message"]
        assert llm.requests == before
        ok = post(json.dumps({"messages": [{"role": "user", "content": "x" * 100}]}))
        assert ok.status_code == 200, ok.text
        # Starlette's own statuses, in the same shape
        assert_openai_error(c.get("/v2/nothing", headers=AUTH), 404, "not_found_error", "not_found")
        assert_openai_error(c.get("/static/nothing.js"), 404, "not_found_error", "not_found")  # public, no token
        wrong = c.get("/v1/chat/completions", headers=AUTH)
        assert_openai_error(wrong, 405, "invalid_request_error", "method_not_allowed")
        assert wrong.headers["allow"] == "POST"
        assert_openai_error(c.get("/v2/nothing"), 401, "authentication_error", "invalid_api_key")
        assert_openai_error(c.post("/", headers=AUTH), 405, "invalid_request_error")
        assert_openai_error(c.post("/"), 401, "authentication_error")  # only GET/HEAD of the page are public
    # the public /static/ prefix is no way around the token (http.client sends the path as written)
    host, port = url.removeprefix("http://").split(":")
    for path in ("/static/../v1/models", "/static/..%2fapi/evidence/x", "/static/%2e%2e/api/facts/x"):
        conn = http.client.HTTPConnection(host, int(port), timeout=10)
        conn.request("GET", path)
        r = conn.getresponse()
        assert r.status in (401, 404) and b'"error"' in r.read(), path
        conn.close()


@pytest.mark.parametrize("raw", [
    b'{"messages": [{"role": "user", "content": "hi"}], "temperature": NaN}',
    b'{"messages": [{"role": "user", "content": "hi"}], "temperature": Infinity}',
    b'{"messages": [{"role": "user", "content": "hi"}], "top_p": -Infinity}',
    b'{"messages": [{"role": "user", "content": "hi"}], "frequency_penalty": 1e999}',
    b'{"messages": [{"role": "user", "content": "hi", "weight": NaN}]}',
])
def test_non_finite_numbers_are_422_not_500(make_service, llm, raw):
    with live_server(create_app(make_service(llm.base_url))) as url:
        r = httpx.post(f"{url}/v1/chat/completions", content=raw, headers={"Content-Type": "application/json"})
    err = assert_openai_error(r, 422, "invalid_request_error", "invalid_request")
    assert "finite" in err["message"]


def test_validation_errors_do_not_echo_inputs(make_service, llm):
    secret = MARKER.decode() + "hunter2-correct-horse"
    bad = [("/v1/chat/completions", {"messages": [{"role": "wizard", "content": secret}]}),
           ("/v1/chat/completions", {"messages": [{"role": "user", "content": secret}], "temperature": secret}),
           ("/v1/chat/completions", {"messages": [{"role": "user", "content": secret}],
                                     "conversation_id": secret * 20}),
           ("/api/feedback", {"turn_id": "t", "rating": 1, "note": secret * 200}),
           ("/api/reroll", {"turn_id": [secret] * 50})]
    with live_server(create_app(make_service(llm.base_url))) as url:
        for path, body in bad:
            r = httpx.post(url + path, json=body)
            assert_openai_error(r, 422, "invalid_request_error", "invalid_request")
            assert "hunter2" not in r.text and len(r.content) < 5000, r.text
            assert all(set(d) == {"loc", "msg", "type"} for d in r.json()["detail"])


class _BrokenService:
    """A service whose turn is not a turn: the app itself fails after the service call."""

    def ask(self, messages, **_):
        return 42


def test_unexpected_errors_are_json_500():
    with live_server(create_app(_BrokenService())) as url:
        r = httpx.post(f"{url}/v1/chat/completions", json={"messages": [{"role": "user", "content": "hi"}]})
    err = assert_openai_error(r, 500, "server_error", "internal_error")
    assert err["message"] == "internal error: TypeError"


def test_env_sets_the_limits(monkeypatch):
    monkeypatch.setenv("TRUFFLE_API_MAX_BODY_BYTES", "65536")
    monkeypatch.setenv("TRUFFLE_API_MAX_QUESTION_CHARS", "500")
    assert RuntimeConfig.from_env().api == ApiLimits(max_body_bytes=65536, max_question_chars=500)
    monkeypatch.delenv("TRUFFLE_API_MAX_BODY_BYTES")
    monkeypatch.delenv("TRUFFLE_API_MAX_QUESTION_CHARS")
    assert RuntimeConfig.from_env().api == ApiLimits(max_body_bytes=MAX_BODY_BYTES,
                                                     max_question_chars=MAX_QUESTION_CHARS)
