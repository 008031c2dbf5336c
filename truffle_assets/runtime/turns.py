"""Turns: a question through the chat graph to a `TurnResult`, the runtime store's record of it,
re-rolls and ratings.

A turn runs the LangGraph in `graph.py` on the model it leases (`ModelLease.lease`), then is
appended to the runtime store (`feedback.turns.write_turn`: metadata when `transcripts` is on,
prompt messages + answer only when `content` is on too) — a store failure is logged in the trace,
never raised. What is kept is the person's choice (`StoreSettings.keeping`), looked up on every
write, so a change saved by the page or another process applies to the next turn.
"""

from __future__ import annotations

import contextlib
import logging
import threading
import time
import uuid
from collections import OrderedDict
from collections.abc import Iterator
from datetime import date
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from truffle_assets.feedback.retention import retrieval_log_path
from truffle_assets.runtime import privacy
from truffle_assets.runtime.display import as_written
from truffle_assets.runtime.graph import graph
from truffle_assets.runtime.model_lease import ModelLease, Serving
from truffle_assets.runtime.prompts import system_prompt, template_version
from truffle_assets.runtime.published import read_json_cached
from truffle_assets.runtime.state import Context, InputState
from truffle_assets.runtime.store_settings import StoreSettings

log = logging.getLogger(__name__)
_REMEMBERED_TURNS = 1024
MCP_CONVERSATION = "mcp:"  # the conversation ids of `ask` over MCP (runtime.mcp.calllog.CONVERSATION_PREFIX)


class TurnResult(BaseModel):
    turn_id: str
    conversation_id: str
    answer: str                                   # body + one freshness line per cited chat
    citations: list[str] = Field(default_factory=list)   # message ids, all shown to the model this turn
    uncertain: list[str] = Field(default_factory=list)   # cited ids whose evidence is weak
    watermarks: dict[str, str] = Field(default_factory=dict)  # chat -> YYYY-MM-DD the memory is current to
    trace: dict[str, Any] = Field(default_factory=dict)
    tokens: dict[str, int] = Field(default_factory=dict)
    latency_ms: float = 0.0
    model: str | None = None
    fallback: str | None = None   # endpoint_down | timeout | endpoint_error | malformed_output |
                                  # recall_limit | no_endpoint | context_overflow
    refused: bool = False
    reroll_of: str | None = None
    body: str = ""                # the answer without freshness lines (what the store keeps)
    freshness: list[str] = Field(default_factory=list)
    sources: list[dict] = Field(default_factory=list)    # cited messages: message_id, chat_id, ts, author, text, uncertain
    kept: bool = False            # recorded in the runtime store (the person keeps transcripts)


class Turns:
    """Questions asked of the model `models` leases, recorded as `settings` says."""

    def __init__(self, models: ModelLease, settings: StoreSettings) -> None:
        self._models = models
        self._settings = settings
        self._turns: OrderedDict[str, dict] = OrderedDict()  # recent turns, for a re-roll
        self._turns_lock = threading.Lock()

    def context(self, temperature: float | None = None, serving: Serving | None = None) -> Context:
        """The graph's static knobs for a turn on `serving` (default: what is served now)."""
        cfg, ep, counter = serving or self._models.serving()
        keep = self._settings.keeping()
        trace_log = cfg.retrieval_log and keep.transcripts
        if trace_log:  # the trace is written before the turn, which may be the store's first
            Path(cfg.store_dir).mkdir(parents=True, exist_ok=True)
        return Context(
            published_dir=str(cfg.published_dir), base_url=ep.base_url, model=ep.model, api_key=ep.api_key,
            timeout_s=cfg.endpoint.timeout_s, max_retries=cfg.endpoint.max_retries,
            temperature=cfg.endpoint.temperature if temperature is None else temperature,
            frequency_penalty=cfg.endpoint.frequency_penalty, presence_penalty=cfg.endpoint.presence_penalty,
            repeat_penalty=cfg.endpoint.repeat_penalty, stop=tuple(cfg.endpoint.stop),
            loop_guard=cfg.endpoint.loop_guard,
            tokenizer=counter.source, tokenizer_proxy_for=counter.proxy_for, budget=cfg.budget,
            max_recalls=cfg.max_recalls, k_raw=cfg.k_raw, k_recall=cfg.k_recall,
            allow_secrets=cfg.policy.allow_secrets, fallback_quotes=cfg.fallback_quotes,
            timeline=cfg.timeline, repairs=cfg.repairs,
            # a retrieval trace is about a turn: only when transcripts are kept, the question's text only with content
            retrieval_log=str(retrieval_log_path(cfg.store_dir)) if trace_log else None,
            retrieval_log_text=keep.keeps_content)

    def ask(self, messages: list[dict], conversation_id: str | None = None, reroll_of: str | None = None,
            *, temperature: float | None = None, today: date | str | None = None) -> TurnResult:
        """Answer the last user message of `messages` (earlier user/assistant turns are the dialogue;
        client system messages are ignored). Never raises for endpoint or model failures."""
        turn = self._turn(messages, conversation_id, reroll_of, temperature, today, live=False)
        with contextlib.closing(turn):
            for event in turn:
                if "turn" in event:
                    return event["turn"]  # closing the turn ends its lease on the model
        raise RuntimeError("the chat graph ended without a turn")  # unreachable: _turn always ends with one

    def ask_stream(self, messages: list[dict], conversation_id: str | None = None, reroll_of: str | None = None,
                   *, temperature: float | None = None, today: date | str | None = None) -> Iterator[dict]:
        """`ask`, as it happens: `{"delta": text}` events while the model writes the answer (settled
        text only: cleaned, scrubbed, never a tool call), then `{"turn": TurnResult}`. The deltas
        are a prefix of the final answer unless the turn fell back after prose had been sent: then
        `turn.answer` replaces them.
        The question is checked before this returns."""
        return self._turn(messages, conversation_id, reroll_of, temperature, today, live=True)

    def _turn(self, messages: list[dict], conversation_id: str | None, reroll_of: str | None,
              temperature: float | None, today: date | str | None, *, live: bool) -> Iterator[dict]:
        t0 = time.perf_counter()
        messages = [{"role": str(m.get("role")), "content": str(m.get("content") or "")} for m in messages]
        if not any(m["role"] == "user" and m["content"].strip() for m in messages):
            raise ValueError("messages must contain a non-empty user message")
        if reroll_of is not None and temperature is None:
            temperature = self._models.config.endpoint.reroll_temperature
        serving = self._models.serving()
        ctx = self.context(temperature, serving)
        ctx.stream = live
        today_s = today.isoformat() if isinstance(today, date) else today
        state = InputState(messages=messages, today=today_s, temperature=temperature)
        return self._run(state, ctx, serving, messages, conversation_id or uuid.uuid4().hex, reroll_of, t0)

    def _run(self, state: InputState, ctx: Context, serving: Serving, messages: list[dict], conversation_id: str,
             reroll_of: str | None, t0: float) -> Iterator[dict]:
        # the lease is taken when the turn starts running (a stream never read holds nothing); a model
        # switched in since the question was checked is the one it runs on, and a switch while it runs
        # keeps the old server until it ends
        with self._models.lease(serving) as held:
            if held is not serving:
                live, ctx = ctx.stream, self.context(state.temperature, held)
                ctx.stream, serving = live, held
            out: dict = {}
            for mode, event in graph.stream(state, context=ctx, stream_mode=["custom", "values"]):
                if mode == "custom":
                    yield event
                else:
                    out = event
            yield {"turn": self._result(out, serving, messages, conversation_id, reroll_of, t0)}

    def _result(self, out: dict, serving: Serving, messages: list[dict], conversation_id: str,
                reroll_of: str | None, t0: float) -> TurnResult:
        turn_id = uuid.uuid4().hex
        latency = round((time.perf_counter() - t0) * 1000, 1)
        by_id = {i["message_id"]: i for i in out.get("items", [])}
        sources = [{k: by_id[c].get(k) for k in ("message_id", "chat_id", "ts", "author", "uncertain")}
                   | {"text": as_written(by_id[c].get("shown_text"), by_id[c].get("text"))}
                   for c in out.get("citations", []) if c in by_id]
        steps = out.get("trace", [])
        recalls = [s for s in steps if s["step"] == "recall_retrieve"]
        final = next((s for s in reversed(steps) if s["step"] == "finalize"), {})
        composed = next((s for s in reversed(steps) if s["step"] == "compose_context"), {})
        fell = next((s for s in reversed(steps) if s["step"] == "fallback"), {})
        trace = {
            "steps": steps, "recalls": [s["intent"] for s in recalls], "tool_calls": [s["call"] for s in recalls],
            "recall_count": out.get("recall_count", 0), "max_recalls": out.get("max_recalls"),
            "llm_calls": out.get("llm_calls", 0), "usage": out.get("usage", {}),
            "context_ids": out.get("context_ids", []), "profile_shown": out.get("profile_shown", []),
            "dropped": composed.get("dropped", {}),
            **{k: final.get(k, []) for k in ("invalid_citations", "attributed", "self_named", "scrubbed")},
            "fallback_detail": final.get("fallback_detail") or fell.get("detail"), "tokenizer": serving.counter.name,
            "budget": serving.config.budget.model_dump(), "refused_kind": out.get("refused_kind"),
            "model_file": Path(serving.config.endpoint.gguf).name if serving.config.endpoint.gguf else None,
        }
        wm = {c: str(ts)[:10] for c, ts in (out.get("watermarks") or {}).items()}
        if not wm:
            pointer = read_json_cached(self._models.config.pointer) or {}
            wm = {c: str(ts)[:10] for c, ts in (pointer.get("watermarks") or {}).items()}
        result = TurnResult(
            turn_id=turn_id, conversation_id=conversation_id, answer=out.get("answer", ""),
            citations=out.get("citations", []), uncertain=out.get("uncertain", []), watermarks=wm, trace=trace,
            tokens=dict(out.get("tokens") or {}), latency_ms=latency,
            model=out.get("served_model") or (serving.endpoint.model if out.get("llm_calls") else None),
            fallback=out.get("fallback"), refused=bool(out.get("refused")), reroll_of=reroll_of,
            body=out.get("body", ""), freshness=out.get("freshness", []), sources=sources)
        self._remember(turn_id, conversation_id, messages)
        self._record(result, out, messages)
        return result

    def compose(self, question: str, *, today: date | str | None = None) -> dict:
        """The turn up to the model call, as `ask` runs it (guard, retrieval, `compose_context`), without
        calling the model: the state then (`prompt`, `context_ids`, `items`, `tokens`, `trace`), or
        `{"refused": True, ...}` when the guard refuses the question. Training data and benchmarks
        use it to see exactly the prompt the runtime would send."""
        ctx = self.context()
        today_s = today.isoformat() if isinstance(today, date) else today
        state = InputState(messages=[{"role": "user", "content": question}], today=today_s)
        out: dict = {"trace": []}
        stream = graph.stream(state, context=ctx, stream_mode="updates")
        try:
            for chunk in stream:
                for node, upd in chunk.items():
                    upd = dict(upd or {})
                    out["trace"] += upd.pop("trace", [])
                    out.update(upd)
                    if node == "compose_context":
                        return out
                    if node == "refuse":
                        return out | {"refused": True}
        finally:
            stream.close()
        raise RuntimeError("the chat graph ended without composing a context")

    def reroll(self, turn_id: str) -> TurnResult:
        """The same prompt again at `endpoint.reroll_temperature` (> 0); both turns stay in the store."""
        prev = self._recall_turn(turn_id)
        if prev is None:
            raise KeyError(f"unknown turn {turn_id!r} (not in this process and no stored content)")
        return self.ask(prev["messages"], conversation_id=prev["conversation_id"], reroll_of=turn_id,
                        temperature=self._models.config.endpoint.reroll_temperature)

    def feedback(self, turn_id: str, rating: int, note: str = "") -> bool:
        """Append a rating (-1, 0, 1) for a turn; False when ratings are not kept (nothing written)."""
        if not self._settings.keeping().feedback:
            return False
        from truffle_assets.feedback.turns import append_feedback

        append_feedback(self._models.config.store_dir, turn_id, rating, privacy.redact_data(note))
        return True

    def _record(self, result: TurnResult, out: dict, messages: list[dict]) -> None:
        cfg = self._models.config
        keep = self._settings.keeping()
        if not keep.transcripts:
            return
        content = keep.keeps_content
        from truffle_assets.feedback.turns import write_turn

        try:
            prompt = out.get("prompt") or [{"role": "system", "content": system_prompt()}, *messages[-1:]]
            stored = [{"role": m["role"], "content": privacy.redact_data(m["content"])} for m in prompt]
            changed = any(a["content"] != m["content"] for a, m in zip(stored, prompt))
            principals = (["denied"] if result.refused else []) + (["redacted"] if changed or result.trace["scrubbed"] else [])
            if result.conversation_id.startswith(MCP_CONVERSATION):  # an agent's `ask` over MCP: never a training row
                principals.append("mcp")
            write_turn(cfg.store_dir, result.turn_id, result.conversation_id,
                       messages=stored if content else None, answer=result.body if content else None,
                       model=result.model, template_version=template_version(),
                       retrieval_ids=out.get("context_ids", []), tool_calls=result.trace["tool_calls"],
                       tokens=result.tokens, latency_ms=result.latency_ms, reroll_of=result.reroll_of,
                       principals=principals, keep_content=content)
            result.kept = True
        except Exception as exc:  # noqa: BLE001 - the store never fails a turn
            log.warning("runtime store write failed: %s", exc)
            result.trace["store_error"] = f"{type(exc).__name__}: {exc}"

    def _remember(self, turn_id: str, conversation_id: str, messages: list[dict]) -> None:
        with self._turns_lock:
            self._turns[turn_id] = {"conversation_id": conversation_id, "messages": messages}
            while len(self._turns) > _REMEMBERED_TURNS:
                self._turns.popitem(last=False)

    def _recall_turn(self, turn_id: str) -> dict | None:
        with self._turns_lock:
            hit = self._turns.get(turn_id)
        if hit is not None:
            return hit
        if not self._settings.keeping().keeps_content:
            return None
        # an earlier process's turn: its stored (redacted) prompt ends with the dialogue it answered
        from truffle_assets.feedback.turns import load_turns

        for t in reversed(load_turns(self._models.config.store_dir)):
            if t.turn_id == turn_id and t.messages:
                dialogue = [m for m in t.messages if m["role"] in ("user", "assistant")]
                return {"conversation_id": t.conversation_id or uuid.uuid4().hex, "messages": dialogue}
        return None
