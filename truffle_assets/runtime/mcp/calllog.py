"""Every MCP tool call is recorded like a chat turn, under the person's logging settings.

Nothing is written unless transcripts are kept; the call's redacted arguments and result (the
"content") only when content is kept too, as for a chat turn. The record carries principal `mcp`
(plus `denied` for a refused call, `redacted` when redaction changed the arguments), which keeps
it out of every training dataset (`training.datasets.DROPPED_PRINCIPALS`), and names the message
and fact ids it returned in `retrieval_ids`, so a forget finds and purges it like a chat turn.
"""

from __future__ import annotations

import json
import logging
import uuid
from typing import Any

from truffle_assets.runtime import privacy
from truffle_assets.runtime.turns import MCP_CONVERSATION as CONVERSATION_PREFIX

log = logging.getLogger(__name__)

PRINCIPAL = "mcp"
MAX_STORED_RESULT_CHARS = 64_000  # a day of a busy chat is kept by its ids only


def redact_value(value: Any) -> Any:
    """`value` with every string (keys excepted) through `privacy.redact_data`."""
    if isinstance(value, str):
        return privacy.redact_data(value)
    if isinstance(value, dict):
        return {k: redact_value(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [redact_value(v) for v in value]
    return value


def returned_ids(value: Any) -> list[str]:
    """The message and fact ids a result names (`message_id`, `fact_id`, `*_ids` lists), in order, once each."""
    seen: dict[str, None] = {}

    def walk(v: Any) -> None:
        if isinstance(v, dict):
            for k, item in v.items():
                if k in ("message_id", "fact_id") and isinstance(item, str):
                    seen.setdefault(item)
                elif k.endswith("_ids") and isinstance(item, list):
                    for i in item:
                        if isinstance(i, str):
                            seen.setdefault(i)
                else:
                    walk(item)
        elif isinstance(v, list):
            for item in v:
                walk(item)

    walk(value)
    return list(seen)


def record_call(service: Any, *, session: str, client: str | None, tool: str, arguments: dict[str, Any],
                result: dict[str, Any] | None, error: str | None = None, refused: bool = False,
                latency_ms: float | None = None) -> str | None:
    """Write the call to the store if the person keeps transcripts; the turn id, or None when nothing was kept.
    The store never fails a call: a write error is logged and the call still answers."""
    keep = service.keeping()
    if not keep.transcripts:
        return None
    from truffle_assets.feedback.turns import write_turn

    turn_id = uuid.uuid4().hex
    ids = returned_ids(result)
    stored_args = redact_value(arguments)
    principals = [PRINCIPAL, *(["denied"] if refused else []), *(["redacted"] if stored_args != arguments else [])]
    messages = answer = None
    if keep.keeps_content:
        messages = [{"role": "user", "content": json.dumps({"tool": tool, "arguments": stored_args}, ensure_ascii=False)}]
        shown = error if result is None else json.dumps(redact_value(result), ensure_ascii=False, default=str)
        if shown and len(shown) > MAX_STORED_RESULT_CHARS:
            shown = json.dumps({"omitted": f"{len(shown)} characters", "ids": ids})
        answer = shown or ""
    call = {"name": tool, "client": client, "error": bool(error), **({"arguments": stored_args} if messages else {})}
    try:
        write_turn(service.config.store_dir, turn_id, f"{CONVERSATION_PREFIX}{session}", messages=messages,
                   answer=answer, model=None, retrieval_ids=ids, tool_calls=[call],
                   latency_ms=latency_ms, principals=principals, keep_content=messages is not None)
    except Exception as exc:  # noqa: BLE001 - the store never fails a call
        log.warning("runtime store write failed for an MCP call: %s", exc)
        return None
    return turn_id
