"""Evidence recall on LoCoMo: our memory vs BM25-only, dense-only and Mem0 OSS, same run, same questions.

    .venv/bin/pip install -e .[bench]                      # mem0ai==2.2.1 (qdrant-client comes with it)
    .venv/bin/python benchmarks/locomo_recall.py            # all 10 conversations
    .venv/bin/python benchmarks/locomo_recall.py --limit 1 --skip-mem0   # quick look

Data: LoCoMo (Maharana et al., "Evaluating Very Long-Term Conversational Memory of LLM Agents",
ACL 2024, arXiv:2402.17753), `locomo10.json` from shared/benchmarks/locomo/ (CC BY-NC 4.0:
evaluation only, never copied into the repo). 10 two-person conversations, 19-32 sessions each.

Per conversation:
1. `locomo_convert` writes it as a WhatsApp Android export (`WhatsApp Chat with LoCoMo conv-26.txt`,
   chat id `locomo-conv-26`, image turns carry "[shares <BLIP caption>]") and maps every dia_id to
   its message id through the real parser; every turn must be exactly one message.
2. The export goes through the pipeline entry `truffle_assets.defs.ingest.runner.ingest_all` (every
   chat x day asset, messages -> PII -> streams -> episodes -> summaries -> facts -> memory_index, on
   an ephemeral Dagster instance, no LLM endpoint: extractive summaries) into
   benchmarks/.work/locomo/<conv>/ (DuckDB, LanceDB index, published latest.json; Dagster's run log
   in pipeline.log). One store per conversation, as Mem0 keeps one user_id per conversation. The
   stored message ids must equal the converter's.
3. Every QA of categories 1-4 with evidence is asked as-is (no date, no speaker hints), to:
   `ours`  = `truffle_assets.retrieval.retrieve(q, index, k)`, ranked `pack.items[*].message_id`;
   `bm25`, `dense` = `retrieve_baseline(q, index, k, mode=...)` over the same index;
   `mem0`  = Mem0 OSS `Memory` (benchmarks/mem0_baseline.py): the same messages as "Speaker: text",
             `add(..., infer=False)`, same MiniLM embedder, local qdrant, `search(q, top_k=k)`.
             Offline, Mem0's BM25 half (fastembed model) and entity boosts (spaCy model) are
             unavailable, so it ranks by semantic similarity only (recorded in the JSON).
   Each system is asked once at depth SESSION_DEPTH (100 turns); recall@5/10/20 are read off the top
   of that ranking.

Two levels, read off the same ranking of every system:
* turn-level recall@k of a question = share of its evidence turns whose message ids are among the
  top-k retrieved ids;
* session-level recall@k = share of its evidence *sessions* (the N of every `D<N>:<turn>` evidence
  id) that hold at least one of the top-k retrieved turns. The retrieval unit stays the turn: the
  top k turns cover at most k distinct sessions (fewer when several hits share one). Published
  LoCoMo session figures (e.g. all-MiniLM-L6-v2 session R@10 0.914) rank whole sessions as the
  unit, so their top 10 always spans 10 sessions, about a third of a 19-32-session conversation;
  ours can only be lower or equal for the same hits, never a looser bar.
* session-unit recall@k ("units" below) = the same ranking read the way published session-level
  figures are: sessions ranked as units, each at the rank of its best turn in the top SESSION_DEPTH
  turns, and the share of the evidence sessions among the first k sessions. This is the figure to
  set beside a published session R@10 (MiniLM 0.914, 0.947 with a bge reranker); a session none of
  whose turns is in the top 100 counts as missed.
Conversations 26, 30 and 41 are the dev conversations the fusion weights were tuned on; the other
seven are never looked at for tuning. The table gives
turn recall@k on each split (`dev`, `held-out`) beside the overall figures.
The table averages over questions (per category and overall). Latency is wall time per
question around the retrieval call, in-process, after a warm-up query, with torch pinned to
--threads (default 1) for every system.

LoCoMo categories, in the data set's own numbering (shared/benchmarks/locomo/SOURCE.md checks them
against the data and the upstream scorer `task_eval/evaluation.py`):
  1 multi-hop     answer gathers several turns, usually across sessions (276/282 have >1 evidence id)
  2 temporal      "when" questions: dates, durations, order
  3 open-domain   commonsense / inference about a speaker ("Would X likely ...?")
  4 single-hop    one fact from one turn (795/841 have a single evidence id)
  5 adversarial   premise pins a fact on the wrong speaker; no evidence: excluded here
Beware that Mem0-lineage reports label 1=single-hop, 3=multi-hop, 4=open-domain: their per-category
figures are not comparable with these columns.
Evidence ids are cleaned (`D:11:26` -> `D11:26`, `D8:6; D9:17` -> two ids); ids that name no turn
are dropped, and a question left without evidence is skipped (counted in the JSON).

`--variant NAME={"keys": 0.4}` adds a system: `retrieve` with those weight overrides.
`--reuse` keeps a conversation's store when its published latest.json is there (only query-time
code changed: the build is skipped, the export is re-converted into a scratch folder to map ids);
without it every run rebuilds from scratch. `--plain` also runs `ours-plain`: the same `retrieve`
with the query-time additions switched off (`RetrievalWeights.plain()`), for recall and latency
with and without them in one run.

Output: a table, benchmarks/.work/locomo/results.json (per-system metrics, latencies, and per-question
recall), and a last line `locomo_recall@10=<t> session_recall@10=<s> bm25=<b> dense=<d> mem0=<m>`
(t, s: ours at turn and session level; baselines turn-level; recall@--k, 3 decimals).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import logging
import os
import shutil
import statistics
import sys
import time
import warnings
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("DAGSTER_TELEMETRY_DISABLED", "1")
os.environ.setdefault("TQDM_DISABLE", "1")
os.environ["MEM0_TELEMETRY"] = "False"

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from truffle_assets.evals import locomo as lc  # noqa: E402
from truffle_assets.evals.locomo import (  # noqa: E402
    CATEGORIES, DEV_CONVS, Question, questions_for, recall, session_of, session_recall, session_unit_recall,
)

WORK = ROOT / "benchmarks" / ".work" / "locomo"
CATEGORY_NAMES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop"}
SYSTEMS = ("ours", "ours-plain", "bm25", "dense", "mem0")
CUTOFFS = (5, 10, 20)
SESSION_DEPTH = 100  # turns asked of every system; sessions are ranked from these for session-unit recall

Search = Callable[[str, int], list[str]]  # (question, depth) -> ranked message ids


# --------------------------------------------------------------------------------------------
# The pipeline: exports -> DuckDB messages -> LanceDB memory
# --------------------------------------------------------------------------------------------

def build_memory(exports_dir: Path, db_path: Path, user: str):
    """exports -> DuckDB + LanceDB memory through the pipeline entry `ingest_all` (every chat x day asset:
    messages, PII, streams, episodes, summaries, facts, memory_index; then the profile), on an ephemeral
    Dagster instance. No LLM endpoint (TRUFFLE_LLM_* unset for this process): extractive summaries,
    the offline default. Returns (report, index) with the index opened from the published latest.json.
    """
    import dagster as dg

    from truffle_assets.defs.ingest.runner import ingest_all
    from truffle_assets.defs.resources import LLMResource
    from truffle_assets.retrieval import open_index

    data_dir = db_path.parent
    data_dir.mkdir(parents=True, exist_ok=True)
    log = data_dir / "pipeline.log"
    with log.open("w") as f, contextlib.redirect_stderr(f):  # Dagster's run log (DEBUG) goes to the file
        report = ingest_all(exports_dir, db_path, user_name=user, instance=dg.DagsterInstance.ephemeral(),
                            cache_dir=data_dir / "cache", full=True,
                            llm=LLMResource(cache_dir=str(data_dir / "cache" / "llm")))
    if report["failed"]:
        raise RuntimeError(f"pipeline failed (see {log}): {json.dumps(report, default=str)[:2000]}")
    pointer = data_dir / "published" / "latest.json"
    if not pointer.is_file():
        raise RuntimeError(f"the pipeline published no memory index at {pointer}")
    return report, open_index(pointer)


def stored_messages(db_path: Path, chat_id: str) -> list[dict]:
    from truffle_assets.store import connect

    with connect(db_path, read_only=True) as con:
        cur = con.execute("SELECT id, author, raw_text, ts FROM messages WHERE chat_id = ? ORDER BY ts, id", [chat_id])
        cols = [d[0] for d in cur.description]
        return [dict(zip(cols, r)) for r in cur.fetchall()]


def project_systems(index, variants: dict[str, dict] | None = None) -> dict[str, Search]:
    from truffle_assets.retrieval import RetrievalWeights, retrieve, retrieve_baseline

    def ours(q: str, k: int) -> list[str]:
        return _ids(retrieve(q, index, k=k))

    def baseline(mode: str) -> Search:
        return lambda q, k: _ids(retrieve_baseline(q, index, k, mode=mode))

    def plain(q: str, k: int) -> list[str]:
        return _ids(retrieve(q, index, k=k, weights=RetrievalWeights.plain()))

    def variant(overrides: dict) -> Search:
        w = RetrievalWeights(**overrides)
        return lambda q, k: _ids(retrieve(q, index, k=k, weights=w))

    return {"ours": ours, "ours-plain": plain, "bm25": baseline("bm25"), "dense": baseline("dense"),
            **{name: variant(o) for name, o in (variants or {}).items()}}


def _ids(result) -> list[str]:
    """Ranked message ids from an EvidencePack, a list of items, dicts or ids."""
    items = getattr(result, "items", result)
    out: list[str] = []
    for it in items:
        mid = it if isinstance(it, str) else (it.get("message_id") if isinstance(it, dict) else it.message_id)
        if mid not in out:
            out.append(mid)
    return out


# --------------------------------------------------------------------------------------------
# The run
# --------------------------------------------------------------------------------------------

QUERY_THREADS = 1


def pin_threads() -> None:
    """Same torch intra-op threads for every system's queries. `Embedder` sets min(4, cores) when it
    loads its model; on a shared 2-core machine that oversubscribes and one MiniLM query takes ~5x longer."""
    import torch

    torch.set_num_threads(QUERY_THREADS)


def evaluate(name: str, search: Search, qs: list[Question], depth: int, per_q: dict,
             message_session: dict[str, int]) -> list[float]:
    """Ask every question; record per-question turn and session recall at CUTOFFS; return latencies (seconds)."""
    lat = []
    if qs:
        search(qs[0].question, depth)  # warm-up: model load, caches
    pin_threads()
    for q in qs:
        t0 = time.perf_counter()
        ranked = search(q.question, depth)
        lat.append(time.perf_counter() - t0)
        per_q[(q.conv, q.index)][name] = {
            **{f"r@{k}": recall(ranked, q.gold, k) for k in per_q["_cutoffs"]},
            **{f"s@{k}": session_recall(ranked, q.sessions, message_session, k) for k in per_q["_cutoffs"]},
            **{f"u@{k}": session_unit_recall(ranked, q.sessions, message_session, k) for k in per_q["_cutoffs"]}}
    return lat


def summarize(systems: list[str], qs: list[Question], per_q: dict, cutoffs: list[int], lat: dict) -> dict:
    out = {}
    for s in systems:
        rows = [(q, per_q[(q.conv, q.index)][s]) for q in qs if s in per_q[(q.conv, q.index)]]
        if not rows:
            continue
        m = {"questions": len(rows)}
        for k in cutoffs:
            m[f"recall@{k}"] = statistics.fmean(r[f"r@{k}"] for _, r in rows)
            m[f"session_recall@{k}"] = statistics.fmean(r[f"s@{k}"] for _, r in rows)
            m[f"session_unit_recall@{k}"] = statistics.fmean(r[f"u@{k}"] for _, r in rows)
            for split, inside in (("dev", True), ("heldout", False)):
                vals = [r[f"r@{k}"] for q, r in rows if (q.conv in DEV_CONVS) == inside]
                m[f"recall@{k}_{split}"] = statistics.fmean(vals) if vals else None
            for c in CATEGORIES:
                vals = [r[f"r@{k}"] for q, r in rows if q.category == c]
                m[f"recall@{k}_cat{c}"] = statistics.fmean(vals) if vals else None
        ls = lat.get(s, [])
        m["latency_ms_mean"] = 1000 * statistics.fmean(ls) if ls else None
        m["latency_ms_p50"] = 1000 * statistics.median(ls) if ls else None
        m["latency_ms_p95"] = 1000 * sorted(ls)[int(0.95 * (len(ls) - 1))] if ls else None
        out[s] = m
    return out


def table(summary: dict, qs: list[Question], k: int, cutoffs: list[int]) -> str:
    ncat = {c: sum(q.category == c for q in qs) for c in CATEGORIES}
    nsplit = {sp: sum((q.conv in DEV_CONVS) == inside for q in qs) for sp, inside in (("dev", True), ("heldout", False))}
    head = (["system", "questions"] + [f"R@{c}" for c in cutoffs] + [f"sess R@{c}" for c in cutoffs]
            + [f"units R@{c}" for c in cutoffs]
            + [f"dev R@{k} (n={nsplit['dev']})", f"held-out R@{k} (n={nsplit['heldout']})"]
            + [f"c{c} {CATEGORY_NAMES[c]}@{k} (n={ncat[c]})" for c in CATEGORIES] + ["ms/q p50", "ms/q mean"])
    rows = []
    for s, m in summary.items():
        cats = [m[f"recall@{k}_cat{c}"] for c in CATEGORIES]
        splits = [m[f"recall@{k}_{sp}"] for sp in ("dev", "heldout")]
        rows.append([s, str(m["questions"])] + [f"{m[f'recall@{c}']:.3f}" for c in cutoffs]
                    + [f"{m[f'session_recall@{c}']:.3f}" for c in cutoffs]
                    + [f"{m[f'session_unit_recall@{c}']:.3f}" for c in cutoffs]
                    + ["-" if v is None else f"{v:.3f}" for v in splits]
                    + ["-" if v is None else f"{v:.3f}" for v in cats]
                    + ["-" if m[x] is None else f"{m[x]:.1f}" for x in ("latency_ms_p50", "latency_ms_mean")])
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(head)]
    fmt = lambda r: "  ".join(x.ljust(w) if i == 0 else x.rjust(w) for i, (x, w) in enumerate(zip(r, widths)))  # noqa: E731
    return "\n".join([fmt(head), fmt(["-" * w for w in widths])] + [fmt(r) for r in rows])


def main(argv: list[str] | None = None) -> int:
    for v in ("TRUFFLE_LLM_BASE_URL", "TRUFFLE_LLM_MODEL", "TRUFFLE_LLM_API_KEY", "OPENROUTER_API_KEY"):
        os.environ.pop(v, None)  # retrieval is measured on the offline build: no LLM tiers (not on import)
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--limit", type=int, default=None, help="first N conversations (default: all 10)")
    ap.add_argument("--k", type=int, default=10, help="headline cutoff for the last line and per-category columns")
    ap.add_argument("--skip-mem0", action="store_true")
    ap.add_argument("--reuse", action="store_true",
                    help="keep a conversation's built store when its latest.json exists (query-time changes only)")
    ap.add_argument("--plain", action="store_true",
                    help="also run ours-plain: retrieve() with the query-time signals off")
    ap.add_argument("--variant", action="append", default=[], metavar='NAME={"field": value}',
                    help="also run retrieve() with these RetrievalWeights overrides, as system NAME (repeatable)")
    ap.add_argument("--data", default=None, help="locomo10.json (default: shared/benchmarks/locomo/)")
    ap.add_argument("--work", default=str(WORK))
    ap.add_argument("--out", default=None, help="results JSON (default: <work>/results.json)")
    ap.add_argument("--threads", type=int, default=1, help="torch threads while querying, all systems (default 1)")
    args = ap.parse_args(argv)
    global QUERY_THREADS
    QUERY_THREADS = args.threads
    logging.basicConfig(level=logging.WARNING)
    for name in ("dagster", "lancedb", "httpx", "sentence_transformers"):
        logging.getLogger(name).setLevel(logging.WARNING)
    warnings.filterwarnings("ignore")

    work = Path(args.work)
    cutoffs = sorted(set(CUTOFFS) | {args.k})
    depth = max(*cutoffs, SESSION_DEPTH)
    samples = lc.load_locomo(args.data)[: args.limit]
    systems = [s for s in SYSTEMS if not (s == "mem0" and args.skip_mem0) and not (s == "ours-plain" and not args.plain)]
    variants = {v.split("=", 1)[0]: json.loads(v.split("=", 1)[1]) for v in args.variant}
    systems[1:1] = list(variants)

    all_qs: list[Question] = []
    per_q: dict = defaultdict(dict)
    per_q["_cutoffs"] = cutoffs
    lat: dict[str, list[float]] = defaultdict(list)
    skipped: dict[str, int] = defaultdict(int)
    build: dict[str, dict] = {}
    mem0 = None
    if "mem0" in systems:
        from mem0_baseline import Mem0Baseline

        mem0 = Mem0Baseline(work / "mem0")

    for sample in samples:
        conv = sample["sample_id"]
        conv_dir = work / conv
        exports_dir, db_path = conv_dir / "exports", conv_dir / "memory.duckdb"
        pointer = conv_dir / "published" / "latest.json"
        reuse = args.reuse and pointer.is_file() and db_path.is_file()
        if conv_dir.exists() and not reuse:
            shutil.rmtree(conv_dir)  # a fresh build: nothing cached between runs
        t0 = time.perf_counter()
        if reuse:
            from truffle_assets.retrieval import open_index

            conversion = lc.convert(sample, work / ".scratch" / conv)
            t1 = time.perf_counter()
            index = open_index(pointer)
        else:
            conversion = lc.convert(sample, exports_dir)
            t1 = time.perf_counter()
            _, index = build_memory(exports_dir, db_path, user=conversion.speakers[0])
        t2 = time.perf_counter()
        rows = stored_messages(db_path, conversion.chat_id)
        assert {r["id"] for r in rows} == set(conversion.dia_message.values()), \
            f"{conv}: stored message ids differ from the converter's"
        qs, sk = questions_for(sample, conversion)
        for key, n in sk.items():
            skipped[key] += n
        all_qs += qs
        build[conv] = {"messages": len(rows), "questions": len(qs), "convert_s": round(t1 - t0, 2),
                       "pipeline_s": round(t2 - t1, 2), "reused": reuse}
        message_session = {m: session_of(d) for d, m in conversion.dia_message.items()}

        searches = project_systems(index, variants)
        for name in [s for s in systems if s != "mem0"]:
            lat[name] += evaluate(name, searches[name], qs, depth, per_q, message_session)
        if mem0 is not None:
            t3 = time.perf_counter()
            mem0.add_messages(conv, ((r["id"], f"{r['author']}: {r['raw_text']}") for r in rows))
            build[conv]["mem0_add_s"] = round(time.perf_counter() - t3, 2)
            lat["mem0"] += evaluate("mem0", lambda q, k, c=conv: mem0.search(q, c, k), qs, depth, per_q,
                                    message_session)
        done = summarize(systems, qs, per_q, cutoffs, lat)
        print(f"{conv}: {len(rows)} messages, {len(qs)} questions, pipeline {t2 - t1:.1f}s{' (reused)' if reuse else ''}; "
              + " ".join(f"{s}={m[f'recall@{args.k}']:.3f}/{m[f'session_recall@{args.k}']:.3f}" for s, m in done.items()),
              flush=True)
    mem0_features = None
    if mem0 is not None:
        mem0_features = mem0.features()
        mem0.close()

    summary = summarize(systems, all_qs, per_q, cutoffs, lat)
    print()
    print(f"LoCoMo evidence recall: {len(samples)} conversations, {len(all_qs)} questions (categories 1-4), "
          f"depth {depth}; latency = p50 ms per question, {args.threads} torch thread(s)")
    print(table(summary, all_qs, args.k, cutoffs))
    out = Path(args.out) if args.out else work / "results.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps({
        "conversations": [s["sample_id"] for s in samples], "k": args.k, "query_threads": args.threads, "cutoffs": cutoffs, "depth": depth,
        "systems": summary, "skipped": dict(skipped), "build": build,
        "category_names": CATEGORY_NAMES, "mem0": mem0_features,
        "questions": [{"conv": q.conv, "qa_index": q.index, "category": q.category, "evidence": q.evidence,
                       "gold": q.gold, **{s: per_q[(q.conv, q.index)].get(s) for s in systems}} for q in all_qs],
    }, indent=1, default=str))
    print(f"results: {out}")
    r = {s: (f"{summary[s][f'recall@{args.k}']:.3f}" if s in summary else "na") for s in SYSTEMS}
    ours = summary.get("ours", {})
    sr, su, ho = (f"{ours[key]:.3f}" if ours.get(key) is not None else "na"
                  for key in (f"session_recall@{args.k}", f"session_unit_recall@{args.k}", f"recall@{args.k}_heldout"))
    print(f"locomo_recall@{args.k}={r['ours']} session_recall@{args.k}={sr} bm25={r['bm25']} dense={r['dense']} "
          f"mem0={r['mem0']} session_units@{args.k}={su} heldout_recall@{args.k}={ho}")
    return 0


if __name__ == "__main__":
    from benchmarks import exit_quietly

    exit_quietly(main())
