"""Fit the learned retrieval fusion on the synthetic corpus; pick the hand fusion's new weights there too.

    .venv/bin/python scripts/fit_fusion.py                 # build (or reuse) the stores, fit, write
    .venv/bin/python scripts/fit_fusion.py --rebuild       # after an index-time change

Never LoCoMo: LoCoMo is the evaluation (benchmarks/locomo_recall.py). Data here:
1. `--seeds` synthetic corpora (`truffle_assets.synth`, cached by `evals.synthetic_corpus`; `--tokens`,
   `--chats`), each ingested through the pipeline entry `ingest_all` (ephemeral Dagster instance, no
   LLM) into benchmarks/.work/fusion/s<seed>/, the way locomo_recall builds its stores.
2. Questions from each corpus's ground truth: per planted fact whose evidence messages are in the
   store, the fact as stated and four questions about it (TEMPLATES); gold = the fact's messages.
3. Split by fact kind (the same 27 kinds recur in every seed with other values): every third kind,
   in sorted order, is held out; the fit and the weight grid see only the other kinds.
4. Per question, `candidate_signals` gives the candidate pool and its signals once; fusions are then
   re-scored offline on that pool (episode blend and ranking as in `retrieve`).
   * `learned`: logistic regression (scikit-learn, L2, C=1) of "candidate is evidence" on
     `fusion.features` over the training questions' pools; written to
     truffle_assets/retrieval/fusion_weights.json with the data it was fitted on and its scores.
   Held-out recall@10 is printed for `plain` (RetrievalWeights.plain(), asked through `retrieve`),
   the chosen `score` weights and `learned`.
   * `score` grid: the hand fusion with `keys`, `answer` weights (GRID), episode blend (EPISODE) and
     per-episode cap (PER_EPISODE), best on the training split (ties: smaller weights, default blend,
     no cap); `learned` gets the same blend/cap choice on the training split.
`--reuse-pools` re-fits on the pools the last run saved (pickled under the work folder).
Last line: `fusion_heldout_recall@10 plain=<b> default=<d> score=<s> learned=<l>` (`default`: the
RetrievalWeights `retrieve` ships with, re-scored on the same pools).
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import itertools
import json
import os
import pickle
import statistics
import sys
import time
import warnings
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

# the offline build: no model hub, no telemetry, no LLM endpoint for the memory tiers
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("DAGSTER_TELEMETRY_DISABLED", "1")
for _var in ("TRUFFLE_LLM_BASE_URL", "TRUFFLE_LLM_MODEL", "TRUFFLE_LLM_API_KEY", "OPENROUTER_API_KEY"):
    os.environ.pop(_var, None)

import numpy as np  # noqa: E402

from truffle_assets.evals.synthetic_corpus import cached_corpus  # noqa: E402

WORK = ROOT / "benchmarks" / ".work" / "fusion"
K = 10
TEMPLATES = ("{fact}", "What is my {pred}?", "When did we talk about {value}?", "Who told me about {value}?",
             "What did {by} say about {value}?")
GRID = (0.0, 0.2, 0.4, 0.6)
EPISODE = (0.0, 0.4)  # 0.4 = the default episode blend
PER_EPISODE = (0, 2, 3)


def picked(w) -> dict:
    return {f: getattr(w, f) for f in ("fusion", "keys", "answer", "episode", "per_episode")}


def build(seed: int, tokens: int, chats: int, work: Path, rebuild: bool) -> tuple[Path, dict]:
    """(published latest.json, ground truth) of one synthetic corpus ingested through the pipeline."""
    import dagster as dg

    from truffle_assets.defs.ingest.runner import ingest_all
    from truffle_assets.defs.resources import LLMResource

    src, truth, _ = cached_corpus(work / f"corpus-t{tokens}-c{chats}-s{seed}", tokens, chats, seed)
    data = work / f"s{seed}"
    pointer = data / "published" / "latest.json"
    stamp = hashlib.sha256((src / ".stamp").read_bytes() + f"{tokens}/{chats}".encode()).hexdigest()[:16]
    if pointer.is_file() and (data / ".stamp").is_file() and (data / ".stamp").read_text() == stamp and not rebuild:
        return pointer, truth
    if data.exists():
        import shutil

        shutil.rmtree(data)
    data.mkdir(parents=True)
    with (data / "pipeline.log").open("w") as f, contextlib.redirect_stderr(f):
        report = ingest_all(src, data / "memory.duckdb", user_name=truth["user"], instance=dg.DagsterInstance.ephemeral(),
                            cache_dir=data / "cache", full=True, llm=LLMResource(cache_dir=str(data / "cache" / "llm")))
    if report["failed"] or not pointer.is_file():
        raise RuntimeError(f"seed {seed}: pipeline failed (see {data / 'pipeline.log'})")
    (data / ".stamp").write_text(stamp)
    return pointer, truth


def questions(truth: dict, present: set[str]) -> list[dict]:
    user = truth.get("user") or ""
    out = []
    for f in truth.get("facts", []):
        gold = [m for m in f.get("message_ids") or [] if m in present]
        if not gold:
            continue
        by = next((s for s in f.get("stated_by") or [] if s != user), None) or "someone"
        slots = {"fact": f["fact_text"], "pred": str(f.get("predicate", "")).replace("_", " "),
                 "value": f.get("value", ""), "by": by}
        for t in TEMPLATES:
            out.append({"fact": f["id"], "question": t.format(**slots), "gold": gold})
    return out


def present_ids(pointer: Path) -> set[str]:
    from truffle_assets.index.lance import RAW_TABLE
    from truffle_assets.retrieval import open_index

    raw = open_index(pointer).table(RAW_TABLE)
    return set(raw.search().select(["message_id"]).limit(None).to_arrow()["message_id"].to_pylist())


def recall(ranked: list[str], gold: list[str], k: int = K) -> float:
    top = set(ranked[:k])
    return sum(g in top for g in gold) / len(gold)


def ranked_ids(pool: dict, weights) -> list[str]:
    """Offline `retrieve` on a stored pool: fuse, episode blend, top K (no MMR: lambda 1)."""
    from truffle_assets.retrieval.fusion import blend_episode_best, fuse, rank

    fused = blend_episode_best(fuse(pool["sig"], weights), pool["episodes"], weights.episode)
    return [pool["ids"][j] for j in rank(fused, None, K, 1.0, pool["episodes"], weights.per_episode)]


def mean_recall(pools: list[dict], weights) -> float:
    return statistics.fmean(recall(ranked_ids(p, weights), p["gold"]) for p in pools) if pools else 0.0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seeds", default="101,102,103")
    ap.add_argument("--tokens", type=int, default=20_000)
    ap.add_argument("--chats", type=int, default=3)
    ap.add_argument("--work", default=str(WORK))
    ap.add_argument("--rebuild", action="store_true", help="re-ingest even when a store is up to date")
    ap.add_argument("--reuse-pools", action="store_true",
                    help="re-fit on the pools saved by the last run (only fusion/grid code changed)")
    ap.add_argument("--out", default=None, help="weights file (default: the package's fusion_weights.json)")
    args = ap.parse_args(argv)
    warnings.filterwarnings("ignore")
    import torch
    from sklearn.linear_model import LogisticRegression

    from truffle_assets.retrieval import RetrievalWeights, candidate_signals, open_index, retrieve
    from truffle_assets.retrieval.fusion import FEATURES, LEARNED, features

    torch.set_num_threads(1)
    work = Path(args.work)
    seeds = [int(s) for s in args.seeds.split(",")]
    pools: list[dict] = []
    t0 = time.perf_counter()
    cache = work / f"pools-{args.seeds.replace(',', '_')}-t{args.tokens}-c{args.chats}.pkl"
    if args.reuse_pools and cache.is_file():
        pools = pickle.loads(cache.read_bytes())
        seeds = []
    for seed in seeds:
        tb = time.perf_counter()
        pointer, truth = build(seed, args.tokens, args.chats, work, args.rebuild)
        idx = open_index(pointer)
        qs = questions(truth, present_ids(pointer))
        tb2 = time.perf_counter()
        for q in qs:
            rows, sig = candidate_signals(q["question"], idx, RetrievalWeights(fusion="learned"))
            if not rows:
                continue
            plain = retrieve(q["question"], idx, k=K, weights=RetrievalWeights.plain()).message_ids
            pools.append({**q, "seed": seed, "ids": [r["message_id"] for r in rows],
                          "episodes": [r["episode_id"] for r in rows], "sig": sig, "plain": plain})
        print(f"seed {seed}: {len(qs)} questions, store {tb2 - tb:.0f}s, pools {time.perf_counter() - tb2:.0f}s",
              flush=True)

    if seeds:
        cache.write_bytes(pickle.dumps(pools))
    kinds = sorted({p["fact"] for p in pools})
    held = set(kinds[2::3])
    train = [p for p in pools if p["fact"] not in held]
    test = [p for p in pools if p["fact"] in held]
    print(f"{len(pools)} questions: {len(train)} train ({len(kinds) - len(held)} fact kinds), "
          f"{len(test)} held out ({len(held)} kinds: {', '.join(sorted(held))})")

    # hand fusion: keys/answer weights, episode blend and per-episode cap picked on the training split
    grid = []
    for kw, aw, ep, cap in itertools.product(GRID, GRID, EPISODE, PER_EPISODE):
        w = RetrievalWeights(keys=kw, answer=aw, episode=ep, per_episode=cap)
        grid.append((round(mean_recall(train, w), 4), -(kw + aw), ep == RetrievalWeights().episode, -cap, w))
    score_w = max(grid, key=lambda g: g[:4])[-1]
    for g in sorted(grid, key=lambda g: g[:4], reverse=True)[:5]:
        print(f"  score {picked(g[-1])}: train recall@{K} {g[0]:.3f}")

    # learned fusion: logistic regression over the training pools' candidates
    X = np.concatenate([features(p["sig"]) for p in train])
    y = np.concatenate([[1 if m in set(p["gold"]) else 0 for m in p["ids"]] for p in train])
    model = LogisticRegression(C=1.0, max_iter=2000).fit(X, y)
    out = Path(args.out) if args.out else LEARNED
    spec = {"features": list(FEATURES), "coef": [round(float(c), 6) for c in model.coef_[0]],
            "intercept": round(float(model.intercept_[0]), 6), "model": "logistic regression, L2, C=1",
            "fitted_on": {"corpus": "truffle_assets.synth", "seeds": seeds, "tokens": args.tokens, "chats": args.chats,
                          "train_questions": len(train), "candidates": int(len(y)), "positives": int(y.sum()),
                          "held_out_fact_kinds": sorted(held)}}
    out.write_text(json.dumps(spec, indent=1) + "\n")
    from truffle_assets.retrieval.fusion import learned_model

    learned_model.cache_clear()

    lgrid = [(round(mean_recall(train, w), 4), ep == RetrievalWeights().episode, -cap, w)
             for ep, cap in itertools.product(EPISODE, PER_EPISODE)
             for w in [RetrievalWeights(fusion="learned", episode=ep, per_episode=cap)]]
    learned_w = max(lgrid, key=lambda g: g[:3])[-1]
    res = {
        "plain": statistics.fmean(recall(p["plain"], p["gold"]) for p in test) if test else 0.0,
        "default": mean_recall(test, RetrievalWeights()),  # what retrieve() ships with
        "score": mean_recall(test, score_w),
        "learned": mean_recall(test, learned_w),
    }
    res_train = {"default": mean_recall(train, RetrievalWeights()),
                 "score": mean_recall(train, score_w), "learned": mean_recall(train, learned_w),
                 "plain": statistics.fmean(recall(p["plain"], p["gold"]) for p in train)}
    spec["heldout_recall@10"] = {k: round(v, 4) for k, v in res.items()}
    spec["train_recall@10"] = {k: round(v, 4) for k, v in res_train.items()}
    spec["score_weights_picked"] = picked(score_w)
    spec["learned_weights_picked"] = picked(learned_w)
    out.write_text(json.dumps(spec, indent=1) + "\n")
    print("coefficients: " + ", ".join(f"{f}={c:+.2f}" for f, c in zip(FEATURES, model.coef_[0]))
          + f", intercept={model.intercept_[0]:+.2f}")
    print(f"train recall@{K}: " + " ".join(f"{k}={v:.3f}" for k, v in res_train.items()))
    print(f"weights: {out} ({time.perf_counter() - t0:.0f}s)")
    print(f"score: {picked(score_w)}; learned: {picked(learned_w)}")
    print(f"fusion_heldout_recall@{K} plain={res['plain']:.3f} default={res['default']:.3f} "
          f"score={res['score']:.3f} learned={res['learned']:.3f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
