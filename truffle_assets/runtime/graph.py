"""The chat turn as a LangGraph (react-agent template shape; no dagster import): the wiring only.

    guard ─┬─ refuse ───────────────────────────────────────────────────────────────────────┐
           └─ load_profile → timeline → retrieve_summaries → retrieve_raw → compose_context  │
                 ┌─────────────────────────────────────────────────────────┘      ▲         │
                 ▼                                                                │         │
           answer_or_request_recall ─(tool-call envelope, < max)───────────→ recall_retrieve │
                 └───────────────(prose answer, or a fallback)→ finalize ◄───────────────────┘

The nodes live with what they work on: `guard` (secret requests), `published` (reading the
published memory), `timeline` ("before X"/"after X" questions), `context` (the prompt under its
token budgets), `answer` (the model call), `recall` (the model's read-tool calls) and `repairs`
(the answer the user sees: the repair passes over the reply); `state` holds the schemas.
"""

from __future__ import annotations

from typing import Literal

from langgraph.graph import END, START, StateGraph

from truffle_assets.runtime.answer import answer_or_request_recall
from truffle_assets.runtime.context import compose_context
from truffle_assets.runtime.guard import guard, refuse
from truffle_assets.runtime.published import load_profile, retrieve_raw, retrieve_summaries
from truffle_assets.runtime.recall import recall_retrieve
from truffle_assets.runtime.repairs import finalize
from truffle_assets.runtime.state import Context, InputState, State
from truffle_assets.runtime.timeline import timeline


def route_guard(state: State) -> Literal["refuse", "load_profile"]:
    return "refuse" if state.refused else "load_profile"


def route_answer(state: State) -> Literal["recall_retrieve", "finalize"]:
    return "recall_retrieve" if state.pending_calls and not state.fallback else "finalize"


builder = StateGraph(State, context_schema=Context, input_schema=InputState)
builder.add_node("guard", guard)
builder.add_node("refuse", refuse)
builder.add_node("load_profile", load_profile)
builder.add_node("timeline", timeline)
builder.add_node("retrieve_summaries", retrieve_summaries)
builder.add_node("retrieve_raw", retrieve_raw)
builder.add_node("compose_context", compose_context)
builder.add_node("answer_or_request_recall", answer_or_request_recall)
builder.add_node("recall_retrieve", recall_retrieve)
builder.add_node("finalize", finalize)
builder.add_edge(START, "guard")
builder.add_conditional_edges("guard", route_guard)
builder.add_edge("refuse", "finalize")
builder.add_edge("load_profile", "timeline")
builder.add_edge("timeline", "retrieve_summaries")
builder.add_edge("retrieve_summaries", "retrieve_raw")
builder.add_edge("retrieve_raw", "compose_context")
builder.add_edge("compose_context", "answer_or_request_recall")
builder.add_conditional_edges("answer_or_request_recall", route_answer)
builder.add_edge("recall_retrieve", "compose_context")
builder.add_edge("finalize", END)

graph = builder.compile(name="truffle_chat")
