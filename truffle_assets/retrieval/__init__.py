"""Hybrid retrieval over the memory index (plain Python; the runtime and benchmarks call this)."""

from truffle_assets.retrieval.log import RetrievalLog
from truffle_assets.retrieval.models import (
    EvidenceItem,
    EvidencePack,
    RetrievalWeights,
    ScoreComponents,
    SummaryHit,
)
from truffle_assets.retrieval.search import candidate_signals, open_index, retrieve, retrieve_baseline

__all__ = ["EvidenceItem", "EvidencePack", "RetrievalLog", "RetrievalWeights", "ScoreComponents",
           "SummaryHit", "candidate_signals", "open_index", "retrieve", "retrieve_baseline"]
