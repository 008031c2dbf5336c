"""Full offline memory build of the synthetic corpus, stage by stage, against embedding alone.

    .venv/bin/python benchmarks/ingest_bench.py                  # 5M tokens, 10 chats, seed 7
    .venv/bin/python benchmarks/ingest_bench.py --tokens 200000  # quick look

Every chat-day asset (messages → message_pii → message_streams → episodes → summaries → facts →
memory_index) runs its real asset code, invoked directly over each chat's whole day range with no
LLM endpoint (tier A only). Direct invocation skips Dagster's event log: with ~20K chat-day
partitions that bookkeeping (tens of ms per partition per asset on SQLite) would dominate, and it
is not ours to speed up; the ms per partition of a real materialization is measured separately
below on one chat for the record. Then, in the same process, the exact texts the index embedded
(message passages + summaries) are embedded again alone with the same Embedder.

Throughput is corpus tokens (chars/4 of the decoded chat text, as the generator counts) per second of
wall time. Last line: `ingest_tokens_per_s=<a> embed_only_tokens_per_s=<b> ratio=<a/b> peak_rss_mb=<m>`.

The memory it builds is kept where `runtime_bench.py` looks for it (benchmarks/.work/runtime/
mem-t<tokens>-c<chats>-s<seed>/, stamped like that script's own build), so the 5M-token memory is
embedded once for both benchmarks; `--discard` deletes it instead.
"""

import argparse
import json
import inspect
import os
import resource
import shutil
import sys
import time
from collections import defaultdict
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import dagster as dg  # noqa: E402
import lancedb  # noqa: E402

from benchmarks import exit_quietly, runtime_bench  # noqa: E402
from benchmarks.corpus import corpus  # noqa: E402
from truffle_assets import store  # noqa: E402
from truffle_assets.defs.memory.assets import profile  # noqa: E402
from truffle_assets.defs.partitions import chat_day_key, chat_range_tags, day_window  # noqa: E402
from truffle_assets.defs.pipeline import CHAT_DAY_ASSETS  # noqa: E402
from truffle_assets.defs.resources import (  # noqa: E402
    DuckDBStore, ExportsResource, IndexResource, LLMResource, PublishedResource,
)
from truffle_assets.exports import load_chat, scan_exports  # noqa: E402
from truffle_assets.planning import split_window  # noqa: E402


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def invoke(asset: dg.AssetsDefinition, context, resources: dict) -> dg.MaterializeResult:
    """Call the asset's own function with its resources and default config."""
    params = inspect.signature(asset.op.compute_fn.decorated_fn).parameters
    kwargs = {k: resources[k] for k in params if k in resources}
    if "config" in params:
        kwargs["config"] = params["config"].annotation()
    return asset(context, **kwargs) if "context" in params else asset(**kwargs)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--tokens", type=int, default=5_000_000)
    ap.add_argument("--chats", type=int, default=10)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--dagster-days", type=int, default=30, help="days of one chat materialized for real")
    ap.add_argument("--discard", action="store_true", help="delete the built memory instead of keeping it for runtime_bench")
    args = ap.parse_args()

    exports, truth, _ = corpus(args.tokens, args.chats, args.seed)
    tokens = truth["approx_tokens"]  # characters / 4 over the decoded chat text
    out = runtime_bench.mem_dir(runtime_bench.WORK, args.tokens, args.chats, args.seed)
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir(parents=True)
    res = {
        "exports": ExportsResource(exports_dir=str(exports), cache_dir=str(out / "cache"), user_name=truth["user"]),
        "duckdb": DuckDBStore(path=str(out / "memory.duckdb")),
        "llm": LLMResource(base_url=None, cache_dir=str(out / "cache" / "llm")),
        "index": IndexResource(root=str(out / "index")),
        "published": PublishedResource(dir=str(out / "published")),
    }
    os.environ.pop("TRUFFLE_LLM_BASE_URL", None)  # offline: tier A only
    instance = dg.DagsterInstance.ephemeral()
    found = scan_exports(exports)
    instance.add_dynamic_partitions("chats", sorted(found))
    ranges = {}
    for chat, paths in sorted(found.items()):
        days, _ = split_window(load_chat(chat, paths).days, day_window())
        ranges[chat] = (days[0], days[-1], len(days))
    partitions = sum(n for _, _, n in ranges.values())
    print(f"corpus: {exports.name}  tokens={tokens:,}  chats={len(found)}  chat-day partitions={partitions:,}")
    res["index"].open().embedder.model  # load the model before timing, as a long-running process would

    stage_s: dict[str, float] = defaultdict(float)
    t_all = time.perf_counter()
    for chat, (first, last, _) in ranges.items():
        rng = dg.PartitionKeyRange(str(chat_day_key(chat, first)), str(chat_day_key(chat, last)))
        for asset in CHAT_DAY_ASSETS:
            t0 = time.perf_counter()
            invoke(asset, dg.build_asset_context(partition_key_range=rng, instance=instance), res)
            stage_s[asset.key.to_user_string()] += time.perf_counter() - t0
        print(f"  {chat}: done at {time.perf_counter() - t_all:.0f}s, peak RSS {peak_rss_mb():.0f} MB", flush=True)
    t0 = time.perf_counter()
    invoke(profile, None, res)
    stage_s["profile"] = time.perf_counter() - t0
    pipeline_s = time.perf_counter() - t_all
    pipeline_rss = peak_rss_mb()

    with store.connect(res["duckdb"].path, read_only=True) as con:
        counts = {t: con.execute(f"SELECT count(*) FROM {t}").fetchall()[0][0]
                  for t in ("messages", "message_pii", "message_streams", "episodes", "summaries", "facts")}

    # The same texts, embedded alone by the same model and batch size.
    db = lancedb.connect(str(out / "index"))
    passages = db.open_table("raw_episodes_index").search().select(["passage"]).limit(None).to_arrow()["passage"].to_pylist()
    summ = db.open_table("episodic_summaries").search().select(["text"]).limit(None).to_arrow()["text"].to_pylist()
    embedder = res["index"].open().embedder
    t0 = time.perf_counter()
    embedder.encode(passages + summ)
    embed_s = time.perf_counter() - t0

    # Dagster's own cost per partition, on a real (ephemeral-instance) ranged run of one chat.
    chat = next(iter(ranges))
    first = ranges[chat][0]
    days = load_chat(chat, found[chat]).days
    last = days[min(len(days), args.dagster_days) - 1]
    n_days = sum(1 for d in days if first <= d <= last)
    real_res = {**res, "duckdb": DuckDBStore(path=str(out / "dagster-check.duckdb")),
                "index": IndexResource(root=str(out / "dagster-check-index")),
                "published": PublishedResource(dir=str(out / "dagster-check-published"))}
    t0 = time.perf_counter()
    run = dg.materialize(CHAT_DAY_ASSETS, instance=instance, resources=real_res, tags=chat_range_tags(chat, first, last))
    dagster_s = time.perf_counter() - t0

    print()
    print("| stage | seconds | share |")
    print("|---|---|---|")
    for name, s in stage_s.items():
        print(f"| {name} | {s:.1f} | {s / pipeline_s:.1%} |")
    print(f"| **pipeline total** | {pipeline_s:.1f} | |")
    print(f"| embedding alone ({len(passages) + len(summ):,} texts) | {embed_s:.1f} | |")
    print()
    print("rows:", counts)
    print(f"peak RSS after pipeline: {pipeline_rss:.0f} MB; after embedding alone: {peak_rss_mb():.0f} MB")
    print(f"real Dagster run of {chat} over {n_days} partitions × {len(CHAT_DAY_ASSETS)} assets: {dagster_s:.1f}s "
          f"({dagster_s / max(n_days, 1) / len(CHAT_DAY_ASSETS) * 1000:.0f} ms per partition per asset, success={run.success})")
    for extra in ("dagster-check.duckdb", "dagster-check-index", "dagster-check-published"):
        p = out / extra
        shutil.rmtree(p, ignore_errors=True) if p.is_dir() else p.unlink(missing_ok=True)
    if args.discard:
        shutil.rmtree(out, ignore_errors=True)
    else:
        info = {"stamp": runtime_bench.built_stamp(args.tokens, args.chats, args.seed), "corpus": str(exports),
                "ingest_s": round(pipeline_s, 1), "built_by": "benchmarks/ingest_bench.py (direct asset invocation)"}
        (out / ".built.json").write_text(json.dumps(info, indent=1))
        print(f"memory kept for runtime_bench.py: {out}")
    a, b = tokens / pipeline_s, tokens / embed_s
    print(f"ingest_tokens_per_s={a:.0f} embed_only_tokens_per_s={b:.0f} ratio={a / b:.2f} peak_rss_mb={pipeline_rss:.0f}")


if __name__ == "__main__":
    main()
    exit_quietly(0)
