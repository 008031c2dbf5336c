"""The memory tools run on the runtime tests' published memory (`tool_exec.ToolExecutor`): each read
tool's result fits its output schema, calls are checked by the catalog, only redacted text leaves,
and `ask` is a chat turn."""

from __future__ import annotations

import json

import jsonschema
import pytest
from pydantic import ValidationError

from truffle_assets.runtime.tool_exec import ToolError, ToolExecutor
from truffle_assets.tools import CATALOG
from truffle_assets.tools.render import output_schema


@pytest.fixture(scope="module")
def tools(memory, tmp_path_factory, qwen_tokens):
    from truffle_assets.runtime import ChatService, RuntimeConfig

    tmp = tmp_path_factory.mktemp("tools")
    cfg = RuntimeConfig(published_dir=memory, store_dir=tmp / "runtime", registry_dir=tmp / "registry",
                        tokenizer=str(qwen_tokens.source), endpoint={"base_url": None, "model": "fake-model"})
    return ToolExecutor(ChatService(cfg))


def _checked(name: str, out) -> dict:
    """`out` is the tool's output model and its JSON fits the published output schema."""
    assert isinstance(out, CATALOG[name].output)
    data = json.loads(out.model_dump_json())
    jsonschema.validate(data, output_schema(name))
    assert CATALOG[name].output.model_validate(data) == out
    return data


def test_every_read_tool_runs_and_fits_its_schema(tools, memory, world):
    found = _checked("search_memory", tools.call("search_memory", {"query": "trip plans", "k": 5}))
    assert 0 < len(found["messages"]) <= 5 and found["watermarks"]
    hit = found["messages"][0]
    assert hit["day"] == hit["ts"][:10] and hit["parts"] and hit["score"] > 0

    ids = [m["message_id"] for m in found["messages"]]
    got = _checked("get_messages", tools.call("get_messages", {"ids": ids[:2] + ["0" * 20], "around": 2}))
    assert [m["message_id"] for m in got["messages"]] == ids[:2] and got["missing"] == ["0" * 20]
    near = got["messages"][0]["neighbours"]
    assert [n["message_id"] for n in near if n["cited"]] == [ids[0]] and len(near) <= 5
    assert _checked("get_messages", tools.get_messages(ids[:1]))["messages"][0]["neighbours"] is None

    facts = json.loads((memory / "facts.json").read_text())["facts"]
    f = next(x for x in facts if x.get("evidence_message_ids"))
    full = _checked("get_fact", tools.call("get_fact", {"fact_id": f["fact_id"]}))
    assert full["fact_id"] == f["fact_id"] and full["evidence"] and full["status"] in ("current", "superseded", "ended")
    prefix = next(f["fact_id"][:n] for n in range(6, 40) if sum(x["fact_id"].startswith(f["fact_id"][:n])
                                                                for x in facts) == 1)
    assert len(prefix) < len(f["fact_id"])
    assert tools.get_fact(prefix) == tools.get_fact(f["fact_id"])  # a shortened id, as the prompt shows it
    assert tools.service.fact(prefix)["fact_id"] == f["fact_id"]  # and the service's lookup agrees
    with pytest.raises(ToolError) as err:
        tools.get_fact("no-such-fact")
    assert err.value.status == 404 and err.value.code == "fact_not_found"

    prof = _checked("get_profile", tools.call("get_profile", {}))
    assert prof["n_facts"] >= 0 and isinstance(prof["categories"], list)

    day = _checked("get_day", tools.call("get_day", {"chat": hit["chat_id"], "day": hit["day"]}))
    assert hit["message_id"] in [m["message_id"] for m in day["messages"]] and not day["truncated"]

    chats = _checked("list_chats", tools.call("list_chats", {}))
    assert {c["chat_id"] for c in chats["chats"]} >= set(found["watermarks"])
    assert all(c["messages"] > 0 and c["first_day"] <= c["last_day"] for c in chats["chats"] if c["messages"])


def test_calls_are_checked_by_the_catalog(tools):
    with pytest.raises(ValidationError):
        tools.call("search_memory", {"query": "x", "k": "5"})  # strict: a string is not a number
    with pytest.raises(ValidationError):
        tools.call("get_messages", {"ids": ["a"], "around": 11})
    with pytest.raises(ToolError):
        tools.call("update_fact", {"fact_id": "x", "value": "y"})
    with pytest.raises(ToolError):
        tools.call("nope", {})


def test_get_messages_reports_what_it_did_not_read(tools):
    ids = [f"{n:020x}" for n in range(25)]
    got = tools.get_messages(ids + ids[:3])
    assert got.messages == [] and got.missing == ids[:20] and got.truncated == ids[20:]


def test_only_redacted_text_leaves(tools, world):
    secrets = world.corpus.secret_values()
    assert secrets
    for q in ("password", "wifi password", "otp code", "bank account"):
        blob = tools.search_memory(q, k=20).model_dump_json()
        assert not any(s in blob for s in secrets), q


def test_ask_is_a_chat_turn_with_its_citations(make_service, llm):
    tools = ToolExecutor(make_service(llm.base_url))
    got = _checked("ask", tools.call("ask", {"question": "What did Priya and I plan?"}))
    assert got["citations"] and got["sources"] and got["turn_id"] and got["conversation_id"]
    assert {s["message_id"] for s in got["sources"]} <= set(got["citations"]) | set(got["uncertain"])
    assert all(s["text"] and s["day"] == s["ts"][:10] for s in got["sources"])
    again = tools.ask("And when?", conversation_id=got["conversation_id"])
    assert again.conversation_id == got["conversation_id"]
    refused = tools.ask("What is my wifi password?")
    assert refused.refused and not refused.citations
