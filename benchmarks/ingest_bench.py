"""Full offline memory build of the synthetic corpus through real Dagster runs, against embedding alone.

    .venv/bin/python benchmarks/ingest_bench.py                            # 5M tokens, 10 chats, seed 7
    .venv/bin/python benchmarks/ingest_bench.py --tokens 200000 --discard  # quick look

It runs what `truffle ingest` runs, in this process: `ingest_all` on a fresh data dir and a fresh
Dagster instance — `DagsterInstance.get()` on a temporary `$DAGSTER_HOME` holding the project's
dagster.yaml, as `truffle up` sets it: the SQLite storage a newcomer gets — with no LLM endpoint (tier A only). Every chat's months
are planned as `truffle ingest` plans them and each stretch of consecutive months is one ranged run
(single-run backfill over chat × month partitions) of the whole chain (messages → message_pii →
message_streams → episodes → summaries → facts → memory_index); one run of `profile` follows. The
embedding model is loaded before the clock starts, as in a long-running process (its load time is
printed apart). Dagster's log goes to benchmarks/.work/ingest_bench-t<tokens>-c<chats>-s<seed>.log.

From the instance's event log, per step key summed over runs: step seconds (STEP_START → STEP_SUCCESS)
and compute seconds (STEP_START → the step's first materialization; the rest of a step is one
materialization event per month), the number of runs, events and materializations, and Dagster's
share of the ingest wall time, 1 − steps / wall (and 1 − compute / wall, as first_answer_bench.py
counts it). Then, in the same process, the exact texts the index embedded (message passages +
summaries, read back from its LanceDB tables) are embedded again alone with the same Embedder;
`--embed-sample 0.25` times that pass on a seeded uniform quarter of the texts and scales the time
to all of them (at 5M tokens the full pass alone takes over half an hour on 2 cores).

Throughput is corpus tokens (chars/4 of the decoded chat text, as the generator counts) per second of
wall time. Last line: `ingest_tokens_per_s=<a> embed_only_tokens_per_s=<b> ratio=<a/b> peak_rss_mb=<m>`,
with the peak RSS of this process up to the end of the ingest. Issue goal at 5M tokens: ratio ≥ 0.8,
peak RSS ≤ 4 GB.

The memory it builds is kept where `runtime_bench.py` looks for it (benchmarks/.work/runtime/
mem-t<tokens>-c<chats>-s<seed>/, stamped like that script's own build), so the 5M-token memory is
embedded once for both benchmarks; with `--discard` it is built in a temporary dir and deleted.
"""

import argparse
import json
import os
import random
import resource
import shutil
import statistics
import sys
import tempfile
import time
import warnings
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import dagster as dg  # noqa: E402

warnings.filterwarnings("ignore", category=dg.BetaWarning)

import lancedb  # noqa: E402

from benchmarks import exit_quietly, runtime_bench  # noqa: E402
from benchmarks.event_log import event_split  # noqa: E402
from benchmarks.corpus import corpus  # noqa: E402
from truffle_assets import store  # noqa: E402
from truffle_assets.defs.ingest.runner import ingest_all  # noqa: E402
from truffle_assets.defs.pipeline import CHAT_MONTH_ASSETS, WHOLE_MEMORY_ASSETS  # noqa: E402
from truffle_assets.defs.resources import IndexResource, LLMResource  # noqa: E402
from truffle_assets.llm.client import ENV_VARS  # noqa: E402

TABLES = ("messages", "message_pii", "message_streams", "episodes", "summaries", "facts")
STEP_ORDER = [a.key.to_user_string() for a in CHAT_MONTH_ASSETS + WHOLE_MEMORY_ASSETS]


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def ingest_logged(log: Path, **kwargs) -> dict:
    """`ingest_all` with file descriptor 2 (Dagster's console log, library noise) sent to `log`."""
    sys.stderr.flush()
    saved = os.dup(2)
    with log.open("w") as f:
        os.dup2(f.fileno(), 2)
        try:
            return ingest_all(**kwargs)
        finally:
            sys.stderr.flush()
            os.dup2(saved, 2)
            os.close(saved)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--tokens", type=int, default=5_000_000)
    ap.add_argument("--chats", type=int, default=10)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--embed-sample", type=float, default=1.0,
                    help="embed this share of the texts alone (seeded uniform sample) and scale the time to all")
    ap.add_argument("--discard", action="store_true",
                    help="build in a temporary dir and delete it, instead of keeping it for runtime_bench")
    args = ap.parse_args()

    exports, truth, _ = corpus(args.tokens, args.chats, args.seed)
    tokens = truth["approx_tokens"]  # characters / 4 over the decoded chat text
    tmp = Path(tempfile.mkdtemp(prefix="truffle-ingest-bench-"))
    if args.discard:
        out = tmp / "data"
    else:  # built in place: latest.json names the index root by its absolute path
        out = runtime_bench.mem_dir(runtime_bench.WORK, args.tokens, args.chats, args.seed)
        shutil.rmtree(out, ignore_errors=True)
    out.mkdir(parents=True)
    dagster_home = tmp / "dagster_home"  # the project's dagster.yaml (SQLite, pools), as `truffle up` makes it
    dagster_home.mkdir()
    shutil.copy(ROOT / "dagster.yaml", dagster_home / "dagster.yaml")
    os.environ["DAGSTER_HOME"] = str(dagster_home)
    os.environ["TRUFFLE_HOME"] = str(out)  # any default path lands in the fresh data dir, not data/
    for var in (*ENV_VARS.values(), "OPENROUTER_API_KEY"):
        os.environ.pop(var, None)  # offline: tier A only
    instance = dg.DagsterInstance.get()
    log = runtime_bench.WORK.parent / f"ingest_bench-t{args.tokens}-c{args.chats}-s{args.seed}.log"
    log.parent.mkdir(parents=True, exist_ok=True)
    print(f"corpus: {exports.name}  tokens={tokens:,}  chats={len(truth['chats'])}")
    print(f"instance: {type(instance.event_log_storage).__name__} under {dagster_home}; data: {out}; Dagster log: {log}",
          flush=True)

    t0 = time.perf_counter()
    _ = IndexResource(root=str(out / "index")).open().embedder.model  # the one ingest_all's IndexResource reuses
    load_s = time.perf_counter() - t0

    t_epoch, t0 = time.time(), time.perf_counter()
    report = ingest_logged(
        log, exports_dir=exports, db_path=out / "memory.duckdb", user_name=truth["user"], instance=instance,
        cache_dir=out / "cache", llm=LLMResource(cache_dir=str(out / "cache" / "llm")), memory=True,
    )
    ingest_s = time.perf_counter() - t0
    ingest_rss = peak_rss_mb()
    if report["failed"] or not (out / "published" / "latest.json").is_file():
        sys.exit(f"ingest failed (see {log}): {json.dumps(report, default=str)[:3000]}")

    split = event_split(instance)
    with store.connect(out / "memory.duckdb", read_only=True) as con:
        have = {r[0] for r in con.execute("SELECT table_name FROM information_schema.tables").fetchall()}
        counts = {t: con.execute(f"SELECT count(*) FROM {t}").fetchall()[0][0] for t in TABLES if t in have}

    # The same texts, embedded alone by the same model and batch size.
    db = lancedb.connect(str(out / "index"))
    passages = db.open_table("raw_episodes_index").search().select(["passage"]).limit(None).to_arrow()["passage"].to_pylist()
    summ = db.open_table("episodic_summaries").search().select(["text"]).limit(None).to_arrow()["text"].to_pylist()
    embedder = IndexResource(root=str(out / "index")).open().embedder
    texts = passages + summ
    if args.embed_sample < 1.0:  # a seeded uniform sample: its time scales to all texts without bias
        texts = random.Random(args.seed).sample(texts, max(1, round(len(texts) * args.embed_sample)))
    t0 = time.perf_counter()
    embedder.encode(texts)
    embed_s = (time.perf_counter() - t0) * (len(passages) + len(summ)) / len(texts)

    runs = [r for c in report["chats"].values() for r in c["runs"]]
    months = sum(r["months"] for r in runs)
    steps_total, compute_total = sum(split["step_s"].values()), sum(split["compute_s"].values())
    in_runs = sum(split["run_walls"])
    before_first = split["first_event_ts"] - t_epoch
    order = sorted(split["step_s"], key=lambda k: (STEP_ORDER.index(k) if k in STEP_ORDER else len(STEP_ORDER), k))

    print()
    print(f"runs: {split['runs']} ({len(runs)} chat month-ranges covering {months:,} chat-months, + profile); "
          f"events: {split['events']:,}; materializations: {split['materializations']:,}")
    print("| stage | step s (start → success) | compute s (start → 1st materialization) | share of wall |")
    print("|---|---|---|---|")
    for k in order:
        print(f"| {k} | {split['step_s'][k]:.1f} | {split['compute_s'][k]:.1f} | {split['step_s'][k] / ingest_s:.1%} |")
    print(f"| **all steps** | {steps_total:.1f} | {compute_total:.1f} | {steps_total / ingest_s:.1%} |")
    print(f"| in runs, outside steps ({split['runs']} runs; median {statistics.median(split['run_overheads']):.2f} s/run) "
          f"| {in_runs - steps_total:.1f} | | {(in_runs - steps_total) / ingest_s:.1%} |")
    print(f"| outside runs (planning, run creation; {before_first:.1f} s before the first run) "
          f"| {ingest_s - in_runs:.1f} | | {(ingest_s - in_runs) / ingest_s:.1%} |")
    print(f"| **ingest wall** | {ingest_s:.1f} | | |")
    print(f"| model load (before the clock) | {load_s:.1f} | | |")
    sampled = f", timed on a {args.embed_sample:.0%} sample" if args.embed_sample < 1.0 else ""
    print(f"| embedding alone ({len(passages) + len(summ):,} texts{sampled}) | {embed_s:.1f} | | |")
    print(f"dagster_share: 1 - steps/wall = {1 - steps_total / ingest_s:.3f}; "
          f"1 - compute/wall = {1 - compute_total / ingest_s:.3f}; "
          f"per materialization (step - compute): {(steps_total - compute_total) / max(split['materializations'], 1) * 1000:.0f} ms")
    print("rows:", counts)
    print(f"peak RSS after ingest: {ingest_rss:.0f} MB; after embedding alone: {peak_rss_mb():.0f} MB")

    if args.discard:
        shutil.rmtree(tmp, ignore_errors=True)
    else:
        shutil.rmtree(tmp, ignore_errors=True)  # the instance only; the memory is in `out`
        info = {"stamp": runtime_bench.built_stamp(args.tokens, args.chats, args.seed), "corpus": str(exports),
                "ingest_s": round(ingest_s, 1),
                "built_by": "benchmarks/ingest_bench.py (ingest_all: real Dagster runs, fresh SQLite instance)"}
        (out / ".built.json").write_text(json.dumps(info, indent=1))
        print(f"memory kept for runtime_bench.py: {out}")
    a, b = tokens / ingest_s, tokens / embed_s
    print(f"ingest_tokens_per_s={a:.0f} embed_only_tokens_per_s={b:.0f} ratio={a / b:.2f} peak_rss_mb={ingest_rss:.0f}")


if __name__ == "__main__":
    main()
    exit_quietly(0)
