"""Composing the prompt of a turn under its token budgets (the `compose_context` node).

The prompt has the layout training and evals use (`chat_format.prompt.context_block`): the system
prompt, then a second system message with today's date, notes (data-not-instructions rule,
freshness per chat, recall notes, profile, summaries) and `Retrieved messages:` +
`[msg:<id>] <author> (<day sent>): <text>` lines, then the earlier turns and the question. Every section is
fitted to its token budget with the served model's tokenizer, dropping the lowest-priority entries
first (evidence: the latest recall's messages first, then by retrieval score; profile: facts a
recall asked for, then the core facts (name, home, employer, title, partner) and then by confidence,
past facts last; `standing`), then the whole prompt + the reserved
answer is held under the hard cap by shrinking earlier turns first, then summaries, the profile and
the raw evidence last. The question is cut only when it alone is over the dialogue budget, never to
meet the cap: a prompt still over the cap then is reported by the answer node (`context_overflow`).
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import date

from langgraph.runtime import Runtime

from truffle_assets.chat_format.prompt import context_block, message_line, speaker
from truffle_assets.ids import shown_fact_id
from truffle_assets.runtime import privacy
from truffle_assets.runtime.display import as_written, emojize
from truffle_assets.runtime.prompts import system_prompt, text
from truffle_assets.runtime.state import Context, State, elapsed_ms
from truffle_assets.runtime.tokens import TokenCounter

_NEWLINES = re.compile(r"\s*[\r\n]+\s*")

# Who the user is now comes first, then the most confident facts: by confidence alone the profile
# section can show the name, the home, a brother and a favourite sport and not "Works at", and "Where
# do I work now?" is then answered with an old job.
CORE = frozenset({"name", "lives_in", "employer", "job", "partner"})


def standing(entry: dict) -> float:
    """A current profile fact's place in the profile section: the core facts above every other."""
    return float(entry.get("confidence") or 0.0) + (1.0 if entry.get("predicate") in CORE else 0.0)


def counter_for(ctx: Context) -> TokenCounter:
    if not ctx.tokenizer:
        raise ValueError("Context.tokenizer is not set: the runtime counts tokens with the served model's tokenizer")
    return TokenCounter.load(ctx.tokenizer, proxy_for=ctx.tokenizer_proxy_for)


def one_line(s: str | None) -> str:
    return _NEWLINES.sub(" / ", (s or "").strip())


def display_text(s: str | None) -> str:
    """Memory text as the prompt shows it: the person's emoji back (the index holds the search
    stream's shortcodes), redacted again (defence in depth), on one line."""
    return one_line(privacy.redact_data(emojize(s or "")))


def evidence_line(it: dict) -> tuple[str, str, str]:
    """(id, author, text) of an evidence item as the prompt shows it: the message as written
    (`display.as_written`; the search text only in an older index), redacted again, on one line."""
    shown = privacy.redact_data(as_written(it.get("shown_text"), it.get("text")))
    return it["message_id"], one_line(it.get("author") or "Unknown"), one_line(shown)


# ---- entries and fitting ----------------------------------------------------------------------------

@dataclass
class _Entry:
    priority: tuple
    order: tuple
    line: str
    ref: str | None = None      # message id for evidence lines ("previously" for past profile facts)
    triple: tuple | None = None  # (id, author, text, day sent) of an evidence line
    extra: int = 0              # tokens the entry adds elsewhere in the section (the weak-match note)
    fact: str | None = None     # fact id of a profile line (finalize may cite the fact's own messages)


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
        return replace(e, line=line + "…", triple=None) if line else None
    mid, author, _, day = e.triple
    prefix = message_line(mid, author, "", day)
    if len(line) <= len(prefix) or not line.startswith(prefix):
        return None
    cut = line[len(prefix):] + "…"
    return replace(e, line=prefix + cut, triple=(mid, author, cut, day))


def _profile_entries(profile: dict | None, facts: list[dict]) -> list[_Entry]:
    """Fact lines with their priority: facts a recall asked for, then the profile's facts by `standing`
    (the core facts, then confidence), past facts below the people."""
    out: list[_Entry] = []
    for i, f in enumerate(facts):  # asked for by get_fact: kept first
        status = "current" if not f.get("valid_to") else f"until {str(f['valid_to'])[:10]}"
        if f.get("superseded_by"):
            status += f", superseded by fact {shown_fact_id(f['superseded_by'])}"
        line = f"- {display_text(str(f.get('fact_text') or ''))} (fact {shown_fact_id(f.get('fact_id'))}, {status})"
        out.append(_Entry((2, 2.0, -i), (0, i), line, fact=str(f.get("fact_id"))))
    if not profile:
        return out
    cats = profile.get("facts") or {}
    n = 0
    for cat, entries in cats.items():
        for e in entries or []:
            since = f", since {e['since']}" if e.get("since") else ""
            line = f"- {display_text(str(e.get('text') or ''))} ({cat}, fact {shown_fact_id(e.get('fact_id'))}{since})"
            out.append(_Entry((1, standing(e), -n), (1, n), line, fact=str(e.get("fact_id"))))
            n += 1
    for k, who in enumerate(profile.get("people") or []):  # who the user writes to most, one to one
        line = f"- Writes to most: {display_text(str(who.get('name') or ''))} ({who.get('your_messages')} messages)"
        out.append(_Entry((0, 0.5, -k), (1, n + k), line))
    for j, p in enumerate(profile.get("previously") or []):
        line = f"- {display_text(str(p.get('text') or ''))} (until {p.get('until')}, fact {shown_fact_id(p.get('fact_id'))})"
        out.append(_Entry((0, 0.0, -j), (2, j), line, ref="previously", fact=str(p.get("fact_id"))))
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
        line = f"- {s.get('chat_id')}, {when}: {display_text(s.get('text'))}"
        out.append(_Entry((float(s.get("score") or 0.0), -i), (start, i), line))
    return out


def _render_summaries(kept: list[_Entry]) -> str:
    return "\n".join([text("summaries_header"), *(e.line for e in kept)])


def _evidence_entries(items: list[dict], counter: TokenCounter) -> list[_Entry]:
    latest = max((i.get("round", 0) for i in items), default=0)
    out = []
    for n, it in enumerate(items):
        mid, author, txt = evidence_line(it)
        shown = (mid, speaker(author, bool(it.get("is_user"))), txt, str(it["ts"])[:10] if it.get("ts") else None)
        extra = counter.count(f"msg:{mid}, ") if it.get("uncertain") else 0
        # the messages the model just asked for first, then by retrieval score
        out.append(_Entry((int(it.get("round", 0) == latest and latest > 0), float(it["score"]), -n),
                          (str(it.get("ts") or ""), mid), message_line(*shown), ref=mid, triple=shown, extra=extra))
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


# ---- the node ---------------------------------------------------------------------------------------

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
            "limits": limits, "shown": shown, "tokenizer": counter.name, "ms": elapsed_ms(t0)}
    return {"prompt": prompt, "tokens": tokens, "context_ids": context_ids,
            "profile_shown": [e.fact for e in p_kept if e.fact],
            "trace": [step]}
