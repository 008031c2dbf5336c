"""The model's turn: one call through the `openai` client, then the answer the user sees.

* `answer_or_request_recall` calls the served model on the composed prompt. A reply that is exactly
  a read-tool envelope (`toolcalls.parse_tool_calls(...).ok`) becomes pending calls for
  `recall_retrieve` (at most `max_recalls` rounds; after that the context says no more searches are
  available, and an envelope then ends the turn as a retrieval-only answer). Endpoint down,
  timeout, HTTP errors and malformed output never raise: they set `fallback`.
* `finalize` keeps only citations of messages that were in the context (invented ids are removed
  from the text and listed in the trace), labels uncertain evidence, scrubs secret-shaped values
  and adds a freshness line per chat ("Memory current to 2022-09-17 (priya-sharma)."). A fallback
  turn answers with the best evidence shown to the model, quoted (`_retrieval_only`).
"""

from __future__ import annotations

import re
import threading
import time
from dataclasses import replace
from typing import Any

from langgraph.runtime import Runtime

from truffle_assets.chat_format.toolcalls import looks_like_tool_call, parse_tool_calls
from truffle_assets.runtime import privacy
from truffle_assets.runtime.context import evidence_line
from truffle_assets.runtime.prompts import FALLBACK_REASONS, text
from truffle_assets.runtime.state import Context, State, elapsed_ms

_THINK = re.compile(r"<think>.*?</think>", re.S | re.I)
_CITE = re.compile(r"\[msg:([^\]\s]{1,64})\]")

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
        resp = _client(ctx).chat.completions.create(
            model=ctx.model, messages=state.prompt, temperature=state.temperature,
            max_tokens=ctx.budget.answer)
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
    content = None
    try:
        content = resp.choices[0].message.content
    except (AttributeError, IndexError, TypeError):
        pass
    usage = dict(state.usage)
    if getattr(resp, "usage", None) is not None:
        for k in ("prompt_tokens", "completion_tokens"):
            usage[k] = usage.get(k, 0) + int(getattr(resp.usage, k, 0) or 0)
    served = getattr(resp, "model", None) or ctx.model
    step = {"step": "answer_or_request_recall", "round": state.recall_count, "llm_call": calls,
            "ms": elapsed_ms(t0), "chars": len(content or "")}
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


def finalize(state: State, runtime: Runtime[Context]) -> dict:
    """The answer the user sees: checked citations, uncertainty labels, scrubbed secrets, freshness lines."""
    ctx = runtime.context
    by_id = {i["message_id"]: i for i in state.items}
    shown = set(state.context_ids)
    invalid: list[str] = []
    fallback: dict = {}
    if state.refused:
        body, cites, weak = state.answer, [], []
    elif state.fallback:
        body, cites, weak = _retrieval_only(state, ctx)
    else:
        body = state.raw_output or ""

        def keep(m: re.Match) -> str:
            if m.group(1) in shown:
                return m.group(0)
            invalid.append(m.group(1))
            return ""

        body = re.sub(r"[ \t]?" + _CITE.pattern, keep, body).strip()
        if not body.strip(" .,;:"):  # nothing but invented citations
            fallback = {"fallback": "malformed_output", "fallback_detail": "the answer held only invented citations"}
            body, cites, weak = _retrieval_only(replace(state, **fallback), ctx)
        else:
            cites = list(dict.fromkeys(_CITE.findall(body)))
            weak = [c for c in cites if by_id.get(c, {}).get("uncertain")]
            if weak and "uncertain" not in body.lower():
                body += "\n\n" + text("uncertain_answer", ids=", ".join(f"[msg:{c}]" for c in weak))
    scrubbed: list[str] = []
    if not state.refused:
        body, scrubbed = privacy.scrub(body)
    chats = sorted({by_id[c]["chat_id"] for c in cites if c in by_id})
    fresh = [text("freshness_answer", chat=c, date=state.watermarks[c][:10]) for c in chats if c in state.watermarks]
    answer = body + ("\n\n" + "\n".join(fresh) if fresh else "")
    step = {"step": "finalize", "citations": cites, "invalid_citations": invalid, "uncertain": weak,
            "scrubbed": scrubbed, "fallback": fallback.get("fallback", state.fallback)}
    return {"answer": answer, "body": body, "citations": cites, "invalid_citations": invalid, "uncertain": weak,
            "freshness": fresh, "scrubbed": scrubbed, "trace": [step], **fallback}
