"""The MCP server over the tool catalog: what other apps' agents see of the memory.

    server = build_server(executor, service=service, limits=limits)       # a `mcp.server.lowlevel.Server`

Tools are the catalog's MCP tools (`tools.mcp_tools`), each listed with the catalog input model's
JSON schema as `inputSchema` (the low-level server, not FastMCP: FastMCP derives the schema from a
function signature and would nest a model argument), the output model's as `outputSchema` (every
result is that model's dump, so it fits; clients check it), and read-only / destructive hints.
`forget` is listed only with `allow_forget` (`forget.McpForget`: a dry run first, then a
confirmation). Resources:
`truffle://profile`, `truffle://facts`, and `truffle://facts/{fact_id}`.

Every call: the arguments checked by the catalog model; the question of `ask` and the query of
`search_memory` through the chat's guard (a secret-seeking one is refused, recorded as "denied");
string arguments no longer than the API's `max_question_chars`; the executor run in a worker
thread under a small limiter (retrieval is CPU work and shares two cores with the chat); what
comes back redacted; the call recorded like a chat turn (`calllog`).
"""

from __future__ import annotations

import functools
import json
import logging
import time
import uuid
import weakref
from collections.abc import Callable
from functools import partial
from typing import Any

import anyio
import mcp.types as types
from mcp.server.lowlevel import Server
from mcp.server.lowlevel.helper_types import ReadResourceContents
from pydantic import BaseModel, ValidationError
from pydantic.networks import AnyUrl

from truffle_assets.runtime import privacy
from truffle_assets.runtime.limits import ApiLimits, clip
from truffle_assets.runtime.mcp.calllog import CONVERSATION_PREFIX, record_call
from truffle_assets.runtime.mcp.forget import ForgetRefused, McpForget
from truffle_assets.runtime.tool_exec import ToolError
from truffle_assets.tools import DATA_NOTE, ToolSpec, mcp_tools
from truffle_assets.tools.render import input_schema, output_schema

log = logging.getLogger(__name__)

NAME = "truffle"
INSTRUCTIONS = ("Truffle is the user's personal memory, built from their WhatsApp chats. Search it with "
                "search_memory, read what a result points to with get_messages, get_day and get_fact, see the "
                "user's profile with get_profile and the chats it covers with list_chats, or ask for a grounded "
                f"answer with ask. {DATA_NOTE}")
WORKERS = 2  # tool calls running at once: the machine's chat and retrieval share its cores
GUARDED = {"search_memory": "query", "ask": "question"}  # the free-text argument the chat's guard reads
PROFILE_URI, FACTS_URI, FACT_TEMPLATE = "truffle://profile", "truffle://facts", "truffle://facts/{fact_id}"
FACT_PREFIX = "truffle://facts/"


class CallRefused(Exception):
    """A call the server answers with an error and a reason (`denied`: the guard refused it)."""

    def __init__(self, message: str, denied: bool = False) -> None:
        super().__init__(message)
        self.denied = denied


def _validation_message(exc: ValidationError) -> str:
    # locations and messages only: pydantic's input echo would put a secret or a huge value in the error
    parts = [f"{'.'.join(str(p) for p in e.get('loc', ())) or 'arguments'}: {e.get('msg', 'invalid')}"
             for e in exc.errors()[:5]]
    return clip("invalid arguments: " + "; ".join(parts), 400)


def guard(spec: ToolSpec, args: BaseModel, limits: ApiLimits) -> None:
    """Raise CallRefused for a call the chat would refuse: an over-long text, a secret-seeking question."""
    for name, value in args:
        if isinstance(value, str) and len(value) > limits.max_question_chars:
            raise CallRefused(f"{name} is {len(value)} characters long; the limit is {limits.max_question_chars}")
    field = GUARDED.get(spec.name)
    kind = privacy.secret_request(getattr(args, field)) if field else None
    if kind:
        raise CallRefused(privacy.refusal(kind), denied=True)


@functools.cache
def tool_list(allow_forget: bool = False) -> tuple[types.Tool, ...]:
    """The tools as `tools/list` shows them (the catalog does not change while the process runs)."""
    return tuple(
        types.Tool(name=s.name, title=s.title, description=s.description, inputSchema=input_schema(s),
                   outputSchema=output_schema(s),
                   annotations=types.ToolAnnotations(title=s.title, readOnlyHint=s.read_only,
                                                     destructiveHint=s.destructive, openWorldHint=False))
        for s in mcp_tools(allow_forget).values())


def build_server(executor: Any, *, service: Any, limits: ApiLimits | None = None, allow_forget: bool = False,
                 forgetter: Any = None, ask_executor: Callable[[], Any] | None = None,
                 workers: int = WORKERS) -> Server:
    """The MCP server over `executor` (`runtime.tool_exec.ToolExecutor` on `service`). `ask_executor`:
    the executor `ask` runs on, built on first use (stdio starts the model only when asked);
    `forgetter`: the pipeline's forget (`forget_api.Forgetter`), used only with `allow_forget`."""
    if allow_forget and forgetter is None:
        raise ValueError("forget over MCP needs the pipeline's forgetter")
    limits = limits or getattr(service.config, "api", None) or ApiLimits()
    server: Server = Server(NAME, instructions=INSTRUCTIONS)
    limiter = anyio.CapacityLimiter(workers)
    forget = McpForget(forgetter) if allow_forget else None
    specs = mcp_tools(allow_forget)
    sessions: weakref.WeakKeyDictionary[Any, str] = weakref.WeakKeyDictionary()

    def who() -> tuple[str, str | None]:
        try:
            ctx = server.request_context
        except LookupError:
            return "local", None
        sid = sessions.get(ctx.session)
        if sid is None:
            sid = sessions[ctx.session] = uuid.uuid4().hex[:16]
        params = getattr(ctx.session, "client_params", None)
        client = getattr(getattr(params, "clientInfo", None), "name", None)
        return sid, client

    def execute(spec: ToolSpec, args: BaseModel, session: str) -> dict[str, Any]:
        if spec.name == "forget":
            return spec.output.model_validate(forget(**args.model_dump())).model_dump(mode="json")
        values = args.model_dump()
        target = executor
        if spec.name == "ask":
            target = ask_executor() if ask_executor is not None else executor
            # the answer is a chat turn of its own; under an mcp: conversation it is recorded with
            # principal "mcp" (`runtime.turns`), never a training row
            conv = values.get("conversation_id") or session
            values["conversation_id"] = conv if conv.startswith(CONVERSATION_PREFIX) else CONVERSATION_PREFIX + conv
        return target.call(spec.name, values).model_dump(mode="json")  # redacted by the executor

    async def run_call(name: str, arguments: dict[str, Any],
                       run: Callable[[str], dict[str, Any]]) -> dict[str, Any] | types.CallToolResult:
        session, client = who()
        t0 = time.perf_counter()
        result: dict[str, Any] | None = None
        error: str | None = None
        denied = False
        try:
            result = await anyio.to_thread.run_sync(run, session, limiter=limiter)
        except CallRefused as exc:
            error, denied = str(exc), exc.denied
        except ForgetRefused as exc:
            error = str(exc)
        except ToolError as exc:
            error = clip(exc.message, 400)
        except LookupError as exc:
            error = clip(f"not found: {exc.args[0] if exc.args else exc}", 400)
        except ValueError as exc:
            error = clip(str(exc) or "invalid request", 400)
        except Exception as exc:  # noqa: BLE001 - an agent gets a reason, never a trace
            log.exception("MCP tool %s failed", name)
            error = clip(f"the memory could not answer: {type(exc).__name__}", 400)
        ms = round((time.perf_counter() - t0) * 1000, 1)
        if name != "ask" or error is not None:  # an answered ask is recorded as the chat turn it is
            await anyio.to_thread.run_sync(partial(record_call, service, session=session, client=client, tool=name,
                                                   arguments=arguments, result=result, error=error, refused=denied,
                                                   latency_ms=ms), limiter=limiter)
        if error is not None:
            return types.CallToolResult(content=[types.TextContent(type="text", text=error)], isError=True)
        return result  # type: ignore[return-value]

    def answer(result: dict[str, Any] | types.CallToolResult) -> types.CallToolResult:
        if isinstance(result, types.CallToolResult):
            return result
        # the catalog's output model made `result`, so it fits the outputSchema made from that model:
        # the SDK's jsonschema re-check (tens of ms a search on a busy machine) is skipped
        return types.CallToolResult(content=[types.TextContent(type="text", text=json.dumps(result, ensure_ascii=False))],
                                    structuredContent=result)

    @server.list_tools()
    async def _list_tools() -> list[types.Tool]:
        return list(tool_list(allow_forget))

    @server.call_tool(validate_input=False)  # the catalog's pydantic model checks the arguments (strictly)
    async def _call_tool(name: str, arguments: dict[str, Any]) -> types.CallToolResult:
        spec = specs.get(name)
        if spec is None:
            return types.CallToolResult(content=[types.TextContent(type="text", text=f"unknown tool {clip(name, 80)!r}")],
                                        isError=True)

        def run(session: str) -> dict[str, Any]:
            try:
                args = spec.input.model_validate(arguments)
            except ValidationError as exc:
                raise ValueError(_validation_message(exc)) from None
            guard(spec, args, limits)
            return execute(spec, args, session)

        return answer(await run_call(name, arguments, run))

    @server.list_resources()
    async def _list_resources() -> list[types.Resource]:
        return [types.Resource(uri=AnyUrl(PROFILE_URI), name="profile", title="The user's profile",
                               description="The facts in force by category, and what used to hold.",
                               mimeType="application/json"),
                types.Resource(uri=AnyUrl(FACTS_URI), name="facts", title="The facts the memory holds",
                               description="Every published fact: id, text, category, validity window.",
                               mimeType="application/json")]

    @server.list_resource_templates()
    async def _list_templates() -> list[types.ResourceTemplate]:
        return [types.ResourceTemplate(uriTemplate=FACT_TEMPLATE, name="fact", title="One fact with its evidence",
                                       description="A fact (full id or its first characters) with its validity "
                                                   "window and the messages it was read from.",
                                       mimeType="application/json")]

    @server.read_resource()
    async def _read_resource(uri: AnyUrl) -> list[ReadResourceContents]:
        text = str(uri)
        if text == PROFILE_URI:
            name, args = "get_profile", {}
        elif text == FACTS_URI:
            name, args = "facts", {}
        elif text.startswith(FACT_PREFIX) and len(text) > len(FACT_PREFIX):
            name, args = "get_fact", {"fact_id": text[len(FACT_PREFIX):]}
        else:
            raise ValueError(f"unknown resource {clip(text, 120)}")

        def run(session: str) -> dict[str, Any]:
            if name == "facts":
                return fact_list(executor)
            spec = specs[name]
            return execute(spec, spec.input.model_validate(args), session)

        out = await run_call(f"resource:{text.split('/')[2] if text.count('/') >= 2 else text}", args, run)
        if isinstance(out, types.CallToolResult):
            raise ValueError(out.content[0].text)  # the SDK answers a resource error as a JSON-RPC error
        return [ReadResourceContents(content=json.dumps(out, ensure_ascii=False), mime_type="application/json")]

    return server


def fact_list(executor: Any) -> dict[str, Any]:
    """truffle://facts: every published fact in brief, its texts redacted (the evidence: truffle://facts/{fact_id})."""
    from truffle_assets.runtime.published import load_facts
    from truffle_assets.runtime.tool_exec import fact_fields

    facts = load_facts(executor.published_dir)
    out = []
    for fid, f in facts.items():
        row = fact_fields({**f, "fact_id": fid}, facts)
        row = {k: v for k, v in row.items() if k not in ("evidence_message_ids", "first_seen_at", "last_seen_at")}
        out.append(row | {k: privacy.redact_data(row[k]) for k in ("fact_text", "subject", "value") if row.get(k)})
    return {"facts": out}
