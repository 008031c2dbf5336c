"""The memory tools run: `ToolExecutor(service)` executes the catalog's tools (`truffle_assets.tools`)
over the published memory the service reads, and returns the catalog's output models.

    tools = ToolExecutor(service)
    tools.call("search_memory", {"query": "Priya birthday"})   # validated by the catalog's input model
    tools.get_fact("3fa9c1")                                    # the same, one method per tool

The MCP server, `/api/evidence`, `/api/day`, `/api/facts` and the memory inspector all read through
it, so a fact id, a message or a profile looks the same wherever it is asked for. Every text leaves
through `privacy.redact_data` once (the memory is redacted already; this is defence in depth, a no-op
on placeholders). Ids, dates and times are left as they are. `forget` is not run here: it changes
the memory and needs the pipeline (the MCP server runs it through a `Forgetter`).
"""

from __future__ import annotations

import threading
from datetime import datetime, time as dtime
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from truffle_assets.runtime import privacy
from truffle_assets.runtime.display import as_written
from truffle_assets.runtime.limits import clip
from truffle_assets.runtime.published import (fetch_day, fetch_messages, find_fact, iso, load_facts, read_json_cached,
                                              read_profile)
from truffle_assets.tools import CATALOG
from truffle_assets.tools import inputs as i
from truffle_assets.tools import models as m

DEFAULT_K = 10            # messages per search_memory call without k (what `retrieve` and `truffle recall` give)
MAX_DAY_MESSAGES = 2_000  # messages per get_day call

# fields that hold ids, times, days or codes: never redacted (a redaction would only break them)
_VERBATIM = frozenset({
    "message_id", "chat_id", "fact_id", "superseded_by", "turn_id", "conversation_id", "ts", "day", "since", "until",
    "valid_from", "valid_to", "first_seen_at", "last_seen_at", "generated_at", "published_at", "watermark",
    "first_day", "last_day", "via", "status", "category", "predicate", "model", "fallback", "kind",
    "tombstone", "confirmation", "evidence_message_ids", "missing_evidence", "missing", "truncated", "citations",
    "uncertain", "chat_ids", "chats", "watermarks", "index_versions", "removed", "version"})


class ToolError(Exception):
    """A call that cannot be answered: `status` as HTTP would say it, `code` for a client to branch on."""

    def __init__(self, status: int, code: str, message: str) -> None:
        super().__init__(message)
        self.status, self.code, self.message = status, code, message


def redacted(value: Any, field: str | None = None) -> Any:
    """`value` with every text through `privacy.redact_data`, ids/dates/times (`_VERBATIM`) as they are."""
    if isinstance(value, BaseModel):
        return value.model_copy(update={k: redacted(getattr(value, k), k) for k in type(value).model_fields})
    if isinstance(value, list):
        return [redacted(v, field) for v in value]
    if isinstance(value, str) and field not in _VERBATIM:
        return privacy.redact_data(value)
    return value


def _day(v: Any) -> str | None:
    return None if v in (None, "") else str(v)[:10]


def message(r: dict) -> m.Message:
    """A published index row as a tool shows it: as written (`display.as_written`)."""
    ts = iso(r.get("ts"))
    return m.Message(message_id=str(r["message_id"]), chat_id=str(r["chat_id"]), ts=ts, day=ts[:10] if ts else None,
                     author=r.get("author"), text=as_written(r.get("shown_text"), r.get("text")) or "")


def fact_status(f: dict, ids: dict | set) -> str:
    """current (no end), superseded (a successor exists), or ended."""
    return "current" if _day(f.get("valid_to")) is None else "superseded" if f.get("superseded_by") in ids else "ended"


def fact_fields(f: dict, ids: dict | set = frozenset()) -> dict[str, Any]:
    """A published fact's own fields as the tools show them (days as YYYY-MM-DD, ids as strings, a
    status); `ids`: every fact id, to tell a superseded fact from one that merely ended. Not redacted."""
    keep = ("fact_text", "category", "subject", "predicate", "value", "confidence", "superseded_by", "first_seen_at",
            "last_seen_at")
    out: dict[str, Any] = {"fact_id": str(f.get("fact_id") or f.get("id"))} | {k: f.get(k) for k in keep}
    for k in ("fact_text", "subject", "value"):
        out[k] = None if out[k] is None else str(out[k])
    out["first_seen_at"], out["last_seen_at"] = iso(out["first_seen_at"]), iso(out["last_seen_at"])
    out["valid_from"], out["valid_to"] = _day(f.get("valid_from")), _day(f.get("valid_to"))
    out["evidence_message_ids"] = [str(x) for x in f.get("evidence_message_ids") or []]
    out["chat_ids"] = [str(c) for c in f.get("chat_ids") or []]
    out["status"] = fact_status(f, ids)
    return out


def profile_fact_ids(profile: dict | None) -> set[str]:
    """The ids of a published profile's current and past facts: a shortened fact id is read as the
    profile's fact first (`published.find_fact`)."""
    if not profile:
        return set()
    current = {str(e.get("fact_id")) for entries in (profile.get("facts") or {}).values() for e in entries or []}
    return current | {str(p.get("fact_id")) for p in profile.get("previously") or [] if str(p.get("text") or "").strip()}


def resolve_fact(published_dir: str | Path, fact_id: str, profile: dict | None = None) -> tuple[str, dict] | None:
    """(full id, fact) for a full or shortened fact id, the profile's facts preferred; None if none or
    several match. The one resolution of fact ids: recall, the tools, `/api/facts` and the inspector."""
    if profile is None:
        profile = read_profile(published_dir)
    return find_fact(load_facts(published_dir), str(fact_id), profile_fact_ids(profile))


def profile_view(prof: dict, category_order: tuple[str, ...] = ()) -> m.Profile:
    """profile.json by category (in `category_order`, then the rest by name), plus its "previously" list."""
    def key(c: str) -> tuple[int, str]:
        return (category_order.index(c) if c in category_order else len(category_order), c or "")

    cats = sorted((prof.get("facts") or {}).items(), key=lambda kv: key(kv[0]))
    categories = [m.ProfileCategory(category=str(c), facts=[m.ProfileFact(
        fact_id=str(e.get("fact_id")), text=e.get("text"), predicate=e.get("predicate"), value=_text(e.get("value")),
        confidence=e.get("confidence"), since=_day(e.get("since")), evidence_count=int(e.get("evidence") or 0))
        for e in entries or []]) for c, entries in cats]
    previously = [m.PastFact(fact_id=str(p.get("fact_id")), text=p.get("text"), predicate=p.get("predicate"),
                             value=_text(p.get("value")), until=_day(p.get("until")), superseded_by=p.get("superseded_by"))
                  for p in prof.get("previously") or []]
    return m.Profile(user=prof.get("user"), version=prof.get("version"), generated_at=iso(prof.get("generated_at")),
                     n_facts=int(prof.get("n_facts") or 0), categories=categories, previously=previously)


def _text(v: Any) -> str | None:
    return None if v is None else str(v)


class ChatStats:
    """Indexed messages, first and last day per chat, read once per published index version."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._memo: dict[str, tuple[Any, dict[str, dict]]] = {}

    def get(self, pointer: Path) -> dict[str, dict]:
        import polars as pl

        from truffle_assets.index.lance import RAW_TABLE
        from truffle_assets.retrieval import open_index

        idx = open_index(pointer)
        key = str(pointer)
        with self._lock:
            hit = self._memo.get(key)
        if hit and hit[0] is idx:  # open_index hands out a new reader when latest.json changes
            return hit[1]
        tbl = idx.table(RAW_TABLE)
        stats: dict[str, dict] = {}
        if tbl is not None and tbl.count_rows():
            df = pl.from_arrow(tbl.search().select(["chat_id", "day"]).limit(None).to_arrow())
            grouped = df.group_by("chat_id").agg(pl.len().alias("n"), pl.col("day").min().alias("first"),
                                                 pl.col("day").max().alias("last"))
            for chat, n, first, last in grouped.iter_rows():
                stats[chat] = {"messages": int(n), "first_day": _day(first), "last_day": _day(last)}
        with self._lock:
            self._memo[key] = (idx, stats)
        return stats


class ToolExecutor:
    """The catalog's tools over `service`'s published memory (its `config.published_dir`); `ask`
    through `service.ask`, the chat's own turn (guarded, logged and scrubbed as a chat turn is)."""

    def __init__(self, service: Any, *, category_order: tuple[str, ...] | None = None) -> None:
        from truffle_assets.memory.profile import CATEGORIES

        self.service = service
        self.category_order = tuple(CATEGORIES if category_order is None else category_order)
        self.chat_stats = ChatStats()

    # ---- where the memory is ----------------------------------------------------------------------
    @property
    def published_dir(self) -> Path:
        return Path(self.service.config.published_dir)

    @property
    def pointer(self) -> Path:
        return self.published_dir / "latest.json"

    def published_pointer(self) -> Path:
        """latest.json; a ToolError (404) before the first publish."""
        if not self.pointer.is_file():
            raise ToolError(404, "memory_not_published", "no published memory yet: run `truffle ingest` first")
        return self.pointer

    # ---- dispatch -----------------------------------------------------------------------------------
    def call(self, name: str, args: dict[str, Any] | None = None) -> BaseModel:
        """Run tool `name` on `args` (checked by the catalog's input model: a pydantic ValidationError
        when they do not fit) and return its output model."""
        spec = CATALOG.get(name)
        if spec is None or spec.output is None:
            raise ToolError(404, "unknown_tool", f"unknown tool {name!r}")
        run = getattr(self, f"_{name}", None)
        if run is None:
            raise ToolError(400, "not_here", f"{name} is not run by the tool executor")
        return run(spec.input.model_validate(args or {}))

    # ---- one method per tool (keyword arguments as the catalog names them) --------------------------
    def search_memory(self, query: str, chat: str | None = None, since: str | None = None,
                      until: str | None = None, k: int | None = None) -> m.SearchResult:
        return self._search_memory(i.SearchMemoryArgs(query=query, chat=chat, since=since, until=until, k=k))

    def get_messages(self, ids: list[str], around: int | None = None) -> m.Messages:
        return self._get_messages(i.GetMessagesArgs(ids=list(ids), around=around))

    def get_fact(self, fact_id: str) -> m.Fact:
        return self._get_fact(i.GetFactArgs(fact_id=fact_id))

    def get_profile(self) -> m.Profile:
        return self._get_profile(i.GetProfileArgs())

    def get_day(self, chat: str, day: str) -> m.DayMessages:
        return self._get_day(i.GetDayArgs(chat=chat, day=day))

    def list_chats(self) -> m.Chats:
        return self._list_chats(i.ListChatsArgs())

    def ask(self, question: str, conversation_id: str | None = None) -> m.Answer:
        return self._ask(i.AskArgs(question=question, conversation_id=conversation_id))

    # ---- the tools ----------------------------------------------------------------------------------
    def _search_memory(self, a: i.SearchMemoryArgs) -> m.SearchResult:
        from truffle_assets.retrieval import retrieve

        k = a.k or DEFAULT_K
        since = datetime.combine(datetime.fromisoformat(a.since).date(), dtime.min) if a.since else None
        until = datetime.combine(datetime.fromisoformat(a.until).date(), dtime.max) if a.until else None
        pack = retrieve(a.query, self.published_pointer(), k=k, chats=[a.chat] if a.chat else None,
                        since=since, until=until)
        hits = [m.MessageHit(message_id=it.message_id, chat_id=it.chat_id, ts=it.ts.isoformat(),
                             day=it.ts.date().isoformat(), author=it.author, text=as_written(it.shown_text, it.text),
                             is_user=it.is_user, score=round(float(it.score), 4),
                             parts=m.ScoreParts(**{p: round(float(v), 4) for p, v in it.components.model_dump().items()}),
                             via=it.via, uncertain=it.uncertain) for it in pack.items[:k]]
        return redacted(m.SearchResult(query=a.query, k=k, messages=hits,
                                       watermarks={str(c): str(w) for c, w in (pack.watermarks or {}).items()},
                                       index_versions=dict(pack.index_versions)))

    def _get_messages(self, a: i.GetMessagesArgs) -> m.Messages:
        ids = list(dict.fromkeys(a.ids))
        asked, truncated = ids[:i.MAX_GET_MESSAGES], ids[i.MAX_GET_MESSAGES:]
        rows = {r["message_id"]: r for r in fetch_messages(self.pointer, asked)}
        days: dict[tuple[str, str], list[m.Message]] = {}  # several ids of one day read it once
        found = []
        for mid in asked:
            if mid not in rows:
                continue
            msg = m.MessageInContext(**message(rows[mid]).model_dump())
            if a.around and msg.day:
                if (msg.chat_id, msg.day) not in days:
                    days[msg.chat_id, msg.day] = [message(r) for r in fetch_day(self.pointer, msg.chat_id, msg.day,
                                                                                MAX_DAY_MESSAGES)]
                day = days[msg.chat_id, msg.day]
                at = next((n for n, r in enumerate(day) if r.message_id == mid), None)
                if at is not None:
                    msg.neighbours = [m.Neighbour(**r.model_dump(), cited=r.message_id == mid)
                                      for r in day[max(0, at - a.around): at + a.around + 1]]
            found.append(msg)
        return redacted(m.Messages(messages=found, missing=[x for x in asked if x not in rows], truncated=truncated))

    def _get_fact(self, a: i.GetFactArgs) -> m.Fact:
        hit = resolve_fact(self.published_dir, a.fact_id)
        if hit is None:
            raise ToolError(404, "fact_not_found", f"no fact with id {clip(a.fact_id, 80)!r} in the published memory")
        fid, f = hit
        fields = fact_fields({**f, "fact_id": fid}, load_facts(self.published_dir))
        evidence = [message(r) for r in fetch_messages(self.pointer, fields["evidence_message_ids"])]
        shown = {e.message_id for e in evidence}
        return redacted(m.Fact(**fields, evidence=evidence,
                               missing_evidence=[x for x in fields["evidence_message_ids"] if x not in shown]))

    def _get_profile(self, a: i.GetProfileArgs) -> m.Profile:
        prof = read_profile(self.published_dir)
        if prof is None:
            self.published_pointer()  # no memory at all is an error; a memory without a profile yet is an empty one
            prof = {}
        return redacted(profile_view(prof, self.category_order))

    def _get_day(self, a: i.GetDayArgs) -> m.DayMessages:
        rows = fetch_day(self.pointer, a.chat, a.day, MAX_DAY_MESSAGES + 1)
        return redacted(m.DayMessages(chat_id=a.chat, day=a.day, messages=[message(r) for r in rows[:MAX_DAY_MESSAGES]],
                                      truncated=len(rows) > MAX_DAY_MESSAGES))

    def _list_chats(self, a: i.ListChatsArgs) -> m.Chats:
        from truffle_assets.ingest.chat_names import mapped_names

        p = self.published_pointer()
        published = read_json_cached(p) or {}
        watermarks = {str(c): str(w) for c, w in (published.get("watermarks") or {}).items() if w}
        stats = self.chat_stats.get(p)
        names = mapped_names(self.published_dir.parent / "cache")
        none = {"messages": 0, "first_day": None, "last_day": None}
        chats = [m.Chat(chat_id=c, display_name=names.get(c), watermark=watermarks.get(c), **stats.get(c, none))
                 for c in sorted(set(watermarks) | set(stats))]
        return redacted(m.Chats(published_at=iso(published.get("published_at")),
                                index_versions=published.get("tables") or {}, chats=chats))

    def _ask(self, a: i.AskArgs) -> m.Answer:
        turn = self.service.ask([{"role": "user", "content": a.question}], conversation_id=a.conversation_id)
        sources = [m.Source(**message(s).model_dump(), uncertain=bool(s.get("uncertain"))) for s in turn.sources]
        return redacted(m.Answer(answer=turn.answer, citations=list(turn.citations), uncertain=list(turn.uncertain),
                                 sources=sources, watermarks=dict(turn.watermarks), refused=turn.refused,
                                 fallback=turn.fallback, model=turn.model, turn_id=turn.turn_id,
                                 conversation_id=turn.conversation_id))
