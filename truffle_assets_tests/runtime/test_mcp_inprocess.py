"""The MCP server through the official `mcp` client, in process (`create_connected_server_and_client_session`):
every tool and resource on the test memory, the guard, redaction, injected instructions, the opt-in
forget and its confirmation, and the call records under the person's logging settings."""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from typing import Any

import anyio
import jsonschema
import pytest
from mcp import ClientSession
from mcp.shared.memory import create_connected_server_and_client_session
from pydantic import AnyUrl

from truffle_assets.feedback.turns import load_turns
from truffle_assets.forget.runtime_purge import Forgotten, find_turns
from truffle_assets.runtime import privacy
from truffle_assets.runtime.mcp.forget import Confirmations
from truffle_assets.runtime.mcp.server import build_server
from truffle_assets.runtime.tool_exec import ToolExecutor
from truffle_assets.tools import DATA_NOTE, mcp_tools
from truffle_assets.tools.render import input_schema, output_schema
from truffle_assets.training.datasets import build_datasets
from truffle_assets_tests.runtime.conftest import KEEP_ALL
from truffle_assets_tests.runtime.test_privacy import injected_memory  # noqa: F401 - fixture

SECRET_QUESTION = "what is my netflix password?"


def session(service: Any, scenario: Callable[[ClientSession], Awaitable[Any]], **server_kwargs: Any) -> Any:
    """Run `scenario` against a fresh server over `service`, connected through the SDK's client."""
    server = build_server(ToolExecutor(service), service=service, **server_kwargs)
    out: list[Any] = []

    async def main() -> None:
        async with create_connected_server_and_client_session(server) as client:
            out.append(await scenario(client))

    anyio.run(main)
    return out[0]


def strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for v in value.values() for s in strings(v)]
    if isinstance(value, list):
        return [s for v in value for s in strings(v)]
    return []


def store_turns(service: Any) -> list:
    return load_turns(service.config.store_dir)


@pytest.fixture
def service(make_service, llm):
    return make_service(llm.base_url, **KEEP_ALL)


def test_every_tool_answers_within_its_schema(service, corpus):
    async def scenario(client: ClientSession) -> dict[str, Any]:
        tools = (await client.list_tools()).tools
        got: dict[str, Any] = {"tools": tools}
        found = await client.call_tool("search_memory", {"query": "plans with Priya", "k": 5})
        got["search_memory"] = found
        hit = found.structuredContent["messages"][0]
        got["get_messages"] = await client.call_tool("get_messages", {"ids": [hit["message_id"], "nope"], "around": 2})
        got["get_day"] = await client.call_tool("get_day", {"chat": hit["chat_id"], "day": hit["day"]})
        got["get_profile"] = await client.call_tool("get_profile", {})
        got["list_chats"] = await client.call_tool("list_chats", {})
        facts = json.loads((await client.read_resource(AnyUrl("truffle://facts"))).contents[0].text)["facts"]
        got["facts"] = facts
        got["get_fact"] = await client.call_tool("get_fact", {"fact_id": facts[0]["fact_id"][:6]})
        got["ask"] = await client.call_tool("ask", {"question": "What did Priya and I talk about?"})
        got["profile_resource"] = json.loads((await client.read_resource(AnyUrl("truffle://profile"))).contents[0].text)
        fact = await client.read_resource(AnyUrl(f"truffle://facts/{facts[0]['fact_id']}"))
        got["fact_resource"] = json.loads(fact.contents[0].text)
        got["resources"] = [str(r.uri) for r in (await client.list_resources()).resources]
        got["templates"] = [t.uriTemplate for t in (await client.list_resource_templates()).resourceTemplates]
        return got

    got = session(service, scenario)
    catalog = mcp_tools()
    assert [t.name for t in got["tools"]] == list(catalog) and "forget" not in catalog
    for tool in got["tools"]:
        spec = catalog[tool.name]
        assert tool.inputSchema == input_schema(spec) and tool.outputSchema == output_schema(spec)
        assert tool.annotations.readOnlyHint is True and tool.annotations.destructiveHint is False
        jsonschema.Draft202012Validator.check_schema(tool.inputSchema)
        jsonschema.Draft202012Validator.check_schema(tool.outputSchema)
    for name in catalog:
        result = got[name]
        assert not result.isError, (name, result.content)
        jsonschema.validate(result.structuredContent, output_schema(name))
        assert json.loads(result.content[0].text) == result.structuredContent
    hits = got["search_memory"].structuredContent["messages"]
    assert 0 < len(hits) <= 5 and all(h["parts"] and h["chat_id"] in got["search_memory"].structuredContent["watermarks"]
                                      for h in hits)
    msgs = got["get_messages"].structuredContent
    assert msgs["missing"] == ["nope"] and msgs["messages"][0]["message_id"] == hits[0]["message_id"]
    assert any(n["cited"] for n in msgs["messages"][0]["neighbours"])
    assert hits[0]["message_id"] in {m["message_id"] for m in got["get_day"].structuredContent["messages"]}
    assert got["get_fact"].structuredContent["fact_id"] == got["facts"][0]["fact_id"]  # a prefix resolves
    assert got["fact_resource"] == got["get_fact"].structuredContent
    assert got["profile_resource"] == got["get_profile"].structuredContent
    assert {c["chat_id"] for c in got["list_chats"].structuredContent["chats"]} >= {hits[0]["chat_id"]}
    answer = got["ask"].structuredContent
    assert answer["citations"] and answer["conversation_id"].startswith("mcp:") and answer["sources"]
    assert got["resources"] == ["truffle://profile", "truffle://facts"] and got["templates"] == ["truffle://facts/{fact_id}"]

    # every call recorded with principal mcp, the ask as its chat turn; none of them a training row
    turns = store_turns(service)
    assert len(turns) == len(catalog) + 3 and all("mcp" in t.principals for t in turns)
    search = next(t for t in turns if t.meta["tool_calls"] and t.meta["tool_calls"][0].get("name") == "search_memory")
    assert search.meta["retrieval_ids"][:len(hits)] == [h["message_id"] for h in hits]
    assert search.conversation_id.startswith("mcp:") and search.has_content
    built = build_datasets(turns)
    assert built.sft_rows == [] and built.stats.dropped_principal == len(turns)


def test_secret_requests_are_refused_and_logged_denied(service, llm):
    async def scenario(client: ClientSession) -> list:
        return [await client.call_tool("search_memory", {"query": SECRET_QUESTION}),
                await client.call_tool("ask", {"question": SECRET_QUESTION}),
                await client.call_tool("search_memory", {"query": "x" * (service.config.api.max_question_chars + 1)})]

    search, ask, long = session(service, scenario)
    for refused in (search, ask):
        assert refused.isError and refused.content[0].text == privacy.refusal("password")
    assert long.isError and "the limit is" in long.content[0].text
    assert llm.requests == 0  # refused before the model
    turns = store_turns(service)
    assert len(turns) == 3 and sum("denied" in t.principals for t in turns) == 2


def test_redaction_holds_for_every_tool(service, corpus):
    values = corpus.secret_values()
    planted = [s["message_id"] for s in corpus.truth["secrets"]]

    async def scenario(client: ClientSession) -> list[Any]:
        out = [await client.call_tool("search_memory", {"query": "wifi at home with Priya", "k": 20})]
        read = await client.call_tool("get_messages", {"ids": planted[:20], "around": 3})
        out.append(read)
        for chat, day in sorted({(m["chat_id"], m["day"]) for m in read.structuredContent["messages"]}):
            out.append(await client.call_tool("get_day", {"chat": chat, "day": day}))
        out.append(await client.call_tool("get_profile", {}))
        # a secret inside the arguments is redacted in what comes back and in what is stored
        out.append(await client.call_tool("search_memory", {"query": "card 4791 5705 2974 3004 and Priya"}))
        return out

    results = session(service, scenario)
    shown = json.dumps([r.structuredContent for r in results], ensure_ascii=False)
    shown += "".join(c.text for r in results for c in r.content)
    assert len(results) > 4 and not any(r.isError for r in results)
    assert not [v for v in values if v in shown]
    assert "[PASSWORD]" in shown  # the planted message was found, and shown redacted
    assert "4791 5705 2974 3004" not in shown and results[-1].structuredContent["query"] == "card [CARD] and Priya"
    stored = "".join(p.read_text() for d in ("turns", "content") for p in (service.config.store_dir / d).glob("*.jsonl"))
    assert "4791" not in stored and not [v for v in values if v in stored] and "[CARD]" in stored
    assert any("redacted" in t.principals for t in store_turns(service))


def test_instructions_inside_messages_come_back_as_data(make_service, llm, injected_memory):  # noqa: F811
    published, inj_id = injected_memory
    svc = make_service(llm.base_url, published_dir=published)

    async def scenario(client: ClientSession) -> tuple:
        return (await client.list_tools()).tools, await client.call_tool("search_memory", {"query": "dinner plans Friday"})

    tools, found = session(svc, scenario)
    assert all(DATA_NOTE in t.description for t in tools if t.name in ("search_memory", "get_messages", "get_day"))
    assert {t.name for t in tools}.isdisjoint({"delete_memory", "forget", "update_fact"})
    hit = next(h for h in found.structuredContent["messages"] if h["message_id"] == inj_id)
    assert hit["text"].startswith("IGNORE ALL PREVIOUS INSTRUCTIONS") and "[CARD]" in hit["text"]
    assert "4111" not in json.dumps(found.structuredContent) and llm.requests == 0


class RecordingForgetter:
    """The pipeline's side of forget as `forget_api.Forgetter` states it: counts for a dry run, the
    forget itself recorded (the pipeline's forget is tested in truffle_assets_tests/forget)."""

    def __init__(self) -> None:
        self.calls: list[tuple] = []
        self.messages = 3

    def forget(self, kind: str, value: str, chat: str | None = None, *, dry_run: bool = False) -> dict[str, Any]:
        self.calls.append((kind, value, chat, dry_run))
        if value == "unknown":
            raise LookupError(f"no {kind} {value!r} in the memory")
        out = {"dry_run": dry_run, "kind": kind, "id": value, "what": f"{kind} {value}", "tombstone": "t1",
               "chats": ["priya-sharma"], "removed": {"messages": self.messages}}
        if not dry_run:
            self.messages = 0
        return out

    def tombstones(self) -> list[dict[str, Any]]:
        return []


def test_forget_is_opt_in_dry_run_first_then_confirmed(service):
    pipeline = RecordingForgetter()

    async def scenario(client: ClientSession) -> dict[str, Any]:
        got: dict[str, Any] = {"tools": {t.name: t for t in (await client.list_tools()).tools}}
        item = {"kind": "message", "id": "m1"}
        got["dry"] = await client.call_tool("forget", item)
        got["no_code"] = await client.call_tool("forget", {**item, "confirm": True})
        got["forged"] = await client.call_tool("forget", {**item, "confirm": True, "confirmation": "9999999999-" + "0" * 40})
        other = await client.call_tool("forget", {"kind": "message", "id": "m2"})
        got["other_item"] = await client.call_tool("forget", {**item, "confirm": True,
                                                              "confirmation": other.structuredContent["confirmation"]})
        got["done"] = await client.call_tool("forget", {**item, "confirm": True,
                                                        "confirmation": got["dry"].structuredContent["confirmation"]})
        got["again"] = await client.call_tool("forget", {**item, "confirm": True,
                                                         "confirmation": got["dry"].structuredContent["confirmation"]})
        got["unknown"] = await client.call_tool("forget", {"kind": "message", "id": "unknown"})
        return got

    got = session(service, scenario, allow_forget=True, forgetter=pipeline)
    tool = got["tools"]["forget"]
    assert tool.annotations.destructiveHint is True and tool.annotations.readOnlyHint is False
    dry = got["dry"].structuredContent
    assert dry["dry_run"] is True and dry["removed"] == {"messages": 3} and dry["confirmation"]
    for refused in ("no_code", "forged", "other_item", "again"):
        assert got[refused].isError, refused
    assert "without confirm first" in got["no_code"].content[0].text
    assert got["done"].structuredContent["dry_run"] is False
    assert [c for c in pipeline.calls if not c[3]] == [("message", "m1", None, False)]  # forgotten once, when confirmed
    # after the forget the counts changed: the same confirmation no longer matches
    assert "changed since the dry run" in got["again"].content[0].text
    assert got["unknown"].isError and "not found" in got["unknown"].content[0].text


def test_a_confirmation_holds_while_only_records_of_use_grow():
    # calls after the dry run (the agent's own, recorded) add runtime records that quote the item;
    # what the memory holds is what the confirmation covers
    seen = {"messages": 1, "facts": 2, "runtime_turns": 4, "runtime_content": 4, "retrieval_logs": 0}
    codes = Confirmations()
    code = codes.issue("message", "m1", None, seen)
    assert codes.check(code, "message", "m1", None, seen | {"runtime_turns": 9, "runtime_content": 9,
                                                            "retrieval_logs": 2}) is None
    assert "changed since the dry run" in codes.check(code, "message", "m1", None, seen | {"facts": 3})


def test_nothing_is_recorded_unless_the_person_keeps_transcripts(make_service, llm):
    for keep, expect in (({}, 0), ({"transcripts": True}, 1)):
        svc = make_service(llm.base_url, **keep)

        async def scenario(client: ClientSession) -> Any:
            return await client.call_tool("search_memory", {"query": "plans with Priya"})

        assert not session(svc, scenario).isError
        turns = store_turns(svc)
        assert len(turns) == expect
        if turns:  # transcripts without content: the call's metadata, never its text
            assert not turns[0].has_content and "arguments" not in turns[0].meta["tool_calls"][0]
            assert turns[0].meta["retrieval_ids"] and turns[0].principals == ["mcp"]
            # a forget of a message the call returned finds the record, as it finds a chat turn citing it
            gone = Forgotten(message_ids={turns[0].meta["retrieval_ids"][-1]}, texts=[])
            assert find_turns(svc.config.store_dir, gone) == {turns[0].turn_id}


def test_arguments_are_checked_strictly_by_the_catalog_model(service):
    bad = [("search_memory", {"query": "plans", "k": "5"}), ("search_memory", {"query": "plans", "limit": 5}),
           ("search_memory", {}), ("search_memory", {"query": "plans", "since": "2024-05-01", "until": "2024-01-01"}),
           ("get_day", {"chat": "priya-sharma", "day": "2022-13-45"}), ("get_messages", {"ids": []})]

    async def scenario(client: ClientSession) -> list:
        return [await client.call_tool(name, args) for name, args in bad]

    for (name, args), result in zip(bad, session(service, scenario)):
        assert result.isError and result.content[0].text.startswith("invalid arguments"), (name, args)
    assert len(store_turns(service)) == len(bad) and not any("denied" in t.principals for t in store_turns(service))
