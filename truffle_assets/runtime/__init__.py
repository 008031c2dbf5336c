"""The chat runtime: a LangGraph turn over the published memory, behind `ChatService`.

Never imports dagster and never opens the pipeline's DuckDB file; see docs/runtime_contracts.md.
Names are imported lazily so `truffle_assets.runtime.config` stays cheap to import.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

__all__ = ["Budget", "ChatService", "EndpointConfig", "Policy", "RecallIntent", "Repairs", "RuntimeConfig",
           "TokenCounter", "TurnResult", "open_service"]

_WHERE = {"Budget": "config", "EndpointConfig": "config", "Policy": "config", "Repairs": "config", "RuntimeConfig": "config",
          "ChatService": "service", "TurnResult": "service", "open_service": "service",
          "RecallIntent": "state", "TokenCounter": "tokens"}

if TYPE_CHECKING:
    from truffle_assets.runtime.config import Budget, EndpointConfig, Policy, Repairs, RuntimeConfig
    from truffle_assets.runtime.service import ChatService, TurnResult, open_service
    from truffle_assets.runtime.state import RecallIntent
    from truffle_assets.runtime.tokens import TokenCounter


def __getattr__(name: str) -> Any:
    if name not in _WHERE:
        raise AttributeError(name)
    import importlib

    return getattr(importlib.import_module(f"truffle_assets.runtime.{_WHERE[name]}"), name)
