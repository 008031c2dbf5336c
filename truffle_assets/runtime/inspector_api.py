"""The memory inspector's read API and page: what the memory holds about the person, and where from.

    register_inspector(app, service)   # one line in `api.create_app`

- `GET /api/memory/profile`: `profile.json` by category, plus its "previously" list.
- `GET /api/memory/facts?category=&limit=&offset=`: every fact with its validity window
  (`valid_from`/`valid_to`), confidence and evidence message ids. A fact that a newer value
  replaced is not listed on its own: it sits in the `history` of the fact in force (Graphiti-style
  supersession, see `memory.facts.consolidation`); a fact that ended with no successor is listed
  with `status: "ended"`.
- `GET /api/memory/facts/{id}`: one fact with its evidence messages (what `/api/facts/{id}` gives).
- `GET /api/memory/search?q=&k=&chat=`: the runtime's own hybrid retrieval (`retrieval.retrieve`,
  what `truffle recall` and a chat turn run) over messages, plus the facts whose text holds the
  query's content words.
- `GET /api/memory/chats`: per chat the indexed messages, first and last day, and the watermark the
  memory is current to.
- `GET /inspector`: the page (`static/inspector.html`), public like `/`: it holds no data.

Like the rest of the runtime it reads only what the pipeline published (latest.json → LanceDB at
the published versions, profile.json, facts.json), never the pipeline's DuckDB. That text is already
redacted by the pipeline's pii stage; every text leaving here goes through `privacy.redact_data`
once more (a no-op on placeholders), so a secret can only ever show as its typed placeholder. The
app's bearer token, body limit and OpenAI-style errors apply (`api_guard.ApiGuard`); results are
bounded (`MAX_SEARCH_K`, `MAX_FACTS_PAGE`).
"""

from __future__ import annotations

import logging
import threading
from pathlib import Path
from typing import Any

from fastapi import APIRouter, FastAPI, Query, Request
from fastapi.responses import FileResponse, JSONResponse

from truffle_assets.memory.profile import CATEGORIES as PROFILE_CATEGORIES
from truffle_assets.runtime import privacy
from truffle_assets.runtime.api_guard import error_response
from truffle_assets.runtime.display import as_written
from truffle_assets.runtime.limits import clip
from truffle_assets.runtime.published import load_facts, read_json_cached, read_profile

log = logging.getLogger(__name__)

STATIC_DIR = Path(__file__).with_name("static")
MAX_SEARCH_K = 50          # messages per search
DEFAULT_SEARCH_K = 20
MAX_FACT_HITS = 20         # facts per search
MAX_FACTS_PAGE = 1000      # facts per page of /api/memory/facts
DEFAULT_FACTS_PAGE = 500
CATEGORY_ORDER = PROFILE_CATEGORIES  # as profile.json orders them
FACT_FIELDS = ("fact_id", "fact_text", "category", "subject", "predicate", "value", "confidence", "valid_from",
               "valid_to", "superseded_by", "first_seen_at", "last_seen_at", "evidence_message_ids", "chat_ids")


class InspectorError(Exception):
    def __init__(self, status: int, message: str, type_: str, code: str, param: str | None = None):
        super().__init__(message)
        self.status, self.message, self.type, self.code, self.param = status, message, type_, code, param


def _clean(text: Any) -> Any:
    return privacy.redact_data(text) if isinstance(text, str) else text


def _day(v: Any) -> str | None:
    return None if v in (None, "") else str(v)[:10]


def _fact_row(f: dict, ids: dict | set = frozenset()) -> dict:
    """A published fact as the inspector shows it; `ids`: every fact id, to tell a superseded fact
    (its successor exists) from one that merely ended."""
    out = {k: f.get(k) for k in FACT_FIELDS}
    out["fact_id"] = str(f.get("fact_id") or f.get("id"))
    for k in ("fact_text", "value", "subject"):
        out[k] = _clean(out[k])
    out["valid_from"], out["valid_to"] = _day(out["valid_from"]), _day(out["valid_to"])
    out["evidence_message_ids"] = [str(m) for m in out["evidence_message_ids"] or []]
    out["chat_ids"] = [str(c) for c in out["chat_ids"] or []]
    out["status"] = ("current" if out["valid_to"] is None else
                     "superseded" if out["superseded_by"] in ids else "ended")
    return out


def _category_key(category: str | None) -> tuple[int, str]:
    c = category or ""
    return (CATEGORY_ORDER.index(c) if c in CATEGORY_ORDER else len(CATEGORY_ORDER), c)


def fact_rows(facts: dict[str, dict]) -> dict[str, dict]:
    return {fid: _fact_row(f, facts) for fid, f in facts.items()}


def fact_timeline(rows: dict[str, dict]) -> list[dict]:
    """Top-level facts (in force, or ended without a successor), each with the facts it replaced
    (followed through `superseded_by` chains, newest first) as `history`; `rows` from `fact_rows`."""

    def head(fid: str) -> str:
        seen = {fid}
        while (nxt := rows[fid].get("superseded_by")) in rows and nxt not in seen:
            seen.add(nxt)
            fid = nxt
        return fid

    history: dict[str, list[dict]] = {}
    heads = []
    for fid, row in rows.items():
        h = head(fid)
        if h == fid:
            heads.append(row)
        else:
            history.setdefault(h, []).append(row)
    top = [{**row, "history": sorted(history.get(row["fact_id"], []), key=lambda r: r["valid_from"] or "",
                                     reverse=True)} for row in heads]
    top.sort(key=lambda r: (_category_key(r["category"]), r["status"] != "current", -float(r["confidence"] or 0),
                            r["fact_text"] or "", r["fact_id"]))
    return top


def _match_facts(rows: dict[str, dict], query: str, limit: int = MAX_FACT_HITS) -> list[dict]:
    """Facts whose text, value or predicate has a word starting with one of the query's content words."""
    from truffle_assets.retrieval.query import bm25_query, words

    terms = bm25_query(query).split()
    if not terms:
        return []
    scored = []
    for row in rows.values():
        have = {w.lower() for w in words(" ".join(str(row.get(k) or "") for k in ("fact_text", "value", "predicate")))}
        hits = sum(any(w.startswith(t) for w in have) for t in terms)
        if hits:
            scored.append((-hits, row["status"] != "current", -float(row["confidence"] or 0), row["fact_id"], row))
    return [s[-1] for s in sorted(scored, key=lambda s: s[:4])[:limit]]


class _ChatStats:
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


def register_inspector(app: FastAPI, service: Any) -> None:
    """Add the inspector's routes (and the error handler they use) to `app`, over `service`."""
    router = APIRouter()
    chat_stats = _ChatStats()
    memo: dict[str, tuple[Any, dict[str, dict], list[dict]]] = {}

    def facts_now() -> tuple[dict[str, dict], list[dict]]:
        """(rows by id, timeline) of facts.json, redacted once per published version: redaction costs
        ~0.2 ms a text, so thousands of facts would otherwise cost seconds on every request."""
        blob = read_json_cached(Path(service.config.published_dir) / "facts.json")  # the same object until the file changes
        hit = memo.get("facts")
        if hit is not None and hit[0] is blob:
            return hit[1], hit[2]
        rows = fact_rows(load_facts(service.config.published_dir))
        memo["facts"] = (blob, rows, fact_timeline(rows))
        return rows, memo["facts"][2]

    @app.exception_handler(InspectorError)
    async def _inspector_error(_: Request, exc: InspectorError) -> JSONResponse:
        return error_response(exc.status, exc.message, exc.type, exc.code, exc.param)

    def pointer() -> Path:
        p = Path(service.config.pointer)
        if not p.is_file():
            raise InspectorError(404, "no published memory yet: run `truffle ingest` first", "not_found_error",
                                 "memory_not_published")
        return p

    def guarded(what: str, fn, *args, **kwargs):
        """An index that cannot be read is a 503 naming the error, never a stack trace."""
        try:
            return fn(*args, **kwargs)
        except InspectorError:
            raise
        except Exception as exc:  # noqa: BLE001 - the API's contract: JSON errors
            log.exception("memory inspector: %s failed", what)
            raise InspectorError(503, clip(f"{what} failed: {type(exc).__name__}: {exc}"), "service_unavailable",
                                 "memory_unreadable") from exc

    @router.get("/api/memory/profile")
    def memory_profile() -> dict[str, Any]:
        prof = read_profile(service.config.published_dir)
        if prof is None:
            pointer()  # no memory at all is a 404; a memory without a profile yet is an empty one
            prof = {}
        cats = sorted((prof.get("facts") or {}).items(), key=lambda kv: _category_key(kv[0]))
        categories = [{"category": c, "facts": [
            {"fact_id": str(e.get("fact_id")), "text": _clean(e.get("text")), "predicate": e.get("predicate"),
             "value": _clean(e.get("value")), "confidence": e.get("confidence"), "since": _day(e.get("since")),
             "evidence_count": int(e.get("evidence") or 0)} for e in entries]} for c, entries in cats]
        previously = [{"fact_id": str(p.get("fact_id")), "text": _clean(p.get("text")), "predicate": p.get("predicate"),
                       "value": _clean(p.get("value")), "until": _day(p.get("until")),
                       "superseded_by": p.get("superseded_by")} for p in prof.get("previously") or []]
        return {"user": _clean(prof.get("user")), "version": prof.get("version"),
                "generated_at": prof.get("generated_at"), "n_facts": prof.get("n_facts", 0),
                "categories": categories, "previously": previously}

    @router.get("/api/memory/facts")
    def memory_facts(category: str | None = Query(None, max_length=64),
                     limit: int = Query(DEFAULT_FACTS_PAGE, ge=1, le=MAX_FACTS_PAGE),
                     offset: int = Query(0, ge=0)) -> dict[str, Any]:
        rows, timeline = facts_now()
        if not rows:
            pointer()
        categories = sorted({r["category"] for r in timeline if r["category"]}, key=_category_key)
        if category:
            timeline = [r for r in timeline if r["category"] == category]
        page = timeline[offset:offset + limit]
        return {"total": len(timeline), "offset": offset, "limit": limit, "count": len(page),
                "superseded": sum(len(r["history"]) for r in timeline), "categories": categories, "facts": page}

    @router.get("/api/memory/facts/{fact_id}")
    def memory_fact(fact_id: str) -> dict[str, Any]:
        found = guarded("reading the fact's evidence", service.fact, fact_id)
        if not found:
            raise InspectorError(404, f"no fact with id {clip(fact_id, 80)!r} in the published memory",
                                 "not_found_error", "fact_not_found")
        rows, _ = facts_now()
        row = dict(rows.get(str(fact_id)) or _fact_row(found, rows))  # facts.json also has chat_ids
        evidence = [{**m, "text": _clean(m.get("text")), "author": _clean(m.get("author"))}
                    for m in found.get("evidence") or []]
        shown = {m["message_id"] for m in evidence}
        # evidence no longer in the index (a forgotten message, a chat not re-published yet)
        row["missing_evidence"] = [m for m in row["evidence_message_ids"] if m not in shown]
        return {**row, "evidence": evidence}

    @router.get("/api/memory/search")
    def memory_search(q: str = Query(..., min_length=1),
                      k: int = Query(DEFAULT_SEARCH_K, ge=1, le=MAX_SEARCH_K),
                      chat: str | None = Query(None, max_length=200)) -> dict[str, Any]:
        from truffle_assets.retrieval import retrieve

        if not q.strip():
            raise InspectorError(400, "q: the search text is empty", "invalid_request_error", "empty_query", "q")
        limit = app.state.limits.max_question_chars  # as for a chat question, before the embedder sees it
        if len(q) > limit:
            raise InspectorError(400, f"q is {len(q)} characters long; the limit is {limit}", "invalid_request_error",
                                 "question_too_long", "q")
        pack = guarded("searching the memory", retrieve, q, pointer(), k=k, chats=[chat] if chat else None)
        messages = [{"message_id": i.message_id, "chat_id": i.chat_id, "ts": i.ts.isoformat(),
                     "author": _clean(i.author), "text": _clean(as_written(i.shown_text, i.text)),
                     "score": round(float(i.score), 4),
                     "uncertain": i.uncertain, "via": i.via} for i in pack.items[:k]]
        facts = _match_facts(facts_now()[0], q)
        if chat:
            facts = [f for f in facts if chat in f["chat_ids"]]
        return {"k": k, "chat": chat, "messages": messages, "facts": facts,
                "watermarks": {c: str(ts) for c, ts in (pack.watermarks or {}).items()}}

    @router.get("/api/memory/chats")
    def memory_chats() -> dict[str, Any]:
        p = pointer()
        published = read_json_cached(p) or {}
        watermarks = published.get("watermarks") or {}
        stats = guarded("reading the index", chat_stats.get, p)
        chats = [{"chat_id": c, "watermark": watermarks.get(c), **stats.get(c, {"messages": 0, "first_day": None,
                                                                              "last_day": None})}
                 for c in sorted(set(watermarks) | set(stats))]
        return {"published_at": published.get("published_at"), "index_versions": published.get("tables") or {},
                "chats": chats}

    @router.get("/inspector", include_in_schema=False)
    def inspector_page() -> FileResponse:
        return FileResponse(STATIC_DIR / "inspector.html", headers={"Cache-Control": "no-cache"})

    app.include_router(router)
