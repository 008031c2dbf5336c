"""What the MCP server adds to a search: `search_memory` through MCP over stdio and over streamable
HTTP, beside `retrieve()` called directly, on the same memory and the same questions.

    .venv/bin/python benchmarks/mcp_bench.py                            # 5M tokens, 10 chats (built once, ~30 min)
    .venv/bin/python benchmarks/mcp_bench.py --tokens 20000 --queries 20   # a quick look

- Memory: the runtime benchmark's (`runtime_bench.build_memory`, cached under benchmarks/.work/runtime).
- Questions: `evals.truth_questions.build_queries` from the corpus's ground truth (the ones the
  privacy guard would refuse are left out), the same list for every side, after `--warmup` each.
- Sides, interleaved per question in a rotating order (so machine noise falls on all of them):
  `direct`: `retrieve(q, latest.json, k)` in this process; `stdio`: `truffle mcp` as a child
  process, reached with the official client's `stdio_client`; `http`: `truffle serve` as a child
  process (its model endpoint a closed port: search needs none), `/mcp` reached with the official
  `streamable_http_client`. Each side has a process of its own, so none reuses what another's
  retrieval of the same question left in memory. Both MCP sides run
  the catalog's `search_memory` with the same k (the executor's `retrieve` call plus its result
  model and redaction, the guard, the worker thread and JSON-RPC); transcripts are off, so neither
  writes to the store, as the direct call does not. Torch uses one thread in every process.
- Times are wall-clock per call as the caller sees it. overhead = MCP p95 / direct p95 - 1 (goal <= 10 %).

Last line: `retrieve_p95_ms=<a> mcp_stdio_p95_ms=<b> mcp_http_p95_ms=<c> overhead=<max %>`.
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
import time
import warnings
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("DAGSTER_TELEMETRY_DISABLED", "1")
os.environ.setdefault("TQDM_DISABLE", "1")

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from truffle_assets.evals.latency import percentile  # noqa: E402

SIDES = ("direct", "stdio", "http")


def summary(ms: list[float]) -> str:
    return f"p50 {percentile(ms, 50):7.1f} ms  p95 {percentile(ms, 95):7.1f} ms  mean {sum(ms) / len(ms):7.1f} ms"


def main(argv: list[str] | None = None) -> int:
    from benchmarks.runtime_bench import BIG_TOKENS, WORK

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--tokens", type=int, default=BIG_TOKENS)
    ap.add_argument("--chats", type=int, default=10)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--queries", type=int, default=100, help="questions measured per side")
    ap.add_argument("--warmup", type=int, default=5, help="questions run first on every side, not measured")
    ap.add_argument("--k", type=int, default=10, help="messages per search (what `retrieve` gives by default)")
    ap.add_argument("--fresh", action="store_true", help="rebuild the memory")
    ap.add_argument("--work", type=Path, default=WORK)
    args = ap.parse_args(argv)
    logging.basicConfig(level=logging.WARNING)
    for name in ("dagster", "lancedb", "httpx", "sentence_transformers"):
        logging.getLogger(name).setLevel(logging.WARNING)
    warnings.filterwarnings("ignore")

    import anyio
    import torch

    from benchmarks.mcp_client import http_session, serve_process, stdio_session
    from benchmarks.runtime_bench import build_memory
    from truffle_assets.evals.truth_questions import build_queries
    from truffle_assets.retrieval import open_index, retrieve
    from truffle_assets.runtime import privacy

    torch.set_num_threads(1)
    t0 = time.perf_counter()
    data, truth, _, built = build_memory(args.work, args.tokens, args.chats, args.seed, args.fresh)
    published = data / "published"
    pointer = published / "latest.json"
    print(f"memory: {data} ({'built' if built else 'cached'} in {time.perf_counter() - t0:.0f}s): "
          f"{truth['approx_tokens']:,} tokens, {len(truth['chats'])} chats")
    queries, dropped = build_queries(truth, args.warmup + args.queries, refuse=privacy.secret_request)
    print(f"questions: {args.queries} measured + {args.warmup} warm-up per side ({dropped} refused by the guard "
          f"left out), k={args.k}")

    store = args.work / "mcp-bench-store"
    env = {**os.environ, "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1", "TRUFFLE_HOME": str(args.work / "mcp-home")}
    common = ["--published", str(published), "--store", str(store), "--no-transcripts"]
    serve_args = ["serve", *common, "--base-url", "http://127.0.0.1:9/v1", "--model", "none"]
    open_index(pointer).embedder.encode_query("warm up")
    times: dict[str, list[float]] = {s: [] for s in SIDES}
    hits: dict[str, list[list[str]]] = {s: [] for s in SIDES}

    async def run(url: str) -> None:
        async with (stdio_session(common, env, args.work / "mcp-bench-stdio.log") as stdio,
                    http_session(url) as http):
            sessions = {"stdio": stdio, "http": http}
            for n, q in enumerate(queries):
                order = SIDES[n % 3:] + SIDES[: n % 3]
                for side in order:
                    t = time.perf_counter()
                    if side == "direct":
                        ids = [it.message_id for it in retrieve(q, pointer, k=args.k).items]
                    else:
                        res = await sessions[side].call_tool("search_memory", {"query": q, "k": args.k})
                        if res.isError:
                            raise RuntimeError(f"{side}: {res.content[0].text}")
                        ids = [m["message_id"] for m in res.structuredContent["messages"]]
                    ms = (time.perf_counter() - t) * 1000
                    if n >= args.warmup:
                        times[side].append(ms)
                        hits[side].append(ids)
                if n + 1 == args.warmup or (n + 1 - args.warmup) % 20 == 0:
                    print(f"  {n + 1 - args.warmup}/{args.queries} measured", flush=True)

    t_run = time.perf_counter()
    with serve_process(serve_args, env, args.work / "mcp-bench-serve.log") as url:
        anyio.run(run, url)
    same = sum(hits["direct"][i] == hits["stdio"][i] == hits["http"][i] for i in range(args.queries))
    print(f"\n{args.queries} questions x 3 sides in {time.perf_counter() - t_run:.0f}s; the same ranked ids on all "
          f"three sides for {same}/{args.queries}")
    for side in SIDES:
        print(f"  {side:<7} {summary(times[side])}")
    direct = percentile(times["direct"], 95)
    over = {s: percentile(times[s], 95) / direct - 1 for s in ("stdio", "http")}
    print(f"  p95 overhead over direct: stdio {over['stdio']:+.1%}, http {over['http']:+.1%} (goal <= +10 %)")
    print(f"retrieve_p95_ms={direct:.1f} mcp_stdio_p95_ms={percentile(times['stdio'], 95):.1f} "
          f"mcp_http_p95_ms={percentile(times['http'], 95):.1f} overhead={max(over.values()) * 100:.1f}%")
    return 0


if __name__ == "__main__":
    from benchmarks import exit_quietly

    exit_quietly(main())
