"""MCP over streamable HTTP at `/mcp`, through the official client against a real uvicorn: the API's
token rule and body limit hold for it, and on loopback without a token a rebound Host or a foreign
Origin is refused."""

from __future__ import annotations

import os
import sys
import time
import urllib.error
import urllib.request
from typing import Any

import anyio
import httpx
import pytest
from fastapi.testclient import TestClient
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client

from truffle_assets.llm.server import free_port
from truffle_assets.runtime.api import create_app
from truffle_assets.tools import mcp_tools
from truffle_assets_tests.conftest import newcomer_env, run_truffle
from truffle_assets_tests.fake_llm import closed_port_url
from truffle_assets_tests.runtime_api.conftest import TOKEN, live_server, serve_process

INIT = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "raw", "version": "0"}}}
MCP_HEADERS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}


async def _search(url: str, headers: dict[str, str] | None = None) -> tuple[list[str], Any]:
    async with (httpx.AsyncClient(headers=headers or {}, timeout=60) as http,
                streamable_http_client(f"{url}/mcp", http_client=http) as (read, write, _),
                ClientSession(read, write) as client):
        await client.initialize()
        tools = [t.name for t in (await client.list_tools()).tools]
        return tools, await client.call_tool("search_memory", {"query": "plans with Priya", "k": 3})


def search(url: str, headers: dict[str, str] | None = None) -> tuple[list[str], Any]:
    return anyio.run(_search, url, headers)


def status_errors(exc: BaseException) -> list[int]:
    """The HTTP statuses of the httpx.HTTPStatusErrors inside `exc` (the client raises them in a task group)."""
    if isinstance(exc, httpx.HTTPStatusError):
        return [exc.response.status_code]
    inner = [*getattr(exc, "exceptions", ()), exc.__cause__, exc.__context__]
    return [s for e in inner if e is not None and e is not exc for s in status_errors(e)]


def test_loopback_without_a_token_and_its_rebinding_guard(make_service):
    with live_server(create_app(make_service(closed_port_url())), lifespan="on") as url:
        tools, found = search(url)
        assert tools == list(mcp_tools()) and not found.isError and found.structuredContent["messages"]
        with httpx.Client(timeout=30) as http:
            evil_host = http.post(f"{url}/mcp", json=INIT, headers={**MCP_HEADERS, "Host": "evil.example"})
            evil_origin = http.post(f"{url}/mcp", json=INIT, headers={**MCP_HEADERS, "Origin": "http://evil.example"})
            local_page = http.post(f"{url}/mcp", json=INIT, headers={**MCP_HEADERS, "Origin": url})
        assert evil_host.status_code == 421 and evil_origin.status_code == 403
        assert local_page.status_code == 200


def test_a_token_guards_mcp_as_it_guards_the_api(make_service):
    svc = make_service(closed_port_url())
    with live_server(create_app(svc, token=TOKEN), lifespan="on") as url:
        for headers in (None, {"Authorization": "Bearer wrong-token-0123456789"}):
            with pytest.raises(BaseException) as refused:  # noqa: B017 - the client raises inside a task group
                search(url, headers)
            assert 401 in status_errors(refused.value)
        tools, found = search(url, {"Authorization": f"Bearer {TOKEN}"})
        assert "search_memory" in tools and not found.isError
        # with a token the token is the guard: any Host may carry it (a proxy, a LAN name)
        with httpx.Client(timeout=30, headers={"Authorization": f"Bearer {TOKEN}", **MCP_HEADERS}) as http:
            assert http.post(f"{url}/mcp", json=INIT, headers={"Host": "truffle.lan"}).status_code == 200
            big = http.post(f"{url}/mcp", content=b'{"x": "' + b"a" * svc.config.api.max_body_bytes + b'"}')
            bare = httpx.post(f"{url}/mcp", json=INIT, headers=MCP_HEADERS, timeout=30)
        assert big.status_code == 413 and big.json()["error"]["code"] == "request_too_large"
        assert bare.status_code == 401 and bare.headers["www-authenticate"] == "Bearer"


def test_mcp_answers_503_outside_the_apps_lifespan(make_service):
    app = create_app(make_service(closed_port_url()), token=TOKEN)
    auth = {"Authorization": f"Bearer {TOKEN}", **MCP_HEADERS}
    before = TestClient(app).post("/mcp", json=INIT, headers=auth)  # no `with`: the lifespan never runs
    with TestClient(app) as client:
        during = client.post("/mcp", json=INIT, headers=auth)
    after = TestClient(app).post("/mcp", json=INIT, headers=auth)
    assert during.status_code == 200 and '"serverInfo"' in during.text
    for refused in (before, after):
        assert refused.status_code == 503 and refused.json()["error"]["code"] == "mcp_not_running"


def test_the_app_without_mcp_has_no_mcp_route(make_service):
    with live_server(create_app(make_service(closed_port_url()), mcp=False), lifespan="on") as url:
        assert httpx.post(f"{url}/mcp", json=INIT, headers=MCP_HEADERS, timeout=30).status_code == 404


@pytest.mark.subprocess
def test_truffle_serve_on_a_public_address_answers_mcp_with_the_token_only(memory, llm, tmp_path):
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("TRUFFLE_LLM_", "OPENROUTER"))} | {
        "HF_HUB_OFFLINE": "1", "TRUFFLE_API_TOKEN": TOKEN, "TRUFFLE_HOME": str(tmp_path / "home")}
    argv = [sys.executable, "-m", "truffle_assets.cli", "serve", "--host", "0.0.0.0", "--port", str(port),
            "--published", str(memory), "--store", str(tmp_path / "store"), "--base-url", llm.base_url,
            "--model", "fake-model"]
    url = f"http://127.0.0.1:{port}"
    with serve_process(argv, env, tmp_path / "serve.log") as proc:
        deadline = time.monotonic() + 120
        while True:
            try:
                urllib.request.urlopen(f"{url}/", timeout=2)
                break
            except (urllib.error.URLError, ConnectionError):
                assert proc.poll() is None and time.monotonic() < deadline, (tmp_path / "serve.log").read_text()
                time.sleep(0.5)
        with pytest.raises(BaseException) as refused:  # noqa: B017
            search(url)
        assert 401 in status_errors(refused.value)
        tools, found = search(url, {"Authorization": f"Bearer {TOKEN}"})
        assert tools == list(mcp_tools()) and found.structuredContent["messages"]
    log = (tmp_path / "serve.log").read_text()
    assert "MCP for other apps at http://0.0.0.0:" in log and '"DELETE /mcp HTTP/1.1" 200' in log
    assert "Traceback" not in log  # a session's normal end is not logged as an error


def test_serve_refuses_mcp_forget_without_the_mcp_endpoint(tmp_path):
    out = run_truffle(newcomer_env(tmp_path), "serve", "--no-mcp", "--mcp-forget")
    assert out.returncode == 2 and "--mcp-forget needs the MCP endpoint" in out.stderr
