"""Row schemas of the SFT and DPO datasets (see docs/training_contracts.md), with their id and split.

Ids and splits are pure functions of the row's provenance, so rebuilding a dataset from the same
transcripts and pack gives byte-identical rows, and a row never moves between train and eval.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

SCHEMA_VERSION = 1

Role = Literal["system", "user", "assistant"]
Source = Literal["transcript", "synthetic"]
Kind = Literal["toolcall", "grounded_answer", "write_refusal", "memory_type", "privacy_refusal",
               "question_card", "transcript", "over_refusal", "reading",
               "over_cited", "refusal_tail", "bare_id", "near_miss", "over_absent", "natural_answer"]
# over_refusal, reading, over_cited, refusal_tail, bare_id, near_miss, over_absent, natural_answer: DPO rows only
Split = Literal["train", "eval"]


class Message(BaseModel):
    model_config = ConfigDict(extra="forbid")
    role: Role
    content: str


class _Row(BaseModel):
    model_config = ConfigDict(extra="forbid")
    id: str = Field(pattern=r"^[0-9a-f]{16}$")
    source: Source
    source_id: str = Field(min_length=1)
    kind: Kind
    split: Split


class SFTRow(_Row):
    messages: list[Message] = Field(min_length=2)

    @model_validator(mode="after")
    def _ends_with_answer(self) -> SFTRow:
        if self.messages[-1].role != "assistant" or not self.messages[-1].content.strip():
            raise ValueError("messages must end with a non-empty assistant message (the training target)")
        return self


class DPORow(_Row):
    prompt: list[Message] = Field(min_length=1)
    chosen: str = Field(min_length=1)
    rejected: str = Field(min_length=1)

    @model_validator(mode="after")
    def _pair(self) -> DPORow:
        if self.prompt[-1].role != "user":
            raise ValueError("prompt must end with a user message")
        if self.chosen.strip() == self.rejected.strip():
            raise ValueError("chosen and rejected are the same answer")
        return self


def _plain(m: Any) -> dict:
    return m.model_dump() if isinstance(m, BaseModel) else {"role": m["role"], "content": m["content"]}


def row_id(source: str, source_id: str, messages: list[Any]) -> str:
    """sha256 of source + source_id + messages, 16 hex chars. DPO rows pass prompt + chosen +
    rejected as assistant messages, so the same prompt with another pair is another row."""
    payload = json.dumps([source, source_id, [_plain(m) for m in messages]], ensure_ascii=False,
                         separators=(",", ":"), sort_keys=True)
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()[:16]


def stable_bucket(key: str, n: int) -> int:
    """`key`'s bucket among `n`, the same on every machine and run (unlike `hash()`)."""
    return int(hashlib.sha256(key.encode("utf-8")).hexdigest()[:8], 16) % n


def split_for(source_id: str, eval_percent: int = 10) -> Split:
    """`eval` for a fixed eval_percent share of source ids, whatever else is in the dataset."""
    return "eval" if stable_bucket(source_id, 100) < eval_percent else "train"
