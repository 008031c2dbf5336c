"""The messages every chat prompt is built from: the system prompt, then an optional context block.

The context block is a second `system` message — today's date, free notes and retrieved messages
as `[msg:<id>] <author>: <text>` — in one layout for the runtime, the training pack and the eval
suites, so the model is trained and judged on what it is served.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import date

from truffle_assets.paths import PROMPTS_DIR

SYSTEM_PROMPT_PATH = PROMPTS_DIR / "system_chat.md"


def system_prompt() -> str:
    """`prompts/system_chat.md`: starts every chat, training row and eval case; baked into the Modelfile."""
    try:
        return SYSTEM_PROMPT_PATH.read_text(encoding="utf-8").strip()
    except FileNotFoundError:
        raise FileNotFoundError(
            f"{SYSTEM_PROMPT_PATH} is missing: it holds the chat system prompt that every chat, training "
            "row and eval case starts with") from None


def context_block(messages: Sequence[tuple[str, str, str]] | None = None, today: date | None = None,
                  notes: Sequence[str] = ()) -> str:
    """The context message: today's date, notes, and retrieved messages (`[]` = retrieval found none)."""
    lines = []
    if today is not None:
        lines.append(f"Today is {today:%A}, {today.isoformat()}.")
    lines += [n for n in notes if n]
    if messages is not None:
        lines.append("Retrieved messages:" if messages else "Retrieved messages: none")
        lines += [f"[msg:{mid}] {author}: {text}" for mid, author, text in messages]
    return "\n".join(lines)


def chat_prompt(system: str, user: str, context: str | None = None) -> list[dict[str, str]]:
    msgs = [{"role": "system", "content": system}]
    if context:
        msgs.append({"role": "system", "content": context})
    return msgs + [{"role": "user", "content": user}]

