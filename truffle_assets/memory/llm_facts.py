"""Fact extraction by the configured model, routed by the candidate detector rather than by salience.

Tier C (`summaries.summarize_episodes`) extracts facts only from the most salient episodes. Here every
episode holding a candidate statement about the user (`candidates.episode_candidates`) is read once
more for facts, unless a tier-C answer already covered it: only its candidate lines and the
questions they answer are sent, several episodes to a call, as many as fit the model's context and
the answer's token allowance. The extraction rules are tier C's (`prompts/extract_facts.md`), as are
the evidence rules and the claim validation (`summaries._claim`): a fact cites refs of the lines it
was sent, and is filed under the episode of its first valid ref.

Answers are cached per episode (key: model, prompt, episode id, the excerpt sent), so an episode
is paid for once whatever batch it lands in, and re-batching after a change elsewhere costs nothing.
The entry records `<episode id>:facts` as its `cache_key`, which a forget purges by. Calls go through
`LLMClient.map_call_json`: the same validation, repair round-trip, budget and breaker as the tiers.

`plan_llm_work` counts, before any call, what the summaries and this extraction will send: calls,
tokens in and out (estimates) and the money at the configured price.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from typing import Any

import polars as pl
from pydantic import BaseModel, Field

from truffle_assets.llm.client import LLMClient, LLMConfig, load_prompt
from truffle_assets.memory.candidates import Candidates, episode_candidates, messages_by_id
from truffle_assets.memory.episodes import approx_tokens
from truffle_assets.memory.summaries import FACT_CLAIMS_SCHEMA, FactOut, _claim

CHARS_PER_TOKEN = 4  # the client's own estimate of a prompt's tokens
OUT_TOKENS_PER_CANDIDATE = 64  # about one fact's JSON: each candidate line may hold one
OUT_TOKENS_TIER_B = 160
OUT_TOKENS_TIER_C = 480
DEFAULT_CONTEXT_TOKENS = 8192
HEADER_TOKENS, REF_TOKENS, GAP_TOKENS = 20, 4, 3  # "Episode 3 (chat, day)", "[m12] ", "[…]"


class FactList(BaseModel):
    facts: list[FactOut] = Field(default_factory=list)


def system_prompt() -> str:
    return load_prompt("extract_facts_batch") + "\n\n" + load_prompt("extract_facts")


@dataclass
class Routed:
    """One episode to read for facts: its row, its candidates and the excerpt lines sent."""

    episode: dict
    candidates: Candidates
    lines: list[str]  # the episode's transcript lines, index = position in message_ids

    @property
    def excerpt(self) -> list[int]:
        return list(self.candidates.lines)

    @property
    def tokens(self) -> int:
        """Transcript tokens sent: the chat's own text, what a share of the corpus counts."""
        return sum(approx_tokens(self.lines[i]) for i in self.excerpt)

    @property
    def prompt_tokens(self) -> int:
        """The same with the episode's header, `[…]` marks and line refs: what a batch must fit."""
        return self.tokens + HEADER_TOKENS + REF_TOKENS * len(self.excerpt) + GAP_TOKENS * (len(self.excerpt) + 1)


@dataclass
class Batch:
    routed: list[Routed] = field(default_factory=list)
    tokens: int = 0  # prompt tokens of its episodes
    candidates: int = 0


def route(episodes: pl.DataFrame, messages: pl.DataFrame, skip: set[str] | frozenset[str] = frozenset()) -> list[Routed]:
    """Episodes with at least one candidate line, not in `skip` (ids a tier-C answer covered)."""
    if episodes.height == 0 or messages.height == 0:
        return []
    by_id = messages_by_id(messages)
    out = []
    for ep in episodes.sort(["chat_id", "day", "start_ts", "id"]).iter_rows(named=True):
        if ep["id"] in skip:
            continue
        ids = list(ep.get("message_ids") or [])
        cands = episode_candidates(ids, by_id)
        if cands.any:
            lines = (ep.get("text") or "").split("\n")[: len(ids)]
            out.append(Routed(ep, Candidates(tuple(i for i in cands.lines if i < len(lines)),
                                             tuple(i for i in cands.candidates if i < len(lines)), cands.kinds), lines))
    return out


def input_allowance(config: LLMConfig, context_tokens: int = DEFAULT_CONTEXT_TOKENS) -> int:
    """Transcript tokens one call may carry: the context less the instructions, schema and answer."""
    fixed = (len(system_prompt()) + len(json.dumps(FactList.model_json_schema()))) // CHARS_PER_TOKEN + 64
    return max(256, context_tokens - fixed - config.max_output_tokens)


def batches(routed: list[Routed], config: LLMConfig, context_tokens: int = DEFAULT_CONTEXT_TOKENS) -> list[Batch]:
    """Episodes in order, packed while the transcript fits the context and the candidate lines
    could all be answered within the output allowance; an episode is never split."""
    max_in = input_allowance(config, context_tokens)
    max_cands = max(1, config.max_output_tokens // OUT_TOKENS_PER_CANDIDATE)
    out: list[Batch] = []
    cur = Batch()
    for r in routed:
        n = len(r.candidates.candidates)
        if cur.routed and (cur.tokens + r.prompt_tokens > max_in or cur.candidates + n > max_cands):
            out.append(cur)
            cur = Batch()
        cur.routed.append(r)
        cur.tokens += r.prompt_tokens
        cur.candidates += n
    if cur.routed:
        out.append(cur)
    return out


def _render(batch: Batch, max_chars: int) -> tuple[str, list[tuple[int, str]]]:
    """The user message and, per ref number - 1, (routed index, message id)."""
    refs: list[tuple[int, str]] = []
    parts = [f"Excerpts of {len(batch.routed)} episode{'s' if len(batch.routed) != 1 else ''}:"]
    for k, r in enumerate(batch.routed):
        ep, ids = r.episode, list(r.episode.get("message_ids") or [])
        parts.append(f"\nEpisode {k + 1} ({ep['chat_id']}" + (f", {ep['day']})" if ep.get("day") is not None else ")"))
        prev = -1
        for i in r.excerpt:
            if i > prev + 1:
                parts.append("[…]")
            line = r.lines[i]
            parts.append(f"[m{len(refs) + 1}] {line[:max_chars]}")
            refs.append((k, ids[i]))
            prev = i
        if prev < len(r.lines) - 1:
            parts.append("[…]")
    return "\n".join(parts), refs


def _cache_key(model: str, system: str, r: Routed) -> str:
    h = hashlib.sha256()
    for p in ("facts", model, system, r.episode["id"], *(r.lines[i] for i in r.excerpt)):
        h.update(p.encode("utf-8", "surrogatepass") + b"\x1f")
    return h.hexdigest()


def _ref_to_id(cited: str, refs: list[tuple[int, str]]) -> tuple[int, str] | None:
    c = cited.strip().strip("[]").strip().lower().removeprefix("m")
    if c.isdigit() and 1 <= int(c) <= len(refs):
        return refs[int(c) - 1]
    return None


def extract_facts(routed: list[Routed], client: LLMClient | None,
                  context_tokens: int = DEFAULT_CONTEXT_TOKENS, max_line_chars: int = 1200) -> tuple[pl.DataFrame, dict]:
    """(fact_claims rows with source 'llm', counters) for the routed episodes.

    Cached episodes are answered from the cache; the rest are batched and sent. An episode whose
    batch failed (budget, breaker, no valid answer) gets no claims and is not cached."""
    stats = {"episodes": len(routed), "cached": 0, "sent": 0, "answered": 0, "batches": 0,
             "candidates": sum(len(r.candidates.candidates) for r in routed)}
    if client is None or not client.enabled or not routed:
        return pl.DataFrame(schema=FACT_CLAIMS_SCHEMA), stats
    system = system_prompt()
    per_episode: dict[int, list[FactOut]] = {}
    todo: list[int] = []
    keys = {k: _cache_key(client.model, system, r) for k, r in enumerate(routed)}
    for k in range(len(routed)):
        hit = client.cache.get(keys[k]) if client.cache else None
        if hit is not None and isinstance(hit.get("facts"), list):
            try:
                per_episode[k] = [FactOut.model_validate(f) for f in hit["facts"]]
                stats["cached"] += 1
                client.stats.add(cache_hits=1)
                continue
            except ValueError:
                pass  # stale or corrupt: ask again
        todo.append(k)
    plan = batches([routed[k] for k in todo], client.config, context_tokens)
    jobs, batch_refs, offset = [], [], 0
    for b in plan:
        user, refs = _render(b, max_line_chars)
        jobs.append((system, user, FactList, None))  # cached per episode below, not per batch
        batch_refs.append([(todo[offset + i], mid) for i, mid in refs])
        offset += len(b.routed)
    results = client.map_call_json(jobs)
    stats["batches"], stats["sent"] = len(jobs), len(todo)
    for global_refs, res in zip(batch_refs, results):
        members = sorted({k for k, _ in global_refs})
        if res is None:
            continue
        got: dict[int, list[FactOut]] = {k: [] for k in members}
        for f in res.value.facts:  # type: ignore[attr-defined]
            cited = [x for x in (_ref_to_id(c, global_refs) for c in f.evidence_message_ids) if x is not None]
            if not cited:
                continue
            k = cited[0][0]
            got[k].append(f.model_copy(update={"evidence_message_ids": [m for kk, m in cited if kk == k]}))
        for k in members:
            per_episode[k] = got[k]
            stats["answered"] += 1
            if client.cache:
                client.cache.put(keys[k], {"model": client.model, "cache_key": f"{routed[k].episode['id']}:facts",
                                           "facts": [f.model_dump(mode="json") for f in got[k]]})
    claims: dict[str, dict[str, Any]] = {}
    for k, facts in per_episode.items():
        r = routed[k]
        ids = list(r.episode.get("message_ids") or [])
        for f in facts:
            claim = _claim(r.episode, f, ids, r.lines)
            if claim is not None:
                claims.setdefault(claim["id"], claim)
    frame = (pl.DataFrame(list(claims.values()), schema=FACT_CLAIMS_SCHEMA, orient="row") if claims
             else pl.DataFrame(schema=FACT_CLAIMS_SCHEMA))
    return frame, stats


def sent_message_ids(routed: list[Routed]) -> set[str]:
    """Message ids the routed extraction sends (candidates and their context)."""
    return {list(r.episode["message_ids"])[i] for r in routed for i in r.excerpt}


@dataclass(frozen=True)
class WorkPlan:
    """What the LLM work of a run will cost, counted before any call (token counts are estimates)."""

    summary_calls: int
    fact_calls: int
    tokens_in: int
    tokens_out: int
    cost_usd: float
    transcript_tokens: int  # corpus tokens the calls carry
    corpus_tokens: int  # every episode's transcript
    routed_episodes: int

    @property
    def calls(self) -> int:
        return self.summary_calls + self.fact_calls

    def as_dict(self) -> dict[str, Any]:
        return {"calls": self.calls, "summary_calls": self.summary_calls, "fact_calls": self.fact_calls,
                "tokens_in": self.tokens_in, "tokens_out": self.tokens_out, "cost_usd": round(self.cost_usd, 4),
                "routed_episodes": self.routed_episodes, "transcript_tokens": self.transcript_tokens,
                "corpus_tokens": self.corpus_tokens}

    def describe(self, config: LLMConfig) -> str:
        share = self.transcript_tokens / self.corpus_tokens if self.corpus_tokens else 0.0
        return (f"about {self.calls:,} LLM calls ({self.summary_calls:,} summaries, {self.fact_calls:,} fact reads of "
                f"{self.routed_episodes:,} episodes), {self.tokens_in:,} tokens in and up to {self.tokens_out:,} out, "
                f"${self.cost_usd:.2f} at ${config.price_in_per_mtok:g}/${config.price_out_per_mtok:g} per million "
                f"tokens in/out; the calls carry {share:.0%} as many transcript tokens as the chats hold")

    def over_budget(self, config: LLMConfig) -> bool:
        return self.tokens_in + self.tokens_out > config.max_tokens_per_run or self.cost_usd > config.max_cost_usd


def plan_llm_work(episodes: pl.DataFrame, messages: pl.DataFrame, config: LLMConfig, tier_b: float, tier_c: float,
                  context_tokens: int = DEFAULT_CONTEXT_TOKENS, max_prompt_chars: int = 12_000) -> WorkPlan:
    """The calls `summarize_episodes` and `extract_facts` would make for these episodes with nothing
    cached, assuming every tier-C call answers (its episodes are then not read again)."""
    if episodes.height == 0:
        return WorkPlan(0, 0, 0, 0, 0.0, 0, 0, 0)
    sal = episodes["salience"].fill_null(0.0).to_list()
    texts = episodes["text"].fill_null("").to_list()
    n_tokens = [approx_tokens(t) for t in texts]
    summ_sys = (len(load_prompt("summarize_episode")) + 600) // CHARS_PER_TOKEN
    fact_sys = (len(system_prompt()) + 600) // CHARS_PER_TOKEN
    calls_b = calls_c = tin = tout = read = 0
    tier_c_ids = set()
    for eid, s, n in zip(episodes["id"].to_list(), sal, n_tokens):
        if s < tier_b:
            continue
        sent = min(n, max_prompt_chars // CHARS_PER_TOKEN)
        read += sent
        tin += summ_sys + sent
        if s >= tier_c:
            calls_c += 1
            tier_c_ids.add(eid)
            tin += fact_sys
            tout += min(config.max_output_tokens, OUT_TOKENS_TIER_C)
        else:
            calls_b += 1
            tout += min(config.max_output_tokens, OUT_TOKENS_TIER_B)
    routed = route(episodes, messages, skip=tier_c_ids)
    plan = batches(routed, config, context_tokens)
    for b in plan:
        tin += fact_sys + b.tokens
        read += sum(r.tokens for r in b.routed)
        tout += min(config.max_output_tokens, 32 + OUT_TOKENS_PER_CANDIDATE * b.candidates)
    cost = (tin * config.price_in_per_mtok + tout * config.price_out_per_mtok) / 1e6
    return WorkPlan(calls_b + calls_c, len(plan), tin, tout, cost, read, sum(n_tokens), len(routed))


def plan_for_messages(rows: pl.DataFrame, config: LLMConfig, tier_b: float, tier_c: float) -> WorkPlan:
    """`plan_llm_work` before the memory build has run: from parsed export rows (`load_chat`), with
    the raw text standing in for the redacted, normalized text (close enough to count tokens)."""
    from truffle_assets.memory.episodes import build_episodes
    from truffle_assets.memory.salience import score_episodes, term_document_counts

    if rows.height == 0:
        return WorkPlan(0, 0, 0, 0, 0.0, 0, 0, 0)
    msgs = rows.with_columns(normalized_text=pl.col("raw_text"))
    eps = score_episodes(build_episodes(msgs), msgs, {}, term_document_counts(msgs))
    return plan_llm_work(eps, msgs.filter(pl.col("kind") == "message"), config, tier_b, tier_c, config.context_tokens)
