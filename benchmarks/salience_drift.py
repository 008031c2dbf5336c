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
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import polars as pl

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
TRUFFLE = str(Path(sys.executable).with_name("truffle"))

from truffle_assets.ingest.exports import scan_exports  # noqa: E402
from truffle_assets.memory.episodes import SALIENCE_COLUMNS  # noqa: E402
from truffle_assets.memory.salience import SALIENCE_WEIGHTS  # noqa: E402

from truffle_assets.evals.salience_drift import (  # noqa: E402
    COMPONENTS, K, built_as_of, cut_time, fact_questions, ranking_impact, rankings, read_episodes, rescore,
    rollup_texts, salience_ab, salience_drift, schedule_as_of, stream_texts, summary_tiers, tier_changes,
    tiers_from, truncate_exports,
)

# ---- ingest ----------------------------------------------------------------------------------
def ingest(env: dict, user: str, *flags: str) -> tuple[float, dict]:
    """(seconds, report) of `truffle ingest --user <user> [flags]`; exits on failure."""
    t0 = time.perf_counter()
    proc = subprocess.run([TRUFFLE, "ingest", "--json", "--user", user, *flags], env=env, capture_output=True, text=True)
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
