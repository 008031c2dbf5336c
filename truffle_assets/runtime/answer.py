"""The model's turn: one call through the `openai` client, then the answer the user sees.

* `answer_or_request_recall` calls the served model on the composed prompt. A reply that is exactly
  a read-tool envelope (`toolcalls.parse_tool_calls(...).ok`) becomes pending calls for
  `recall_retrieve` (at most `max_recalls` rounds; after that the context says no more searches are
  available, and an envelope then ends the turn as a retrieval-only answer). Endpoint down,
  timeout, HTTP errors and malformed output never raise: they set `fallback`.
* `finalize` keeps only citations of messages that were in the context (invented ids are removed
  from the text and listed in the trace), re-points or adds a citation where one shown message
  states a sentence's claim and the cited one does not (`attribution`, listed in the trace),
  labels uncertain evidence, scrubs secret-shaped values and adds a freshness line per chat
  ("Memory current to 2022-09-17 (priya-sharma)."). A fallback
  turn answers with the best evidence shown to the model, quoted (`_retrieval_only`).
"""

from __future__ import annotations

import re
import threading
import time
from dataclasses import dataclass, field, replace
from typing import Any

from langgraph.config import get_stream_writer
from langgraph.runtime import Runtime

from truffle_assets.chat_format.toolcalls import looks_like_tool_call, parse_tool_calls
from truffle_assets.runtime import privacy
from truffle_assets.runtime.attribution import attribute, without_self
from truffle_assets.runtime.context import evidence_line
from truffle_assets.runtime.dates import with_years
from truffle_assets.runtime.prompts import FALLBACK_REASONS, text
from truffle_assets.runtime.published import item_from_row
from truffle_assets.runtime.state import Context, State, elapsed_ms
from truffle_assets.runtime.streaming import CITE, AnswerStream, clean_body, trim_loop

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
    """The update of a turn that falls back to retrieval only: `steps` and a fallback step join the trace."""
    return {"fallback": reason, "fallback_detail": detail[:500],
            "trace": [*steps, {"step": "fallback", "reason": reason, "detail": detail[:500]}], **extra}


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


# ---- finalize ---------------------------------------------------------------------------------------

def _retrieval_only(state: State, ctx: Context) -> tuple[str, list[str], list[str]]:
    """(body, citations, uncertain) of a fallback answer: the best-scored evidence the model was shown, quoted."""
    shown = set(state.context_ids)
    best = sorted((i for i in state.items if i["message_id"] in shown), key=lambda i: -i["score"])[: ctx.fallback_quotes]
    reason = FALLBACK_REASONS.get(state.fallback or "", state.fallback or "unknown")
    if not best:
        return text("fallback_none", reason=reason), [], []
    lines = [text("fallback_header", reason=reason)]
    for it in best:
        mid, author, txt = evidence_line(it)
        quote = txt if len(txt) <= 280 else txt[:277].rstrip() + "…"
        lines.append(text("fallback_line", author=author, date=str(it.get("ts") or "")[:10], chat=it["chat_id"],
                          text=quote, id=mid, flag=" (uncertain)" if it.get("uncertain") else ""))
    ids = [i["message_id"] for i in best]
    return "\n".join(lines), ids, [i["message_id"] for i in best if i.get("uncertain")]


PROFILE_EVIDENCE = 3  # messages per shown profile fact that may become its citation


def _profile_evidence(state: State, ctx: Context) -> list[dict]:
    """The indexed messages behind the profile facts the latest prompt showed (a few per fact)."""
    from truffle_assets.runtime.published import fetch_messages, load_facts

    if not state.profile_shown:
        return []
    try:
        facts = load_facts(ctx.published_dir)
        ids = [m for f in state.profile_shown
               for m in (facts.get(f, {}).get("evidence_message_ids") or [])[:PROFILE_EVIDENCE]]
        return fetch_messages(ctx.pointer, list(dict.fromkeys(ids)))
    except Exception:  # noqa: BLE001 - a citation repair is never worth failing the answer over
        return []


def finalize(state: State, runtime: Runtime[Context]) -> dict:
    """The answer the user sees: checked citations, uncertainty labels, scrubbed secrets, freshness lines."""
    ctx = runtime.context
    by_id = {i["message_id"]: i for i in state.items}
    shown = set(state.context_ids)
    invalid: list[str] = []
    attributed: list[dict] = []
    dated: list[dict] = []
    self_named: list[str] = []
    fallback: dict = {}
    if state.refused:
        body, cites, weak = state.answer, [], []
    elif state.fallback:
        body, cites, weak = _retrieval_only(state, ctx)
    else:
        body, invalid = clean_body(state.raw_output or "", shown)
        sources = {i: evidence_line(by_id[i])[2] for i in state.context_ids if i in by_id}
        stated = {r["message_id"]: item_from_row(r, 0.0, state.recall_count, "profile")
                  for r in _profile_evidence(state, ctx) if r["message_id"] not in by_id}
        # a claim the profile gave can be cited to the messages its fact rests on (never shown as lines)
        sources |= {i: evidence_line(r)[2] for i, r in stated.items()}
        body, attributed = attribute(body, state.question, sources)
        for c in dict.fromkeys(CITE.findall(body)):
            if c in stated:  # a source now: it joins the items the turn's sources are read from
                by_id[c] = stated[c]
        if ctx.date_years:
            body, dated = with_years(body, {c: (by_id[c].get("ts"), sources[c])
                                            for c in CITE.findall(body) if c in sources}, state.question)
        body, self_named = without_self(body, (state.profile or {}).get("user"))
        if self_named and not re.sub(r"(?im)^\s*uncertain:.*$", "", CITE.sub("", body)).strip(" .,;:\n"):
            # it only named the user as someone else (an "Uncertain: …" note is no answer)
            body = text("self_named")
        if not body.strip(" .,;:"):  # nothing but invented citations
            fallback = {"fallback": "malformed_output", "fallback_detail": "the answer held only invented citations"}
            body, cites, weak = _retrieval_only(replace(state, **fallback), ctx)
        else:
            cites = list(dict.fromkeys(CITE.findall(body)))
            weak = [c for c in cites if by_id.get(c, {}).get("uncertain")]
            if weak and "uncertain" not in body.lower():
                body += "\n\n" + text("uncertain_answer", ids=", ".join(f"[msg:{c}]" for c in weak))
    scrubbed: list[str] = []
    if not state.refused:
        body, scrubbed = privacy.scrub(body)
    chats = sorted({by_id[c]["chat_id"] for c in cites if c in by_id})
    fresh = [text("freshness_answer", chat=c, date=state.watermarks[c][:10]) for c in chats if c in state.watermarks]
    answer = body + ("\n\n" + "\n".join(fresh) if fresh else "")
    step = {"step": "finalize", "citations": cites, "invalid_citations": invalid, "attributed": attributed,
            "dated": dated, "self_named": self_named,
            "uncertain": weak, "scrubbed": scrubbed, "fallback": fallback.get("fallback", state.fallback)}
    return {"answer": answer, "body": body, "citations": cites, "invalid_citations": invalid,
            "items": list(by_id.values()),
            "attributed": attributed, "self_named": self_named, "uncertain": weak,
            "freshness": fresh, "scrubbed": scrubbed, "trace": [step], **fallback}
