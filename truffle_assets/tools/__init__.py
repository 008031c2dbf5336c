"""The memory tools, defined once (`catalog.CATALOG`): names, descriptions, pydantic input and output
models. The chat model's prompt and parser, the runtime's recall, the training pack, the evals and
the MCP server all read it. Plain pydantic: no runtime, pipeline or chat-format import."""

from truffle_assets.tools.catalog import (CATALOG, DATA_NOTE, ToolSpec, mcp_tools, model_tools, refusal_vocabulary,
                                          spec)

__all__ = ["CATALOG", "DATA_NOTE", "ToolSpec", "mcp_tools", "model_tools", "refusal_vocabulary", "spec"]
