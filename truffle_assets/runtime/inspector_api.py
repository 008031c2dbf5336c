"""The memory inspector's read API and page: what the memory holds about the person, and where from.

    register_inspector(app, service)   # one line in `api.create_app`

- `GET /api/memory/profile`: `profile.json` by category, plus its "previously" list.
- `GET /api/memory/facts?category=&limit=&offset=`: every fact with its validity window
  (`valid_from`/`valid_to`), confidence and evidence message ids. A fact that a newer value
  replaced is not listed on its own: it sits in the `history` of the fact in force (Graphiti-style
  supersession, see `memory.facts.consolidation`); a fact that ended with no successor is listed
  with `status: "ended"`.
- `GET /api/memory/facts/{id}`: one fact with its evidence messages (what `/api/facts/{id}` gives).
- `GET /api/memory/search?q=&k=&chat=&since=&until=`: the runtime's own hybrid retrieval
  (`retrieval.retrieve`, what `truffle recall` and a chat turn run) over messages, each with its score
  parts, plus the facts whose text holds the query's content words.
- `GET /api/memory/chats`: per chat its display name, the indexed messages, first and last day, and
  the watermark the memory is current to.
- `GET /inspector`: the page (`static/inspector.html`), public like `/`: it holds no data.

Like the rest of the runtime it reads only what the pipeline published (latest.json → LanceDB at
the published versions, profile.json, facts.json), never the pipeline's DuckDB. The profile, a fact,
the search and the chats are the memory tools' own results (`tool_exec.ToolExecutor`, the same an
MCP client gets). That text is already redacted by the pipeline's pii stage; every text leaving here
goes through `privacy.redact_data` once more (a no-op on placeholders), so a secret can only ever
show as its typed placeholder. The
app's bearer token, body limit and OpenAI-style errors apply (`api_guard.ApiGuard`); results are
bounded (`MAX_SEARCH_K`, `MAX_FACTS_PAGE`).
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

from fastapi import APIRouter, FastAPI, Query, Request
from fastapi.responses import FileResponse, JSONResponse
from pydantic import ValidationError

from truffle_assets.memory.profile import CATEGORIES as PROFILE_CATEGORIES
from truffle_assets.runtime import privacy
from truffle_assets.runtime.api_guard import error_response
from truffle_assets.runtime.limits import clip
from truffle_assets.runtime.published import load_facts, read_json_cached
from truffle_assets.runtime.tool_exec import ToolError, ToolExecutor, fact_fields
from truffle_assets.tools.inputs import MAX_SEARCH_K

log = logging.getLogger(__name__)

STATIC_DIR = Path(__file__).with_name("static")
DEFAULT_SEARCH_K = 20      # messages per search (at most MAX_SEARCH_K)
MAX_FACT_HITS = 20         # facts per search
MAX_FACTS_PAGE = 1000      # facts per page of /api/memory/facts
DEFAULT_FACTS_PAGE = 500
CATEGORY_ORDER = PROFILE_CATEGORIES  # as profile.json orders them


class InspectorError(Exception):
    def __init__(self, status: int, message: str, type_: str, code: str, param: str | None = None):
        super().__init__(message)
        self.status, self.message, self.type, self.code, self.param = status, message, type_, code, param


def _clean(text: Any) -> Any:
    return privacy.redact_data(text) if isinstance(text, str) else text


def _fact_row(f: dict, ids: dict | set = frozenset()) -> dict:
    """A published fact as the inspector lists it (`tool_exec.fact_fields`, its texts redacted); `ids`:
    every fact id, to tell a superseded fact (its successor exists) from one that merely ended."""
    out = fact_fields(f, ids)
    for k in ("fact_text", "value", "subject"):
        out[k] = _clean(out[k])
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


def register_inspector(app: FastAPI, service: Any, tools: ToolExecutor | None = None) -> None:
    """Add the inspector's routes (and the error handler they use) to `app`, over `service` (its
    memory tools: `tools`, else a `ToolExecutor` of its own)."""
    router = APIRouter()
    tools = tools or ToolExecutor(service)
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
        """An index that cannot be read is a 503 naming the error, never a stack trace; a tool's own
        error (no memory yet, an unknown fact) keeps its status."""
        try:
            return fn(*args, **kwargs)
        except InspectorError:
            raise
        except ToolError as exc:
            raise InspectorError(exc.status, exc.message, "not_found_error" if exc.status == 404
                                 else "invalid_request_error", exc.code) from exc
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(p) for p in first["loc"])
            raise InspectorError(422, clip(f"{where}: {first['msg']}"), "invalid_request_error", "invalid_request",
                                 where or None) from exc
        except Exception as exc:  # noqa: BLE001 - the API's contract: JSON errors
            log.exception("memory inspector: %s failed", what)
            raise InspectorError(503, clip(f"{what} failed: {type(exc).__name__}: {exc}"), "service_unavailable",
                                 "memory_unreadable") from exc

    @router.get("/api/memory/profile")
    def memory_profile() -> dict[str, Any]:
        return guarded("reading the profile", tools.get_profile).model_dump(mode="json")

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
        # an unknown id is the tool's own 404 `fact_not_found`
        return guarded("reading the fact's evidence", tools.get_fact, fact_id).model_dump(mode="json")

    @router.get("/api/memory/search")
    def memory_search(q: str = Query(..., min_length=1),
                      k: int = Query(DEFAULT_SEARCH_K, ge=1, le=MAX_SEARCH_K),
                      chat: str | None = Query(None, max_length=200),
                      since: str | None = Query(None, max_length=10),
                      until: str | None = Query(None, max_length=10)) -> dict[str, Any]:
        if not q.strip():
            raise InspectorError(400, "q: the search text is empty", "invalid_request_error", "empty_query", "q")
        limit = app.state.limits.max_question_chars  # as for a chat question, before the embedder sees it
        if len(q) > limit:
            raise InspectorError(400, f"q is {len(q)} characters long; the limit is {limit}", "invalid_request_error",
                                 "question_too_long", "q")
        pointer()
        found = guarded("searching the memory", tools.search_memory, q, chat=chat, since=since, until=until, k=k)
        facts = _match_facts(facts_now()[0], q)
        if chat:
            facts = [f for f in facts if chat in f["chat_ids"]]
        out = found.model_dump(mode="json", exclude={"query", "index_versions"})
        return {"k": k, "chat": chat, "since": since, "until": until, "messages": out["messages"], "facts": facts,
                "watermarks": out["watermarks"]}

    @router.get("/api/memory/chats")
    def memory_chats() -> dict[str, Any]:
        return guarded("reading the index", tools.list_chats).model_dump(mode="json")

    @router.get("/inspector", include_in_schema=False)
    def inspector_page() -> FileResponse:
        return FileResponse(STATIC_DIR / "inspector.html", headers={"Cache-Control": "no-cache"})

    app.include_router(router)
