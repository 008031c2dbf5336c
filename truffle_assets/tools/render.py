"""The catalog as text and JSON Schema: the chat prompt's tool block, each tool's schemas."""

from __future__ import annotations

from typing import Any

from truffle_assets.tools.catalog import CATALOG, ToolSpec, model_tools, refusal_vocabulary

PROMPT_HEADER = "Memory tools (read-only):"


def signature(spec: ToolSpec) -> str:
    """`name(required, optional?)` over the arguments the prompt names."""
    fields = spec.input.model_fields
    names = spec.model_args if spec.model_args is not None else tuple(fields)
    return f"{spec.name}(" + ", ".join(n if fields[n].is_required() else f"{n}?" for n in names) + ")"


def prompt_lines() -> str:
    """The system prompt's tool block (prompts/system_chat.md holds it verbatim)."""
    return "\n".join([PROMPT_HEADER] + [f"- {signature(s)}: {s.summary}" for s in model_tools().values()])


def refusal_names() -> str:
    """The write tools as the system prompt's refusal rule names them."""
    return ", ".join(refusal_vocabulary())


def input_schema(spec: ToolSpec | str) -> dict[str, Any]:
    spec = CATALOG[spec] if isinstance(spec, str) else spec
    return spec.input.model_json_schema()


def output_schema(spec: ToolSpec | str) -> dict[str, Any] | None:
    spec = CATALOG[spec] if isinstance(spec, str) else spec
    return spec.output.model_json_schema(mode="serialization") if spec.output else None
