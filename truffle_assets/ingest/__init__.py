"""Ingest logic with no Dagster: exports to message rows, chat ids, run planning, per-day digests, months, tombstones."""
