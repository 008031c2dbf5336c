"""The turn's first node: split the dialogue into history + question, and refuse without calling
the model when the question asks for a secret value (passwords, OTPs, PINs, card/account
numbers, ...), unless `Context.allow_secrets`.
"""

from __future__ import annotations

from datetime import date

from langgraph.runtime import Runtime

from truffle_assets.runtime import privacy
from truffle_assets.runtime.state import Context, State


def guard(state: State, runtime: Runtime[Context]) -> dict:
    ctx = runtime.context
    dialogue = [m for m in state.messages if isinstance(m, dict) and m.get("role") in ("user", "assistant")]
    last_user = max((i for i, m in enumerate(dialogue) if m["role"] == "user"), default=None)
    if last_user is None:
        raise ValueError("messages hold no user message to answer")
    question = str(dialogue[last_user].get("content") or "")
    history = [{"role": m["role"], "content": str(m.get("content") or "")} for m in dialogue[:last_user]]
    dropped_roles = len(state.messages) - len(dialogue)
    kind = None if ctx.allow_secrets else privacy.secret_request(question)
    step = {"step": "guard", "secret_request": kind, "history_messages": len(history),
            "ignored_messages": dropped_roles}
    return {"question": question, "history": history, "refused_kind": kind, "refused": kind is not None,
            "max_recalls": state.max_recalls if state.max_recalls is not None else ctx.max_recalls,
            "today": state.today or date.today().isoformat(),
            "temperature": state.temperature if state.temperature is not None else ctx.temperature,
            "trace": [step]}


def refuse(state: State, runtime: Runtime[Context]) -> dict:
    return {"answer": privacy.refusal(state.refused_kind or ""),
            "trace": [{"step": "refuse", "kind": state.refused_kind, "llm_called": False}]}
