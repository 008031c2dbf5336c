"""`ChatService`: the one object every interface (CLI, HTTP API, web page, benchmarks) talks to.

    service = ChatService(RuntimeConfig(endpoint={"base_url": url, "model": "local"}))
    turn = service.ask([{"role": "user", "content": "When is Priya's party?"}])
    turn.answer, turn.citations, turn.tokens, turn.fallback

A turn runs the LangGraph in `graph.py`, then is appended to the runtime store
(`feedback.turns.write_turn`: metadata when `transcripts` is on, prompt messages + answer only
when `content` is on too) — a store failure is logged in the trace, never raised. What is kept is
the person's choice (`feedback.settings`, off until turned on), looked up on every write, so a
change saved by the page or another process applies to the next turn; an unreadable choice keeps
nothing. The service reads only published files (latest.json → LanceDB, profile.json,
facts.json) and never opens the pipeline's DuckDB file.
"""

from __future__ import annotations

import contextlib
import logging
import threading
import time
import uuid
from collections import OrderedDict
from collections.abc import Iterator
from datetime import date, datetime
from pathlib import Path
from typing import Any, NamedTuple

from pydantic import BaseModel, Field

from truffle_assets.feedback.settings import FIELDS as KEEP_FIELDS, LoggingSettings, SettingsError, save
from truffle_assets.llm.server import Endpoint, resolve_endpoint
from truffle_assets.net import url_is_loopback
from truffle_assets.feedback.retention import StorePrune, prune_retrieval_log, prune_store, retrieval_log_path
from truffle_assets.runtime import privacy
from truffle_assets.runtime.config import RuntimeConfig
from truffle_assets.runtime.graph import graph
from truffle_assets.runtime.prompts import system_prompt, template_version
from truffle_assets.runtime.display import as_written
from truffle_assets.runtime.published import fetch_day, fetch_messages, load_facts, read_json_cached, read_profile
from truffle_assets.runtime.state import Context, InputState
from truffle_assets.runtime.tokens import TokenCounter

log = logging.getLogger(__name__)
_REMEMBERED_TURNS = 1024


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


class Serving(NamedTuple):
    """What a turn runs on, read in one step (`ChatService.serving`): a model switch replaces all
    three at once, so no turn pairs one model's endpoint with another's tokenizer."""

    config: RuntimeConfig
    endpoint: Endpoint
    counter: TokenCounter


class ChatService:
    def __init__(self, config: RuntimeConfig | None = None, *, counter: TokenCounter | None = None,
                 endpoint: Endpoint | None = None) -> None:
        self.config = config or RuntimeConfig()
        ep = self.config.endpoint
        # `open_service` passes the endpoint it already resolved (and started): resolved once per serve
        self.endpoint = endpoint or resolve_endpoint(ep.base_url, ep.model, ep.api_key, ep.gguf)
        self._counter = counter
        # config, endpoint and counter change together (`switch_model`); turns count per endpoint
        self._lock = threading.RLock()
        self._idle = threading.Condition(self._lock)
        self._running: dict[Endpoint, int] = {}
        self.served = None  # `served_model.ServedModel` when open_service started llama.cpp
        self._turns: OrderedDict[str, dict] = OrderedDict()
        self._turns_lock = threading.Lock()

    # ---- configuration ------------------------------------------------------------------------------
    @property
    def model(self) -> str:
        return self.endpoint.model

    def tokenizer_source(self) -> tuple[str, str | None]:
        """(GGUF or tokenizer folder, proxy_for): the served model's own tokenizer when known; for a
        remote endpoint (OpenRouter) the local Qwen2.5 GGUF, labelled as a proxy for the remote model."""
        cfg = self.config
        if cfg.tokenizer:
            return cfg.tokenizer, None
        if cfg.endpoint.gguf or self.endpoint.gguf:
            return str(cfg.endpoint.gguf or self.endpoint.gguf), None
        from truffle_assets.llm.gguf import active_gguf, qwen_gguf

        local = self.endpoint.base_url is None or url_is_loopback(self.endpoint.base_url)
        if local:
            active = None
            with contextlib.suppress(Exception):  # an unreadable registry falls back to the base tokenizer
                active = active_gguf(cfg.registry_dir)
            if active and Path(active).is_file():
                return active, None
        return str(qwen_gguf()), (None if local and self.endpoint.embedded else self.endpoint.model)

    @property
    def counter(self) -> TokenCounter:
        with self._lock:
            if self._counter is None:
                src, proxy = self.tokenizer_source()
                self._counter = TokenCounter.load(src, proxy_for=proxy)
            return self._counter

    def keeping(self) -> LoggingSettings:
        """What the store keeps right now; an unreadable saved choice keeps nothing (and says why in the log)."""
        try:
            return self.config.keeping()[0]
        except SettingsError as exc:
            log.warning("keeping nothing: %s", exc)
            return LoggingSettings()

    def save_settings(self, changes: dict[str, Any]) -> dict[str, Any]:
        """Save the person's choice in the store (every process on it follows) and drop this process's
        own overrides of what changed, so the saved choice is what applies here too."""
        saved = save(self.config.store_dir, changes)
        with self._lock:
            self.config = self.config.model_copy(update={k: None for k in changes if k in KEEP_FIELDS})
        return saved

    # ---- the model ------------------------------------------------------------------------------------
    def serving(self) -> Serving:
        with self._lock:
            return Serving(self.config, self.endpoint, self.counter)

    def switch_model(self, endpoint: Endpoint, gguf: str) -> Endpoint:
        """From the next turn on, ask `endpoint` (llama.cpp on `gguf`) and count with that GGUF's
        tokenizer (unless one is configured); returns the endpoint it replaced. Turns already running
        finish on theirs: `drain` says when none is left."""
        counter = TokenCounter.load(self.config.tokenizer or gguf)  # loaded first: no turn waits for it
        with self._lock:
            old = self.endpoint
            ep = self.config.endpoint.model_copy(update={"base_url": endpoint.base_url, "gguf": str(gguf)})
            self.config = self.config.model_copy(update={"endpoint": ep})
            self.endpoint, self._counter = endpoint, counter
        return old

    @contextlib.contextmanager
    def lease(self, serving: Serving | None = None) -> Iterator[Serving]:
        """The model a turn runs on, held until the turn ends: `serving` while it is still the current
        endpoint, else what is served now. A switch stops the old server once `drain` says it is free."""
        with self._lock:
            current = self.serving()
            if serving is None or serving.endpoint != current.endpoint:
                serving = current
            self._running[serving.endpoint] = self._running.get(serving.endpoint, 0) + 1
        try:
            yield serving
        finally:
            with self._lock:
                left = self._running.pop(serving.endpoint) - 1
                if left:
                    self._running[serving.endpoint] = left
                self._idle.notify_all()

    def drain(self, endpoint: Endpoint, timeout: float) -> bool:
        """Wait up to `timeout` s for the turns running on `endpoint` to end; True when none is left."""
        with self._idle:
            return self._idle.wait_for(lambda: not self._running.get(endpoint), timeout)

    def model_status(self) -> dict[str, Any]:
        """The model served now, as `GET /api/health` reports it (`ServedModel.status` when embedded)."""
        if self.served is not None:
            return {"name": self.model, **self.served.status()}
        gguf = self.config.endpoint.gguf
        return {"name": self.model, "source": "endpoint", "file": Path(gguf).name if gguf else None,
                "follows_registry": False, "error": None}

    def context(self, temperature: float | None = None, serving: Serving | None = None) -> Context:
        cfg, ep, counter = serving or self.serving()
        keep = self.keeping()
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

    def warm_up(self) -> None:
        """Load the tokenizer and the query embedder now, so the first turn is not the slow one."""
        from truffle_assets.retrieval import open_index

        _ = self.counter
        if self.config.pointer.is_file():
            open_index(self.config.pointer).embedder.encode_query("warm up")

    # ---- turns -------------------------------------------------------------------------------------
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
            temperature = self.config.endpoint.reroll_temperature
        serving = self.serving()
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
        with self.lease(serving) as held:
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
            pointer = read_json_cached(self.config.pointer) or {}
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
                        temperature=self.config.endpoint.reroll_temperature)

    def feedback(self, turn_id: str, rating: int, note: str = "") -> bool:
        """Append a rating (-1, 0, 1) for a turn; False when ratings are not kept (nothing written)."""
        if not self.keeping().feedback:
            return False
        from truffle_assets.feedback.turns import append_feedback

        append_feedback(self.config.store_dir, turn_id, rating, privacy.redact_data(note))
        return True

    # ---- memory inspector --------------------------------------------------------------------------
    def evidence(self, message_id: str, around: int = 0) -> dict | None:
        """{message_id, chat_id, ts, day, author, text} of one indexed (redacted) message, or None;
        with `around` > 0 also `neighbours`: up to that many messages of the same chat and day
        before and after it, in order, the message itself included (`"cited": true`)."""
        rows = self._messages([message_id])
        if not rows:
            return None
        found = rows[0]
        if around > 0 and found.get("day"):
            day = self.day(found["chat_id"], found["day"])
            at = next((i for i, r in enumerate(day) if r["message_id"] == message_id), None)
            if at is not None:
                found["neighbours"] = [r | {"cited": r["message_id"] == message_id}
                                       for r in day[max(0, at - around): at + around + 1]]
        return found

    def day(self, chat_id: str, day: str) -> list[dict]:
        """A chat's indexed (redacted) messages of one day, oldest first."""
        return [self._row(r) for r in fetch_day(self.config.pointer, str(chat_id), str(day)[:10])]

    def _messages(self, ids: list[str]) -> list[dict]:
        try:
            rows = fetch_messages(self.config.pointer, [str(i) for i in ids])
        except Exception as exc:  # noqa: BLE001 - an unreadable index is "not found" to a caller
            log.warning("evidence lookup failed: %s", exc)
            return []
        return [self._row(r) for r in rows]

    @staticmethod
    def _row(r: dict) -> dict:
        """A message as callers see it: as written (`display.as_written`), still redacted."""
        ts = r.get("ts")
        ts_s = ts.isoformat() if hasattr(ts, "isoformat") else (str(ts) if ts is not None else None)
        return {"message_id": r["message_id"], "chat_id": r["chat_id"], "ts": ts_s,
                "day": ts_s[:10] if ts_s else None, "author": r.get("author"),
                "text": as_written(r.get("shown_text"), r.get("text"))}

    def fact(self, fact_id: str) -> dict | None:
        """A fact from the published facts.json (current or superseded) with its evidence messages."""
        f = load_facts(self.config.published_dir).get(str(fact_id))
        if f is None:
            return None
        keep = ("fact_id", "fact_text", "category", "predicate", "value", "subject", "confidence", "first_seen_at",
                "last_seen_at", "valid_from", "valid_to", "superseded_by", "evidence_message_ids")
        out = {k: f.get(k) for k in keep if k in f}
        out["fact_id"] = str(f.get("fact_id") or f.get("id"))
        out["evidence"] = self._messages(list(f.get("evidence_message_ids") or []))
        return out

    def profile(self) -> dict | None:
        return read_profile(self.config.published_dir)

    # ---- store ----------------------------------------------------------------------------------------
    def prune(self, now: datetime | date | None = None) -> StorePrune:
        """Delete store day files and retrieval traces older than the retention window; what went
        (the daily Dagster job `runtime_retention` does this and also prunes the datasets)."""
        keep = self.keeping()
        report = prune_store(self.config.store_dir, keep.retention_days, now)
        report.records["retrieval_traces"] = prune_retrieval_log(self.config.store_dir, report.cutoff)
        return report

    def _record(self, result: TurnResult, out: dict, messages: list[dict]) -> None:
        cfg = self.config
        keep = self.keeping()
        if not keep.transcripts:
            return
        content = keep.keeps_content
        from truffle_assets.feedback.turns import write_turn

        try:
            prompt = out.get("prompt") or [{"role": "system", "content": system_prompt()}, *messages[-1:]]
            stored = [{"role": m["role"], "content": privacy.redact_data(m["content"])} for m in prompt]
            changed = any(a["content"] != m["content"] for a, m in zip(stored, prompt))
            principals = (["denied"] if result.refused else []) + (["redacted"] if changed or result.trace["scrubbed"] else [])
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
        if not self.keeping().keeps_content:
            return None
        # an earlier process's turn: its stored (redacted) prompt ends with the dialogue it answered
        from truffle_assets.feedback.turns import load_turns

        for t in reversed(load_turns(self.config.store_dir)):
            if t.turn_id == turn_id and t.messages:
                dialogue = [m for m in t.messages if m["role"] in ("user", "assistant")]
                return {"conversation_id": t.conversation_id or uuid.uuid4().hex, "messages": dialogue}
        return None


# ~1.15K prompt tokens. 350 raw tokens showed the fact's message for 46 of 62 answerable questions
# (700: 48) and the promoted model read more of them right with fewer lines around (qa_eval, 2026-11-29:
# accuracy 0.208 -> 0.273, citation precision 0.27 -> 0.46) in two thirds of the time; 200 showed 38
EMBEDDED_BUDGET = {"profile": 250, "summaries": 150, "raw": 350, "dialogue": 400, "answer": 256}
# The embedded 0.5B model at temperature 0 repeats lines until max_tokens; these (with the loop
# guard, on for every endpoint) are what benchmarks/repetition_bench.py measured. A stop ends the
# reply where the model starts another chat turn or re-quotes the context block.
EMBEDDED_STOP = ("<|im_start|>", "<|endoftext|>", "\nRetrieved messages:", "\n\n\n")
# a 0.5B model on two busy cores can read a few thousand prompt tokens for minutes before its first
# token (the page shows the search, then the answer as it streams): unless a timeout is configured,
# waiting is better than a fallback
EMBEDDED_TIMEOUT_S = 600.0
EMBEDDED_SAMPLING = {"frequency_penalty": 0.3, "presence_penalty": None, "repeat_penalty": 1.15,
                     "stop": list(EMBEDDED_STOP)}


@contextlib.contextmanager
def open_service(config: RuntimeConfig | None = None, *, endpoint: Endpoint | None = None, n_ctx: int = 16_384,
                 follow_registry: bool = False, **server_kwargs) -> Iterator[ChatService]:
    """A ChatService on a live endpoint: the configured/env one, or an embedded llama.cpp server on
    `endpoint.gguf`, else the registry's active model, else the Qwen2.5-Coder-0.5B GGUF (stopped on
    exit). With an embedded server the budget cap is clamped to its context (`n_ctx`).

    `follow_registry`: an embedded server that serves the registry's choice (no explicit GGUF) moves
    to the model a later promotion or rollback makes active (`served_model.ServedModel`). `truffle
    serve` asks for it; off by default, so a benchmark or a one-shot `truffle ask` uses one model
    from start to end. `server_kwargs`: `LlamaServer`'s (alias, log_path, ...) and `interval`, how
    often the registry is looked at."""
    from truffle_assets.runtime.served_model import ServedModel

    config = config or RuntimeConfig.from_env()
    ep = config.endpoint
    resolved = endpoint or resolve_endpoint(ep.base_url, ep.model, ep.api_key, ep.gguf)
    if not resolved.embedded:
        yield ChatService(config, endpoint=resolved)
        return
    server_kwargs.setdefault("alias", ep.model or "local")
    with ServedModel(config.registry_dir, ep.gguf or resolved.gguf, n_ctx=n_ctx, **server_kwargs) as served:
        srv = served.server
        cap = min(config.budget.cap, n_ctx)
        # the 128K budget is for a 30B model behind an endpoint; a 0.5B model on two CPU cores reads
        # ~70 tokens/s, so the embedded default keeps a turn to a few thousand tokens
        small = {k: min(getattr(config.budget, k), v) for k, v in EMBEDDED_BUDGET.items()}
        budget = config.budget.model_copy(update={**small, "cap": cap, "answer": min(small["answer"], cap // 4)})
        # anti-repetition sampling unless the config chose its own
        sampling = {k: v for k, v in EMBEDDED_SAMPLING.items() if getattr(ep, k) in (None, [])}
        cfg = config.model_copy(update={
            "endpoint": ep.model_copy(update={"base_url": srv.base_url, "model": srv.alias, "gguf": str(srv.gguf),
                                              "timeout_s": ep.timeout_s if "timeout_s" in ep.model_fields_set else EMBEDDED_TIMEOUT_S,
                                              **sampling}),
            "budget": budget})
        service = ChatService(cfg, endpoint=srv.endpoint())
        service.served = served
        if follow_registry:
            served.follow(service)
        yield service
