"""The one entry point Dagster loads (workspace.yaml points here)."""

import dagster as dg

from truffle_assets.defs.ingest.assets import messages, whatsapp_exports
from truffle_assets.defs.ingest.sensors import exports_sensor
from truffle_assets.defs.resources import DuckDBStore, ExportsResource

defs = dg.Definitions(
    assets=[whatsapp_exports, messages],
    sensors=[exports_sensor],
    resources={"exports": ExportsResource(), "duckdb": DuckDBStore()},
)
