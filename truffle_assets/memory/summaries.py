"""Episode summaries in three tiers, fact claims from the richest tier, and day/week rollups.

Tier A (every episode): extractive, no LLM — the most central lines, kept in order.
Tier B (salience >= tier_b): a 2-3 sentence LLM summary.
Tier C (salience >= tier_c): a richer LLM summary plus fact extraction, in one call.

The LLM sees the episode transcript with short line refs (`[m3] 09:01 Alice: ...`) and cites refs
as evidence; refs (or literal message ids) are mapped back to the episode's message ids and
anything else is dropped. When the client is missing, disabled or returns None, the B/C row is the
extractive summary with source='fallback', so the gap stays visible. Only the redacted transcript
(`episodes.text`) is ever sent.
"""

from __future__ import annotations

import hashlib
import math
import re
from collections import Counter, defaultdict
from datetime import date, datetime, time, timedelta
from typing import Any

import polars as pl

from truffle_assets.memory.facts.lexicon import PREDICATES, predicate_info
from truffle_assets.memory.facts.render import fact_text as render_fact_text
from truffle_assets.memory.facts.schema import ENDING_PREFIX
from pydantic import BaseModel, Field, field_validator

from truffle_assets.llm.client import LLMClient, load_prompt

SUMMARIES_SCHEMA: dict[str, Any] = {
    "episode_id": pl.String, "chat_id": pl.String, "day": pl.Date, "tier": pl.String, "source": pl.String,
    "model": pl.String, "text": pl.String, "keywords": pl.List(pl.String), "entities": pl.List(pl.String),
    "evidence_message_ids": pl.List(pl.String), "tokens_in": pl.Int64, "tokens_out": pl.Int64,
}
ROLLUPS_SCHEMA: dict[str, Any] = {
    "chat_id": pl.String, "period": pl.String, "period_start": pl.Date, "text": pl.String,
    "episode_ids": pl.List(pl.String), "evidence_message_ids": pl.List(pl.String),
}
FACT_CLAIMS_SCHEMA: dict[str, Any] = {
    "id": pl.String, "chat_id": pl.String, "day": pl.Date, "subject": pl.String, "predicate": pl.String,
    "value": pl.String, "category": pl.String, "fact_text": pl.String, "confidence": pl.Float64,
    "message_id": pl.String, "ts": pl.Datetime("us"), "source": pl.String,
}
CATEGORIES = {"identity", "preference", "relationship", "event", "goal"}
FACT_CATEGORIES = {p.category for p in PREDICATES.values()}

# ---------------------------------------------------------------------------- tier A

_LINE = re.compile(r"^\s*(\d{1,2}:\d{2})\s+([^:]{1,80}?):\s?(.*)$")
_PLACEHOLDER = re.compile(r"\[[A-Z][A-Z_ ]*\]")
_WORD = re.compile(r"[^\W_]+(?:['’][^\W_]+)?", re.UNICODE)
_DATE = re.compile(
    r"\b(?:\d{1,2}[/.-]\d{1,2}(?:[/.-]\d{2,4})?|\d{4}-\d{2}-\d{2}|\d{1,2}(?::\d{2})?\s?(?:am|pm)"
    r"|\d{1,2}(?:st|nd|rd|th)?\s+(?:jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec)[a-z]*"
    r"|(?:jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec)[a-z]*\s+\d{1,2}(?:st|nd|rd|th)?)\b",
    re.IGNORECASE,
)
_NUMBER = re.compile(r"(?<![\w/.:-])(?:[₹$€£]\s?)?\d[\d,.]*\s?(?:k|rs|inr|usd|eur|km|kg|%)?(?![\w/:-])", re.IGNORECASE)
_CAPSEQ = re.compile(r"\b[A-Z][\w’'-]*(?:\s+[A-Z][\w’'-]*)*")
_NOISE = re.compile(
    r"^(?:<media omitted>|<attached:.*>|this message was deleted|you deleted this message|"
    r"null|missed (?:voice|video) call|.*\(file attached\)|image omitted|video omitted|sticker omitted|"
    r"audio omitted|gif omitted|document omitted|<this message was edited>)$",
    re.IGNORECASE,
)
_STOP = frozenset("""
a about above after again against all also am an and any are aren't as at be because been before being
below between both but by can can't cannot could couldn't did didn't do does doesn't doing don't down
during each few for from further get got gonna had hadn't has hasn't have haven't having he he'd he'll
he's her here here's hers herself him himself his how how's i i'd i'll i'm i've if in into is isn't it
it's its itself just let's like me more most much my myself no nor not now of off ok okay on once only
or other ought our ours ourselves out over own same shan't she she'd she'll she's should shouldn't so
some such than that that's the their theirs them themselves then there there's these they they'd
they'll they're they've this those through to too under until up very was wasn't we we'd we'll we're
we've were weren't what what's when when's where where's which while who who's whom why why's will
with won't would wouldn't you you'd you'll you're you've your yours yourself yourselves yes yeah yep
yup nope hmm hm oh ah haha hahaha lol lmao ya ye u ur im dont cant thats its k kk okk ok hi hey hello
bye thanks thank thx pls please sure right well really one two going know think want need see say said
go come came tell told make made good fine great nice cool also still even yet back today tomorrow
yesterday tonight morning evening night time day week will shall may might must let let’s i’m don’t
hai hain ho ka ki ke ko se me mein main tum aap ye yeh wo woh kya kyu kyun nahi nahin na haan han bhi
toh to tha thi the raha rahi rahe kar karo kr diya liya le de bhai yaar acha accha achha theek thik
""".split())
_NOT_ENTITY = frozenset({"I", "OK", "Ok", "Okay", "Yes", "No", "Hey", "Hi", "Hello", "Thanks", "Lol", "Haha", "Good",
                         "Morning", "Night", "Sure", "Yeah", "Yup", "Bye", "Please", "The", "This", "That", "What",
                         "When", "Where", "Why", "How", "Who", "And", "But", "So", "Also", "Just", "Let", "Omg"})


def _parse_lines(text: str) -> list[tuple[str, str, str]]:
    """(HH:MM, author, message) per transcript line; unparseable lines keep ('', '', line)."""
    out = []
    for line in (text or "").split("\n"):
        m = _LINE.match(line)
        out.append((m.group(1), m.group(2).strip(), m.group(3).strip()) if m else ("", "", line.strip()))
    return out


def _terms(msg: str) -> list[str]:
    msg = _PLACEHOLDER.sub(" ", msg)
    return [w for w in (_POSSESSIVE.sub("", t.lower()) for t in _WORD.findall(msg))
            if len(w) > 1 and w not in _STOP and not w.isdigit()]


_POSSESSIVE = re.compile(r"['’]s$", re.IGNORECASE)


def _entities(lines: list[tuple[str, str, str]]) -> list[str]:
    counts: Counter[str] = Counter()
    first: dict[str, int] = {}

    def add(e: str, weight: int, pos: int) -> None:
        e = _POSSESSIVE.sub("", e.strip(" .,!?;:'\"’-")).strip()
        if not e or _PLACEHOLDER.fullmatch(e) or len(e) > 60:
            return
        counts[e] += weight
        first.setdefault(e, pos)

    def sentences(msg: str) -> list[str]:
        return [x for x in re.split(r"(?<=[.!?])\s+|\n", _PLACEHOLDER.sub(" ", msg)) if x.strip()]

    # words capitalised mid-sentence somewhere (or authors) may also count at a sentence start
    known = {_POSSESSIVE.sub("", w) for _, a, _ in lines for w in a.split()}
    for _, _, msg in lines:
        for sent in sentences(msg):
            for m in _CAPSEQ.finditer(sent):
                words = m.group(0).split()
                if sent[: m.start()].strip() == "":
                    words = words[1:]
                known.update(_POSSESSIVE.sub("", w) for w in words)

    for pos, (_, author, msg) in enumerate(lines):
        if author and not re.search(r"\d", author):
            add(author, 2, pos)
        if not msg or _NOISE.match(msg):
            continue
        clean = _PLACEHOLDER.sub(" ", msg)
        for m in _DATE.finditer(clean):
            add(m.group(0), 1, pos)
        for m in _NUMBER.finditer(_DATE.sub(" ", clean)):
            token = m.group(0).strip()
            if len(re.sub(r"\D", "", token)) >= 2 or re.search(r"[₹$€£%]|k\b|km|kg|rs|inr|usd|eur", token, re.I):
                add(token, 1, pos)
        for sent in sentences(msg):
            for m in _CAPSEQ.finditer(sent):
                words = m.group(0).split()
                if sent[: m.start()].strip() == "" and _POSSESSIVE.sub("", words[0]) not in known:
                    words = words[1:]  # an ordinary sentence-initial capital
                words = [w for w in words if w not in _NOT_ENTITY and w.lower() not in _STOP]
                if words and not all(w.isupper() and len(w) <= 2 for w in words):
                    add(" ".join(words), 1, pos)
    return sorted(counts, key=lambda e: (-counts[e], first[e], e))[:12]


def extractive_summary(text: str, message_ids: list[str], max_sentences: int = 3) -> dict[str, Any]:
    """Tier A: {'text', 'keywords', 'entities', 'evidence_message_ids'}; deterministic, no LLM.

    Lines are scored by the salience of their terms within the episode (frequency, spread over
    lines, specificity) plus bonuses for dates/numbers/names, normalised by length; the top lines
    are kept in transcript order. Placeholders ([CARD], [OTP], ...) never become keywords/entities.
    """
    lines = _parse_lines(text)
    n = min(len(lines), len(message_ids)) if message_ids else len(lines)
    lines = lines[:n] if message_ids else lines
    line_terms = [_terms(msg) if msg and not _NOISE.match(msg) else [] for _, _, msg in lines]
    tf: Counter[str] = Counter(t for ts in line_terms for t in ts)
    df: Counter[str] = Counter(t for ts in line_terms for t in set(ts))
    n_lines = max(1, sum(1 for ts in line_terms if ts))
    weight = {t: (1 + math.log(tf[t])) * (0.6 + 0.4 * min(len(t), 8) / 8) * (1 + 0.5 * (df[t] > 1) * min(1.0, df[t] / n_lines * 4))
              for t in tf}

    scores = []
    for i, ((_, _, msg), ts) in enumerate(zip(lines, line_terms)):
        if not ts:
            scores.append((0.0, i))
            continue
        uniq = set(ts)
        s = sum(weight[t] for t in uniq) / math.sqrt(len(uniq))
        s *= min(1.0, 0.4 + 0.2 * len(uniq))  # very short lines ("ok see u") carry little
        if _DATE.search(msg) or re.search(r"\d", _PLACEHOLDER.sub("", msg)):
            s += 0.5
        if _CAPSEQ.search(msg[1:] if msg else ""):
            s += 0.3
        scores.append((s, i))
    ranked = sorted((x for x in scores if x[0] > 0), key=lambda x: (-x[0], x[1]))
    chosen = sorted(i for _, i in ranked[:max(1, max_sentences)])
    if not chosen and lines:
        chosen = [0]

    parts = []
    for i in chosen:
        _, author, msg = lines[i]
        msg = msg if len(msg) <= 240 else msg[:239].rstrip() + "…"
        parts.append(f"{author}: {msg}" if author else msg)
    author_terms = {w.lower() for _, a, _ in lines for w in _WORD.findall(a)}
    kw_rank = sorted((t for t in tf if t not in author_terms), key=lambda t: (-weight[t] * df[t], t))
    evidence = [message_ids[i] for i in chosen] if message_ids else []
    return {
        "text": "\n".join(parts),
        "keywords": kw_rank[:8],
        "entities": _entities(lines),
        "evidence_message_ids": evidence,
    }


# ---------------------------------------------------------------------------- tiers B / C

class EpisodeSummary(BaseModel):
    summary: str = Field(min_length=1)
    keywords: list[str] = Field(default_factory=list)
    entities: list[str] = Field(default_factory=list)
    evidence_message_ids: list[str] = Field(default_factory=list)

    @field_validator("keywords", "entities", "evidence_message_ids", mode="before")
    @classmethod
    def _listify(cls, v: Any) -> Any:
        if v is None:
            return []
        if isinstance(v, str):
            return [x.strip() for x in v.split(",") if x.strip()]
        if isinstance(v, list):
            return [str(x) for x in v if x is not None and not isinstance(x, (dict, list))]
        return v


class FactOut(BaseModel):
    subject: str = ""
    predicate: str = ""
    value: str = ""
    category: str = "event"
    fact_text: str = ""
    confidence: float = 0.7
    evidence_message_ids: list[str] = Field(default_factory=list)

    @field_validator("subject", "predicate", "value", "category", "fact_text", mode="before")
    @classmethod
    def _str(cls, v: Any) -> Any:
        return "" if v is None else str(v) if isinstance(v, (int, float)) else v

    @field_validator("evidence_message_ids", mode="before")
    @classmethod
    def _ids(cls, v: Any) -> Any:
        return EpisodeSummary._listify(v)

    @field_validator("confidence", mode="before")
    @classmethod
    def _conf(cls, v: Any) -> Any:
        try:
            return min(1.0, max(0.0, float(v)))
        except (TypeError, ValueError):
            return 0.5


class EpisodeDigest(EpisodeSummary):
    facts: list[FactOut] = Field(default_factory=list)


_CATEGORY_ALIASES = {"preferences": "preference", "likes": "preference", "relation": "relationship",
                     "relationships": "relationship", "events": "event", "goals": "goal", "plan": "goal",
                     "plans": "goal", "identity_fact": "identity", "bio": "identity", "personal": "identity"}


def _transcript_for_llm(lines: list[str], max_chars: int) -> str:
    out, size = [], 0
    for i, line in enumerate(lines):
        row = f"[m{i + 1}] {line}"
        if size + len(row) > max_chars and out:
            out.append(f"[... {len(lines) - i} more lines omitted]")
            break
        out.append(row)
        size += len(row) + 1
    return "\n".join(out)


def _resolve_ids(cited: list[str], message_ids: list[str]) -> list[str]:
    """Map refs ('m3', '[m3]', '3') or literal ids to the episode's ids; drop everything else."""
    valid = set(message_ids)
    out: list[str] = []
    for c in cited:
        c = c.strip().strip("[]").strip()
        mid = None
        if c in valid:
            mid = c
        else:
            m = re.fullmatch(r"[mM]?(\d{1,5})", c)
            if m and 1 <= int(m.group(1)) <= len(message_ids):
                mid = message_ids[int(m.group(1)) - 1]
        if mid is not None and mid not in out:
            out.append(mid)
    return out


def _clean_strs(xs: list[str], cap: int) -> list[str]:
    out: list[str] = []
    for x in xs:
        x = " ".join(x.split())[:80]
        if x and not _PLACEHOLDER.fullmatch(x) and x not in out:
            out.append(x)
    return out[:cap]


def _line_ts(line: str, start: datetime | None, day: date | None) -> datetime | None:
    m = _LINE.match(line)
    base_day = start.date() if isinstance(start, datetime) else day
    if not m or base_day is None:
        return start
    hh, mm = (int(x) for x in m.group(1).split(":"))
    if hh > 23 or mm > 59:
        return start
    ts = datetime.combine(base_day, time(hh, mm))
    if isinstance(start, datetime) and ts < start.replace(second=0, microsecond=0):
        ts += timedelta(days=1)  # the episode crossed midnight
    return ts


def _fact_id(chat_id: str, message_id: str, subject: str, predicate: str, value: str) -> str:
    key = "\x1f".join((chat_id, message_id, subject.lower(), predicate.lower(), value.lower()))
    return hashlib.blake2b(key.encode(), digest_size=10).hexdigest()


def summarize_episodes(
    episodes: pl.DataFrame,
    client: LLMClient | None,
    tier_b: float = 0.45,
    tier_c: float = 0.7,
    *,
    max_prompt_chars: int = 12_000,
) -> tuple[pl.DataFrame, pl.DataFrame]:
    """(summaries, fact_claims) frames with exactly the contract columns.

    Every episode gets a tier-A row; episodes with salience >= tier_b also get a B row (C when
    >= tier_c) from the LLM, or the extractive text with source='fallback' when the LLM is
    unavailable. fact_claims come only from successful tier-C calls (source='llm').
    """
    rows: list[dict[str, Any]] = []
    claims: list[dict[str, Any]] = []
    eps = episodes.sort(["chat_id", "day", "start_ts", "id"]) if episodes.height else episodes
    jobs: list[tuple[str, str, type[BaseModel], str]] = []
    pending: list[tuple[dict, str, dict]] = []  # (episode, tier, extractive for fallback)
    sys_b = load_prompt("summarize_episode").replace("{length}", "2-3 sentences (at most 70 words)")
    sys_c = (load_prompt("summarize_episode").replace("{length}", "a detailed summary of 4-6 sentences (at most 150 words)")
             + "\n\n" + load_prompt("extract_facts"))

    for ep in eps.iter_rows(named=True):
        ids = list(ep.get("message_ids") or [])
        text = ep.get("text") or ""
        a = extractive_summary(text, ids, max_sentences=3)
        rows.append(_row(ep, "A", "extractive", None, a, 0, 0))
        sal = ep.get("salience") or 0.0
        if sal < tier_b:
            continue
        tier = "C" if sal >= tier_c else "B"
        fallback = a if tier == "B" else extractive_summary(text, ids, max_sentences=5)
        pending.append((ep, tier, fallback))
        user = ("Episode transcript"
                + (f" ({ep['chat_id']}, {ep['day']})" if ep.get("day") is not None else "") + ":\n"
                + _transcript_for_llm(text.split("\n")[: len(ids) or None], max_prompt_chars))
        jobs.append((sys_c if tier == "C" else sys_b, user, EpisodeDigest if tier == "C" else EpisodeSummary,
                     f"{ep['id']}:{tier}"))

    results = client.map_call_json(jobs) if (client is not None and jobs) else [None] * len(jobs)
    model = client.model if client is not None else None
    for (ep, tier, fallback), res in zip(pending, results):
        ids = list(ep.get("message_ids") or [])
        out = res.value if res is not None else None
        if out is None or not out.summary.strip():  # type: ignore[attr-defined]
            rows.append(_row(ep, tier, "fallback", None, fallback, 0, 0))
            continue
        evidence = _resolve_ids(out.evidence_message_ids, ids) or ids  # type: ignore[attr-defined]
        keywords = _clean_strs(out.keywords, 10) or fallback["keywords"]  # type: ignore[attr-defined]
        entities = _clean_strs(out.entities, 12) or fallback["entities"]  # type: ignore[attr-defined]
        summary = {"text": " ".join(out.summary.split()), "keywords": keywords,  # type: ignore[attr-defined]
                   "entities": entities, "evidence_message_ids": evidence}
        rows.append(_row(ep, tier, "llm", model, summary, res.tokens_in, res.tokens_out))  # type: ignore[union-attr]
        if tier == "C":
            lines = (ep.get("text") or "").split("\n")
            for f in getattr(out, "facts", []):
                claim = _claim(ep, f, ids, lines)
                if claim is not None and claim["id"] not in {c["id"] for c in claims}:
                    claims.append(claim)

    summaries = pl.DataFrame(rows, schema=SUMMARIES_SCHEMA, orient="row") if rows else pl.DataFrame(schema=SUMMARIES_SCHEMA)
    facts = pl.DataFrame(claims, schema=FACT_CLAIMS_SCHEMA, orient="row") if claims else pl.DataFrame(schema=FACT_CLAIMS_SCHEMA)
    return summaries, facts


def _row(ep: dict, tier: str, source: str, model: str | None, s: dict, tin: int, tout: int) -> dict[str, Any]:
    return {
        "episode_id": ep["id"], "chat_id": ep["chat_id"], "day": ep.get("day"), "tier": tier, "source": source,
        "model": model, "text": s["text"], "keywords": list(s["keywords"]), "entities": list(s["entities"]),
        "evidence_message_ids": list(s["evidence_message_ids"]), "tokens_in": int(tin), "tokens_out": int(tout),
    }


def _claim(ep: dict, f: FactOut, ids: list[str], lines: list[str]) -> dict[str, Any] | None:
    subject, predicate, value = (" ".join(x.split()) for x in (f.subject, f.predicate, f.value))
    category = f.category.strip().lower()
    category = _CATEGORY_ALIASES.get(category, category)
    evidence = _resolve_ids(f.evidence_message_ids, ids)
    if not (subject and predicate and value and evidence) or category not in CATEGORIES | FACT_CATEGORIES:
        return None
    if _PLACEHOLDER.fullmatch(value) or _PLACEHOLDER.fullmatch(subject):
        return None  # a fact about a redacted value is no fact
    ending = predicate.lower().startswith(ENDING_PREFIX)
    predicate = re.sub(r"[^\w]+", "_", predicate.lower().removeprefix(ENDING_PREFIX)).strip("_")[:48] or "related_to"
    known = predicate in PREDICATES or predicate.startswith("favourite_")
    if known:  # the offline tier's vocabulary: same category, same fact text, same supersession
        category = predicate_info(predicate).category
    # the model's own sentence names whom the fact is about (tier C reads everyone in the chat)
    fact_text = " ".join(f.fact_text.split())[:300] or (render_fact_text(predicate, value) if known else "")
    if ending:
        predicate = ENDING_PREFIX + predicate
    mid = evidence[0]
    idx = ids.index(mid)
    return {
        "id": _fact_id(ep["chat_id"], mid, subject, predicate, value), "chat_id": ep["chat_id"], "day": ep.get("day"),
        "subject": subject[:80], "predicate": predicate, "value": value[:200], "category": category,
        "fact_text": fact_text or f"{subject} {predicate.replace('_', ' ')} {value}",
        "confidence": float(f.confidence), "message_id": mid,
        "ts": _line_ts(lines[idx] if idx < len(lines) else "", ep.get("start_ts"), ep.get("day")),
        "source": "llm",
    }


# ---------------------------------------------------------------------------- rollups

_SOURCE_RANK = {"llm": 0, "fallback": 1, "extractive": 2}
_TIER_RANK = {"C": 0, "B": 1, "A": 2}


def _truncate_words(text: str, n: int) -> str:
    words = text.split()
    return text if len(words) <= n else " ".join(words[:n]) + " …"


def rollups(
    summaries: pl.DataFrame,
    episodes: pl.DataFrame,
    day_words: int = 120,
    week_words: int = 250,
    max_evidence: int = 40,
) -> pl.DataFrame:
    """Per chat: one 'day' rollup per day with episodes and one 'week' rollup (ISO week, Monday
    start) over the days present. Text = the best summaries by salience within a word budget, in
    time order; evidence = union of the chosen summaries' evidence (capped, within input ids)."""
    if summaries.height == 0 or episodes.height == 0:
        return pl.DataFrame(schema=ROLLUPS_SCHEMA)
    best: dict[str, dict] = {}
    for s in summaries.iter_rows(named=True):
        rank = (_SOURCE_RANK.get(s["source"], 3), _TIER_RANK.get(s["tier"], 3))
        cur = best.get(s["episode_id"])
        if cur is None or rank < cur["_rank"]:
            best[s["episode_id"]] = {**s, "_rank": rank}
    eps = []
    for e in episodes.iter_rows(named=True):
        if e["id"] in best:
            eps.append(e)
    groups: dict[tuple[str, str, date], list[dict]] = defaultdict(list)
    for e in eps:
        d = e["day"] if e.get("day") is not None else e["start_ts"].date()
        groups[(e["chat_id"], "day", d)].append(e)
        groups[(e["chat_id"], "week", d - timedelta(days=d.weekday()))].append(e)

    out = []
    for (chat_id, period, start), members in sorted(groups.items(), key=lambda kv: (kv[0][0], kv[0][1], kv[0][2])):
        members.sort(key=lambda e: (e.get("start_ts") or datetime.min, e["id"]))
        budget = day_words if period == "day" else week_words
        cap = max_evidence if period == "day" else max_evidence * 2
        by_salience = sorted(members, key=lambda e: (-(e.get("salience") or 0.0), e.get("start_ts") or datetime.min, e["id"]))
        chosen: list[tuple[dict, str]] = []
        used = 0
        for e in by_salience:
            if used >= budget:
                break
            text = " ".join(best[e["id"]]["text"].replace("\n", " / ").split())
            if not text:
                continue
            text = _truncate_words(text, budget - used)
            used += len(text.split())
            chosen.append((e, text))
        chosen.sort(key=lambda x: (x[0].get("start_ts") or datetime.min, x[0]["id"]))
        parts = []
        for e, text in chosen:
            ts = e.get("start_ts")
            if period == "day":
                label = ts.strftime("%H:%M") if isinstance(ts, datetime) else ""
            else:
                d = e["day"] if e.get("day") is not None else ts.date()
                label = d.strftime("%a %d %b")
            parts.append(f"[{label}] {text}" if label else text)
        valid = {m for e in members for m in (e.get("message_ids") or [])}
        evidence: list[str] = []
        for e, _ in chosen:
            for m in best[e["id"]]["evidence_message_ids"] or []:
                if m in valid and m not in evidence and len(evidence) < cap:
                    evidence.append(m)
        out.append({
            "chat_id": chat_id, "period": period, "period_start": start, "text": "\n".join(parts),
            "episode_ids": [e["id"] for e in members], "evidence_message_ids": evidence,
        })
    return pl.DataFrame(out, schema=ROLLUPS_SCHEMA, orient="row")
