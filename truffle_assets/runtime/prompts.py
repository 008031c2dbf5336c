"""The runtime's own texts, read from `prompts/runtime_answer.md` (`## name` sections)."""

from __future__ import annotations

import re
from functools import lru_cache

from truffle_assets.paths import PROMPTS_DIR
from truffle_assets.chat_format.prompt import system_prompt
from truffle_assets.chat_format.template import template_version

RUNTIME_TEXTS = PROMPTS_DIR / "runtime_answer.md"
_SECTION = re.compile(r"^## (\w+)\s*$", re.M)

FALLBACK_REASONS = {
    "endpoint_down": "the model endpoint is unreachable",
    "timeout": "the model did not answer in time",
    "endpoint_error": "the model endpoint returned an error",
    "malformed_output": "its reply was malformed",
    "recall_limit": "it kept searching past the recall limit",
    "no_endpoint": "no model endpoint is configured",
    "empty_answer": "its reply was empty",
}

__all__ = ["FALLBACK_REASONS", "system_prompt", "template_version", "text", "texts"]


@lru_cache(maxsize=1)
def texts() -> dict[str, str]:
    body = RUNTIME_TEXTS.read_text(encoding="utf-8")
    parts = _SECTION.split(body)
    return {parts[i]: parts[i + 1].strip() for i in range(1, len(parts) - 1, 2)}


def text(name: str, **slots) -> str:
    return texts()[name].format(**slots) if slots else texts()[name]
