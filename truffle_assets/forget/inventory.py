"""What a tombstone reaches in each store: the dry run's answer, the purge's keys, the proof after.

Read-only over DuckDB (the canonical store) and every retained version of the LanceDB tables, so
the same function answers "what would go" before a forget and "is anything left" after it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import duckdb
import polars as pl

from truffle_assets import store
from truffle_assets.ingest.tombstones import Tombstone, covers


@dataclass
class Reach:
    """What one tombstone covers. `texts` stay in memory only (the runtime purge matches quotes)."""

    message_ids: set[str] = field(default_factory=set)
    chats: set[str] = field(default_factory=set)
    months: set[tuple[str, str]] = field(default_factory=set)  # (chat, "YYYY-MM") holding them
    texts: list[str] = field(default_factory=list)
    episode_ids: set[str] = field(default_factory=set)
    fact_ids: set[str] = field(default_factory=set)  # facts removed (all their evidence forgotten, or the fact itself)
    fact_texts: list[str] = field(default_factory=list)
    counts: dict[str, int] = field(default_factory=dict)
    # what a person is shown (`forget.selection`): each message (id, chat_id, day, ts, author, and
    # its text redacted as recall shows it) and each fact (id, text); the purge never reads these
    messages: list[dict] = field(default_factory=list)
    facts: list[dict] = field(default_factory=list)

    def as_dict(self) -> dict:
        return {"chats": sorted(self.chats), "months": sorted(f"{c}|{m}" for c, m in self.months),
                "counts": dict(sorted(self.counts.items()))}


def _frame(con: duckdb.DuckDBPyConnection, sql: str, params: list | None = None) -> pl.DataFrame:
    return store.read_frame(con, sql, params)


def _has(con: duckdb.DuckDBPyConnection, table: str) -> bool:
    return bool(con.execute("SELECT count(*) FROM information_schema.tables WHERE table_name = ?", [table])
                .fetchall()[0][0])


def reach(db_path: str | Path, t: Tombstone) -> Reach:
    """The stored items `t` covers and what derives from them, counted per store."""
    r = Reach()
    if not Path(db_path).exists():
        return r
    with store.connect(db_path, read_only=True) as con:
        if t.kind == "fact":
            _fact_reach(con, t.value, r)
            return r
        msgs = _frame(con, "SELECT id, chat_id, day, ts, author, raw_text FROM messages").filter(covers(t))
        r.message_ids = set(msgs["id"].to_list())
        r.chats = set(msgs["chat_id"].to_list())
        r.months = {(c, f"{d:%Y-%m}") for c, d in msgs.select("chat_id", "day").unique().iter_rows()}
        r.texts = msgs["raw_text"].to_list()
        r.counts["messages"] = len(r.message_ids)
        ids = sorted(r.message_ids)
        for table in ("message_pii", "message_streams"):
            r.counts[table] = _count_ids(con, table, ids)
        redacted: dict[str, str] = {}
        if _has(con, "message_pii") and ids:
            pii = _frame(con, "SELECT id, redacted_text FROM message_pii WHERE list_contains(?::VARCHAR[], id)", [ids])
            r.texts += pii["redacted_text"].to_list()
            redacted = dict(pii.select("id", "redacted_text").iter_rows())
        r.messages = [{"id": m["id"], "chat_id": m["chat_id"], "day": m["day"], "ts": m["ts"], "author": m["author"],
                       "text": redacted.get(m["id"]) or m["raw_text"] or ""}
                      for m in msgs.sort("ts", "id").iter_rows(named=True)]
        if _has(con, "episodes") and ids:
            eps = _frame(con, "SELECT id FROM episodes WHERE list_has_any(message_ids, ?::VARCHAR[])", [ids])
            r.episode_ids = set(eps["id"].to_list())
        r.counts["episodes"] = len(r.episode_ids)
        r.counts["summaries"] = _count_cited(con, "summaries", "evidence_message_ids", ids)
        if _has(con, "facts") and ids:
            facts = _frame(con, "SELECT id, fact_text, evidence_message_ids FROM facts "
                                "WHERE list_has_any(evidence_message_ids, ?::VARCHAR[])", [ids])
            gone = facts.filter(pl.col("evidence_message_ids").list.eval(pl.element().is_in(ids)).list.all())
            r.fact_ids = set(gone["id"].to_list())
            r.fact_texts = gone["fact_text"].to_list()
            r.facts = [{"id": i, "text": x} for i, x in gone.select("id", "fact_text").iter_rows()]
            r.counts["facts"] = gone.height
            r.counts["facts_losing_evidence"] = facts.height - gone.height
        r.counts["fact_claims"] = _count_ids(con, "fact_claims", ids, column="message_id")
    return r


def _fact_reach(con: duckdb.DuckDBPyConnection, fact_id: str, r: Reach) -> None:
    if not _has(con, "facts"):
        return
    facts = _frame(con, "SELECT id, fact_text, chat_ids, first_seen_at FROM facts WHERE id = ?", [fact_id])
    r.fact_ids = set(facts["id"].to_list())
    r.fact_texts = facts["fact_text"].to_list()
    r.facts = [{"id": i, "text": x} for i, x in facts.select("id", "fact_text").iter_rows()]
    for chats, seen in facts.select("chat_ids", "first_seen_at").iter_rows():
        r.chats.update(chats or [])
        r.months.update((c, f"{seen:%Y-%m}") for c in chats or [])
    r.counts["facts"] = facts.height


def _count_ids(con: duckdb.DuckDBPyConnection, table: str, ids: list[str], column: str = "id") -> int:
    if not ids or not _has(con, table):
        return 0
    return con.execute(f"SELECT count(*) FROM {table} WHERE list_contains(?::VARCHAR[], {column})", [ids]).fetchall()[0][0]


def _count_cited(con: duckdb.DuckDBPyConnection, table: str, column: str, ids: list[str]) -> int:
    if not ids or not _has(con, table):
        return 0
    return con.execute(f"SELECT count(*) FROM {table} WHERE list_has_any({column}, ?::VARCHAR[])", [ids]).fetchall()[0][0]


def left_in_store(db_path: str | Path, message_ids: set[str], fact_ids: set[str]) -> dict[str, int]:
    """Rows still holding any of the ids, per DuckDB table: all zero after a completed forget."""
    ids, fids = sorted(message_ids), sorted(fact_ids)
    out: dict[str, int] = {}
    with store.connect(db_path, read_only=True) as con:
        for table in ("messages", "message_pii", "message_streams"):
            out[table] = _count_ids(con, table, ids)
        out["fact_claims"] = _count_ids(con, "fact_claims", ids, column="message_id")
        if _has(con, "episodes") and ids:
            out["episodes"] = con.execute("SELECT count(*) FROM episodes WHERE list_has_any(message_ids, ?::VARCHAR[])",
                                          [ids]).fetchall()[0][0]
        out["summaries"] = _count_cited(con, "summaries", "evidence_message_ids", ids)
        out["facts_citing"] = _count_cited(con, "facts", "evidence_message_ids", ids)
        out["facts"] = _count_ids(con, "facts", fids)
    return out


def left_in_index(index_root: str | Path, message_ids: set[str]) -> dict[str, int]:
    """Rows holding any of the ids in EVERY retained version of the LanceDB tables (time travel
    would otherwise still return them): all zero after a completed forget."""
    import lancedb

    from truffle_assets.index.lance import RAW_TABLE, SUMMARY_TABLE, table_names  # lazy for CLI start-up

    out = {"lance_raw_rows": 0, "lance_summary_rows": 0, "lance_versions_checked": 0}
    root = Path(index_root)
    if not message_ids or not root.exists():
        return out
    db = lancedb.connect(str(root))
    names = set(table_names(db))
    ids = sorted(message_ids)
    for name, col, key in ((RAW_TABLE, "message_id", "lance_raw_rows"),
                           (SUMMARY_TABLE, "evidence_message_ids", "lance_summary_rows")):
        if name not in names:
            continue
        tbl = db.open_table(name)
        for v in tbl.list_versions():
            tbl.checkout(v["version"])
            df = pl.from_arrow(tbl.to_arrow().select([col]))
            hit = df[col].is_in(ids) if col == "message_id" else df[col].list.eval(pl.element().is_in(ids)).list.any()
            out[key] += int(hit.sum())
            out["lance_versions_checked"] += 1
        tbl.checkout_latest()
    return out
