"""The messages every chat prompt is built from: the system prompt, then an optional context block.

The context block is a second `system` message — today's date, free notes and retrieved messages
as `[msg:<id>] <author> (<day sent>): <text>` — in one layout for the runtime, the training pack
and the eval suites, so the model is trained and judged on what it is served.
"""

from __future__ import annotations

import re
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


def day_text(day: date | str) -> str:
    """"16 August 2022": the words a person asks and answers "when" in."""
    d = date.fromisoformat(str(day)[:10]) if not isinstance(day, date) else day
    return f"{d.day} {d:%B %Y}"


# Appended to the memory owner's name on their own lines. The prompt never said who the user is, so
# the model had to guess that "Arjun Mehta" is the "I" of "which sport do I play?"; it answered with
# the other speaker's city or named the user as their own partner.
OWN_LINE_MARK = " (you)"


def speaker(author: str, is_user: bool) -> str:
    """The author as a message line shows it: the memory owner's name marked as the user's."""
    return author + OWN_LINE_MARK if is_user else author


def message_line(mid: str, author: str, text: str, day: date | str | None = None) -> str:
    """One retrieved message. The day it was sent is shown when known: without it "when did I start
    at Swiggy?" had no answer in the prompt unless the message happened to name a date."""
    return f"[msg:{mid}] {author}{f' ({day_text(day)})' if day else ''}: {text}"


# what message_line writes, read back; the day as day_text writes it
_MESSAGE_LINE = re.compile(r"^\[msg:([0-9a-f]+)\] ([^:\n]+?)(?: \((\d{1,2} [A-Z][a-z]+ \d{4})\))?: (.*)$", re.M)


def message_lines(text: str) -> list[tuple[str, str, str, str | None]]:
    """(id, author, text, day as shown or None) of every `message_line` in `text`, in order."""
    return [(m.group(1), m.group(2), m.group(4), m.group(3)) for m in _MESSAGE_LINE.finditer(text)]


def context_block(messages: Sequence[tuple] | None = None, today: date | None = None,
                  notes: Sequence[str] = ()) -> str:
    """The context message: today's date, notes, and retrieved messages (`[]` = retrieval found
    none), each `(id, author, text)` or `(id, author, text, day sent)`."""
    lines = []
    if today is not None:
        lines.append(f"Today is {today:%A}, {today.isoformat()}.")
    lines += [n for n in notes if n]
    if messages is not None:
        lines.append("Retrieved messages:" if messages else "Retrieved messages: none")
        lines += [message_line(*m) for m in messages]
    return "\n".join(lines)


def chat_prompt(system: str, user: str, context: str | None = None) -> list[dict[str, str]]:
    msgs = [{"role": "system", "content": system}]
    if context:
        msgs.append({"role": "system", "content": context})
    return msgs + [{"role": "user", "content": user}]

