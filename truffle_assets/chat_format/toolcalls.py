"""The tool-call envelope the chat model speaks, shared by the chat runtime, the training pack and evals.

A tool-calling answer is the whole answer, one JSON object and nothing else:

    {"toolCalls":[{"name":"search_memory","arguments":{"query":"Priya birthday"}}]}

`parse_tool_calls` is strict on purpose: the runtime executes only what parses here, and the same
function decides +1 / +0.5 / +0.3 in the tool-call eval, so training targets, scoring and serving
can never disagree about what a valid call is. An envelope wrapped in prose or code fences is
reported as a `near_miss` (never executed, worth partial credit in evals). The tools and their
arguments are the catalog's (`truffle_assets.tools`). Write tools exist in the
vocabulary only so a chat-mode model that reaches for them is caught by name: they are rejected
unless the caller (an admin surface, never chat) passes `allow_write=True`.
"""

from __future__ import annotations

import json
import re
from typing import Any

from pydantic import BaseModel, Field, ValidationError

from truffle_assets.tools import model_tools, refusal_vocabulary
from truffle_assets.tools.inputs import Args as _Args

ENVELOPE_KEY = "toolCalls"

# the catalog's tools as the chat model knows them: what it may call, and the write names it must refuse
READ_TOOLS: dict[str, type[_Args]] = {n: s.input for n, s in model_tools().items()}
WRITE_TOOLS: dict[str, type[_Args]] = {n: s.input for n, s in refusal_vocabulary().items()}
ALL_TOOLS = READ_TOOLS | WRITE_TOOLS


class ToolCall(BaseModel):
    name: str
    arguments: dict[str, Any] = Field(default_factory=dict)


class ToolCallParse(BaseModel):
    ok: bool                      # the whole text is one valid envelope: safe to execute
    calls: list[ToolCall] = Field(default_factory=list)  # valid calls (when ok or near_miss)
    error: str | None = None
    near_miss: bool = False       # a valid envelope, but wrapped in prose or ``` fences
    names: list[str] = Field(default_factory=list)  # every tool name seen in an attempt, valid or
                                  # not: lets scorers catch a write tool inside a broken envelope


class _Reject(ValueError):
    def __init__(self, msg: str, names: list[str]):
        super().__init__(msg)
        self.names = names


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict:
    keys = [k for k, _ in pairs]
    if len(keys) != len(set(keys)):
        raise ValueError(f"duplicate keys {sorted({k for k in keys if keys.count(k) > 1})}")
    return dict(pairs)


def _bad_constant(name: str) -> None:
    raise ValueError(f"{name} is not JSON")


def _loads(text: str) -> Any:
    return json.loads(text, object_pairs_hook=_no_duplicates, parse_constant=_bad_constant)


def _names_in(obj: Any) -> list[str]:
    calls = obj.get(ENVELOPE_KEY) if isinstance(obj, dict) else None
    if not isinstance(calls, list):
        return []
    return [c["name"] for c in calls if isinstance(c, dict) and isinstance(c.get("name"), str)]


def _validate(obj: Any, allow_write: bool) -> list[ToolCall]:
    names = _names_in(obj)
    if not isinstance(obj, dict) or set(obj) != {ENVELOPE_KEY}:
        raise _Reject(f'expected exactly one key "{ENVELOPE_KEY}"', names)
    raw = obj[ENVELOPE_KEY]
    if not isinstance(raw, list) or not raw:
        raise _Reject(f'"{ENVELOPE_KEY}" must be a non-empty list', names)
    calls = []
    for i, c in enumerate(raw):
        if not isinstance(c, dict) or set(c) != {"name", "arguments"}:
            raise _Reject(f'call {i}: expected exactly the keys "name" and "arguments"', names)
        name, args = c["name"], c["arguments"]
        if not isinstance(name, str) or name not in ALL_TOOLS:
            raise _Reject(f"call {i}: unknown tool {name!r}", names)
        if name in WRITE_TOOLS and not allow_write:
            raise _Reject(f"call {i}: write tool {name!r} is not allowed in chat mode", names)
        if not isinstance(args, dict):
            raise _Reject(f"call {i}: arguments must be an object", names)
        try:
            model = ALL_TOOLS[name].model_validate(args)
        except ValidationError as e:
            first = e.errors()[0]
            where = ".".join(str(p) for p in first["loc"]) or "arguments"
            raise _Reject(f"call {i} ({name}): {where}: {first['msg']}", names) from None
        calls.append(ToolCall(name=name, arguments=model.model_dump(exclude_none=True)))
    return calls


_FENCE = re.compile(r"```[ \t]*[\w-]*[ \t]*\n?(.*?)\n?[ \t]*```", re.S)


def _embedded(text: str) -> list[Any]:
    """JSON objects that mention the envelope key, found inside fences or prose, in order."""
    found = []
    for m in _FENCE.finditer(text):
        try:
            found.append(_loads(m.group(1).strip()))
        except ValueError:
            pass
    dec = json.JSONDecoder(object_pairs_hook=_no_duplicates, parse_constant=_bad_constant)
    for m in re.finditer(r'\{\s*"' + ENVELOPE_KEY + '"', text):
        try:
            found.append(dec.raw_decode(text, m.start())[0])
        except ValueError:
            pass
    return found


def parse_tool_calls(text: str, allow_write: bool = False) -> ToolCallParse:
    """Strict parse of a whole answer as one envelope; see the module docstring."""
    stripped = text.strip()
    if not stripped:
        return ToolCallParse(ok=False, error="empty answer")
    names: list[str] = []
    try:
        obj = _loads(stripped)
    except ValueError as e:
        error = f"not a JSON envelope: {e}"
    else:
        try:
            return ToolCallParse(ok=True, calls=_validate(obj, allow_write), names=_names_in(obj))
        except _Reject as e:
            return ToolCallParse(ok=False, error=str(e), names=e.names)
    # Not JSON as a whole: look for an envelope wrapped in prose or fences.
    for obj in _embedded(stripped):
        names += [n for n in _names_in(obj) if n not in names]
        try:
            calls = _validate(obj, allow_write)
        except _Reject as e:
            error = f"wrapped envelope is invalid: {e}"
            continue
        return ToolCallParse(ok=False, calls=calls, near_miss=True, names=names,
                             error="envelope wrapped in prose or code fences")
    return ToolCallParse(ok=False, error=error, names=names)


_ATTEMPT = re.compile(
    r"tool_?calls|\"?function_call\"?\s*:|<tool_call>|"
    r"\"name\"\s*:\s*\"(?:" + "|".join(ALL_TOOLS) + r")\"|"
    r"\b(?:" + "|".join(ALL_TOOLS) + r")\s*\(",
    re.I,
)


def looks_like_tool_call(text: str) -> bool:
    """Any attempt at calling a tool, valid or not: what a "must answer in prose" case forbids."""
    return bool(_ATTEMPT.search(text))


def format_tool_calls(calls: list[ToolCall] | list[dict]) -> str:
    """Canonical compact envelope: the exact text training targets contain."""
    out = []
    for c in calls:
        c = c if isinstance(c, ToolCall) else ToolCall.model_validate(c)
        out.append({"name": c.name, "arguments": c.arguments})
    return json.dumps({ENVELOPE_KEY: out}, ensure_ascii=False, separators=(",", ":"))
