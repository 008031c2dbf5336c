"""What a run launched from the UI pays to start its steps: this checkout against an earlier revision.

    .venv/bin/python -m benchmarks.step_processes --baseline HEAD~1          # ~3 min
    .venv/bin/python -m benchmarks.step_processes --baseline 059a7ca --reps 7

The daemon runs what the UI launches on the multiprocess executor: every step is a process of its
own that loads the code location (`truffle_assets.definitions`) before it does any work, and so
does every `truffle` command and the code server. Two figures, for this checkout and for
`--baseline` (checked out into a temporary `git worktree`, same venv), alternated so that the
machine's noise falls on both:
* **load**: `python -c "import truffle_assets.definitions"`, median of `--reps`, and which heavy
  libraries (spaCy, LanceDB, torch, sentence-transformers) it loaded;
* **run**: one chat × month range of the synthetic sample as a multiprocess job (seven steps, two at
  a time at most, as `chain_job` below) on a fresh SQLite instance holding the project's
  dagster.yaml: its wall time from launch to the run's end.

Last line: `load_s=<this> load_baseline_s=<b> run_s=<this> run_baseline_s=<b>`.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
HEAVY = ("spacy", "lancedb", "torch", "sentence_transformers")
LOAD = ("import json, sys, time; t = time.perf_counter(); import truffle_assets.definitions; "
        f"print(json.dumps([time.perf_counter() - t, [m for m in {HEAVY!r} if m in sys.modules]]))")


def chain_job():
    """The chat × month chain on the multiprocess executor with the resources `paths` gives for
    $TRUFFLE_HOME and the LLM endpoint TRUFFLE_LLM_* names (none: tier A only). Reconstructable: each
    step process imports this module (from the tree on PYTHONPATH, or the project's root as its working
    directory) and rebuilds it. The PostgreSQL instance tests run the same job."""
    import dagster as dg

    from truffle_assets import paths
    from truffle_assets.defs.pipeline import CHAT_MONTH_ASSETS, CHAT_MONTH_KEYS
    from truffle_assets.defs.resources import (
        DuckDBStore, ExportsResource, IndexResource, LLMResource, PublishedResource,
    )

    resources = {
        "exports": ExportsResource(exports_dir=str(paths.exports_dir()), cache_dir=str(paths.cache_dir())),
        "duckdb": DuckDBStore(path=str(paths.store_path())),
        "llm": LLMResource.from_env(cache_dir=str(paths.cache_dir() / "llm")),
        "index": IndexResource(root=str(paths.index_dir())),
        "published": PublishedResource(dir=str(paths.published_dir())),
    }
    job = dg.define_asset_job("chat_month_chain", selection=CHAT_MONTH_KEYS,
                              executor_def=dg.multiprocess_executor.configured({"max_concurrent": 2}))
    return dg.Definitions(assets=CHAT_MONTH_ASSETS, resources=resources, jobs=[job]).resolve_job_def("chat_month_chain")


def launch(chat: str, month: str) -> None:
    """Run `chat`'s `month` as the multiprocess job on $DAGSTER_HOME's instance (in the tree's own process)."""
    from datetime import date

    import dagster as dg

    from truffle_assets.defs.partitions import chat_range_tags, chats

    first = date.fromisoformat(month + "-01")
    with dg.DagsterInstance.get() as instance:
        instance.add_dynamic_partitions(chats.name, [chat])
        with dg.execute_job(dg.reconstructable(chain_job), instance=instance,
                            tags=chat_range_tags(chat, first, first, recompute=True)) as result:
            assert result.success, chat


def _env(tree: Path, home: Path | None = None) -> dict:
    env = {**os.environ, "PYTHONPATH": str(tree), "HF_HUB_OFFLINE": "1"}
    for var in ("TRUFFLE_LLM_BASE_URL", "OPENROUTER_API_KEY", "TRUFFLE_CRASH_AT"):
        env.pop(var, None)
    if home is not None:
        dagster_home = home / "dagster_home"
        dagster_home.mkdir(parents=True)
        shutil.copy(ROOT / "dagster.yaml", dagster_home / "dagster.yaml")
        env |= {"TRUFFLE_HOME": str(home), "DAGSTER_HOME": str(dagster_home)}
    return env


def load(tree: Path) -> tuple[float, list[str]]:
    out = subprocess.run([sys.executable, "-c", LOAD], cwd=tree, env=_env(tree), capture_output=True, text=True,
                         check=True)
    seconds, heavy = json.loads(out.stdout)
    return seconds, heavy


def run(tree: Path, exports: Path, chat: str, month: str) -> float:
    home = Path(tempfile.mkdtemp(prefix="truffle-steps-"))
    try:
        shutil.copytree(exports, home / "exports")
        code = f"from benchmarks.step_processes import launch; launch({chat!r}, {month!r})"
        t0 = time.perf_counter()
        subprocess.run([sys.executable, "-c", code], cwd=tree, env=_env(tree, home), check=True,
                       capture_output=True, text=True)
        return time.perf_counter() - t0
    finally:
        shutil.rmtree(home, ignore_errors=True)


def sample(where: Path) -> tuple[Path, str, str]:
    """A one-chat sample export set; (folder, chat id, its busiest month)."""
    from collections import Counter

    from truffle_assets.ingest.exports import scan_exports
    from truffle_assets.parsing.parser import parse_file
    from truffle_assets.synth import write_corpus

    write_corpus(where, chats=1, tokens=6_000, seed=7)
    ((chat, (path, *_)),) = scan_exports(where).items()
    month = Counter(f"{ts:%Y-%m}" for ts in parse_file(path).frame["ts"]).most_common(1)[0][0]
    return where, chat, month


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--baseline", required=True, help="a git revision to compare against")
    ap.add_argument("--reps", type=int, default=5, help="code-location loads per tree")
    ap.add_argument("--runs", type=int, default=1, help="multiprocess runs per tree")
    args = ap.parse_args(argv)

    work = Path(tempfile.mkdtemp(prefix="truffle-step-bench-"))
    base = work / "baseline"
    subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach", str(base), args.baseline],
                   check=True, capture_output=True)
    try:
        # the baseline may predate this script: its steps import `chain_job` from the same file
        (base / "benchmarks" / "step_processes.py").write_text((ROOT / "benchmarks" / "step_processes.py").read_text())
        trees = {"this": ROOT, "baseline": base}
        loads: dict[str, list[float]] = {k: [] for k in trees}
        heavy: dict[str, list[str]] = {}
        for _ in range(args.reps):
            for name, tree in trees.items():
                s, h = load(tree)
                loads[name].append(s)
                heavy[name] = h
        exports, chat, month = sample(work / "exports")
        runs: dict[str, list[float]] = {k: [] for k in trees}
        for _ in range(args.runs):
            for name, tree in trees.items():
                runs[name].append(run(tree, exports, chat, month))
    finally:
        subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(base)], capture_output=True)
        shutil.rmtree(work, ignore_errors=True)

    med = {k: statistics.median(v) for k, v in loads.items()}
    rmed = {k: statistics.median(v) for k, v in runs.items()}
    print(json.dumps({"baseline": args.baseline, "load_s": loads, "heavy_loaded": heavy, "run_s": runs,
                      "chat": chat, "month": month}, indent=1))
    print(f"code location load: {med['this']:.2f} s here, {med['baseline']:.2f} s at {args.baseline} "
          f"({med['baseline'] / med['this']:.1f}x)")
    print(f"one chat-month multiprocess run: {rmed['this']:.1f} s here, {rmed['baseline']:.1f} s at {args.baseline}")
    print(f"load_s={med['this']:.2f} load_baseline_s={med['baseline']:.2f} "
          f"run_s={rmed['this']:.1f} run_baseline_s={rmed['baseline']:.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
