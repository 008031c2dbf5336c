"""`truffle mcp` as a desktop app runs it: a child process on stdio, reached with the official `mcp`
client and with `langchain-mcp-adapters` inside a LangGraph graph; stdout carries JSON-RPC only."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import jsonschema
import pytest
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langchain_mcp_adapters.client import MultiServerMCPClient
from langchain_mcp_adapters.tools import load_mcp_tools
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

from truffle_assets.tools import mcp_tools
from truffle_assets.tools.render import output_schema

pytestmark = pytest.mark.subprocess

ENV_ENDPOINT = ("TRUFFLE_LLM_BASE_URL", "TRUFFLE_LLM_MODEL", "TRUFFLE_LLM_API_KEY", "OPENROUTER_API_KEY")


def mcp_command(memory: Path, store: Path, llm_url: str, *extra: str) -> tuple[list[str], dict[str, str]]:
    args = ["-m", "truffle_assets.cli", "mcp", "--published", str(memory), "--store", str(store),
            "--base-url", llm_url, "--model", "fake-model", "--log", *extra]
    env = {k: v for k, v in os.environ.items() if k not in ENV_ENDPOINT} | {
        "HF_HUB_OFFLINE": "1", "TRUFFLE_HOME": str(store.parent / "home")}
    return args, env


def test_stdio_server_with_the_official_client(memory, llm, tmp_path):
    args, env = mcp_command(memory, tmp_path / "store", llm.base_url)
    # the server's stdout is copied to a file on its way to the client: every line must be JSON-RPC
    wire = tmp_path / "stdout.jsonl"
    shell = f'"{sys.executable}" ' + " ".join(f"'{a}'" for a in args) + f' | tee "{wire}"'
    params = StdioServerParameters(command="/bin/sh", args=["-c", shell], env=env, cwd=str(tmp_path))

    async def main() -> dict[str, Any]:
        with open(tmp_path / "stderr.log", "w") as errlog:
            async with stdio_client(params, errlog=errlog) as (read, write), ClientSession(read, write) as client:
                init = await client.initialize()
                got: dict[str, Any] = {"init": init, "tools": (await client.list_tools()).tools}
                found = await client.call_tool("search_memory", {"query": "plans with Priya"})
                hit = found.structuredContent["messages"][0]
                got["search_memory"] = found
                got["get_messages"] = await client.call_tool("get_messages", {"ids": [hit["message_id"]], "around": 1})
                got["get_day"] = await client.call_tool("get_day", {"chat": hit["chat_id"], "day": hit["day"]})
                got["get_profile"] = await client.call_tool("get_profile", {})
                got["list_chats"] = await client.call_tool("list_chats", {})
                prof = got["get_profile"].structuredContent
                fid = next(f["fact_id"] for c in prof["categories"] for f in c["facts"])
                got["get_fact"] = await client.call_tool("get_fact", {"fact_id": fid})
                got["ask"] = await client.call_tool("ask", {"question": "What did Priya and I talk about?"})
                got["refused"] = await client.call_tool("search_memory", {"query": "what is my netflix password?"})
                return got

    got = anyio.run(main)
    assert got["init"].serverInfo.name == "truffle"
    assert [t.name for t in got["tools"]] == list(mcp_tools())
    for name in mcp_tools():
        assert not got[name].isError, (name, got[name].content)
        jsonschema.validate(got[name].structuredContent, output_schema(name))
    assert got["ask"].structuredContent["citations"] and llm.requests >= 1
    assert got["refused"].isError
    lines = [ln for ln in wire.read_text().splitlines() if ln.strip()]
    sent = [json.loads(ln) for ln in lines]  # a line that is not JSON fails here
    assert all(m["jsonrpc"] == "2.0" for m in sent)
    assert sorted(m["id"] for m in sent if "id" in m) == list(range(2 + len(mcp_tools()) + 1))  # one answer a request


def test_stray_output_cannot_reach_the_protocol_stream(tmp_path):
    """What the process writes to stdout, from Python or straight to fd 1 (as llama.cpp does), goes to stderr."""
    code = ("import os, sys\n"
            "from truffle_assets.runtime.mcp.stdio import protocol_streams\n"
            "with protocol_streams() as (reader, writer):\n"
            "    print('stray print'); sys.stdout.flush(); os.write(1, b'stray fd write\\n')\n"
            "    os.system('echo stray child')\n"
            "    writer.write(reader.readline().upper()); writer.flush()\n"
            "print('after')\n")
    out = subprocess.run([sys.executable, "-c", code], input="ping\n", capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout == "PING\nafter\n"  # the protocol's bytes, then fd 1 restored
    assert {"stray print", "stray fd write", "stray child"} <= set(out.stderr.splitlines())


def test_a_langgraph_agent_uses_the_tools_through_langchain_mcp_adapters(memory, llm, tmp_path):
    args, env = mcp_command(memory, tmp_path / "store", llm.base_url)
    client = MultiServerMCPClient({"truffle": {"transport": "stdio", "command": sys.executable, "args": args,
                                               "env": env}})

    def agent(state: MessagesState) -> dict:
        """A scripted model: search first, then read the best hit, then answer from it."""
        last = state["messages"][-1]
        if isinstance(last, HumanMessage):
            return {"messages": [AIMessage("", tool_calls=[{"name": "search_memory", "id": "c1",
                                                            "args": {"query": "plans with Priya", "k": 3}}])]}
        if last.name == "search_memory":
            first = last.artifact["structured_content"]["messages"][0]["message_id"]
            return {"messages": [AIMessage("", tool_calls=[{"name": "get_messages", "id": "c2",
                                                            "args": {"ids": [first], "around": 1}}])]}
        return {"messages": [AIMessage(f"Found it [msg:{last.artifact['structured_content']['messages'][0]['message_id']}]")]}

    def route(state: MessagesState) -> str:
        return "tools" if state["messages"][-1].tool_calls else END

    async def main() -> dict:
        async with client.session("truffle") as session:  # one server process for the whole run
            tools = await load_mcp_tools(session)
            assert {t.name for t in tools} == set(mcp_tools())
            graph = (StateGraph(MessagesState).add_node("agent", agent).add_node("tools", ToolNode(tools))
                     .add_edge(START, "agent").add_conditional_edges("agent", route).add_edge("tools", "agent").compile())
            return await graph.ainvoke({"messages": [HumanMessage("What plans did I make with Priya?")]})

    out = anyio.run(main)
    results = [m for m in out["messages"] if isinstance(m, ToolMessage)]
    assert [m.name for m in results] == ["search_memory", "get_messages"] and not any(m.status == "error" for m in results)
    hits = results[0].artifact["structured_content"]["messages"]
    jsonschema.validate(results[0].artifact["structured_content"], output_schema("search_memory"))
    read = results[1].artifact["structured_content"]["messages"][0]
    assert read["message_id"] == hits[0]["message_id"] and read["neighbours"]
    assert out["messages"][-1].content == f"Found it [msg:{hits[0]['message_id']}]"
