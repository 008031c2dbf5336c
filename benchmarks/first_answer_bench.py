"""Time to a newcomer's first answer: a fresh data root and instance, the real `truffle ingest`, one recall.

    .venv/bin/python benchmarks/first_answer_bench.py                       # the `truffle up` sample set
    .venv/bin/python benchmarks/first_answer_bench.py --chats 2 --tokens 20000   # quick look

In a temporary `$TRUFFLE_HOME` and a fresh SQLite `$DAGSTER_HOME` (what a newcomer gets), it writes
the sample export set, runs the real `truffle ingest` (real Dagster runs on the local instance, not
asset functions called directly) and then one `truffle recall`, each as a subprocess, timed from
the outside. In the same run it embeds the texts the index holds alone, with the same model, as
the floor no ingest can beat, and replays the ingest's runs with every asset body empty
(benchmarks/dagster_floor.py): what Dagster alone costs for those runs. From the instance's event
log it splits each step into compute (step start to its first materialization event) and Dagster bookkeeping (the rest of the step: one
planned and one materialized event per partition, and the run launch around the steps).

`first_chat_s` is when the published pointer first named a chat, watched from outside during the
ingest: the moment `truffle up` starts the chat server and the first chat answers. `runs` counts
the chat runs (the profile's run comes on top).

Last line: `first_recall_s=<s> embed_only_s=<e> ratio=<e/s> dagster_share=<share> runs=<n> chats=<n>
first_chat_s=<s>` (goals: ratio ≥ 0.6, dagster_share ≤ 0.15, runs = chats, first_chat_s ≤ 120).
"""

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
TRUFFLE = str(Path(sys.executable).with_name("truffle"))
QUESTION = "when is the birthday party?"


def timed(cmd: list[str], env: dict, first_chat: Path | None = None
          ) -> tuple[float, subprocess.CompletedProcess, float | None]:
    """`cmd`'s wall time, its result and, with `first_chat` (a published pointer), the seconds until it
    first named a chat: the moment `truffle up` opens the chat (None if it never did)."""
    t0 = time.perf_counter()
    seen: list[float] = []
    done = threading.Event()

    def watch() -> None:
        while not done.wait(0.25):
            try:
                if json.loads(first_chat.read_text()).get("watermarks"):
                    seen.append(time.perf_counter() - t0)
                    return
            except (OSError, ValueError):
                pass

    watcher = threading.Thread(target=watch, daemon=True) if first_chat else None
    if watcher:
        watcher.start()
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True)
    took = time.perf_counter() - t0
    done.set()
    if proc.returncode != 0:
        sys.exit(f"{' '.join(cmd[1:3])} failed ({proc.returncode}):\n{proc.stderr[-3000:]}")
    return took, proc, (seen or [None])[0]


def step_split(dagster_home: Path) -> dict:
    """Seconds of asset compute vs Dagster bookkeeping over every run in the instance."""
    os.environ["DAGSTER_HOME"] = str(dagster_home)
    import dagster as dg

    from benchmarks.event_log import event_split

    split = event_split(dg.DagsterInstance.get())
    return {"runs": split["runs"], "events": split["events"], "materializations": split["materializations"],
            "runs_wall_s": sum(split["run_walls"]), "steps_s": sum(split["step_s"].values()),
            "compute_s": sum(split["compute_s"].values()), "per_asset_compute_s": split["compute_s"],
            "median_run_overhead_s": statistics.median(split["run_overheads"]) if split["run_overheads"] else 0.0}


def embed_alone(home: Path) -> tuple[float, int]:
    """The distinct texts the index embedded (message passages + summaries), embedded again alone."""
    import lancedb

    from truffle_assets.index.embedder import Embedder

    db = lancedb.connect(str(home / "index"))
    texts = db.open_table("raw_episodes_index").search().select(["passage"]).limit(None).to_arrow()["passage"].to_pylist()
    texts += db.open_table("episodic_summaries").search().select(["text"]).limit(None).to_arrow()["text"].to_pylist()
    texts = list(dict.fromkeys(texts))  # the index embeds a repeated text once: so does the floor
    embedder = Embedder()
    embedder.encode(["warm up"])  # model load is not embedding work: the ingest loads it once too
    t0 = time.perf_counter()
    embedder.encode(texts)
    return time.perf_counter() - t0, len(texts)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--chats", type=int, default=10, help="sample chats (truffle up writes 10)")
    ap.add_argument("--tokens", type=int, default=400_000, help="sample size (truffle up writes 400K)")
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--keep", action="store_true", help="keep the temporary data root and instance")
    args = ap.parse_args()

    tmp = Path(tempfile.mkdtemp(prefix="truffle-first-answer-"))
    home, dagster_home = tmp / "home", tmp / "dagster_home"
    dagster_home.mkdir(parents=True)
    shutil.copy(ROOT / "dagster.yaml", dagster_home / "dagster.yaml")
    env = {**os.environ, "TRUFFLE_HOME": str(home), "DAGSTER_HOME": str(dagster_home), "HF_HUB_OFFLINE": "1"}
    for var in ("TRUFFLE_LLM_BASE_URL", "OPENROUTER_API_KEY"):  # a newcomer's offline default
        env.pop(var, None)

    synth_s, _, _ = timed([TRUFFLE, "synth", "--out", str(home / "exports"), "--chats", str(args.chats),
                        "--tokens", str(args.tokens), "--seed", str(args.seed)], env)
    ingest_s, proc, first_chat_s = timed([TRUFFLE, "ingest", "--json"], env, first_chat=home / "published" / "latest.json")
    report = json.loads(proc.stdout)
    recall_s, proc, _ = timed([TRUFFLE, "recall", QUESTION, "--json"], env)
    hits = len(json.loads(proc.stdout).get("items", []))
    first_recall_s = ingest_s + recall_s

    split = step_split(dagster_home)
    embed_s, n_texts = embed_alone(home)
    from benchmarks.dagster_floor import floor

    dagster_floor = floor(report)  # the same ranges with every asset body empty: what Dagster alone costs
    dagster_share = 1 - split["compute_s"] / ingest_s

    messages = sum(sum(r.get("rows", 0) for r in c.get("runs", [])) for c in report["chats"].values())
    print(f"sample: {args.chats} chats, {args.tokens:,} tokens, {messages:,} messages; {n_texts:,} texts in the index")
    print(f"synth {synth_s:.1f} s (not counted)")
    print("| stage | seconds |\n|---|---|")
    print(f"| truffle ingest (wall) | {ingest_s:.1f} |")
    print(f"| truffle recall (wall, {hits} hits) | {recall_s:.1f} |")
    print(f"| Dagster runs: {split['runs']}, events: {split['events']:,}, materializations: "
          f"{split['materializations']:,} | run wall {split['runs_wall_s']:.1f} |")
    print(f"| per run outside its steps (median) | {split['median_run_overhead_s']:.2f} |")
    print(f"| steps | {split['steps_s']:.1f} |")
    print(f"| asset compute (step start → first materialization) | {split['compute_s']:.1f} |")
    for step, s in sorted(split["per_asset_compute_s"].items(), key=lambda kv: -kv[1])[:8]:
        print(f"|   {step} | {s:.1f} |")
    print(f"| embedding alone | {embed_s:.1f} |")
    print(f"| the same {dagster_floor['runs']} runs with empty asset bodies (Dagster alone) | {dagster_floor['seconds']:.1f} |")
    best = embed_s + dagster_floor["seconds"] + recall_s  # no asset work but the embedding, on this Dagster floor
    print(f"ceiling with zero asset work but the embedding: ratio={embed_s / best:.3f} "
          f"dagster_share={dagster_floor['seconds'] / best:.3f}")
    if args.keep:
        print(f"kept: {tmp}")
    else:
        shutil.rmtree(tmp, ignore_errors=True)
    chat_runs = sum(len(c.get("runs", [])) for c in report["chats"].values())
    print(f"first_recall_s={first_recall_s:.1f} embed_only_s={embed_s:.1f} ratio={embed_s / first_recall_s:.3f} "
          f"dagster_share={dagster_share:.3f} runs={chat_runs} chats={len(report['chats'])} "
          f"first_chat_s={first_chat_s if first_chat_s is None else round(first_chat_s, 1)}")
    from benchmarks import exit_quietly

    exit_quietly(0)


if __name__ == "__main__":
    main()
