"""Reading the published memory: the files and index the pipeline publishes, and the nodes that
gather the question's evidence from them before the first model call.

* `read_json_cached`, `fetch_messages`, `load_facts` are shared with `ChatService` (the memory
  inspector): `latest.json` → LanceDB, `profile.json`, `facts.json` — never the pipeline's DuckDB.
* `retrieve_summaries` runs the one hybrid retrieval of the question (`retrieval.retrieve`, which
  searches summaries first and expands the best into their messages; an anchored question as the
  `timeline` node scoped it) and keeps the summary hits; `retrieve_raw` turns its message hits into the evidence pool.
"""

from __future__ import annotations

import json
import re
import time
from datetime import datetime
from pathlib import Path
from typing import Any

from langgraph.runtime import Runtime

from truffle_assets.runtime.state import Context, State, elapsed_ms

_json_cache: dict[str, tuple[int, Any]] = {}


def read_json_cached(path: Path) -> Any:
    """A published JSON file, re-read only when its mtime changes (None when missing/unreadable)."""
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


MESSAGE_COLS = ["message_id", "episode_id", "chat_id", "ts", "author", "is_user", "text"]


def _message_cols(tbl) -> list[str]:
    """What a shown message needs; `shown_text` (the text as written) where the index has it."""
    from truffle_assets.index.lance import present

    return MESSAGE_COLS + present(tbl, "shown_text")


def fetch_messages(pointer: Path, ids: list[str]) -> list[dict]:
    """Rows of the published `raw_episodes_index` for `ids` (message_id, episode_id, chat_id, ts, author,
    text, and shown_text unless the index predates it)."""
    from truffle_assets.index.lance import RAW_TABLE, sql_in
    from truffle_assets.retrieval import open_index

    if not ids or not pointer.is_file():
        return []
    tbl = open_index(pointer).table(RAW_TABLE)
    if tbl is None:
        return []
    rows = (tbl.search().where(sql_in("message_id", ids))
            .select(_message_cols(tbl)).limit(len(ids)).to_list())
    order = {m: i for i, m in enumerate(ids)}
    return sorted(rows, key=lambda r: order.get(r["message_id"], 0))


def iso(v: Any) -> str | None:
    """A date or time as ISO text (anything else as its text); None stays None."""
    if v is None:
        return None
    return v.isoformat() if hasattr(v, "isoformat") else str(v)


def item_from_row(r: dict, score: float, rnd: int, via: str) -> dict:
    """An evidence-pool item from a `fetch_messages` row."""
    return {"message_id": r["message_id"], "episode_id": r.get("episode_id"), "chat_id": r["chat_id"],
            "ts": iso(r.get("ts")), "author": r.get("author"),
            "is_user": bool(r.get("is_user")), "text": r.get("text") or "",
            "shown_text": r.get("shown_text"), "score": score, "via": via, "uncertain": False, "round": rnd}


def fetch_day(pointer: Path, chat_id: str, day: str, limit: int = 2_000) -> list[dict]:
    """A chat's indexed messages of one day (YYYY-MM-DD), oldest first: the evidence panel's day view
    and a cited message's neighbours."""
    from datetime import date as _date

    from truffle_assets.index.lance import RAW_TABLE, sql_str
    from truffle_assets.retrieval import open_index

    _date.fromisoformat(day)  # a malformed day is a ValueError (422), never SQL
    if not pointer.is_file():
        return []
    tbl = open_index(pointer).table(RAW_TABLE)
    if tbl is None:
        return []
    rows = (tbl.search().where(f"chat_id = {sql_str(chat_id)} AND day = date {sql_str(day)}")
            .select(_message_cols(tbl)).limit(limit).to_list())
    return sorted(rows, key=lambda r: (r["ts"], r["message_id"]))


_SPACED_TS = re.compile(r"\d{4}-\d{2}-\d{2} \d{2}:\d{2}(:\d{2}(\.\d+)?)?([+-]\d{2}(:?\d{2})?|Z)?")


def one_fact_id(fact: dict) -> dict:
    """`fact` with one id field, `fact_id`, and ISO 8601 timestamps: a file published by an older
    Truffle names the id `id` (or both) and writes `2023-09-14 09:12:00`."""
    if "id" not in fact:
        return fact
    rest = {k: (v.replace(" ", "T", 1) if isinstance(v, str) and _SPACED_TS.fullmatch(v) else v)
            for k, v in fact.items() if k not in ("id", "fact_id")}
    return {"fact_id": fact.get("fact_id") or fact["id"], **rest}


def load_facts(published_dir: str | Path) -> dict[str, dict]:
    """facts.json's facts by id, each with `fact_id` as its one id field."""
    blob = read_json_cached(Path(published_dir) / "facts.json")
    facts = blob.get("facts", []) if isinstance(blob, dict) else (blob or [])
    return {str(f.get("fact_id") or f.get("id")): one_fact_id(f) for f in facts if isinstance(f, dict)}


def find_fact(facts: dict[str, dict], fact_id: str, prefer: set[str] = frozenset()) -> tuple[str, dict] | None:
    """The fact a (possibly shortened, as the prompt shows it) id names: the full id first, then the
    one fact it begins; of several, the one in `prefer` (the profile's), else none."""
    if fact_id in facts:
        return fact_id, facts[fact_id]
    hits = [k for k in facts if fact_id and k.startswith(fact_id)]
    if len(hits) > 1:
        hits = [k for k in hits if k in prefer]
    return (hits[0], facts[hits[0]]) if len(hits) == 1 else None


# ---- nodes ------------------------------------------------------------------------------------------

def read_profile(published_dir: str | Path) -> dict | None:
    """profile.json, each of its facts named by `fact_id` (`one_fact_id`)."""
    prof = read_json_cached(Path(published_dir) / "profile.json")
    if not isinstance(prof, dict):
        return None
    entries = [e for v in (prof.get("facts") or {}).values() for e in v or []] + list(prof.get("previously") or [])
    if not any(isinstance(e, dict) and "id" in e for e in entries):
        return prof  # the cached object itself: nothing to rename
    return {**prof, "facts": {c: [one_fact_id(e) if isinstance(e, dict) else e for e in v or []]
                              for c, v in (prof.get("facts") or {}).items()},
            "previously": [one_fact_id(e) if isinstance(e, dict) else e for e in prof.get("previously") or []]}


def load_profile(state: State, runtime: Runtime[Context]) -> dict:
    t0 = time.perf_counter()
    prof = read_profile(runtime.context.published_dir)
    step = {"step": "load_profile", "found": prof is not None, "version": (prof or {}).get("version"),
            "facts": (prof or {}).get("n_facts"), "ms": elapsed_ms(t0)}
    return {"profile": prof, "trace": [step]}


def retrieve_summaries(state: State, runtime: Runtime[Context]) -> dict:
    """The question's hybrid retrieval (summaries first, expanded to messages): keep the summaries.
    An anchored question is searched as `State.search` says (`timeline`)."""
    from truffle_assets.retrieval import RetrievalLog, open_index, retrieve

    ctx = runtime.context
    t0 = time.perf_counter()
    if not ctx.pointer.is_file():
        step = {"step": "retrieve_summaries", "error": f"no published memory at {ctx.pointer}", "ms": elapsed_ms(t0)}
        return {"trace": [step]}
    try:
        log = RetrievalLog(ctx.retrieval_log, store_query_text=ctx.retrieval_log_text) if ctx.retrieval_log else None
        scope = state.search
        if scope is None:
            pack = retrieve(state.question, ctx.pointer, k=ctx.k_raw, log=log)
        else:
            pack = retrieve(scope["query"], ctx.pointer, k=ctx.k_raw, log=log, since=_when(scope["since"]),
                            until=_when(scope["until"]))
        idx = open_index(ctx.pointer)
        participants = sorted({p for ps in idx.participants().values() for p in ps})
    except Exception as exc:  # noqa: BLE001 - a broken index must still give an answer (without memory)
        step = {"step": "retrieve_summaries", "error": f"{type(exc).__name__}: {exc}"[:300], "ms": elapsed_ms(t0)}
        return {"trace": [step]}
    summaries = [s.model_dump(mode="json") for s in pack.summaries]
    candidates = [i.model_dump(mode="json", exclude={"components"}) | {"round": 0} for i in pack.items]
    step = {"step": "retrieve_summaries", "summaries": [s["episode_id"] for s in summaries],
            "index_versions": pack.index_versions, "timing_ms": pack.timing_ms, "ms": elapsed_ms(t0)}
    return {"summaries": summaries, "candidates": candidates, "watermarks": dict(pack.watermarks),
            "participants": participants, "trace": [step]}


def _when(iso: str | None) -> datetime | None:
    return datetime.fromisoformat(iso) if iso else None


def retrieve_raw(state: State, runtime: Runtime[Context]) -> dict:
    """The question's message hits become the evidence pool (deduplicated, best score kept); pinned
    messages (`timeline`) lead it, scored above every hit."""
    top = max((c["score"] for c in state.candidates), default=0.0)
    pool: dict[str, dict] = {}
    for it in [p | {"score": top + 1.0} for p in state.pinned] + state.candidates:
        if it["message_id"] not in pool or pool[it["message_id"]]["score"] < it["score"]:
            pool[it["message_id"]] = it
    items = list(pool.values())
    step = {"step": "retrieve_raw", "items": [i["message_id"] for i in items],
            "scores": [i["score"] for i in items], "uncertain": [i["message_id"] for i in items if i["uncertain"]]}
    return {"items": items, "candidates": [], "trace": [step]}
