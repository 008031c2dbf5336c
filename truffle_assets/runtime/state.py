"""What a chat turn carries: its static `Context`, the `InputState` a caller passes, the `State`
the nodes read and update, and the `RecallIntent` a tool-call envelope becomes.

`State.trace` is a LangGraph reducer (`operator.add`): a node returns only its own steps
(`{"trace": [step]}`) and LangGraph appends them in the order the nodes ran. What a node did —
the budgets' dropped entries, the recalls' calls, the repairs' changes — is in its step, not in a
field of its own (`ChatService` reads them from there for `TurnResult.trace`).
"""

from __future__ import annotations

import operator
import time
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path
from typing import Annotated, Literal

from pydantic import BaseModel, Field

from truffle_assets.runtime.config import Budget, Repairs
from truffle_assets.tools import model_tools
from truffle_assets.tools.inputs import MAX_GET_MESSAGES

ModelTool = Literal[tuple(model_tools())]  # the catalog's tools the chat model may call


@dataclass(kw_only=True)
class Context:
    """Static knobs of a turn (built from `RuntimeConfig` by the service)."""

    published_dir: str
    base_url: str | None = None
    model: str = "local"
    api_key: str = "none"
    timeout_s: float = 120.0
    max_retries: int = 0
    temperature: float = 0.0
    frequency_penalty: float | None = None   # None: the endpoint's default (see EndpointConfig)
    presence_penalty: float | None = None
    repeat_penalty: float | None = None      # llama.cpp's own knob, sent in the request's extra body
    stop: tuple[str, ...] = ()
    stream: bool = False                     # answer text goes to the graph's custom stream as generated
    loop_guard: bool = True                  # cut a reply where it starts repeating (off only to measure it)
    tokenizer: str | None = None             # GGUF / HF tokenizer folder of the served model
    tokenizer_proxy_for: str | None = None   # set when counting for a remote model with a local tokenizer
    budget: Budget = field(default_factory=Budget)
    max_recalls: int = 2
    k_raw: int = 40
    k_recall: int = 15
    allow_secrets: bool = False
    fallback_quotes: int = 5
    timeline: bool = True                    # resolve "before X"/"after X" against the facts' order (runtime.timeline)
    repairs: Repairs = field(default_factory=Repairs)  # which answer repair passes run (runtime.repairs)
    retrieval_log: str | None = None
    retrieval_log_text: bool = False         # the question's text in the trace too (only when content is kept)

    @property
    def pointer(self) -> Path:
        return Path(self.published_dir) / "latest.json"


@dataclass(kw_only=True)
class InputState:
    messages: list[dict] = field(default_factory=list)  # OpenAI-style dialogue; the last user message is the question
    today: str | None = None           # ISO date for "Today is ..." (default: the local date)
    temperature: float | None = None   # None: Context.temperature (re-rolls pass > 0)
    max_recalls: int | None = None     # None: Context.max_recalls


@dataclass(kw_only=True)
class State(InputState):
    """What the nodes hand each other, and what the caller reads when the turn ends. A node's own
    working values stay local to it; what a node did goes in its trace step."""

    # the question (guard)
    question: str = ""
    history: list[dict] = field(default_factory=list)      # earlier user/assistant turns
    refused_kind: str | None = None                         # the secret kind asked for, when refused
    refused: bool = False
    # the memory read for it (load_profile, timeline, retrieval, recall)
    profile: dict | None = None                             # the published profile blob
    facts: list[dict] = field(default_factory=list)         # facts shown as such: timeline neighbours, get_fact recalls
    search: dict | None = None                              # an anchored question's {query, since, until} (timeline)
    pinned: list[dict] = field(default_factory=list)        # evidence shown above every hit (timeline)
    summaries: list[dict] = field(default_factory=list)
    candidates: list[dict] = field(default_factory=list)    # message hits of the question's retrieval
    items: list[dict] = field(default_factory=list)         # the evidence pool (EvidenceItem dicts + round)
    watermarks: dict[str, str] = field(default_factory=dict)
    participants: list[str] = field(default_factory=list)   # names a recall's query may mention
    recall_notes: list[str] = field(default_factory=list)   # what each recall found, said in the next prompt
    recall_count: int = 0
    # the prompt (compose_context)
    prompt: list[dict] = field(default_factory=list)        # the messages of the latest compose_context
    context_ids: list[str] = field(default_factory=list)    # every message id shown to the model this turn
    profile_shown: list[str] = field(default_factory=list)  # fact ids of the profile lines in the latest prompt
    tokens: dict[str, int] = field(default_factory=dict)
    # the model's reply (answer_or_request_recall)
    pending_calls: list[dict] = field(default_factory=list)  # read-tool calls for recall_retrieve
    raw_output: str | None = None
    llm_calls: int = 0
    usage: dict[str, int] = field(default_factory=dict)
    served_model: str | None = None
    fallback: str | None = None                             # why the answer is retrieval-only
    # the answer (refuse, finalize)
    answer: str = ""
    body: str = ""                                           # the answer without the freshness lines
    citations: list[str] = field(default_factory=list)
    uncertain: list[str] = field(default_factory=list)
    freshness: list[str] = field(default_factory=list)
    trace: Annotated[list[dict], operator.add] = field(default_factory=list)  # nodes append their steps


class RecallIntent(BaseModel):
    """What the model says is missing, from its tool-call envelope (never free-form recursion)."""

    tool: ModelTool
    missing: str
    since: date | None = None
    until: date | None = None
    people: list[str] = Field(default_factory=list)
    keywords: list[str] = Field(default_factory=list)
    chat: str | None = None
    ids: list[str] = Field(default_factory=list)
    truncated: list[str] = Field(default_factory=list)  # ids past MAX_GET_MESSAGES, not read
    fact_id: str | None = None
    k: int | None = None

    @classmethod
    def from_call(cls, name: str, args: dict, participants: list[str] = ()) -> RecallIntent:
        from truffle_assets.retrieval.query import bm25_query, names_in

        if name == "search_memory":
            q = args["query"]
            return cls(tool=name, missing=q, since=args.get("since"), until=args.get("until"),
                       people=names_in(q, list(participants)), keywords=bm25_query(q).split(),
                       chat=args.get("chat"), k=args.get("k"))
        if name == "get_messages":
            ids = list(dict.fromkeys(args["ids"]))
            return cls(tool=name, missing=f"the messages {', '.join(ids[:MAX_GET_MESSAGES])}",
                       ids=ids[:MAX_GET_MESSAGES], truncated=ids[MAX_GET_MESSAGES:])
        if name == "get_fact":
            return cls(tool=name, missing=f"fact {args['fact_id']}", fact_id=args["fact_id"])
        return cls(tool="get_profile", missing="the user's profile")


def elapsed_ms(t0: float) -> float:
    """Milliseconds since `perf_counter()` was `t0`: the `ms` of a trace step."""
    return round((time.perf_counter() - t0) * 1000, 1)
