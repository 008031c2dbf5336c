"""`RuntimeConfig`: everything the chat runtime needs, as one validated object (no dagster import).

Paths default to the data root (`paths.data_root()`: `$TRUFFLE_HOME` or the repo's `data/`): the
pipeline publishes into `published/` (latest.json, profile.json, facts.json) and the runtime
appends its own store under `runtime/`. Token budgets are per section of the prompt and every one is enforced in
`context.compose_context`; `cap` is a hard ceiling on prompt + reserved answer tokens.
"""

from __future__ import annotations

import os
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, model_validator

from truffle_assets import paths
from truffle_assets.feedback.settings import FIELDS as KEEP_FIELDS, MAX_RETENTION_DAYS, LoggingSettings, resolve
from truffle_assets.runtime.limits import BODY_ENV, QUESTION_ENV, ApiLimits

SECTIONS = ("system", "profile", "summaries", "raw", "dialogue", "answer")


class Budget(BaseModel):
    """Token budget per prompt section, counted with the served model's tokenizer."""

    model_config = ConfigDict(extra="forbid")

    profile: int = Field(5_000, ge=0)
    summaries: int = Field(20_000, ge=0)
    raw: int = Field(50_000, ge=0)
    dialogue: int = Field(16_000, ge=16)   # prior turns + the question (the question is truncated last)
    answer: int = Field(4_096, ge=16)      # reserved for the completion (max_tokens)
    cap: int = Field(128_000, ge=256)      # prompt + answer, hard

    @model_validator(mode="after")
    def _answer_fits(self) -> Budget:
        if self.answer >= self.cap:
            raise ValueError(f"answer budget {self.answer} leaves no room for a prompt under cap {self.cap}")
        return self


class EndpointConfig(BaseModel):
    """Where the chat model is reached: an OpenAI-compatible URL, or `gguf` for the embedded server
    (started by the caller, e.g. `truffle serve` / `truffle ask`, which then sets `base_url`)."""

    model_config = ConfigDict(extra="forbid")

    base_url: str | None = None
    model: str | None = None
    api_key: str | None = None
    gguf: str | None = None
    timeout_s: float = Field(120.0, gt=0)
    max_retries: int = Field(0, ge=0)       # a down endpoint falls back at once; no hidden waits
    temperature: float = Field(0.0, ge=0.0, le=2.0)
    reroll_temperature: float = Field(0.8, gt=0.0, le=2.0)
    # sampling against repetition; None sends nothing (the endpoint's default). The embedded model's
    # values are `service.EMBEDDED_SAMPLING`, measured by benchmarks/repetition_bench.py
    frequency_penalty: float | None = Field(None, ge=-2.0, le=2.0)
    presence_penalty: float | None = Field(None, ge=-2.0, le=2.0)
    repeat_penalty: float | None = Field(None, ge=0.0, le=3.0)   # llama.cpp only
    stop: list[str] = Field(default_factory=list, max_length=4)
    loop_guard: bool = True   # cut a reply where it starts repeating itself (streaming: stop generating there)


class Repairs(BaseModel):
    """One flag per answer repair pass (`runtime.repairs.PASSES`, same names), all on: off only to
    measure what a pass does."""

    model_config = ConfigDict(extra="forbid")

    citations: bool = True        # citations of messages the model was not shown are removed
    attribution: bool = True      # a claim is cited to the shown message that states it
    date_years: bool = True       # a yearless date takes the year of the message cited beside it
    self_named: bool = True       # sentences naming the user as someone else are dropped
    nothing_left: bool = True     # a reply left empty falls back to quoting the evidence
    uncertain_label: bool = True  # an answer citing weak evidence says so
    scrub: bool = True            # secret-shaped values are replaced by their typed placeholder
    freshness: bool = True        # one "memory current to" line per cited chat


class Policy(BaseModel):
    model_config = ConfigDict(extra="forbid")

    allow_secrets: bool = False  # True: questions about passwords/OTPs/... reach the model (still redacted data)


class RuntimeConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    published_dir: Path = Field(default_factory=paths.published_dir)
    store_dir: Path = Field(default_factory=paths.runtime_dir)
    registry_dir: Path = Field(default_factory=paths.registry_dir)
    budget: Budget = Field(default_factory=Budget)
    max_recalls: int = Field(2, ge=1, le=3)
    endpoint: EndpointConfig = Field(default_factory=EndpointConfig)
    policy: Policy = Field(default_factory=Policy)
    # What the store keeps (feedback.settings): None = the person's saved choice (<store_dir>/settings.json),
    # else $TRUFFLE_LOG / $TRUFFLE_RETENTION_DAYS, else nothing kept, 90 days. A value here overrides them
    # for this process only (`--log`, `--no-transcripts`).
    transcripts: bool | None = None   # turn metadata -> store/turns/
    content: bool | None = None       # prompt messages + answer -> store/content/ (needs transcripts)
    feedback: bool | None = None      # ratings -> store/feedback/
    retention_days: int | None = Field(None, ge=1, le=MAX_RETENTION_DAYS)
    tokenizer: str | None = None  # GGUF file or HF tokenizer folder; default: the served GGUF, else Qwen
    k_raw: int = Field(40, ge=1, le=500)       # messages retrieved per question (before budgeting)
    k_recall: int = Field(15, ge=1, le=50)     # messages per recall search (a tool call's k wins, capped)
    fallback_quotes: int = Field(5, ge=1, le=20)  # evidence quotes in a retrieval-only answer
    # a "before X"/"after X" question shows the fact that held before (after) the fact naming X, with its
    # messages, and searches only that side of X's date (runtime.timeline)
    timeline: bool = True
    repairs: Repairs = Field(default_factory=Repairs)  # what finalize does to the reply (runtime.repairs)
    retrieval_log: bool = False  # also append retrieval traces to <store_dir>/retrieval.duckdb
    api: ApiLimits = Field(default_factory=ApiLimits)  # HTTP body and question size limits (runtime.limits)

    @property
    def pointer(self) -> Path:
        return Path(self.published_dir) / "latest.json"

    def keeping(self) -> tuple[LoggingSettings, dict[str, str]]:
        """What the store keeps now and where each choice came from (`feedback.settings.resolve`);
        reads the saved choice each call, so a change made in another process applies at once.
        Raises `feedback.settings.SettingsError` naming the file or variable when one is unreadable."""
        return resolve(self.store_dir, {k: getattr(self, k) for k in KEEP_FIELDS})

    @classmethod
    def from_env(cls, **overrides) -> RuntimeConfig:
        """Defaults + `TRUFFLE_LLM_BASE_URL` / `TRUFFLE_LLM_MODEL` / `TRUFFLE_LLM_API_KEY` +
        `TRUFFLE_PUBLISHED_DIR` / `TRUFFLE_RUNTIME_DIR` + `TRUFFLE_API_MAX_BODY_BYTES` /
        `TRUFFLE_API_MAX_QUESTION_CHARS`, then explicit overrides. (`TRUFFLE_LOG` and
        `TRUFFLE_RETENTION_DAYS` are read by `keeping()`, beneath the person's saved choice.)"""
        env = os.environ
        data: dict = {}
        if env.get("TRUFFLE_PUBLISHED_DIR"):
            data["published_dir"] = env["TRUFFLE_PUBLISHED_DIR"]
        if env.get("TRUFFLE_RUNTIME_DIR"):
            data["store_dir"] = env["TRUFFLE_RUNTIME_DIR"]
        ep = {k: env[v] for k, v in (("base_url", "TRUFFLE_LLM_BASE_URL"), ("model", "TRUFFLE_LLM_MODEL"),
                                     ("api_key", "TRUFFLE_LLM_API_KEY")) if env.get(v)}
        if ep:
            data["endpoint"] = ep
        api = {k: env[v] for k, v in (("max_body_bytes", BODY_ENV), ("max_question_chars", QUESTION_ENV)) if env.get(v)}
        if api:
            data["api"] = api
        data.update(overrides)
        return cls.model_validate(data)
