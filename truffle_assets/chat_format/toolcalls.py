"""The tool-call envelope the chat model speaks, shared by the chat runtime, the training pack and evals.

A tool-calling answer is the whole answer, one JSON object and nothing else:

    {"toolCalls":[{"name":"search_memory","arguments":{"query":"Priya birthday"}}]}

`parse_tool_calls` is strict on purpose: the runtime executes only what parses here, and the same
function decides +1 / +0.5 / +0.3 in the tool-call eval, so training targets, scoring and serving
can never disagree about what a valid call is. An envelope wrapped in prose or code fences is
reported as a `near_miss` (never executed, worth partial credit in evals). Write tools exist in the
vocabulary only so a chat-mode model that reaches for them is caught by name: they are rejected
unless the caller (an admin surface, never chat) passes `allow_write=True`.
"""

from __future__ import annotations

import json
import re
from datetime import date
from typing import Annotated, Any

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, ValidationError, model_validator

ENVELOPE_KEY = "toolCalls"


class _Args(BaseModel):
    # strict: "5" is not an int and unknown keys are errors, so a sloppy call never half-works
    model_config = ConfigDict(extra="forbid", strict=True)


def _iso_day(v: str | None) -> str | None:
    if v is not None and (not re.fullmatch(r"\d{4}-\d{2}-\d{2}", v) or not _valid_date(v)):
        raise ValueError(f"expected a YYYY-MM-DD date, got {v!r}")
    return v


def _valid_date(v: str) -> bool:
    try:
        date.fromisoformat(v)
    except ValueError:
        return False
    return True


Day = Annotated[str | None, AfterValidator(_iso_day)]


class SearchMemoryArgs(_Args):
    query: str = Field(min_length=1)
    chat: str | None = None
    since: Day = None  # inclusive, YYYY-MM-DD
    until: Day = None  # inclusive, YYYY-MM-DD
    k: int | None = Field(default=None, ge=1, le=50)

    @model_validator(mode="after")
    def _ordered(self) -> SearchMemoryArgs:
        if self.since and self.until and self.since > self.until:
            raise ValueError(f"since {self.since} is after until {self.until}")
        return self


class GetMessagesArgs(_Args):
    ids: list[str] = Field(min_length=1)


class GetFactArgs(_Args):
    fact_id: str = Field(min_length=1)


class GetProfileArgs(_Args):
    pass


class UpdateFactArgs(_Args):
    fact_id: str
    value: str


class DeleteMemoryArgs(_Args):
    ids: list[str] = Field(min_length=1)


class ForgetChatArgs(_Args):
    chat: str


class UpdateProfileArgs(_Args):
    field: str
    value: str


READ_TOOLS: dict[str, type[_Args]] = {
    "search_memory": SearchMemoryArgs,
    "get_messages": GetMessagesArgs,
    "get_fact": GetFactArgs,
    "get_profile": GetProfileArgs,
}
WRITE_TOOLS: dict[str, type[_Args]] = {
    "update_fact": UpdateFactArgs,
    "delete_memory": DeleteMemoryArgs,
    "forget_chat": ForgetChatArgs,
    "update_profile": UpdateProfileArgs,
}
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
