"""The answer repairs: what happens to the model's reply before the user sees it, in one place.

`finalize` (the graph's last node) starts a `Draft` from the turn — the model's reply, a fallback's
quoted evidence, or the refusal — and runs `PASSES` over it in order. Each pass is a small function
`(draft, state, ctx) -> (draft, detail)` (the detail is what the trace keeps), has its own flag in
`RuntimeConfig.repairs` (all on by default; off only to measure what a pass does), and says in the
finalize trace step whether it changed the answer (`repairs: {name: "changed" | "unchanged" | "off" |
"n/a"}`, n/a where it does not apply to the draft: a refusal is never repaired, a fallback's quotes need
no citation repairs).

Most passes exist because the embedded model is small: it cites ids it was never shown, cites the
line beside the one that says the value, drops the year of a date, names the user as their own
relative. The others are guarantees that hold for any model: a secret-shaped value never reaches
an answer, and an answer says how current the memory it cites is. `docs/benchmarks.md` has how many
answers of the golden questions each pass changes.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any, Literal

from langgraph.runtime import Runtime

from truffle_assets.runtime import privacy
from truffle_assets.runtime.attribution import attribute, without_self
from truffle_assets.runtime.context import evidence_line
from truffle_assets.runtime.dates import with_years
from truffle_assets.runtime.display import emojize
from truffle_assets.runtime.prompts import FALLBACK_REASONS, text
from truffle_assets.runtime.published import fetch_messages, item_from_row, load_facts
from truffle_assets.runtime.state import Context, State
from truffle_assets.runtime.streaming import CITE, clean_body

PROFILE_EVIDENCE = 3  # messages per shown profile fact that may become its citation


@dataclass(frozen=True)
class Draft:
    """The answer between passes (frozen: a pass returns a new one)."""

    origin: Literal["model", "fallback", "refused"]
    body: str
    items: dict[str, dict]                 # the turn's evidence by message id (cited profile evidence joins)
    sources: dict[str, str] = field(default_factory=dict)  # id -> the text a citation may rest on
    citations: tuple[str, ...] | None = None   # None: read off the body (`cited`)
    uncertain: tuple[str, ...] | None = None   # None: the cited ids whose evidence is weak
    freshness: tuple[str, ...] = ()
    fallback: str | None = None            # set when the repaired reply held nothing (`nothing_left`)
    fallback_detail: str | None = None

    def cited(self) -> list[str]:
        if self.citations is not None:
            return list(self.citations)
        return list(dict.fromkeys(CITE.findall(self.body)))

    def weak(self) -> list[str]:
        if self.uncertain is not None:
            return list(self.uncertain)
        return [c for c in self.cited() if self.items.get(c, {}).get("uncertain")]


Pass = Callable[[Draft, State, Context], tuple[Draft, Any]]


# ---- the start --------------------------------------------------------------------------------------

def retrieval_only(state: State, ctx: Context, reason: str | None) -> tuple[str, list[str], list[str]]:
    """(body, citations, uncertain) of a fallback answer: the best-scored evidence the model was shown, quoted."""
    shown = set(state.context_ids)
    best = sorted((i for i in state.items if i["message_id"] in shown), key=lambda i: -i["score"])[: ctx.fallback_quotes]
    why = FALLBACK_REASONS.get(reason or "", reason or "unknown")
    if not best:
        return text("fallback_none", reason=why), [], []
    lines = [text("fallback_header", reason=why)]
    for it in best:
        mid, author, txt = evidence_line(it)
        quote = txt if len(txt) <= 280 else txt[:277].rstrip() + "…"
        lines.append(text("fallback_line", author=author, date=str(it.get("ts") or "")[:10], chat=it["chat_id"],
                          text=quote, id=mid, flag=" (uncertain)" if it.get("uncertain") else ""))
    return "\n".join(lines), [i["message_id"] for i in best], [i["message_id"] for i in best if i.get("uncertain")]


def start(state: State, ctx: Context) -> Draft:
    """The draft the passes repair: the refusal, a fallback's quoted evidence, or the model's reply
    (emoji back from the shortcodes a model that read them echoes), with the shown messages' texts."""
    by_id = {i["message_id"]: i for i in state.items}
    if state.refused:
        return Draft("refused", state.answer, by_id, citations=(), uncertain=())
    if state.fallback:
        body, cites, weak = retrieval_only(state, ctx, state.fallback)
        return Draft("fallback", body, by_id, citations=tuple(cites), uncertain=tuple(weak))
    sources = {i: evidence_line(by_id[i])[2] for i in state.context_ids if i in by_id}
    return Draft("model", emojize(state.raw_output or "").strip(), by_id, sources)


# ---- the passes -------------------------------------------------------------------------------------

def drop_invented_citations(draft: Draft, state: State, ctx: Context) -> tuple[Draft, list[str]]:
    """Citations of messages that were not in the prompt are removed (-> the removed ids).

    A small model invents `[msg:…]` ids, or copies one from an earlier turn; a citation the user can
    open must be a message the model was shown this turn."""
    body, invalid = clean_body(draft.body, set(state.context_ids))
    return replace(draft, body=body), invalid


def _profile_evidence(state: State, ctx: Context) -> list[dict]:
    """The indexed messages behind the profile facts the latest prompt showed (a few per fact)."""
    if not state.profile_shown:
        return []
    try:
        facts = load_facts(ctx.published_dir)
        ids = [m for f in state.profile_shown
               for m in (facts.get(f, {}).get("evidence_message_ids") or [])[:PROFILE_EVIDENCE]]
        return fetch_messages(ctx.pointer, list(dict.fromkeys(ids)))
    except Exception:  # noqa: BLE001 - a citation repair is never worth failing the answer over
        return []


def repoint_citations(draft: Draft, state: State, ctx: Context) -> tuple[Draft, list[dict]]:
    """A sentence whose cited message does not state its claim is cited to the shown message that does;
    an uncited claim one shown message clearly states gets that citation (`attribution.attribute`).

    The small model often states the right value and cites the line next to it, or states it uncited.
    A claim the profile gave may be cited to the messages its fact rests on (never shown as lines):
    those join the turn's evidence when cited."""
    stated = {r["message_id"]: item_from_row(r, 0.0, state.recall_count, "profile")
              for r in _profile_evidence(state, ctx) if r["message_id"] not in draft.items}
    sources = draft.sources | {i: evidence_line(r)[2] for i, r in stated.items()}
    body, changes = attribute(draft.body, state.question, sources)
    items = dict(draft.items)
    for c in dict.fromkeys(CITE.findall(body)):
        if c in stated:
            items[c] = stated[c]
    return replace(draft, body=body, items=items, sources=sources), changes


def add_date_years(draft: Draft, state: State, ctx: Context) -> tuple[Draft, list[dict]]:
    """A date given without its year takes it from the message cited beside it (`dates.with_years`).

    The evidence lines carry their day in full and the small model copies day and month only; in a
    memory that spans years "on 21 January" is no answer."""
    cited = {c: (draft.items[c].get("ts"), draft.sources[c])
             for c in CITE.findall(draft.body) if c in draft.sources}
    body, added = with_years(draft.body, cited, state.question)
    return replace(draft, body=body), added


def drop_self_named(draft: Draft, state: State, ctx: Context) -> tuple[Draft, list[str]]:
    """Sentences that name the user as someone else ("Your daughter: <the user>") are dropped
    (`attribution.without_self`); an answer left with no claim says it is not in memory.

    Shown the user's own message, the small model names its author as the relative asked about."""
    body, dropped = without_self(draft.body, (state.profile or {}).get("user"))
    if dropped and not re.sub(r"(?im)^\s*uncertain:.*$", "", CITE.sub("", body)).strip(" .,;:\n"):
        body = text("self_named")  # an "Uncertain: …" note alone is no answer
    return replace(draft, body=body), dropped


def fall_back_when_nothing_left(draft: Draft, state: State, ctx: Context) -> tuple[Draft, str | None]:
    """A reply that held only invented citations (empty once they are gone) becomes a fallback: the
    best evidence the model was shown, quoted (-> the fallback reason, or None)."""
    if draft.body.strip(" .,;:"):
        return draft, None
    reason = "malformed_output"
    body, cites, weak = retrieval_only(state, ctx, reason)
    return replace(draft, body=body, citations=tuple(cites), uncertain=tuple(weak), fallback=reason,
                   fallback_detail="the answer held only invented citations"), reason


def label_uncertain(draft: Draft, state: State, ctx: Context) -> tuple[Draft, list[str]]:
    """An answer citing weak evidence (a low-scored match) says so, naming those citations, unless it
    already says it is uncertain (-> the ids labelled)."""
    cites = draft.cited()
    weak = [c for c in cites if draft.items.get(c, {}).get("uncertain")]
    draft = replace(draft, citations=tuple(cites))
    if not weak or "uncertain" in draft.body.lower():
        return draft, []
    return replace(draft, body=draft.body + "\n\n" + text("uncertain_answer", ids=", ".join(f"[msg:{c}]" for c in weak))), weak


def scrub_secrets(draft: Draft, state: State, ctx: Context) -> tuple[Draft, list[str]]:
    """Any secret-shaped value that still reaches the answer (made up by the model, or echoed from the
    question) is replaced by its typed placeholder (`privacy.scrub`; -> the types replaced). The memory
    holds only redacted text: this is defence in depth, for any model."""
    cites = draft.cited()  # read before scrubbing: the citations are the ones the answer was given
    body, scrubbed = privacy.scrub(draft.body)
    return replace(draft, body=body, citations=tuple(cites)), scrubbed


def add_freshness(draft: Draft, state: State, ctx: Context) -> tuple[Draft, list[str]]:
    """One line per cited chat saying how current its memory is ("Memory current to 2022-09-17
    (priya-sharma)."): the memory ends where the last ingest did."""
    chats = sorted({draft.items[c]["chat_id"] for c in draft.cited() if c in draft.items})
    fresh = [text("freshness_answer", chat=c, date=state.watermarks[c][:10]) for c in chats if c in state.watermarks]
    return replace(draft, freshness=tuple(fresh)), fresh


# name (its `Repairs` flag and trace entry) -> (pass, the drafts it applies to, the finalize step's key)
PASSES: dict[str, tuple[Pass, frozenset[str], str | None]] = {
    "citations": (drop_invented_citations, frozenset({"model"}), "invalid_citations"),
    "attribution": (repoint_citations, frozenset({"model"}), "attributed"),
    "date_years": (add_date_years, frozenset({"model"}), "dated"),
    "self_named": (drop_self_named, frozenset({"model"}), "self_named"),
    "nothing_left": (fall_back_when_nothing_left, frozenset({"model"}), None),
    "uncertain_label": (label_uncertain, frozenset({"model"}), None),
    "scrub": (scrub_secrets, frozenset({"model", "fallback"}), "scrubbed"),
    "freshness": (add_freshness, frozenset({"model", "fallback", "refused"}), None),
}


def repair(state: State, ctx: Context) -> tuple[Draft, dict[str, str], dict[str, Any]]:
    """(the repaired draft, pass name -> what it did, the details the trace keeps) of a turn."""
    draft = start(state, ctx)
    done: dict[str, str] = {}
    details: dict[str, Any] = {}
    for name, (fn, applies, key) in PASSES.items():
        if draft.origin not in applies:
            done[name] = "n/a"
        elif not getattr(ctx.repairs, name):
            done[name] = "off"
        else:
            before = (draft.body, draft.cited(), draft.freshness)
            draft, detail = fn(draft, state, ctx)
            done[name] = "changed" if (draft.body, draft.cited(), draft.freshness) != before else "unchanged"
            if key is not None:
                details[key] = detail
    return draft, done, details


# ---- the node ---------------------------------------------------------------------------------------

def finalize(state: State, runtime: Runtime[Context]) -> dict:
    """The answer the user sees: the draft after every repair pass, and its freshness lines."""
    draft, done, details = repair(state, runtime.context)
    cites, weak = draft.cited(), draft.weak()
    answer = draft.body + ("\n\n" + "\n".join(draft.freshness) if draft.freshness else "")
    found = {k: details.get(k, []) for k in ("invalid_citations", "attributed", "dated", "self_named", "scrubbed")}
    step = {"step": "finalize", "citations": cites, **{k: found[k] for k in ("invalid_citations", "attributed",
            "dated", "self_named")}, "uncertain": weak, "scrubbed": found["scrubbed"],
            "fallback": draft.fallback or state.fallback, "repairs": done}
    if draft.fallback:
        step["fallback_detail"] = draft.fallback_detail
    return {"answer": answer, "body": draft.body, "citations": cites, "items": list(draft.items.values()),
            "uncertain": weak, "freshness": list(draft.freshness), "trace": [step],
            **({"fallback": draft.fallback} if draft.fallback else {})}
