"""Typed results of retrieval: what the runtime puts in front of the model, with its provenance."""

from __future__ import annotations

from datetime import datetime

from pydantic import BaseModel, Field


class RetrievalWeights(BaseModel):
    """Knobs of the fused score. The "score" weights were tuned on LoCoMo conversations 26/30/41 (the
    dev conversations; benchmarks/locomo_recall.py reports the other seven apart). The index-side
    signals (keys, answer, per_episode, the learned fusion) are fitted on the synthetic corpus
    (scripts/fit_fusion.py) and stay off: none beats these weights on its held-out split except the
    learned fusion, which falls far below them on LoCoMo. `asking`, semantic 0.5 and `unnamed_dense` are
    picked on the dev conversations and hold on the seven held out (docs/benchmarks.md, LoCoMo);
    `self_speaker` on the dev natural chats (benchmarks/natural_recall.py)."""

    semantic: float = 0.5      # cosine(query, "Author: text"); MiniLM on one chat line is the weakest
                               # signal here: dense-only R@10 0.45 vs BM25 0.61
    lexical: float = 1.0       # BM25, normalised by the best BM25 hit of the query
    context: float = 0.5       # cosine(query, message + its neighbours in the episode)
    summary: float = 0.1       # the message sits in a summary that matched the query (session-long
                               # LoCoMo summaries: 0.3 cost 1 point of recall, 0.1 ~neutral)
    speaker: float = 0.6       # author is the participant the query names
    lexical_neighbours: float = 0.3  # share of a BM25 hit's score passed to its episode neighbours
                               # (a reply carries the topic its prompt named; LoCoMo dev +3.5 R@10)
    date: float = 0.6          # message sent on (±date_pad_days) a calendar date the query names
    keys: float = 0.0          # BM25 on the message's entities + answer tags (index.keys); its hits join the pool
                               # (0.6 was best on the synthetic training split, worse than 0 on its held-out split)
    answer: float = 0.0        # the message holds the kind of answer asked for (a date for "when", ...); read from
                               # the text's time expressions when the index has no keys. 0.2 on LoCoMo:
                               # held-out +0.4, temporal +1.8; on the synthetic corpus's "when did we talk about X"
                               # (the day it was said, not a date in the line) -2.4: left off
    asking: float = 0.15       # subtracted per unit of `signals.asks`: a line that is a question rarely answers one
    date_pad_days: int = 1
    episode: float = 0.4       # best fused score in the candidate's episode (topic coherence)
    recency: float = 0.05      # exp decay from `now` / chat watermark
    salience: float = 0.05     # episode salience from the episodes stage
    half_life_days: float = 90.0
    fusion: str = "score"      # "score" (normalised weighted sum), "rrf", or "learned": the logistic model of
                               # fusion_weights.json (scripts/fit_fusion.py, synthetic corpus) - off by default:
                               # +9.6 points held out on the synthetic corpus, but far below "score" on LoCoMo
    rrf_k: int = 60
    mmr_lambda: float = 1.0    # 1.0 = no diversity penalty
    per_episode: int = 0       # at most this many of the top k from one episode first (0 = no cap; no effect
                               # on the synthetic corpus with "score" fusion)
    candidates: int = 100      # per signal, per table
    self_speaker: bool = True  # a question in the first person ("my", "I") that names nobody matches the owner's
                               # lines (the speaker signal): natural dev set 0.339 -> 0.420, held-out 0.529 -> 0.589
    unnamed_dense: bool = True  # embed the query with the participants it names said as "they" (query.without_names):
                               # LoCoMo dev +1.1, held-out +2.4, open-domain +7.8; synthetic held-out kinds +4.1
    summary_hits: int = 5
    expand_per_summary: int = 3
    uncertain_below: float = 0.45  # fused scores below this (on the 0..1 score scale) are flagged

    @classmethod
    def plain(cls) -> RetrievalWeights:
        """Score fusion with none of the query-time signals (asking, self speaker, unnamed dense) and
        semantic 1.0: the ablation baseline the retrieval benchmarks compare against."""
        return cls(fusion="score", keys=0.0, answer=0.0, per_episode=0, episode=0.4, semantic=1.0, asking=0.0,
                   unnamed_dense=False, self_speaker=False)


class ScoreComponents(BaseModel):
    semantic: float = 0.0
    lexical: float = 0.0
    context: float = 0.0
    recency: float = 0.0
    salience: float = 0.0
    summary: float = 0.0
    speaker: float = 0.0
    asks: float = 0.0  # share of the line's sentences that are questions (docked by `asking`)


class EvidenceItem(BaseModel):
    message_id: str
    episode_id: str | None
    chat_id: str
    ts: datetime
    author: str | None
    text: str                       # the search stream (normalized: emoji as :shortcode: words)
    score: float
    components: ScoreComponents
    via: str  # 'raw' | 'summary'
    uncertain: bool
    is_user: bool = False           # written by the memory owner (the prompt marks those lines "(you)")
    # the message redacted but as written (spelling, emoji, line breaks): what a person or the model
    # reads; None from an index built before it (show `text` with its emoji back instead)
    shown_text: str | None = None


class SummaryHit(BaseModel):
    episode_id: str
    chat_id: str
    start_ts: datetime | None
    end_ts: datetime | None
    tier: str | None
    text: str
    score: float
    evidence_message_ids: list[str]


class EvidencePack(BaseModel):
    query: str
    items: list[EvidenceItem] = Field(default_factory=list)
    summaries: list[SummaryHit] = Field(default_factory=list)
    watermarks: dict[str, str] = Field(default_factory=dict)
    timing_ms: dict[str, float] = Field(default_factory=dict)
    index_versions: dict[str, int] = Field(default_factory=dict)

    @property
    def message_ids(self) -> list[str]:
        return [i.message_id for i in self.items]
