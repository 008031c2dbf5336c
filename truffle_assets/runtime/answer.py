"""The model's turn: one call through the `openai` client (`answer_or_request_recall`).

The node calls the served model on the composed prompt. A reply that is exactly a read-tool envelope
(`toolcalls.parse_tool_calls(...).ok`) becomes pending calls for `recall_retrieve` (at most
`max_recalls` rounds; after that the context says no more searches are available, and an envelope
then ends the turn as a retrieval-only answer). Endpoint down, timeout, HTTP errors and malformed
output never raise: they set `fallback`. A prose reply goes to `repairs.finalize`.
"""

from __future__ import annotations

import re
import threading
import time
from dataclasses import dataclass, field
from typing import Any

from langgraph.config import get_stream_writer
from langgraph.runtime import Runtime

from truffle_assets.chat_format.toolcalls import looks_like_tool_call, parse_tool_calls
from truffle_assets.runtime.state import Context, State, elapsed_ms
from truffle_assets.runtime.streaming import AnswerStream, trim_loop

_THINK = re.compile(r"<think>.*?</think>", re.S | re.I)

_clients: dict[tuple, Any] = {}
_clients_lock = threading.Lock()


def _client(ctx: Context):
    """One `openai.OpenAI` per endpoint setting, shared by every turn (its connection pool too)."""
    import openai

    key = (ctx.base_url, ctx.api_key, ctx.timeout_s, ctx.max_retries)
    with _clients_lock:
        c = _clients.get(key)
        if c is None:
            c = _clients[key] = openai.OpenAI(base_url=ctx.base_url, api_key=ctx.api_key or "none",
                                              timeout=ctx.timeout_s, max_retries=ctx.max_retries)
        return c


def _fallback(reason: str, detail: str, steps: list[dict], **extra) -> dict:
    """The update of a turn that falls back to retrieval only: `steps` and a fallback step (with the
    reason's detail) join the trace."""
    return {"fallback": reason, "trace": [*steps, {"step": "fallback", "reason": reason, "detail": detail[:500]}],
            **extra}


# ---- the model ----------------------------------------------------------------------------------------

@dataclass
class Reply:
    content: str | None
    usage: dict = field(default_factory=dict)
    finish_reason: str | None = None   # "length": the reply ran into max_tokens
    model: str | None = None
    streamed: bool = False
    looped: bool = False               # generation was stopped where the reply started repeating


def sampling(ctx: Context) -> dict:
    """The request's sampling knobs beyond temperature: only what is configured is sent (a remote
    endpoint keeps its own defaults); `repeat_penalty` is llama.cpp's, so it goes in the extra body."""
    out: dict[str, Any] = {}
    if ctx.frequency_penalty is not None:
        out["frequency_penalty"] = ctx.frequency_penalty
    if ctx.presence_penalty is not None:
        out["presence_penalty"] = ctx.presence_penalty
    if ctx.stop:
        out["stop"] = list(ctx.stop)[:4]  # OpenAI accepts at most 4
    if ctx.repeat_penalty is not None:
        out["extra_body"] = {"repeat_penalty": ctx.repeat_penalty}
    return out


def _complete(ctx: Context, state: State) -> Reply:
    """One chat completion on the composed prompt; with `ctx.stream` the settled text goes to the
    graph's custom stream as it arrives and generation stops where the reply starts looping."""
    kwargs = dict(model=ctx.model, messages=state.prompt, temperature=state.temperature,
                  max_tokens=ctx.budget.answer, **sampling(ctx))
    if not ctx.stream:
        resp = _client(ctx).chat.completions.create(**kwargs)
        content = finish = None
        try:
            content = resp.choices[0].message.content
            finish = resp.choices[0].finish_reason
        except (AttributeError, IndexError, TypeError):
            pass
        usage = {k: int(getattr(resp.usage, k, 0) or 0) for k in ("prompt_tokens", "completion_tokens")} \
            if getattr(resp, "usage", None) is not None else {}
        return Reply(content, usage, finish, getattr(resp, "model", None))
    writer = get_stream_writer()
    live = AnswerStream(set(state.context_ids), lambda piece: writer({"delta": piece}))
    reply = Reply("", streamed=True)
    stream = _client(ctx).chat.completions.create(stream=True, stream_options={"include_usage": True}, **kwargs)
    try:
        for chunk in stream:
            reply.model = getattr(chunk, "model", None) or reply.model
            if getattr(chunk, "usage", None) is not None:
                reply.usage = {k: int(getattr(chunk.usage, k, 0) or 0) for k in ("prompt_tokens", "completion_tokens")}
            for choice in chunk.choices or []:
                reply.finish_reason = choice.finish_reason or reply.finish_reason
                piece = getattr(choice.delta, "content", None) or ""
                if piece and live.feed(piece) and ctx.loop_guard:
                    reply.looped, reply.finish_reason = True, "loop"
                    break
            if reply.looped:
                break
    finally:
        stream.close()  # a loop stops generating: the server sees the connection go
    reply.content = trim_loop(live.raw)[0] if reply.looped else live.raw
    if not reply.usage:  # llama.cpp's server sends no usage chunk: count what was generated ourselves
        from truffle_assets.runtime.context import counter_for

        reply.usage = {"prompt_tokens": int(state.tokens.get("prompt") or 0),
                       "completion_tokens": counter_for(ctx).count(live.raw)}
    return reply


def answer_or_request_recall(state: State, runtime: Runtime[Context]) -> dict:
    """Call the model: a prose answer goes to `finalize`, a tool-call envelope to `recall_retrieve`."""
    import openai

    ctx = runtime.context
    if state.tokens.get("total", 0) > ctx.budget.cap:
        return _fallback("context_overflow", f"prompt {state.tokens.get('prompt')} + answer {ctx.budget.answer} "
                         f"tokens exceed the cap {ctx.budget.cap}", [])
    if not ctx.base_url:
        return _fallback("no_endpoint", "no model endpoint configured", [])
    t0 = time.perf_counter()
    calls = state.llm_calls + 1
    try:
        reply = _complete(ctx, state)
    except openai.APITimeoutError as exc:
        return _fallback("timeout", str(exc), [], llm_calls=calls)
    except openai.APIConnectionError as exc:
        return _fallback("endpoint_down", f"{exc}: {exc.__cause__ or ''}", [], llm_calls=calls)
    except openai.APIResponseValidationError as exc:
        return _fallback("malformed_output", f"invalid response body: {exc}", [], llm_calls=calls)
    except openai.APIStatusError as exc:
        return _fallback("endpoint_error", f"HTTP {exc.status_code}: {exc.message}", [], llm_calls=calls)
    except Exception as exc:  # noqa: BLE001 - a broken reply must never break the turn
        return _fallback("malformed_output", f"{type(exc).__name__}: {exc}", [], llm_calls=calls)
    content, looped = reply.content, reply.looped
    if isinstance(content, str) and not reply.streamed and ctx.loop_guard:
        content, looped = trim_loop(content)  # a finished reply is cut where it started repeating too
    usage = dict(state.usage)
    for k in ("prompt_tokens", "completion_tokens"):
        usage[k] = usage.get(k, 0) + int(reply.usage.get(k, 0) or 0)
    served = reply.model or ctx.model
    step = {"step": "answer_or_request_recall", "round": state.recall_count, "llm_call": calls,
            "ms": elapsed_ms(t0), "chars": len(content or ""), "finish_reason": reply.finish_reason,
            "looped": looped, "streamed": reply.streamed}
    base = {"llm_calls": calls, "usage": usage, "served_model": served, "pending_calls": []}
    if not isinstance(content, str) or not _THINK.sub("", content).strip():
        return _fallback("malformed_output", "empty reply", [step], **base)
    content = _THINK.sub("", content).strip()
    parsed = parse_tool_calls(content)
    if parsed.ok:
        calls_ = [c.model_dump() for c in parsed.calls]
        step["tool_calls"] = calls_
        if state.recall_count >= state.max_recalls:
            return _fallback("recall_limit", f"asked for {len(calls_)} more tool call(s) after "
                             f"{state.recall_count} recalls", [step], **base)
        return {**base, "pending_calls": calls_, "trace": [step]}
    if parsed.near_miss or looks_like_tool_call(content) or content.startswith(("{", "[{", "```")):
        return _fallback("malformed_output", parsed.error or "unparseable tool call", [step],
                         **base, raw_output=content)
    step["answered"] = True
    return {**base, "raw_output": content, "trace": [step]}
