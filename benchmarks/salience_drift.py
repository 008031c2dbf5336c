"""Salience drift of incremental ingests: an episode keeps the whole-chat inputs of the run that built it.

    .venv/bin/python benchmarks/salience_drift.py                 # 2 chats, 100K tokens, cut at 2/3 of the timeline
    .venv/bin/python benchmarks/salience_drift.py --keep --full-check
    .venv/bin/python benchmarks/salience_drift.py --reuse /tmp/truffle-salience-drift-XXXX   # measure kept stores again

The `episodes` asset scores an episode with whole-chat inputs (the chat's latest message for
recency, per-chat term document counts for repetition) taken from what the store holds during the
run, and a run redoes only the days that changed, so older episodes keep the inputs of the run that
built them. That is also true inside a first ingest: a chat whose active months have gaps is
ingested as one run per stretch of months, oldest first. This measures what it costs, with the
real `truffle ingest` in two fresh data roots and local instances (the project's dagster.yaml,
offline, the user named with `--user`):

- clean:       the full synthetic exports ingested once;
- incremental: the exports cut at the first month boundary past `--cut` of the corpus's timeline
               (whole lines, same container and line endings; a chat with nothing before the cut
               is left out) ingested, then the full exports ingested again: only the months from
               the cut on run.

`rescore` recomputes salience from the clean store the way the asset does when the store held only
a chat's messages before a given time. As of the end of each run's months (from the ingest
reports) it must reproduce both real stores exactly (the rescore check); with every message it
gives the whole-chat scores, what `truffle ingest --full` writes on a store holding the whole chat
(`--full-check` runs it on the incremental store and compares); as of monthly, quarterly or yearly
boundaries it gives what a user who drops a new export that often ends up with.

Compared on the same episode ids: |Δ salience| mean / p95 / max and |Δ| of each component (mean /
max), the episodes whose tier differs (real stores: table `summaries`; rescored: the thresholds
0.45 / 0.70), the day/week roll-ups whose text differs (they order episodes by salience). Retrieval:
`retrieve(q, k=10)` for three questions per planted fact of the ground truth (recall@10 = share of
the fact's evidence messages in the top 10) plus the runtime benchmark's chat, member and generic
questions, compared by top-10 Jaccard overlap and identical top-10 lists:
- store against store (clean vs incremental), next to the same clean store asked twice: LanceDB
  returns tied rows (the corpus repeats many short messages) in an order that varies between calls
  and between indexes written in different runs, so that is the floor such a comparison can reach;
- the salience signal alone (`salience_ab`): each question retrieved once from the clean index and
  its candidates re-ranked with another episode -> salience map, so nothing but the signal moves
  (tier changes are not re-summarized there).

Last line: `episodes=<n> salience_mae=<x> salience_max=<y> tier_changes=<t> recall10_clean=<a>
recall10_incremental=<b> top10_overlap=<o> top10_overlap_signal_only=<s>` (incremental vs clean).
"""

from __future__ import annotations

import argparse
import inspect
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import zipfile
from collections.abc import Sequence
from datetime import date, datetime
from pathlib import Path

import polars as pl

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
TRUFFLE = str(Path(sys.executable).with_name("truffle"))

from truffle_assets import store  # noqa: E402
from truffle_assets.ingest.exports import scan_exports  # noqa: E402
from truffle_assets.memory.episodes import SALIENCE_COLUMNS  # noqa: E402
from truffle_assets.memory.salience import SALIENCE_WEIGHTS, score_episodes, term_document_counts  # noqa: E402
from truffle_assets.memory.summaries import summarize_episodes  # noqa: E402
from truffle_assets.parsing import parse_export, read_export  # noqa: E402

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


# ---- ingest ----------------------------------------------------------------------------------
def ingest(env: dict, user: str, *flags: str) -> tuple[float, dict]:
    """(seconds, report) of `truffle ingest --user <user> [flags]`; exits on failure."""
    t0 = time.perf_counter()
    proc = subprocess.run([TRUFFLE, "ingest", "--user", user, *flags], env=env, capture_output=True, text=True)
    took = time.perf_counter() - t0
    if proc.returncode != 0:
        sys.exit(f"truffle ingest failed ({proc.returncode}):\n{proc.stderr[-3000:]}")
    return took, json.loads(proc.stdout)


def root_env(root: Path) -> dict:
    """The environment `world` (benchmarks/chaos_bench.py) gave the data root `root`."""
    env = {**os.environ, "TRUFFLE_HOME": str(root), "DAGSTER_HOME": str(root / "dagster_home"), "HF_HUB_OFFLINE": "1"}
    for var in ("TRUFFLE_LLM_BASE_URL", "OPENROUTER_API_KEY", "TRUFFLE_CRASH_AT"):
        env.pop(var, None)
    return env


def runs_of(report: dict) -> int:
    return sum(len(c.get("runs", [])) for c in report.get("chats", {}).values())


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
def _drift_row(name: str, d: dict, t: dict) -> str:
    comps = " | ".join(f"{d[c]['mean']:.4f} / {d[c]['max']:.3f}" for c in COMPONENTS)
    return (f"| {name} | {d['episodes']:,} | {d['drifted']:,} | {d['salience']['mean']:.4f} | {d['salience']['p95']:.4f} | "
            f"{d['salience']['max']:.4f} | {comps} | {t['changed']} ({t['up']} up, {t['down']} down) |")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--chats", type=int, default=2)
    ap.add_argument("--tokens", type=int, default=100_000)
    ap.add_argument("--seed", type=int, default=3, help="seed 3: few gaps between active months, so few runs")
    ap.add_argument("--cut", type=float, default=2 / 3, help="share of the timeline before the first export")
    ap.add_argument("--questions", type=int, default=60, help="non-fact questions for the overlap")
    ap.add_argument("--keep", action="store_true", help="keep the data roots (and the ingest reports)")
    ap.add_argument("--full-check", action="store_true",
                    help="then run `truffle ingest --full` on the incremental store (rebuilding it) and compare with the whole-chat scores")
    ap.add_argument("--reuse", type=Path, help="a folder --keep left: measure its stores again, no ingest")
    args = ap.parse_args()
    t_start = time.perf_counter()

    from benchmarks.chaos_bench import world
    from benchmarks.corpus import corpus
    from truffle_assets.evals.truth_questions import build_queries

    exports, truth, _ = corpus(args.tokens, args.chats, args.seed)
    cut = cut_time(truth, args.cut)
    tmp = args.reuse or Path(tempfile.mkdtemp(prefix="truffle-salience-drift-"))
    clean_root, inc_root = tmp / "clean", tmp / "incremental"
    print(f"corpus: {len(truth['chats'])} chats, ~{truth['approx_tokens']:,} tokens, seed {args.seed}; "
          f"cut {cut.date()} ({args.cut:.0%} of the timeline)")
    if args.reuse:
        clean_rep, first_rep, inc_rep = json.loads((tmp / "reports.json").read_text())
    else:
        kept = truncate_exports(exports, tmp / "truncated", cut)
        for name, (k, d) in kept.items():
            print(f"  {name}: {k:,} entries before the cut, {d:,} after")
        clean_s, clean_rep = ingest(world(clean_root, exports), truth["user"])
        env = world(inc_root, tmp / "truncated")
        first_s, first_rep = ingest(env, truth["user"])
        for files in scan_exports(exports).values():
            for p in files:
                shutil.copy(p, inc_root / "exports" / p.name)
        inc_s, inc_rep = ingest(env, truth["user"])
        (tmp / "reports.json").write_text(json.dumps([clean_rep, first_rep, inc_rep]))
        print(f"truffle ingest: clean {clean_s:.0f} s ({runs_of(clean_rep)} runs); before the cut {first_s:.0f} s "
              f"({runs_of(first_rep)} runs), then incremental {inc_s:.0f} s ({runs_of(inc_rep)} runs)")

    clean_db, inc_db = clean_root / "memory.duckdb", inc_root / "memory.duckdb"
    clean_eps, inc_eps = read_episodes(clean_db), read_episodes(inc_db)
    streams_a, streams_b = stream_texts(clean_db), stream_texts(inc_db)
    other = sum(streams_b.get(i) != t for i, t in streams_a.items()) + len(streams_b.keys() - streams_a.keys())
    print(f"same messages and texts: {other == 0} ({len(streams_a):,} messages, {other} differ); episodes "
          f"{clean_eps.height:,} clean, {inc_eps.height:,} incremental")

    # Rescoring the clean store as of when each run ran must reproduce both real stores; with every
    # message it gives the whole-chat scores (what `truffle ingest --full` writes once the store holds
    # the whole chat), and with re-export schedules what a user who exports regularly ends up with.
    whole = rescore(clean_db, clean_eps, [None] * clean_eps.height)
    checks = {"clean": salience_drift(clean_eps, rescore(clean_db, clean_eps, built_as_of(clean_eps, [clean_rep]))),
              "incremental": salience_drift(inc_eps, rescore(clean_db, clean_eps, built_as_of(clean_eps, [first_rep, inc_rep])))}
    print("rescore check, max |Δ| of salience and components against the real store: " + ", ".join(
        f"{k} {max(d[c]['max'] for c in SALIENCE_COLUMNS):.6f} over {d['episodes']:,} episodes" for k, d in checks.items()))

    drift = salience_drift(clean_eps, inc_eps)
    tiers = tier_changes(summary_tiers(clean_db), summary_tiers(inc_db))
    whole_tiers = tiers_from(whole)
    print("\n|Δ| per episode; components as mean / max, weights " + ", ".join(f"{c} {w}" for c, w in SALIENCE_WEIGHTS.items()))
    print("| stores compared | episodes | drifted | salience MAE | p95 | max | " + " | ".join(COMPONENTS) + " | tier changes |")
    print("|---|" + "---|" * (6 + len(COMPONENTS)))
    print(_drift_row("incremental vs clean (real stores, tiers from `summaries`)", drift, tiers))
    print(_drift_row(f"clean ({runs_of(clean_rep)} runs) vs whole-chat", salience_drift(whole, clean_eps),
                     tier_changes(whole_tiers, tiers_from(clean_eps))))
    print(_drift_row("incremental vs whole-chat", salience_drift(whole, inc_eps), tier_changes(whole_tiers, tiers_from(inc_eps))))
    last = {c: t for c, t in clean_eps.group_by("chat_id").agg(pl.col("end_ts").max()).iter_rows()}
    monthly = whole
    for months, label in ((1, "monthly"), (3, "quarterly"), (12, "yearly")):
        sched = rescore(clean_db, clean_eps, schedule_as_of(clean_eps, months, last))
        print(_drift_row(f"{label} re-exports (rescored) vs whole-chat", salience_drift(whole, sched),
                         tier_changes(whole_tiers, tiers_from(sched))))
        monthly = sched if months == 1 else monthly
    ro_a, ro_b = rollup_texts(clean_db), rollup_texts(inc_db)
    print(f"roll-ups whose text differs, incremental vs clean: {sum(ro_b.get(k) != t for k, t in ro_a.items())} of {len(ro_a)}")

    from truffle_assets.index import Embedder

    embedder = Embedder()
    facts = fact_questions(truth, set(streams_a))
    fact_qs = {q for q, _ in facts}
    extra, _ = build_queries(truth, len(facts) + args.questions)
    questions = [q for q, _ in facts] + [q for q in extra if q not in fact_qs][: args.questions]
    gold = [g for _, g in facts] + [None] * (len(questions) - len(facts))
    clean_ptr = clean_root / "published" / "latest.json"
    base = rankings(clean_ptr, questions, K, embedder)

    def against_clean(pointer: Path) -> dict:
        return ranking_impact(base, rankings(pointer, questions, K, embedder), gold)

    def salience_of(eps: pl.DataFrame) -> dict[str, float]:
        return dict(zip(eps["id"].to_list(), eps["salience"].to_list()))

    inc = against_clean(inc_root / "published" / "latest.json")
    repeat = against_clean(clean_ptr)
    ab = salience_ab(clean_ptr, questions, {"clean": salience_of(clean_eps), "incremental": salience_of(inc_eps),
                                            "whole": salience_of(whole), "monthly": salience_of(monthly)}, K, embedder)
    print(f"\nretrieval, k={K}: {len(questions)} questions, {inc['with_gold']} of them on planted facts with evidence")
    print("| rankings compared | recall@10 (first / second) | top-10 overlap | identical top-10 |\n|---|---|---|---|")
    for name, r in (("clean store, the same questions asked again", repeat),
                    ("clean store vs incremental store (salience, tiers, index write order)", inc)):
        print(f"| {name} | {r['recall_base']:.3f} / {r['recall_other']:.3f} | {r['overlap']:.3f} | {r['identical']:.3f} |")
    for a, b, name in (("clean", "incremental", "salience signal only: clean vs incremental values"),
                       ("whole", "clean", "salience signal only: whole-chat vs clean values"),
                       ("whole", "monthly", "salience signal only: whole-chat vs monthly re-export values")):
        r = ranking_impact(ab[a], ab[b], gold)
        print(f"| {name} (same candidates) | {r['recall_base']:.3f} / {r['recall_other']:.3f} | {r['overlap']:.3f} | "
              f"{r['identical']:.3f} |")
    sig = ranking_impact(ab["clean"], ab["incremental"], gold)

    if args.full_check:
        full_s, full_rep = ingest(root_env(inc_root), truth["user"], "--full")
        after = read_episodes(inc_db)
        d, t = salience_drift(whole, after), tier_changes(whole_tiers, summary_tiers(inc_db))
        print(f"truffle ingest --full on the incremental store: {full_s:.0f} s ({runs_of(full_rep)} runs); against the "
              f"whole-chat scores max |Δ salience| {d['salience']['max']:.6f} over {d['episodes']:,} episodes, "
              f"{t['changed']} tier changes")
    if args.keep or args.reuse:
        print(f"kept: {tmp}")
    else:
        shutil.rmtree(tmp, ignore_errors=True)
    print(f"total {time.perf_counter() - t_start:.0f} s")
    print(f"episodes={drift['episodes']} salience_mae={drift['salience']['mean']:.4f} salience_max={drift['salience']['max']:.4f} "
          f"tier_changes={tiers['changed']} recall10_clean={inc['recall_base']:.3f} recall10_incremental={inc['recall_other']:.3f} "
          f"top10_overlap={inc['overlap']:.3f} top10_overlap_signal_only={sig['overlap']:.3f}")
    from benchmarks import exit_quietly

    exit_quietly(0)


if __name__ == "__main__":
    main()
