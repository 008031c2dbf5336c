"""The chat turn as a LangGraph (react-agent template shape; no dagster import).

    guard ─┬─ refuse ────────────────────────────────────────────────────────────┐
           └─ load_profile → retrieve_summaries → retrieve_raw → compose_context  │
                 ┌──────────────────────────────────────────────┘      ▲         │
                 ▼                                                     │         │
           answer_or_request_recall ─(tool-call envelope, < max)→ recall_retrieve │
                 └───────────────(prose answer, or a fallback)→ finalize ◄────────┘

* `guard` refuses questions that ask for a secret value (passwords, OTPs, PINs, card/account
  numbers, ...) without calling the model, unless `Context.allow_secrets`.
* `retrieve_summaries` runs the one hybrid retrieval of the question (`retrieval.retrieve`, which
  searches summaries first and expands the best into their messages) and keeps the summary hits;
  `retrieve_raw` turns its message hits into the evidence pool.
* `compose_context` builds the prompt in the layout training and evals use
  (`chat_format.prompt.context_block`): the system prompt, then a second system message with today's
  date, notes (data-not-instructions rule, freshness per chat, recall notes, profile, summaries)
  and `Retrieved messages:` + `[msg:<id>] <author>: <text>` lines. Every section is fitted to its
  token budget with the served model's tokenizer, dropping the lowest-priority entries first
  (evidence: the latest recall's messages first, then by retrieval score; profile: by confidence),
  then the whole prompt + the reserved answer is held under the hard cap.
* `answer_or_request_recall` calls the model through the `openai` client. An answer that is
  exactly a read-tool envelope (`toolcalls.parse_tool_calls(...).ok`) becomes a `RecallIntent`
  executed by `recall_retrieve` (at most `max_recalls` times; after that the context says no more
  searches are available, and an envelope then ends the turn as a retrieval-only answer).
  Endpoint down, timeout, HTTP errors and malformed output never raise: they set `fallback`.
* `finalize` keeps only citations of messages that were in the context (invented ids are removed
  from the text and listed in the trace), labels uncertain evidence, scrubs secret-shaped values
  and adds a freshness line per chat ("Memory current to 2022-09-17 (priya-sharma).").
"""

from __future__ import annotations

import re
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from datetime import date, datetime, time as dtime
from pathlib import Path
from typing import Any, Literal

from langgraph.graph import END, START, StateGraph
from langgraph.runtime import Runtime
from pydantic import BaseModel, Field

from truffle_assets.runtime import privacy
from truffle_assets.runtime.config import Budget
from truffle_assets.runtime.prompts import FALLBACK_REASONS, system_prompt, text
from truffle_assets.runtime.tokens import TokenCounter
from truffle_assets.chat_format.toolcalls import looks_like_tool_call, parse_tool_calls
from truffle_assets.chat_format.prompt import context_block

MAX_CALLS_PER_RECALL = 3
MAX_GET_MESSAGES = 20
_THINK = re.compile(r"<think>.*?</think>", re.S | re.I)
_CITE = re.compile(r"\[msg:([^\]\s]{1,64})\]")
_NEWLINES = re.compile(r"\s*[\r\n]+\s*")


# ---- context and state ------------------------------------------------------------------------------

@dataclass(kw_only=True)
class Context:
    """Static knobs of a turn (built from `RuntimeConfig` by the service)."""

    published_dir: str
    base_url: str | None = None
    model: str = "local"
    api_key: str = "none"
    timeout_s: float = 120.0
    max_retries: int = 0
    temperature: float = 0.0
    tokenizer: str | None = None             # GGUF / HF tokenizer folder of the served model
    tokenizer_proxy_for: str | None = None   # set when counting for a remote model with a local tokenizer
    budget: Budget = field(default_factory=Budget)
    max_recalls: int = 2
    k_raw: int = 40
    k_recall: int = 15
    allow_secrets: bool = False
    fallback_quotes: int = 5
    retrieval_log: str | None = None

    @property
    def pointer(self) -> Path:
        return Path(self.published_dir) / "latest.json"


@dataclass(kw_only=True)
class InputState:
    messages: list[dict] = field(default_factory=list)  # OpenAI-style dialogue; the last user message is the question
    today: str | None = None           # ISO date for "Today is ..." (default: the local date)
    temperature: float | None = None   # None: Context.temperature (re-rolls pass > 0)
    max_recalls: int | None = None     # None: Context.max_recalls


@dataclass(kw_only=True)
class State(InputState):
    question: str = ""
    history: list[dict] = field(default_factory=list)      # earlier user/assistant turns
    refused_kind: str | None = None
    refused: bool = False
    profile: dict | None = None                             # the published profile blob
    facts: list[dict] = field(default_factory=list)         # facts fetched by get_fact recalls
    summaries: list[dict] = field(default_factory=list)
    candidates: list[dict] = field(default_factory=list)    # message hits of the question's retrieval
    items: list[dict] = field(default_factory=list)         # the evidence pool (EvidenceItem dicts + round)
    watermarks: dict[str, str] = field(default_factory=dict)
    participants: list[str] = field(default_factory=list)
    prompt: list[dict] = field(default_factory=list)        # the messages of the latest compose_context
    context_ids: list[str] = field(default_factory=list)    # every message id shown to the model this turn
    tokens: dict[str, int] = field(default_factory=dict)
    dropped: dict[str, int] = field(default_factory=dict)
    recall_count: int = 0
    intents: list[dict] = field(default_factory=list)
    pending_calls: list[dict] = field(default_factory=list)
    tool_calls: list[dict] = field(default_factory=list)
    recall_notes: list[str] = field(default_factory=list)
    trace: list[dict] = field(default_factory=list)
    llm_calls: int = 0
    raw_output: str | None = None
    served_model: str | None = None
    usage: dict[str, int] = field(default_factory=dict)
    answer: str = ""
    body: str = ""                                           # the answer without the freshness lines
    citations: list[str] = field(default_factory=list)
    invalid_citations: list[str] = field(default_factory=list)
    uncertain: list[str] = field(default_factory=list)
    freshness: list[str] = field(default_factory=list)
    scrubbed: list[str] = field(default_factory=list)
    fallback: str | None = None
    fallback_detail: str | None = None


class RecallIntent(BaseModel):
    """What the model says is missing, from its tool-call envelope (never free-form recursion)."""

    tool: Literal["search_memory", "get_messages", "get_fact", "get_profile"]
    missing: str
    since: date | None = None
    until: date | None = None
    people: list[str] = Field(default_factory=list)
    keywords: list[str] = Field(default_factory=list)
    chat: str | None = None
    ids: list[str] = Field(default_factory=list)
    fact_id: str | None = None
    k: int | None = None

    @classmethod
    def from_call(cls, name: str, args: dict, participants: list[str] = ()) -> RecallIntent:
        from truffle_assets.retrieval.query import bm25_query, names_in

        if name == "search_memory":
            q = args["query"]
            return cls(tool=name, missing=q, since=args.get("since"), until=args.get("until"),
                       people=names_in(q, list(participants)), keywords=bm25_query(q).split(),
                       chat=args.get("chat"), k=args.get("k"))
        if name == "get_messages":
            ids = list(dict.fromkeys(args["ids"]))[:MAX_GET_MESSAGES]
            return cls(tool=name, missing=f"the messages {', '.join(ids)}", ids=ids)
        if name == "get_fact":
            return cls(tool=name, missing=f"fact {args['fact_id']}", fact_id=args["fact_id"])
        return cls(tool="get_profile", missing="the user's profile")


# ---- shared helpers ---------------------------------------------------------------------------------

def counter_for(ctx: Context) -> TokenCounter:
    if not ctx.tokenizer:
        raise ValueError("Context.tokenizer is not set: the runtime counts tokens with the served model's tokenizer")
    return TokenCounter.load(ctx.tokenizer, proxy_for=ctx.tokenizer_proxy_for)


_clients: dict[tuple, Any] = {}
_clients_lock = threading.Lock()


def _client(ctx: Context):
    import openai

    key = (ctx.base_url, ctx.api_key, ctx.timeout_s, ctx.max_retries)
    with _clients_lock:
        c = _clients.get(key)
        if c is None:
            c = _clients[key] = openai.OpenAI(base_url=ctx.base_url, api_key=ctx.api_key or "none",
                                              timeout=ctx.timeout_s, max_retries=ctx.max_retries)
        return c


_json_cache: dict[str, tuple[int, Any]] = {}


def read_json_cached(path: Path) -> Any:
    """A published JSON file, re-read only when its mtime changes (None when missing/unreadable)."""
    import json

    try:
        stamp = path.stat().st_mtime_ns
    except OSError:
        return None
    hit = _json_cache.get(str(path))
    if hit and hit[0] == stamp:
        return hit[1]
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    _json_cache[str(path)] = (stamp, data)
    return data


def fetch_messages(pointer: Path, ids: list[str]) -> list[dict]:
    """Rows of the published `raw_episodes_index` for `ids` (message_id, episode_id, chat_id, ts, author, text)."""
    from truffle_assets.index.lance import RAW_TABLE, sql_in
    from truffle_assets.retrieval import open_index

    if not ids or not pointer.is_file():
        return []
    tbl = open_index(pointer).table(RAW_TABLE)
    if tbl is None:
        return []
    rows = (tbl.search().where(sql_in("message_id", ids))
            .select(["message_id", "episode_id", "chat_id", "ts", "author", "text"]).limit(len(ids)).to_list())
    order = {m: i for i, m in enumerate(ids)}
    return sorted(rows, key=lambda r: order.get(r["message_id"], 0))


def load_facts(published_dir: str | Path) -> dict[str, dict]:
    blob = read_json_cached(Path(published_dir) / "facts.json")
    facts = blob.get("facts", []) if isinstance(blob, dict) else (blob or [])
    return {str(f.get("fact_id") or f.get("id")): f for f in facts if isinstance(f, dict)}


def _iso(v: Any) -> str | None:
    if v is None:
        return None
    return v.isoformat() if hasattr(v, "isoformat") else str(v)


def _one_line(s: str | None) -> str:
    return _NEWLINES.sub(" / ", (s or "").strip())


def _item_from_row(r: dict, score: float, rnd: int, via: str) -> dict:
    return {"message_id": r["message_id"], "episode_id": r.get("episode_id"), "chat_id": r["chat_id"],
            "ts": _iso(r.get("ts")), "author": r.get("author"), "text": r.get("text") or "", "score": score,
            "via": via, "uncertain": False, "round": rnd}


def _ms(t0: float) -> float:
    return round((time.perf_counter() - t0) * 1000, 1)


def _fallback(reason: str, detail: str, trace: list[dict], **extra) -> dict:
    return {"fallback": reason, "fallback_detail": detail[:500],
            "trace": trace + [{"step": "fallback", "reason": reason, "detail": detail[:500]}], **extra}


# ---- nodes ------------------------------------------------------------------------------------------

def guard(state: State, runtime: Runtime[Context]) -> dict:
    ctx = runtime.context
    dialogue = [m for m in state.messages if isinstance(m, dict) and m.get("role") in ("user", "assistant")]
    last_user = max((i for i, m in enumerate(dialogue) if m["role"] == "user"), default=None)
    if last_user is None:
        raise ValueError("messages hold no user message to answer")
    question = str(dialogue[last_user].get("content") or "")
    history = [{"role": m["role"], "content": str(m.get("content") or "")} for m in dialogue[:last_user]]
    dropped_roles = len(state.messages) - len(dialogue)
    kind = None if ctx.allow_secrets else privacy.secret_request(question)
    step = {"step": "guard", "secret_request": kind, "history_messages": len(history),
            "ignored_messages": dropped_roles}
    return {"question": question, "history": history, "refused_kind": kind, "refused": kind is not None,
            "max_recalls": state.max_recalls if state.max_recalls is not None else ctx.max_recalls,
            "today": state.today or date.today().isoformat(),
            "temperature": state.temperature if state.temperature is not None else ctx.temperature,
            "trace": state.trace + [step]}


def route_guard(state: State) -> Literal["refuse", "load_profile"]:
    return "refuse" if state.refused else "load_profile"


def refuse(state: State, runtime: Runtime[Context]) -> dict:
    return {"answer": privacy.refusal(state.refused_kind or ""),
            "trace": state.trace + [{"step": "refuse", "kind": state.refused_kind, "llm_called": False}]}


def load_profile(state: State, runtime: Runtime[Context]) -> dict:
    t0 = time.perf_counter()
    prof = read_json_cached(Path(runtime.context.published_dir) / "profile.json")
    prof = prof if isinstance(prof, dict) else None
    step = {"step": "load_profile", "found": prof is not None, "version": (prof or {}).get("version"),
            "facts": (prof or {}).get("n_facts"), "ms": _ms(t0)}
    return {"profile": prof, "trace": state.trace + [step]}


def retrieve_summaries(state: State, runtime: Runtime[Context]) -> dict:
    """The question's hybrid retrieval (summaries first, expanded to messages): keep the summaries."""
    from truffle_assets.retrieval import RetrievalLog, open_index, retrieve

    ctx = runtime.context
    t0 = time.perf_counter()
    if not ctx.pointer.is_file():
        step = {"step": "retrieve_summaries", "error": f"no published memory at {ctx.pointer}", "ms": _ms(t0)}
        return {"trace": state.trace + [step]}
    try:
        log = RetrievalLog(ctx.retrieval_log) if ctx.retrieval_log else None
        pack = retrieve(state.question, ctx.pointer, k=ctx.k_raw, log=log)
        participants = sorted({p for ps in open_index(ctx.pointer).participants().values() for p in ps})
    except Exception as exc:  # noqa: BLE001 - a broken index must still give an answer (without memory)
        step = {"step": "retrieve_summaries", "error": f"{type(exc).__name__}: {exc}"[:300], "ms": _ms(t0)}
        return {"trace": state.trace + [step]}
    summaries = [s.model_dump(mode="json") for s in pack.summaries]
    candidates = [i.model_dump(mode="json", exclude={"components"}) | {"round": 0} for i in pack.items]
    step = {"step": "retrieve_summaries", "summaries": [s["episode_id"] for s in summaries],
            "index_versions": pack.index_versions, "timing_ms": pack.timing_ms, "ms": _ms(t0)}
    return {"summaries": summaries, "candidates": candidates, "watermarks": dict(pack.watermarks),
            "participants": participants, "trace": state.trace + [step]}


def retrieve_raw(state: State, runtime: Runtime[Context]) -> dict:
    """The question's message hits become the evidence pool (deduplicated, best score kept)."""
    pool: dict[str, dict] = {}
    for it in state.candidates:
        if it["message_id"] not in pool or pool[it["message_id"]]["score"] < it["score"]:
            pool[it["message_id"]] = it
    items = list(pool.values())
    step = {"step": "retrieve_raw", "items": [i["message_id"] for i in items],
            "scores": [i["score"] for i in items], "uncertain": [i["message_id"] for i in items if i["uncertain"]]}
    return {"items": items, "candidates": [], "trace": state.trace + [step]}


# -- composing under budget ----------------------------------------------------------------------------

@dataclass
class _Entry:
    priority: tuple
    order: tuple
    line: str
    ref: str | None = None      # message id for evidence lines ("previously" for past profile facts)
    triple: tuple[str, str, str] | None = None  # (id, author, text) of an evidence line
    extra: int = 0              # tokens the entry adds elsewhere in the section (the weak-match note)


def _fit(entries: list[_Entry], render: Callable[[list[_Entry]], str], budget: int,
         counter: TokenCounter) -> tuple[str, list[_Entry], int]:
    """Keep the highest-priority entries whose rendering fits `budget` tokens -> (text, kept, dropped).

    Greedy by priority with per-line counts (a line that does not fit whole is cut to the room
    left, then filling stops: a lower-priority entry never displaces a higher one), then the exact
    count of the rendered text is checked and the lowest-priority entries are dropped until it fits.
    """
    if not entries or budget <= 0:
        return "", [], len(entries)
    ranked = sorted(entries, key=lambda e: e.priority, reverse=True)
    room = budget - counter.count(render([]))
    kept: list[_Entry] = []
    for e in ranked:
        cost = counter.count(e.line) + 1 + e.extra
        if cost <= room:
            kept.append(e)
            room -= cost
            continue
        if room - e.extra >= 24:
            cut = _cut(e, counter.truncate(e.line, room - e.extra - 2).rstrip())
            if cut is not None:
                kept.append(cut)
        break
    txt = render(sorted(kept, key=lambda e: e.order)) if kept else ""
    while kept and counter.count(txt) > budget:
        kept.pop()  # ranked order: the last kept is the lowest priority
        txt = render(sorted(kept, key=lambda e: e.order)) if kept else ""
    return txt, kept, len(entries) - len(kept)


def _cut(e: _Entry, line: str) -> _Entry | None:
    """`e` with its line shortened to `line` (+ an ellipsis); None if nothing useful is left."""
    if e.triple is None:
        return _Entry(e.priority, e.order, line + "…", e.ref, None, e.extra) if line else None
    mid, author, _ = e.triple
    prefix = f"[msg:{mid}] {author}: "
    if len(line) <= len(prefix) or not line.startswith(prefix):
        return None
    cut = line[len(prefix):] + "…"
    return _Entry(e.priority, e.order, prefix + cut, e.ref, (mid, author, cut), e.extra)


def _profile_entries(profile: dict | None, facts: list[dict]) -> list[_Entry]:
    out: list[_Entry] = []
    for i, f in enumerate(facts):  # asked for by get_fact: kept first
        status = "current" if not f.get("valid_to") else f"until {str(f['valid_to'])[:10]}"
        if f.get("superseded_by"):
            status += f", superseded by {f['superseded_by']}"
        line = f"- {_one_line(privacy.redact_data(str(f.get('fact_text') or '')))} (fact {f.get('fact_id')}, {status})"
        out.append(_Entry((2, 2.0, -i), (0, i), line))
    if not profile:
        return out
    cats = profile.get("facts") or {}
    n = 0
    for cat, entries in cats.items():
        for e in entries or []:
            since = f", since {e['since']}" if e.get("since") else ""
            line = f"- {_one_line(privacy.redact_data(str(e.get('text') or '')))} ({cat}, fact {e.get('id')}{since})"
            out.append(_Entry((1, float(e.get("confidence") or 0.0), -n), (1, n), line))
            n += 1
    for j, p in enumerate(profile.get("previously") or []):
        line = f"- {_one_line(privacy.redact_data(str(p.get('text') or '')))} (until {p.get('until')}, fact {p.get('id')})"
        out.append(_Entry((0, 0.0, -j), (2, j), line, ref="previously"))
    return out


def _render_profile(kept: list[_Entry]) -> str:
    if not kept:
        return text("profile_header")
    now = [e.line for e in kept if e.ref != "previously"]
    prev = [e.line for e in kept if e.ref == "previously"]
    lines = [text("profile_header"), *now]
    if prev:
        lines += [text("profile_previously"), *prev]
    return "\n".join(lines)


def _summary_entries(summaries: list[dict]) -> list[_Entry]:
    out = []
    for i, s in enumerate(summaries):
        start, end = str(s.get("start_ts") or "")[:10], str(s.get("end_ts") or "")[:10]
        when = start if not end or end == start else f"{start} to {end}"
        line = f"- {s.get('chat_id')}, {when}: {_one_line(privacy.redact_data(s.get('text') or ''))}"
        out.append(_Entry((float(s.get("score") or 0.0), -i), (start, i), line))
    return out


def _render_summaries(kept: list[_Entry]) -> str:
    return "\n".join([text("summaries_header"), *(e.line for e in kept)])


def _evidence_line(it: dict) -> tuple[str, str, str]:
    return it["message_id"], _one_line(it.get("author") or "Unknown"), _one_line(privacy.redact_data(it.get("text") or ""))


def _evidence_entries(items: list[dict], counter: TokenCounter) -> list[_Entry]:
    latest = max((i.get("round", 0) for i in items), default=0)
    out = []
    for n, it in enumerate(items):
        mid, author, txt = _evidence_line(it)
        line = f"[msg:{mid}] {author}: {txt}"
        extra = counter.count(f"msg:{mid}, ") if it.get("uncertain") else 0
        # the messages the model just asked for first, then by retrieval score
        out.append(_Entry((int(it.get("round", 0) == latest and latest > 0), float(it["score"]), -n),
                          (str(it.get("ts") or ""), mid), line, ref=mid, triple=(mid, author, txt), extra=extra))
    return out


def _render_raw(kept: list[_Entry], uncertain: set[str]) -> str:
    block = context_block([e.triple for e in kept])
    weak = [f"msg:{e.ref}" for e in kept if e.ref in uncertain]
    return (text("uncertain_note", ids=", ".join(weak)) + "\n" + block) if weak else block


def _dialogue(history: list[dict], question: str, budget: int, counter: TokenCounter) -> tuple[list[dict], str, int, int]:
    """(kept history, question (truncated if it alone is over), tokens, dropped turns): newest first."""
    q_cost = counter.message_overhead("user")
    q = question
    if q_cost + counter.count(q) > budget:
        q = counter.truncate(q, max(1, budget - q_cost))
    used = q_cost + counter.count(q)
    kept: list[dict] = []
    for m in reversed(history):
        cost = counter.message_overhead(m["role"]) + counter.count(m["content"])
        if used + cost > budget:
            break
        kept.insert(0, m)
        used += cost
    return kept, q, used, len(history) - len(kept)


def compose_context(state: State, runtime: Runtime[Context]) -> dict:
    ctx = runtime.context
    t0 = time.perf_counter()
    counter = counter_for(ctx)
    b = ctx.budget
    limits = {"profile": b.profile, "summaries": b.summaries, "raw": b.raw, "dialogue": b.dialogue}
    system = system_prompt()
    today = date.fromisoformat(state.today) if state.today else date.today()
    uncertain = {i["message_id"] for i in state.items if i.get("uncertain")}
    p_entries = _profile_entries(state.profile, state.facts)
    s_entries = _summary_entries(state.summaries)
    r_entries = _evidence_entries(state.items, counter)
    left = state.max_recalls - state.recall_count
    recall_line = text("recall_available", left=left) if left > 0 else text("recall_exhausted")

    for _ in range(8):
        profile_txt, p_kept, p_drop = _fit(p_entries, _render_profile, limits["profile"], counter)
        summ_txt, s_kept, s_drop = _fit(s_entries, _render_summaries, limits["summaries"], counter)
        raw_txt, r_kept, r_drop = _fit(r_entries, lambda k: _render_raw(k, uncertain), limits["raw"], counter)
        if not r_kept:
            raw_txt = context_block([])  # "Retrieved messages: none"
        history, question, dialogue_tokens, d_drop = _dialogue(state.history, state.question, limits["dialogue"], counter)
        question_tokens = counter.message_overhead("user") + counter.count(question)
        shown = [e.ref for e in r_kept]
        chats = sorted({i["chat_id"] for i in state.items if i["message_id"] in set(shown)})
        fresh = [text("freshness_context", chat=c, date=state.watermarks[c][:10]) for c in chats if c in state.watermarks]
        notes = [text("data_rule"), *fresh, *state.recall_notes, recall_line, profile_txt if p_kept else "",
                 summ_txt if s_kept else ""]
        head = context_block(None, today=today, notes=notes)
        context = head + "\n" + raw_txt
        prompt = [{"role": "system", "content": system}, {"role": "system", "content": context},
                  *history, {"role": "user", "content": question}]
        prompt_tokens = counter.count_messages(prompt)
        total = prompt_tokens + b.answer
        if total <= b.cap:
            break
        over = total - b.cap + 8
        shrunk = False
        # earlier turns give way first, then summaries, the profile, and the raw evidence last
        for sec in ("dialogue", "summaries", "profile", "raw"):
            cur = {"raw": counter.count(raw_txt) if r_kept else 0,
                   "summaries": counter.count(summ_txt) if s_kept else 0,
                   "profile": counter.count(profile_txt) if p_kept else 0, "dialogue": dialogue_tokens}[sec]
            floor = question_tokens if sec == "dialogue" else 0
            take = min(over, max(0, min(limits[sec], cur) - floor))
            if take > 0:
                limits[sec] = min(limits[sec], cur) - take
                over -= take
                shrunk = True
            if over <= 0:
                break
        if not shrunk:
            break  # nothing left to shrink: the answer node reports the overflow

    sections = {"profile": counter.count(profile_txt) if p_kept else 0,
                "summaries": counter.count(summ_txt) if s_kept else 0,
                "raw": counter.count(raw_txt) if r_kept else 0, "dialogue": dialogue_tokens}
    sections["system"] = max(0, prompt_tokens - sum(sections.values()))
    tokens = {**sections, "answer": b.answer, "prompt": prompt_tokens, "total": total, "cap": b.cap}
    dropped = {"profile": p_drop, "summaries": s_drop, "raw": r_drop, "dialogue": d_drop}
    context_ids = list(dict.fromkeys(state.context_ids + shown))
    step = {"step": "compose_context", "round": state.recall_count, "tokens": tokens, "dropped": dropped,
            "limits": limits, "shown": shown, "tokenizer": counter.name, "ms": _ms(t0)}
    return {"prompt": prompt, "tokens": tokens, "dropped": dropped, "context_ids": context_ids,
            "trace": state.trace + [step]}


# -- the model --------------------------------------------------------------------------------------------

def answer_or_request_recall(state: State, runtime: Runtime[Context]) -> dict:
    import openai

    ctx = runtime.context
    trace = list(state.trace)
    if state.tokens.get("total", 0) > ctx.budget.cap:
        return _fallback("context_overflow", f"prompt {state.tokens.get('prompt')} + answer {ctx.budget.answer} "
                         f"tokens exceed the cap {ctx.budget.cap}", trace)
    if not ctx.base_url:
        return _fallback("no_endpoint", "no model endpoint configured", trace)
    t0 = time.perf_counter()
    calls = state.llm_calls + 1
    try:
        resp = _client(ctx).chat.completions.create(
            model=ctx.model, messages=state.prompt, temperature=state.temperature,
            max_tokens=ctx.budget.answer)
    except openai.APITimeoutError as exc:
        return _fallback("timeout", str(exc), trace, llm_calls=calls)
    except openai.APIConnectionError as exc:
        return _fallback("endpoint_down", f"{exc}: {exc.__cause__ or ''}", trace, llm_calls=calls)
    except openai.APIResponseValidationError as exc:
        return _fallback("malformed_output", f"invalid response body: {exc}", trace, llm_calls=calls)
    except openai.APIStatusError as exc:
        return _fallback("endpoint_error", f"HTTP {exc.status_code}: {exc.message}", trace, llm_calls=calls)
    except Exception as exc:  # noqa: BLE001 - a broken reply must never break the turn
        return _fallback("malformed_output", f"{type(exc).__name__}: {exc}", trace, llm_calls=calls)
    content = None
    try:
        content = resp.choices[0].message.content
    except (AttributeError, IndexError, TypeError):
        pass
    usage = dict(state.usage)
    if getattr(resp, "usage", None) is not None:
        for k in ("prompt_tokens", "completion_tokens"):
            usage[k] = usage.get(k, 0) + int(getattr(resp.usage, k, 0) or 0)
    served = getattr(resp, "model", None) or ctx.model
    step = {"step": "answer_or_request_recall", "round": state.recall_count, "llm_call": calls,
            "ms": _ms(t0), "chars": len(content or "")}
    base = {"llm_calls": calls, "usage": usage, "served_model": served, "pending_calls": []}
    if not isinstance(content, str) or not _THINK.sub("", content).strip():
        return _fallback("malformed_output", "empty reply", trace + [step], **base)
    content = _THINK.sub("", content).strip()
    parsed = parse_tool_calls(content)
    if parsed.ok:
        calls_ = [c.model_dump() for c in parsed.calls]
        step["tool_calls"] = calls_
        if state.recall_count >= state.max_recalls:
            return _fallback("recall_limit", f"asked for {len(calls_)} more tool call(s) after "
                             f"{state.recall_count} recalls", trace + [step], **base)
        return {**base, "pending_calls": calls_, "trace": trace + [step]}
    if parsed.near_miss or looks_like_tool_call(content) or content.startswith(("{", "[{", "```")):
        return _fallback("malformed_output", parsed.error or "unparseable tool call", trace + [step],
                         **base, raw_output=content)
    step["answered"] = True
    return {**base, "raw_output": content, "trace": trace + [step]}


def route_answer(state: State) -> Literal["recall_retrieve", "finalize"]:
    return "recall_retrieve" if state.pending_calls and not state.fallback else "finalize"


def recall_retrieve(state: State, runtime: Runtime[Context]) -> dict:
    """Execute the model's read-tool calls as structured RecallIntents; new evidence joins the pool."""
    from truffle_assets.retrieval import retrieve

    ctx = runtime.context
    rnd = state.recall_count + 1
    pool = {i["message_id"]: i for i in state.items}
    summaries = {s["episode_id"]: s for s in state.summaries}
    facts, notes, intents, steps = list(state.facts), list(state.recall_notes), list(state.intents), []
    executed = list(state.tool_calls)
    for call in state.pending_calls[:MAX_CALLS_PER_RECALL]:
        t0 = time.perf_counter()
        intent = RecallIntent.from_call(call["name"], call.get("arguments") or {}, state.participants)
        new: list[str] = []
        error = None
        try:
            if intent.tool == "search_memory" and ctx.pointer.is_file():
                k = min(intent.k or ctx.k_recall, ctx.k_recall)
                since = datetime.combine(intent.since, dtime.min) if intent.since else None
                until = datetime.combine(intent.until, dtime.max) if intent.until else None
                pack = retrieve(intent.missing, ctx.pointer, k=k, chats=[intent.chat] if intent.chat else None,
                                since=since, until=until)
                for it in pack.items:
                    if it.message_id not in pool:
                        pool[it.message_id] = it.model_dump(mode="json", exclude={"components"}) | {"round": rnd}
                        new.append(it.message_id)
                    else:
                        pool[it.message_id]["round"] = rnd  # asked for again: keep it in view
                for s in pack.summaries:
                    summaries.setdefault(s.episode_id, s.model_dump(mode="json"))
            elif intent.tool == "get_messages":
                for r in fetch_messages(ctx.pointer, intent.ids):
                    if r["message_id"] not in pool:
                        new.append(r["message_id"])
                    pool[r["message_id"]] = _item_from_row(r, 1.0, rnd, "recall")
            elif intent.tool == "get_fact":
                f = load_facts(ctx.published_dir).get(str(intent.fact_id))
                if f is None:
                    error = f"no fact {intent.fact_id}"
                else:
                    facts = [x for x in facts if x.get("fact_id") != intent.fact_id] + [{**f, "fact_id": intent.fact_id}]
                    ev = [str(m) for m in (f.get("evidence_message_ids") or [])][:MAX_GET_MESSAGES]
                    for r in fetch_messages(ctx.pointer, ev):
                        if r["message_id"] not in pool:
                            new.append(r["message_id"])
                        pool[r["message_id"]] = _item_from_row(r, 1.0, rnd, "fact")
        except Exception as exc:  # noqa: BLE001 - a failed recall is reported, the turn goes on
            error = f"{type(exc).__name__}: {exc}"[:300]
        args = ", ".join(f"{k}={v!r}" for k, v in (call.get("arguments") or {}).items())
        notes.append(text("recall_done", n=rnd, call=f"{intent.tool}({args})"[:240], found=len(new)))
        intents.append(intent.model_dump(mode="json"))
        executed.append(call)
        steps.append({"step": "recall_retrieve", "round": rnd, "intent": intent.model_dump(mode="json"),
                      "new_ids": new, "error": error, "ms": _ms(t0)})
    return {"items": list(pool.values()), "summaries": list(summaries.values()), "facts": facts,
            "recall_notes": notes, "intents": intents, "tool_calls": executed, "recall_count": rnd,
            "pending_calls": [], "trace": state.trace + steps}


# -- finalize ------------------------------------------------------------------------------------------

def _retrieval_only(state: State, ctx: Context) -> tuple[str, list[str], list[str]]:
    shown = set(state.context_ids)
    best = sorted((i for i in state.items if i["message_id"] in shown), key=lambda i: -i["score"])[: ctx.fallback_quotes]
    reason = FALLBACK_REASONS.get(state.fallback or "", state.fallback or "unknown")
    if not best:
        return text("fallback_none", reason=reason), [], []
    lines = [text("fallback_header", reason=reason)]
    for it in best:
        mid, author, txt = _evidence_line(it)
        quote = txt if len(txt) <= 280 else txt[:277].rstrip() + "…"
        lines.append(text("fallback_line", author=author, date=str(it.get("ts") or "")[:10], chat=it["chat_id"],
                          text=quote, id=mid, flag=" (uncertain)" if it.get("uncertain") else ""))
    ids = [i["message_id"] for i in best]
    return "\n".join(lines), ids, [i["message_id"] for i in best if i.get("uncertain")]


def finalize(state: State, runtime: Runtime[Context]) -> dict:
    ctx = runtime.context
    by_id = {i["message_id"]: i for i in state.items}
    shown = set(state.context_ids)
    invalid: list[str] = []
    fallback: dict = {}
    if state.refused:
        body, cites, weak = state.answer, [], []
    elif state.fallback:
        body, cites, weak = _retrieval_only(state, ctx)
    else:
        body = state.raw_output or ""

        def keep(m: re.Match) -> str:
            if m.group(1) in shown:
                return m.group(0)
            invalid.append(m.group(1))
            return ""

        body = re.sub(r"[ \t]?" + _CITE.pattern, keep, body).strip()
        if not body.strip(" .,;:"):  # nothing but invented citations
            fallback = {"fallback": "malformed_output", "fallback_detail": "the answer held only invented citations"}
            body, cites, weak = _retrieval_only(replace(state, **fallback), ctx)
        else:
            cites = list(dict.fromkeys(_CITE.findall(body)))
            weak = [c for c in cites if by_id.get(c, {}).get("uncertain")]
            if weak and "uncertain" not in body.lower():
                body += "\n\n" + text("uncertain_answer", ids=", ".join(f"[msg:{c}]" for c in weak))
    scrubbed: list[str] = []
    if not state.refused:
        body, scrubbed = privacy.scrub(body)
    chats = sorted({by_id[c]["chat_id"] for c in cites if c in by_id})
    fresh = [text("freshness_answer", chat=c, date=state.watermarks[c][:10]) for c in chats if c in state.watermarks]
    answer = body + ("\n\n" + "\n".join(fresh) if fresh else "")
    step = {"step": "finalize", "citations": cites, "invalid_citations": invalid, "uncertain": weak,
            "scrubbed": scrubbed, "fallback": fallback.get("fallback", state.fallback)}
    return {"answer": answer, "body": body, "citations": cites, "invalid_citations": invalid, "uncertain": weak,
            "freshness": fresh, "scrubbed": scrubbed, "trace": state.trace + [step], **fallback}


# ---- the graph --------------------------------------------------------------------------------------

builder = StateGraph(State, context_schema=Context, input_schema=InputState)
builder.add_node("guard", guard)
builder.add_node("refuse", refuse)
builder.add_node("load_profile", load_profile)
builder.add_node("retrieve_summaries", retrieve_summaries)
builder.add_node("retrieve_raw", retrieve_raw)
builder.add_node("compose_context", compose_context)
builder.add_node("answer_or_request_recall", answer_or_request_recall)
builder.add_node("recall_retrieve", recall_retrieve)
builder.add_node("finalize", finalize)
builder.add_edge(START, "guard")
builder.add_conditional_edges("guard", route_guard)
builder.add_edge("refuse", "finalize")
builder.add_edge("load_profile", "retrieve_summaries")
builder.add_edge("retrieve_summaries", "retrieve_raw")
builder.add_edge("retrieve_raw", "compose_context")
builder.add_edge("compose_context", "answer_or_request_recall")
builder.add_conditional_edges("answer_or_request_recall", route_answer)
builder.add_edge("recall_retrieve", "compose_context")
builder.add_edge("finalize", END)

graph = builder.compile(name="truffle_chat")
