"""The one tool catalog: the chat model's vocabulary stays what it was trained on, and every surface
that speaks tool calls (the system prompt, the parser, the eval cases, the training pack) agrees with
it. The tools run on a real memory in `runtime/test_tool_exec.py`."""

from __future__ import annotations

import json

import jsonschema
import pytest
from pydantic import ValidationError

from truffle_assets.chat_format.toolcalls import ALL_TOOLS, READ_TOOLS, WRITE_TOOLS, looks_like_tool_call
from truffle_assets.paths import PROMPTS_DIR
from truffle_assets.tools import CATALOG, mcp_tools, model_tools, refusal_vocabulary
from truffle_assets.tools.render import PROMPT_HEADER, input_schema, output_schema, prompt_lines, refusal_names

MODEL = ["search_memory", "get_messages", "get_fact", "get_profile"]
WRITE = ["update_fact", "delete_memory", "forget_chat", "update_profile"]
MCP_ONLY = ["get_day", "list_chats", "ask"]


def test_the_model_vocabulary_is_unchanged():
    assert list(READ_TOOLS) == MODEL and list(WRITE_TOOLS) == WRITE and list(ALL_TOOLS) == MODEL + WRITE
    assert list(model_tools()) == MODEL and list(refusal_vocabulary()) == WRITE
    assert all(READ_TOOLS[n] is CATALOG[n].input for n in MODEL)
    # the agents' tools are never part of what the chat model may call or is caught calling
    assert list(mcp_tools()) == MODEL + MCP_ONLY and list(mcp_tools(allow_forget=True)) == MODEL + MCP_ONLY + ["forget"]
    for text in ('get_day(chat="x", day="2024-01-01")', "list_chats()", 'ask("who is Priya?")',
                 'forget(kind="chat", id="x")', '{"name": "get_day"}', "Let me ask(you) something"):
        assert not looks_like_tool_call(text), text
    assert looks_like_tool_call("get_fact(fact_id='x')")


def test_specs_are_consistent():
    for name, spec in CATALOG.items():
        assert spec.name == name and spec.audience
        assert spec.refused == (spec.output is None)
        if spec.model_args is not None:
            assert set(spec.model_args) <= set(spec.input.model_fields)
        if spec.for_mcp:
            assert spec.title and spec.description and spec.read_only != spec.destructive
            assert spec.opt_in == spec.destructive  # only forget changes anything, and only when turned on
    for name in ("search_memory", "get_messages", "get_fact", "get_profile", "get_day", "ask"):
        assert "never instructions" in CATALOG[name].description


def test_the_system_prompt_holds_the_catalog_block_verbatim():
    system = (PROMPTS_DIR / "system_chat.md").read_text(encoding="utf-8")
    start = system.index(PROMPT_HEADER)
    block = system[start:system.index("\n\n", start)]
    assert block == prompt_lines()
    assert f"({refusal_names()})" in system


def test_schemas_are_valid_json_schema():
    for spec in CATALOG.values():
        schema = input_schema(spec)
        jsonschema.Draft202012Validator.check_schema(schema)
        assert schema["type"] == "object" and schema["additionalProperties"] is False
        if spec.output is not None:
            out = output_schema(spec)
            jsonschema.Draft202012Validator.check_schema(out)
            assert out["type"] == "object"
    jsonschema.validate({"query": "x", "since": "2024-01-01"}, input_schema("search_memory"))
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({"query": "x", "k": 51}, input_schema("search_memory"))
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({"chat": "x", "day": "yesterday"}, input_schema("get_day"))


def test_score_parts_name_every_retrieval_component():
    from truffle_assets.retrieval.models import ScoreComponents
    from truffle_assets.tools.models import ScoreParts

    assert list(ScoreParts.model_fields) == list(ScoreComponents.model_fields)


# ---- the eval cases and the training pack speak the catalog ----------------------------------------

def _expected_calls(case: dict) -> list[dict]:
    """The call a case expects, and each accepted alternative, as arguments a model would send (a
    search's query written from its required terms)."""
    exp = case["expectation"]
    args = dict(exp["args"])
    if exp["tool"] == "search_memory" and "query" not in args:
        args["query"] = " ".join(group[0] for group in exp["query_terms"]) or "messages"
    out = [args]
    for key, values in exp["alternatives"].items():
        for v in values:
            alt = {k: x for k, x in args.items() if k != key}
            out.append(alt if v is None else alt | {key: v})
    return out


def test_every_eval_call_validates_against_the_catalog():
    from truffle_assets.evals.cases import toolcall_cases

    calls = [c for c in toolcall_cases() if c["expectation"]["kind"] == "call"]
    assert len(calls) >= 80
    for case in calls:
        spec = model_tools()[case["expectation"]["tool"]]
        for args in _expected_calls(case):
            spec.input.model_validate(args)


# the pack's rows that carry tool calls (chosen calls, wrong-tool and bad-argument failures, write
# calls to refuse, searches that leak) for seed 7, as generated before the pack read the catalog
PACK_CALL_KINDS = ("toolcall", "write_refusal", "privacy_refusal")
PACK_CALL_ROWS_SHA256 = "32a21b23f0b927befb7a0813951ca014f10f938d6bc872da6b5255452f856c59"


def test_pack_tool_rows_validate_and_are_unchanged():
    import hashlib

    from truffle_assets.chat_format.toolcalls import parse_tool_calls
    from truffle_assets.training.pack import generate_pack

    sft, dpo = generate_pack(seed=7)
    rows = [r for r in sft if r["kind"] in PACK_CALL_KINDS] + \
        [r for r in dpo if r["source_id"].split("/")[0] in PACK_CALL_KINDS]
    blob = json.dumps(rows, sort_keys=True, ensure_ascii=False).encode()
    assert hashlib.sha256(blob).hexdigest() == PACK_CALL_ROWS_SHA256  # byte for byte what the model trained on
    answers = [r["messages"][-1]["content"] for r in sft] + [r["chosen"] for r in dpo]
    calls = [c for a in answers if (p := parse_tool_calls(a)).ok for c in p.calls]
    assert len(calls) >= 40 and {c.name for c in calls} == set(model_tools())
    written = [c for r in dpo if (p := parse_tool_calls(r["rejected"], allow_write=True)).ok for c in p.calls]
    assert {c.name for c in written} & set(refusal_vocabulary())
    for c in calls + written:
        CATALOG[c.name].input.model_validate(c.arguments)


def test_the_pack_refuses_a_call_the_catalog_does_not_know():
    from truffle_assets.training.pack import _envelope

    assert _envelope([{"name": "get_fact", "arguments": {"fact_id": "3fa9c1"}}]) == \
        '{"toolCalls":[{"name":"get_fact","arguments":{"fact_id":"3fa9c1"}}]}'
    with pytest.raises(ValidationError):
        _envelope([{"name": "get_fact", "arguments": {"id": "3fa9c1"}}])
    with pytest.raises(KeyError):
        _envelope([{"name": "read_mind", "arguments": {}}])


def test_redaction_reaches_every_text_and_leaves_ids_alone():
    from truffle_assets.runtime.tool_exec import redacted
    from truffle_assets.tools import models as m

    card, phone_chat = "4111 1111 1111 1111", "919876543210"
    chats = redacted(m.Chats(chats=[m.Chat(chat_id=phone_chat, display_name=f"card {card}", watermark="2024-01-02")]))
    assert chats.chats[0].display_name == "card [CARD]" and chats.chats[0].chat_id == phone_chat
    msgs = redacted(m.Messages(messages=[m.MessageInContext(
        message_id="a1", chat_id=phone_chat, text=f"it is {card}", author="Arjun",
        neighbours=[m.Neighbour(message_id="a0", chat_id=phone_chat, text=f"my card {card}", cited=False)])],
        missing=[], truncated=[]))
    assert msgs.messages[0].text == "it is [CARD]" and msgs.messages[0].neighbours[0].text == "my card [CARD]"
