import json

import pytest

from truffle_assets.chat_format.toolcalls import (READ_TOOLS, WRITE_TOOLS, ToolCall, format_tool_calls, looks_like_tool_call,
                                      parse_tool_calls)

SEARCH = '{"toolCalls":[{"name":"search_memory","arguments":{"query":"Priya birthday"}}]}'


def test_exact_envelope_parses_with_surrounding_whitespace():
    p = parse_tool_calls(f"\n  {SEARCH}\n")
    assert p.ok and not p.near_miss and p.error is None
    assert p.calls == [ToolCall(name="search_memory", arguments={"query": "Priya birthday"})]


def test_every_read_tool_and_all_search_arguments():
    text = format_tool_calls([
        {"name": "search_memory", "arguments": {"query": "trip", "chat": "family", "since": "2024-02-01",
                                                "until": "2024-02-29", "k": 5}},
        {"name": "get_messages", "arguments": {"ids": ["a1b2c3", "d4e5f6"]}},
        {"name": "get_fact", "arguments": {"fact_id": "f00d"}},
        {"name": "get_profile", "arguments": {}},
    ])
    p = parse_tool_calls(text)
    assert p.ok and [c.name for c in p.calls] == list(READ_TOOLS)
    assert p.calls[0].arguments["k"] == 5


@pytest.mark.parametrize("text", [
    f"Sure, let me look that up.\n{SEARCH}",
    f"```json\n{SEARCH}\n```",
    f"```\n{SEARCH}\n```",
    f"{SEARCH}\nHope that helps!",
])
def test_prose_or_fences_are_a_near_miss_never_ok(text):
    p = parse_tool_calls(text)
    assert not p.ok and p.near_miss
    assert [c.name for c in p.calls] == ["search_memory"]


@pytest.mark.parametrize("text, error", [
    ('{"toolCalls":[{"name":"search_memory","arguments":{"query":"x","limit":3}}]}', "limit"),
    ('{"toolCalls":[{"name":"search_memory","arguments":{"query":"x"},"id":"call_1"}]}', "exactly the keys"),
    ('{"toolCalls":[{"name":"search_memory","arguments":{"query":"x"}}],"note":"hi"}', "exactly one key"),
    ('{"toolCalls":[{"name":"search_web","arguments":{"query":"x"}}]}', "unknown tool"),
    ('{"toolCalls":[]}', "non-empty"),
    ('{"toolCalls":[{"name":"search_memory","arguments":{}}]}', "query"),
    ('{"toolCalls":[{"name":"search_memory","arguments":{"query":"x","k":"5"}}]}', "k"),
    ('{"toolCalls":[{"name":"search_memory","arguments":{"query":"x","since":"14/03/2024"}}]}', "YYYY-MM-DD"),
    ('{"toolCalls":[{"name":"search_memory","arguments":{"query":"x","since":"2024-05-02","until":"2024-05-01"}}]}',
     "after"),
    ('{"toolCalls":[{"name":"get_messages","arguments":{"ids":"abc"}}]}', "ids"),
    ('{"toolCalls":[{"name":"get_profile","arguments":{"user":"me"}}]}', "user"),
    ('{"toolCalls":[{"name":"get_profile","arguments":{}}],"toolCalls":[]}', "duplicate"),
    ('{"toolCalls":[{"name":"search_memory","arguments":{"query":"x"}}', "not a JSON envelope"),
    ("search_memory(query='x')", "not a JSON envelope"),
])
def test_strictness(text, error):
    p = parse_tool_calls(text)
    assert not p.ok and not p.calls and not p.near_miss
    assert error in p.error


@pytest.mark.parametrize("tool, args", [
    ("update_fact", {"fact_id": "f1", "value": "x"}), ("delete_memory", {"ids": ["a"]}),
    ("forget_chat", {"chat": "family"}), ("update_profile", {"field": "city", "value": "Pune"}),
])
def test_write_tools_rejected_in_chat_mode_but_named(tool, args):
    text = format_tool_calls([{"name": tool, "arguments": args}])
    p = parse_tool_calls(text)
    assert not p.ok and "not allowed in chat mode" in p.error and p.names == [tool]
    assert parse_tool_calls(text, allow_write=True).ok
    # a write call hidden next to a valid read call still rejects the whole envelope
    mixed = json.loads(SEARCH)
    mixed["toolCalls"].append({"name": tool, "arguments": args})
    p = parse_tool_calls(json.dumps(mixed))
    assert not p.ok and tool in p.names
    # and wrapped in prose it is not even a near miss
    p = parse_tool_calls(f"Okay, doing it: {text}")
    assert not p.ok and not p.near_miss and tool in p.names
    assert set(WRITE_TOOLS).isdisjoint(READ_TOOLS)


def test_multiple_calls_all_or_nothing():
    two = '{"toolCalls":[{"name":"get_profile","arguments":{}},{"name":"search_memory","arguments":{"query":"x"}}]}'
    assert [c.name for c in parse_tool_calls(two).calls] == ["get_profile", "search_memory"]
    bad = two.replace('"query":"x"', '"q":"x"')
    assert not parse_tool_calls(bad).ok


def test_unicode_arguments_round_trip():
    calls = [ToolCall(name="search_memory", arguments={"query": "माँ का जन्मदिन 🎂", "chat": "família"})]
    text = format_tool_calls(calls)
    assert "माँ" in text and "\\u" not in text  # canonical form keeps characters as they are
    assert parse_tool_calls(text).calls == calls
    escaped = json.dumps({"toolCalls": [c.model_dump() for c in calls]})  # \u escapes are valid JSON too
    assert parse_tool_calls(escaped).calls == calls


def test_format_is_compact_and_canonical():
    assert format_tool_calls([{"name": "search_memory", "arguments": {"query": "Priya birthday"}}]) == SEARCH
    p = parse_tool_calls('{"toolCalls":[{"name":"search_memory","arguments":{"query":"x","chat":null}}]}')
    assert p.ok and format_tool_calls(p.calls) == '{"toolCalls":[{"name":"search_memory","arguments":{"query":"x"}}]}'


@pytest.mark.parametrize("text, expected", [
    (SEARCH, True),
    ('{"toolCalls": [', True),
    ("I'll call search_memory(query='Priya') for you", True),
    ('{"name": "get_profile", "arguments": {}}', True),
    ("<tool_call>{}</tool_call>", True),
    ("Good morning! How can I help?", False),
    ("I can't delete memories from chat: chat mode is read-only.", False),
    ("The answer is {42}.", False),
])
def test_looks_like_tool_call(text, expected):
    assert looks_like_tool_call(text) is expected


def test_empty_and_non_object():
    assert parse_tool_calls("   ").error == "empty answer"
    assert not parse_tool_calls("42").ok
    assert not parse_tool_calls('["toolCalls"]').ok
