"""Forget over MCP with the pipeline's own forget: the official client over streamable HTTP against
`create_app` with `PipelineForgetter`, on a memory built for this test through the real chain (the
inspector's two chats). A dry run leaves the message readable; the confirmed forget takes it and
the fact it evidenced out of every tool; without `--mcp-forget` the tool is not there at all."""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from typing import Any

import anyio
import httpx
import pytest
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client
from pydantic import AnyUrl

from truffle_assets.defs.forget.forgetter import PipelineForgetter
from truffle_assets.runtime import ChatService, RuntimeConfig
from truffle_assets.runtime.api import create_app
from truffle_assets_tests.fake_llm import closed_port_url
from truffle_assets_tests.runtime.conftest import KEEP_ALL
from truffle_assets_tests.runtime_api.conftest import live_server
from truffle_assets_tests.runtime_api.inspector.conftest import PASSWORD, build_memory

pytestmark = pytest.mark.slow  # the whole chain builds the memory, and the forget rebuilds a chat

FORGET_TIMEOUT_S = 600  # a forget rebuilds the chat's months through Dagster on a shared 2-core machine


def connect(url: str, scenario: Callable[[ClientSession], Awaitable[Any]]) -> Any:
    async def main() -> Any:
        async with (httpx.AsyncClient(timeout=FORGET_TIMEOUT_S) as http,
                    streamable_http_client(f"{url}/mcp", http_client=http) as (read, write, _),
                    ClientSession(read, write) as client):
            await client.initialize()
            return await scenario(client)

    return anyio.run(main)


def test_forget_over_mcp_with_the_pipelines_forget(tmp_path):
    root = build_memory(tmp_path / "root")  # its own memory: this one is changed
    # the calls are recorded with their content where the forget purges (`<root>/runtime`)
    service = ChatService(RuntimeConfig(published_dir=root / "published", store_dir=root / "runtime",
                                        registry_dir=root / "models" / "registry",
                                        endpoint={"base_url": closed_port_url(), "model": "fake-model"}, **KEEP_ALL))
    facts = json.loads((root / "published" / "facts.json").read_text())["facts"]
    (bangalore,) = [f for f in facts if f["predicate"] == "lives_in" and f["value"] == "Bangalore"]
    (msg_id,) = bangalore["evidence_message_ids"]
    forgetter = PipelineForgetter(root)
    query = {"query": "moved to Bangalore new flat", "k": 5}

    async def opted_out(client: ClientSession) -> tuple[list[str], Any]:
        return [t.name for t in (await client.list_tools()).tools], await client.call_tool("forget", {
            "kind": "message", "id": msg_id})

    # the app holds the pipeline's forget (for /api/forget), yet MCP offers none without --mcp-forget
    with live_server(create_app(service, forgetter=forgetter), lifespan="on") as url:
        tools, refused = connect(url, opted_out)
    assert "forget" not in tools and "search_memory" in tools
    assert refused.isError and "unknown tool" in refused.content[0].text

    async def read(client: ClientSession) -> dict[str, Any]:
        return {"messages": (await client.call_tool("get_messages", {"ids": [msg_id]})).structuredContent,
                "found": [h["message_id"] for h in (await client.call_tool("search_memory", query)).structuredContent["messages"]],
                "fact": await client.call_tool("get_fact", {"fact_id": bangalore["fact_id"]}),
                "facts": [f["fact_id"] for f in json.loads(
                    (await client.read_resource(AnyUrl("truffle://facts"))).contents[0].text)["facts"]]}

    async def scenario(client: ClientSession) -> dict[str, Any]:
        item = {"kind": "message", "id": msg_id}
        got: dict[str, Any] = {"tools": [t.name for t in (await client.list_tools()).tools], "before": await read(client)}
        got["dry"] = await client.call_tool("forget", item)
        got["after_dry"] = await read(client)
        got["unconfirmed"] = await client.call_tool("forget", {**item, "confirm": True})
        got["done"] = await client.call_tool("forget", {**item, "confirm": True,
                                                        "confirmation": got["dry"].structuredContent["confirmation"]})
        got["after"] = await read(client)
        return got

    with live_server(create_app(service, forgetter=forgetter, mcp_forget=True), lifespan="on") as url:
        got = connect(url, scenario)
    assert "forget" in got["tools"]
    before = got["before"]
    assert [m["message_id"] for m in before["messages"]["messages"]] == [msg_id] and msg_id in before["found"]
    assert "[PASSWORD]" in before["messages"]["messages"][0]["text"] and not before["fact"].isError

    # the dry run: what would go, in counts and in words; nothing gone
    dry = got["dry"]
    assert not dry.isError, dry.content
    d = dry.structuredContent
    assert d["dry_run"] is True and d["removed"]["messages"] == 1 and d["removed"]["facts"] >= 1
    assert d["removed"]["runtime_turns"] >= 2  # the recorded calls that showed it: search and get_messages
    assert d["chats"] == ["priya-sharma"] and d["confirmation"] and d["tombstone"]
    assert d["selection"]["totals"]["messages"] == 1 and bangalore["fact_id"] in {f["fact_id"] for f in d["selection"]["facts"]}
    (shown,) = d["selection"]["messages"]  # its first words
    assert shown["id"] == msg_id and before["messages"]["messages"][0]["text"].startswith(shown["text"].rstrip("…"))
    assert PASSWORD not in dry.content[0].text
    assert got["after_dry"] | {"fact": None} == before | {"fact": None}
    assert got["after_dry"]["fact"].structuredContent == before["fact"].structuredContent
    assert got["unconfirmed"].isError and "without confirm first" in got["unconfirmed"].content[0].text

    # confirmed: the pipeline forgot the message and the fact it was the only evidence for
    done = got["done"]
    assert not done.isError, done.content
    assert done.structuredContent["dry_run"] is False and done.structuredContent["tombstone"] == d["tombstone"]
    after = got["after"]
    assert after["messages"] == {"messages": [], "missing": [msg_id], "truncated": []}
    assert msg_id not in after["found"] and bangalore["fact_id"] not in after["facts"]
    assert after["fact"].isError and f"no fact with id {bangalore['fact_id']!r}" in after["fact"].content[0].text
    # the calls recorded since the dry run named the message too: they went with it, and did not void the confirmation
    assert done.structuredContent["removed"]["runtime_turns"] > d["removed"]["runtime_turns"]
    assert [(t["tombstone"], t["done"]) for t in forgetter.tombstones()] == [(d["tombstone"], True)]
