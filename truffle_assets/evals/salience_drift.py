"""Salience drift of incremental ingests, measured: episodes a store scored before later messages
arrived against a store built in one run (`benchmarks/salience_drift.py` runs both).

Reading a store (episodes, summary tiers), rescoring its episodes as of given times
(`memory.salience.score_episodes` on the messages each run saw), comparing salience and tiers
between stores, and the retrieval each store gives the same questions (`rankings`, `salience_ab`,
`ranking_impact`). `truncate_exports` and `cut_time` cut a corpus's exports at a month boundary.
"""

from __future__ import annotations

import inspect
import statistics
import zipfile
from collections.abc import Sequence
from datetime import date, datetime
from pathlib import Path

import polars as pl

from truffle_assets import store
from truffle_assets.ingest.exports import scan_exports
from truffle_assets.memory.episodes import SALIENCE_COLUMNS
from truffle_assets.memory.salience import score_episodes, term_document_counts
from truffle_assets.memory.summaries import summarize_episodes
from truffle_assets.parsing import parse_export, read_export

COMPONENTS = SALIENCE_COLUMNS[1:]
_TIER_DEFAULTS = inspect.signature(summarize_episodes).parameters
TIER_B, TIER_C = _TIER_DEFAULTS["tier_b"].default, _TIER_DEFAULTS["tier_c"].default
K = 10


# ---- exports ---------------------------------------------------------------------------------
def cut_time(truth: dict, share: float) -> datetime:
    """The first month boundary at or after `share` of the corpus's timeline."""
    first = min(datetime.fromisoformat(c["first"]) for c in truth["chats"])
    last = max(datetime.fromisoformat(c["last"]) for c in truth["chats"])
    t = first + (last - first) * share
    start = datetime(t.year, t.month, 1)
    return start if start == t else datetime(t.year + t.month // 12, t.month % 12 + 1, 1)


def truncate_exports(src: Path, dst: Path, cut: datetime) -> dict[str, tuple[int, int]]:
    """Write into `dst` each export of `src` cut before its first entry at or after `cut`: whole
    lines, the same container, encoding and line endings, as an earlier export of the chat would
    be. An export with nothing before the cut is left out. Returns name -> (entries kept, dropped)."""
    dst.mkdir(parents=True, exist_ok=True)
    out = {}
    for path in sorted(p for files in scan_exports(src).values() for p in files):
        ex = read_export(path)
        entries = parse_export(ex).entries
        later = next((i for i, e in enumerate(entries) if e.ts >= cut), len(entries))
        out[path.name] = (later, len(entries) - later)
        if later == 0:
            continue
        text = ex.text  # CRLF kept: splitting on LF leaves each CR on its line
        if later < len(entries):
            text = "\n".join(text.split("\n")[: entries[later].line_start - 1]) + "\n"
        data = text.encode(ex.encoding)
        if ex.member is None:
            (dst / path.name).write_bytes(data)
            continue
        with zipfile.ZipFile(path) as zin, zipfile.ZipFile(dst / path.name, "w") as zout:
            for info in zin.infolist():
                zout.writestr(info, data if info.filename == ex.member else zin.read(info))
    return out


# ---- reading a store -------------------------------------------------------------------------
def read_episodes(db: Path) -> pl.DataFrame:
    with store.connect(db, read_only=True) as con:
        return store.read_frame(con, "SELECT * FROM episodes ORDER BY chat_id, start_ts, id")


def summary_tiers(db: Path) -> dict[str, str]:
    """Episode id -> the highest tier it was summarized at (A < B < C)."""
    with store.connect(db, read_only=True) as con:
        return dict(con.execute("SELECT episode_id, max(tier) FROM summaries GROUP BY episode_id").fetchall())


def rollup_texts(db: Path) -> dict[tuple, str]:
    with store.connect(db, read_only=True) as con:
        return {(c, p, s): t for c, p, s, t in con.execute("SELECT chat_id, period, period_start, text FROM rollups").fetchall()}


def stream_texts(db: Path) -> dict[str, str]:
    with store.connect(db, read_only=True) as con:
        return dict(con.execute("SELECT id, normalized_text FROM message_streams").fetchall())


def tier_of(salience: float | None) -> str:
    s = salience or 0.0
    return "C" if s >= TIER_C else "B" if s >= TIER_B else "A"


# ---- rescoring as of a time ------------------------------------------------------------------
def rescore(db: Path, episodes: pl.DataFrame, as_of: Sequence[datetime | None]) -> pl.DataFrame:
    """`episodes` (rows of the episodes table) with salience as the `episodes` asset scores it when
    the store holds only the chat's messages before as_of[i] (None: all of them): the same reads
    and calls as the asset, the whole-chat inputs taken at that time. Row order is kept."""
    eps = episodes.with_columns(pl.Series("_as_of", list(as_of), dtype=pl.Datetime("us")),
                                pl.int_range(pl.len()).alias("_row"))
    parts = []
    with store.connect(db, read_only=True) as con:
        for chat in eps["chat_id"].unique().sort().to_list():
            msgs = store.read_frame(con, """
                SELECT m.id, m.chat_id, m.day, m.ts, m.author, m.is_user, m.kind, m.line_start, s.normalized_text
                FROM messages m JOIN message_streams s USING (id) WHERE m.chat_id = ?""", [chat])
            for (cut,), group in eps.filter(pl.col("chat_id") == chat).group_by("_as_of", maintain_order=True):
                m = msgs if cut is None else msgs.filter(pl.col("ts") < cut)
                users = m.filter(pl.col("is_user") & pl.col("author").is_not_null())["author"].unique().to_list()
                counts = term_document_counts(m.select("id", "chat_id", "is_user", "normalized_text"))  # as the asset: every kind
                scored = score_episodes(group.drop("_as_of", "_row"), m, {chat: m["ts"].max()}, counts, user_names=users)
                parts.append(scored.with_columns(group["_row"]))
    return pl.concat(parts).sort("_row").drop("_row")


def built_as_of(episodes: pl.DataFrame, reports: Sequence[dict]) -> list[datetime]:
    """For each episode, the end of the month range of the last run (over `reports`, `truffle
    ingest` reports in the order they ran) that covered its month: a run writes its months'
    messages before its episodes, so the store then held the chat's messages before that time.
    Exact when every run redid all of its months' days (a cut at a month boundary)."""
    end: dict[tuple[str, int], datetime] = {}
    for rep in reports:
        for chat, c in rep.get("chats", {}).items():
            for r in c.get("runs", []):
                first, last = (_month_index(date.fromisoformat(r[k] + "-01")) for k in ("first_month", "last_month"))
                for m in range(first, last + 1):
                    end[(chat, m)] = datetime((last + 1) // 12, (last + 1) % 12 + 1, 1)
    return [end[(chat, _month_index(d))] for chat, d in zip(episodes["chat_id"].to_list(), episodes["day"].to_list())]


def _month_index(d: date) -> int:
    return d.year * 12 + d.month - 1


def schedule_as_of(episodes: pl.DataFrame, months: int, last: dict[str, datetime]) -> list[datetime | None]:
    """A new export every `months` calendar months (boundaries at multiples of `months` from year
    0): an episode is scored as of the first boundary after its day, or with every message when
    that boundary comes after the chat's last message."""
    out: list[datetime | None] = []
    for chat, d in zip(episodes["chat_id"].to_list(), episodes["day"].to_list()):
        n = _month_index(d) // months * months + months
        at = datetime(n // 12, n % 12 + 1, 1)
        out.append(None if at > last[chat] else at)
    return out


# ---- comparisons -----------------------------------------------------------------------------
def _stats(x: pl.Series) -> dict[str, float]:
    if x.len() == 0:
        return {"mean": 0.0, "p95": 0.0, "max": 0.0}
    return {"mean": float(x.mean()), "p95": float(x.quantile(0.95, "higher")), "max": float(x.max())}


def salience_drift(base: pl.DataFrame, other: pl.DataFrame) -> dict:
    """|Δ| of salience and each component over the episodes both frames hold (by id)."""
    cols = list(SALIENCE_COLUMNS)
    j = base.select("id", *cols).join(other.select("id", *cols), on="id", suffix="_b")
    out: dict = {"episodes": j.height, "only_base": base.height - j.height, "only_other": other.height - j.height}
    for c in cols:
        out[c] = _stats((j[c] - j[f"{c}_b"]).abs())
    out["drifted"] = int(((j["salience"] - j["salience_b"]).abs() > 1e-9).sum())
    return out


def tier_changes(base: dict[str, str], other: dict[str, str]) -> dict[str, int]:
    """Episodes (in both) whose tier differs: up = a higher tier in `other`."""
    common = base.keys() & other.keys()
    up = sum(1 for e in common if other[e] > base[e])
    down = sum(1 for e in common if other[e] < base[e])
    return {"episodes": len(common), "changed": up + down, "up": up, "down": down}


def tiers_from(episodes: pl.DataFrame) -> dict[str, str]:
    return {e: tier_of(s) for e, s in zip(episodes["id"].to_list(), episodes["salience"].to_list())}


def fact_questions(truth: dict, present: set[str]) -> list[tuple[str, list[str]]]:
    """(question, evidence message ids) per planted fact whose evidence the store holds: the fact
    as stated, and two questions about it."""
    out = []
    for f in truth.get("facts", []):
        gold = [m for m in f.get("message_ids") or [] if m in present]
        if not gold:
            continue
        pred = str(f.get("predicate", "")).replace("_", " ")
        for q in (f["fact_text"], f"What is my {pred}?", f"When did we talk about {f.get('value')}?"):
            out.append((q, gold))
    return out


def recall_at(ranked: list[str], gold: list[str], k: int) -> float:
    top = set(ranked[:k])
    return sum(g in top for g in gold) / len(gold)


def jaccard(a: Sequence[str], b: Sequence[str]) -> float:
    sa, sb = set(a), set(b)
    return len(sa & sb) / len(sa | sb) if sa | sb else 1.0


def ranking_impact(base: list[list[str]], other: list[list[str]], gold: list[list[str] | None], k: int = K) -> dict:
    """recall@k of both (over the questions with gold), mean top-k Jaccard and identical top-k lists."""
    with_gold = [i for i, g in enumerate(gold) if g]
    rec = lambda runs: statistics.fmean(recall_at(runs[i], gold[i], k) for i in with_gold) if with_gold else 0.0  # noqa: E731
    pairs = list(zip(base, other))
    return {
        "questions": len(pairs), "with_gold": len(with_gold),
        "recall_base": rec(base), "recall_other": rec(other),
        "overlap": statistics.fmean(jaccard(a[:k], b[:k]) for a, b in pairs) if pairs else 1.0,
        "identical": sum(a[:k] == b[:k] for a, b in pairs) / len(pairs) if pairs else 1.0,
    }


def rankings(pointer: Path, questions: list[str], k: int = K, embedder=None) -> list[list[str]]:
    from truffle_assets.index import MemoryIndex
    from truffle_assets.retrieval import retrieve

    idx = MemoryIndex.open(pointer, embedder)
    return [retrieve(q, idx, k=k).message_ids for q in questions]


def salience_ab(pointer: Path, questions: list[str], variants: dict[str, dict[str, float]], k: int = K,
                embedder=None, weights=None) -> dict[str, list[list[str]]]:
    """Top-k message ids per question for each variant of the salience signal, all ranked from the
    very same candidates: `retrieve` runs once per question, its signals are kept, and the fusion,
    episode blend and ranking are redone with salience[episode id] in place of the index column
    (a variant lacking an episode keeps the column's value). Comparing stores instead mixes in
    how LanceDB orders tied rows, which differs between indexes written in different runs.
    Raises if a variant holding the index's own values does not give `retrieve`'s own ranking."""
    import dataclasses

    import numpy as np

    from truffle_assets.index import MemoryIndex
    from truffle_assets.retrieval import RetrievalWeights, retrieve, search
    from truffle_assets.retrieval.fusion import blend_episode_best, fuse, rank

    w = weights or RetrievalWeights()
    idx = MemoryIndex.open(pointer, embedder)
    kept: dict = {}
    measure = search.measure

    def keep(rows, V, *args, **kwargs):
        kept.update(rows=rows, V=V, sig=measure(rows, V, *args, **kwargs))
        return kept["sig"]

    out: dict[str, list[list[str]]] = {name: [] for name in variants}
    search.measure = keep
    try:
        for q in questions:
            kept.clear()
            pack = retrieve(q, idx, k=k, weights=w)
            if not kept:  # no candidates
                for name in variants:
                    out[name].append([])
                continue
            rows, V, sig = kept["rows"], kept["V"], kept["sig"]
            episodes = [r["episode_id"] for r in rows]
            own = [[rows[j]["message_id"] for j in rank(blend_episode_best(fuse(sig, w), episodes, w.episode), V, k, w.mmr_lambda)]]
            if own[0] != pack.message_ids:
                raise RuntimeError(f"re-ranking {q!r} does not reproduce retrieve(): salience_ab is out of date")
            for name, values in variants.items():
                sal = np.clip([values.get(e, r["salience"] or 0.0) for e, r in zip(episodes, rows)], 0.0, 1.0)
                fused = blend_episode_best(fuse(dataclasses.replace(sig, salience=sal), w), episodes, w.episode)
                out[name].append([rows[j]["message_id"] for j in rank(fused, V, k, w.mmr_lambda)])
    finally:
        search.measure = measure
    return out


# ---- the benchmark ---------------------------------------------------------------------------
