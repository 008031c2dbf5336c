"""Recall: the read-tool calls the model asked for, executed as structured `RecallIntent`s.

`answer_or_request_recall` leaves a tool-call envelope in `State.pending_calls`; `recall_retrieve`
runs at most `MAX_CALLS_PER_RECALL` of them (the catalog's model tools, `truffle_assets.tools`:
`search_memory`, `get_messages`, `get_fact`, `get_profile`) and adds what they find to the evidence
pool, tagged with the recall round so the next `compose_context` shows it first; `get_profile`
re-reads the published profile the prompt shows. A failed call is reported in the trace, never raised.
"""

from __future__ import annotations

import time
from datetime import datetime, time as dtime

from langgraph.runtime import Runtime

from truffle_assets.runtime.prompts import text
from truffle_assets.runtime.published import fetch_messages, item_from_row, read_profile
from truffle_assets.runtime.state import Context, RecallIntent, State, elapsed_ms
from truffle_assets.runtime.tool_exec import resolve_fact
from truffle_assets.tools.inputs import MAX_GET_MESSAGES

MAX_CALLS_PER_RECALL = 3


def _profile_size(profile: dict) -> int:
    return sum(len(v or []) for v in (profile.get("facts") or {}).values()) + len(profile.get("previously") or [])


def recall_retrieve(state: State, runtime: Runtime[Context]) -> dict:
    """Execute the model's read-tool calls as structured RecallIntents; new evidence joins the pool."""
    from truffle_assets.retrieval import retrieve

    ctx = runtime.context
    rnd = state.recall_count + 1
    pool = {i["message_id"]: i for i in state.items}
    summaries = {s["episode_id"]: s for s in state.summaries}
    facts, notes, steps = list(state.facts), list(state.recall_notes), []
    profile = state.profile
    for call in state.pending_calls[:MAX_CALLS_PER_RECALL]:
        t0 = time.perf_counter()
        intent = RecallIntent.from_call(call["name"], call.get("arguments") or {}, state.participants)
        new: list[str] = []
        found: int | None = None  # what the call found when it is not new messages (the profile's facts)
        error = None
        try:
            if intent.tool == "search_memory" and ctx.pointer.is_file():
                k = min(intent.k or ctx.k_recall, ctx.k_recall)
                since = datetime.combine(intent.since, dtime.min) if intent.since else None
                until = datetime.combine(intent.until, dtime.max) if intent.until else None
                pack = retrieve(intent.missing, ctx.pointer, k=k, chats=[intent.chat] if intent.chat else None,
                                since=since, until=until)
                for it in pack.items:
                    if it.message_id not in pool:
                        pool[it.message_id] = it.model_dump(mode="json", exclude={"components"}) | {"round": rnd}
                        new.append(it.message_id)
                    else:
                        pool[it.message_id]["round"] = rnd  # asked for again: keep it in view
                for s in pack.summaries:
                    summaries.setdefault(s.episode_id, s.model_dump(mode="json"))
            elif intent.tool == "get_messages":
                for r in fetch_messages(ctx.pointer, intent.ids):
                    if r["message_id"] not in pool:
                        new.append(r["message_id"])
                    pool[r["message_id"]] = item_from_row(r, 1.0, rnd, "recall")
            elif intent.tool == "get_fact":
                hit = resolve_fact(ctx.published_dir, str(intent.fact_id), profile or {})
                if hit is None:
                    error = f"no fact {intent.fact_id}"
                else:
                    fid, f = hit
                    facts = [x for x in facts if x.get("fact_id") != fid] + [{**f, "fact_id": fid}]
                    ev = [str(m) for m in (f.get("evidence_message_ids") or [])][:MAX_GET_MESSAGES]
                    for r in fetch_messages(ctx.pointer, ev):
                        if r["message_id"] not in pool:
                            new.append(r["message_id"])
                        pool[r["message_id"]] = item_from_row(r, 1.0, rnd, "fact")
            elif intent.tool == "get_profile":
                fresh = read_profile(ctx.published_dir)
                if fresh is None:
                    error = "no published profile"
                else:
                    profile, found = fresh, _profile_size(fresh)
        except Exception as exc:  # noqa: BLE001 - a failed recall is reported, the turn goes on
            error = f"{type(exc).__name__}: {exc}"[:300]
        args = ", ".join(f"{k}={v!r}" for k, v in (call.get("arguments") or {}).items())
        notes.append(text("recall_done" if found is None else "recall_profile", n=rnd,
                          call=f"{intent.tool}({args})"[:240], found=len(new) if found is None else found))
        steps.append({"step": "recall_retrieve", "round": rnd, "call": call, "intent": intent.model_dump(mode="json"),
                      "new_ids": new, "error": error, "ms": elapsed_ms(t0)})
    return {"items": list(pool.values()), "summaries": list(summaries.values()), "facts": facts, "profile": profile,
            "recall_notes": notes, "recall_count": rnd,
            "pending_calls": [], "trace": steps}
