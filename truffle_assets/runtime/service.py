"""`ChatService`: the one object every interface (CLI, HTTP API, web page, benchmarks) talks to.

    service = ChatService(RuntimeConfig(endpoint={"base_url": url, "model": "local"}))
    turn = service.ask([{"role": "user", "content": "When is Priya's party?"}])
    turn.answer, turn.citations, turn.tokens, turn.fallback

It composes parts with one job each, and its methods hand the call to them:
* `models` (`model_lease.ModelLease`): the served model, its tokenizer and config, switched as one
  and leased per turn;
* `settings` (`store_settings.StoreSettings`): what the runtime store keeps;
* `turns` (`turns.Turns`): ask, stream, compose, re-roll, rate, and the store's record of a turn;
* `lookups` (`lookups.MemoryLookups`): the memory inspector's reads of messages, days, facts, profile;
* `pruning.prune`: the store's retention.

The service reads only published files (latest.json → LanceDB, profile.json, facts.json) and never
opens the pipeline's DuckDB file. `open_service` starts it on a live endpoint.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from datetime import date, datetime
from typing import Any

from truffle_assets.feedback.retention import StorePrune
from truffle_assets.feedback.settings import LoggingSettings
from truffle_assets.llm.server import Endpoint, resolve_endpoint
from truffle_assets.runtime import pruning
from truffle_assets.runtime.config import RuntimeConfig
from truffle_assets.runtime.lookups import MemoryLookups
from truffle_assets.runtime.model_lease import ModelLease, Serving
from truffle_assets.runtime.state import Context
from truffle_assets.runtime.store_settings import StoreSettings
from truffle_assets.runtime.tokens import TokenCounter
from truffle_assets.runtime.turns import Turns, TurnResult

__all__ = ["ChatService", "Serving", "TurnResult", "open_service", "EMBEDDED_BUDGET", "EMBEDDED_SAMPLING",
           "EMBEDDED_STOP", "EMBEDDED_TIMEOUT_S"]


class ChatService:
    def __init__(self, config: RuntimeConfig | None = None, *, counter: TokenCounter | None = None,
                 endpoint: Endpoint | None = None) -> None:
        self.models = ModelLease(config or RuntimeConfig(), counter=counter, endpoint=endpoint)
        self.settings = StoreSettings(self.models)
        self.turns = Turns(self.models, self.settings)
        self.lookups = MemoryLookups(self.models)

    # ---- the model and its config (`models`) -------------------------------------------------------
    @property
    def config(self) -> RuntimeConfig:
        return self.models.config

    @config.setter
    def config(self, config: RuntimeConfig) -> None:
        self.models.update(**dict(config))

    @property
    def endpoint(self) -> Endpoint:
        return self.models.endpoint

    @property
    def model(self) -> str:
        return self.models.model

    @property
    def counter(self) -> TokenCounter:
        return self.models.counter

    @property
    def served(self) -> Any:
        return self.models.served

    @served.setter
    def served(self, served: Any) -> None:
        self.models.served = served

    def serving(self) -> Serving:
        return self.models.serving()

    def switch_model(self, endpoint: Endpoint, gguf: str) -> Endpoint:
        return self.models.switch_model(endpoint, gguf)

    def lease(self, serving: Serving | None = None):
        return self.models.lease(serving)

    def drain(self, endpoint: Endpoint, timeout: float) -> bool:
        return self.models.drain(endpoint, timeout)

    def model_status(self) -> dict[str, Any]:
        return self.models.model_status()

    def warm_up(self) -> None:
        """Load the tokenizer and the query embedder now, so the first turn is not the slow one."""
        from truffle_assets.retrieval import open_index

        _ = self.counter
        if self.config.pointer.is_file():
            open_index(self.config.pointer).embedder.encode_query("warm up")

    # ---- what the store keeps (`settings`) -----------------------------------------------------------
    def keeping(self) -> LoggingSettings:
        return self.settings.keeping()

    def save_settings(self, changes: dict[str, Any]) -> dict[str, Any]:
        return self.settings.save(changes)

    # ---- turns (`turns`) -----------------------------------------------------------------------------
    def context(self, temperature: float | None = None, serving: Serving | None = None) -> Context:
        return self.turns.context(temperature, serving)

    def ask(self, messages: list[dict], conversation_id: str | None = None, reroll_of: str | None = None,
            *, temperature: float | None = None, today: date | str | None = None) -> TurnResult:
        return self.turns.ask(messages, conversation_id, reroll_of, temperature=temperature, today=today)

    def ask_stream(self, messages: list[dict], conversation_id: str | None = None, reroll_of: str | None = None,
                   *, temperature: float | None = None, today: date | str | None = None) -> Iterator[dict]:
        return self.turns.ask_stream(messages, conversation_id, reroll_of, temperature=temperature, today=today)

    def compose(self, question: str, *, today: date | str | None = None) -> dict:
        return self.turns.compose(question, today=today)

    def reroll(self, turn_id: str) -> TurnResult:
        return self.turns.reroll(turn_id)

    def feedback(self, turn_id: str, rating: int, note: str = "") -> bool:
        return self.turns.feedback(turn_id, rating, note)

    # ---- the memory inspector (`lookups`) -------------------------------------------------------------
    def evidence(self, message_id: str, around: int = 0) -> dict | None:
        return self.lookups.evidence(message_id, around)

    def day(self, chat_id: str, day: str) -> list[dict]:
        return self.lookups.day(chat_id, day)

    def fact(self, fact_id: str) -> dict | None:
        return self.lookups.fact(fact_id)

    def profile(self) -> dict | None:
        return self.lookups.profile()

    # ---- the store's retention (`pruning`) ------------------------------------------------------------
    def prune(self, now: datetime | date | None = None) -> StorePrune:
        return pruning.prune(self.config, self.keeping().retention_days, now)


# ~1.15K prompt tokens. 350 raw tokens show the fact's message for 46 of 62 answerable QA questions
# (700: 48; 200: 38), and the fine-tuned model reads more of them right with fewer lines around, in
# two thirds of the time (benchmarks/qa_eval.py)
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
    `endpoint.gguf`, else the registry's active model, else the shared shipped fine-tune or the
    Qwen2.5-Coder-0.5B GGUF (`llm.gguf.served`; stopped on exit). With an embedded server the budget
    cap is clamped to its context (`n_ctx`).

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
    if ep.model:  # else each model is served under its own id (`ServedModel`)
        server_kwargs.setdefault("alias", ep.model)
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
