"""The DuckDB tables the memory build writes, with their column types (one place, no Dagster).

Schemas come from the stage modules that produce the frames, so a column added there reaches the
store without a second edit. Every table except `facts` is keyed by (chat_id, day) and replaced
per partition; `facts` is rebuilt whole from `fact_claims` (consolidation spans all history).
"""

import polars as pl

from truffle_assets.memory.episodes import EPISODE_SCHEMA
from truffle_assets.memory.facts.schema import CLAIM_SCHEMA, FACT_SCHEMA
from truffle_assets.memory.summaries import ROLLUPS_SCHEMA, SUMMARIES_SCHEMA

TABLES: dict[str, dict] = {
    "message_pii": {
        "id": pl.String, "chat_id": pl.String, "day": pl.Date, "redacted_text": pl.String,
        "pii_types": pl.List(pl.String), "sensitivity": pl.String, "spans": pl.String,
    },
    "message_streams": {
        "id": pl.String, "chat_id": pl.String, "day": pl.Date, "normalized_text": pl.String,
        "scripts": pl.List(pl.String), "lang": pl.String, "code_mixed": pl.Boolean, "english_text": pl.String,
    },
    "episodes": dict(EPISODE_SCHEMA),
    "summaries": dict(SUMMARIES_SCHEMA),
    "rollups": dict(ROLLUPS_SCHEMA),
    "llm_fact_candidates": dict(CLAIM_SCHEMA),  # tier-C claims, merged with rule claims by `facts`
    "fact_claims": dict(CLAIM_SCHEMA),
    "facts": dict(FACT_SCHEMA),
}
