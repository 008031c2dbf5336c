"""Does the fine-tune survive into the GGUF and improve the score? Base vs tuned, on this CPU.

Trains a LoRA on Qwen2.5-Coder-0.5B-Instruct (dequantized from its PyPI GGUF) with the synthetic
pack, merges, exports GGUF (agreement of each quantization with f16 decides the one kept), then
serves the base and the tuned GGUF through the runtime's llama.cpp server path and scores both on
the tool-call, Markdown and memory-type suites. Base and tuned go through the same conversion and
the same quantization, so the difference is the adapter.

    .venv/bin/python -m benchmarks.finetune_eval [--max-steps 50] [--limit-markdown 12] [--temperatures 0 0.4]

Last line: `toolcall_base=<a> toolcall_tuned=<b>`.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

from truffle_assets.evals.cases import SUITE_VERSION, classification_cases, markdown_cases, toolcall_cases  # noqa: E402
from truffle_assets.evals.report import write_report  # noqa: E402
from truffle_assets.evals.runner import limit_cases, run_suites  # noqa: E402
from truffle_assets.llm.server import LlamaServer  # noqa: E402
from truffle_assets.training import gguf_export  # noqa: E402
from truffle_assets.training.artifacts import export_gguf  # noqa: E402
from truffle_assets.training.base_models import resolve_base  # noqa: E402
from truffle_assets.training.datasets import build_datasets, read_jsonl, write_dataset  # noqa: E402
from truffle_assets.training.pack import PACK_VERSION, generate_pack  # noqa: E402
from truffle_assets.chat_format.template import serving_template  # noqa: E402
from truffle_assets.training.trainer import LoraParams, merge, train  # noqa: E402

WORK = Path(__file__).resolve().parent / ".work" / "finetune"
OBJECTIVES = ("toolcall", "markdown", "classification")


def evaluate(gguf: Path, out: Path, temperatures: list[float], limits: dict[str, int | None], max_tokens: dict,
             reuse: bool = False) -> dict:
    """Scores of one GGUF; with `reuse`, a summary from an earlier run with the same settings is kept
    (the base model does not change between runs that vary the fine-tune)."""
    settings = {"gguf": gguf.name, "size": gguf.stat().st_size, "temperatures": temperatures, "limits": limits,
                "max_tokens": max_tokens, "suite_version": SUITE_VERSION}
    cached = out / "summary.json"
    if reuse and cached.exists() and json.loads(cached.read_text()).get("settings") == settings:
        print(f"  {gguf.name}: reusing {cached}", flush=True)
        return json.loads(cached.read_text())
    suites = {"toolcall": toolcall_cases(), "markdown": markdown_cases(), "classification": classification_cases()}
    suites = {name: limit_cases(cases, limits.get(name)) for name, cases in suites.items()}
    t0 = time.perf_counter()
    with LlamaServer(gguf, n_ctx=4096, log_path=out / "llama-server.log") as server:
        results, stats = run_suites(server.client(timeout=300, max_retries=0), server.alias, suites,
                                    temperatures=temperatures, max_tokens=max_tokens,
                                    progress=_progress(gguf.name))
    paths = write_report(results, out, meta={"gguf": gguf.name, "pack_version": PACK_VERSION})
    report = json.loads(Path(paths["json"]).read_text())
    stats.pop("cases", None)
    summary = {"scores": report["scores"], "stats": stats, "wall_s": round(time.perf_counter() - t0, 1), "settings": settings}
    cached.write_text(json.dumps(summary, indent=2, default=str))
    return summary


def _progress(name: str):
    def show(done: int, total: int, row: dict) -> None:
        if done % 20 == 0 or done == total:
            print(f"  {name}: {done}/{total} cases", flush=True)
    return show


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--max-steps", type=int, default=60)
    ap.add_argument("--seq-len", type=int, default=768)
    ap.add_argument("--rank", type=int, default=16)
    ap.add_argument("--lr", type=float, default=1e-3)
    # tool calls are the headline: all 120 cases; the long Markdown answers cost ~15 s each on this CPU
    ap.add_argument("--limit-toolcall", type=int, default=None)
    ap.add_argument("--limit-markdown", type=int, default=12)
    ap.add_argument("--limit-classification", type=int, default=40)
    ap.add_argument("--temperatures", type=float, nargs="+", default=[0.0])
    ap.add_argument("--probes", type=int, default=8)
    ap.add_argument("--fresh", action="store_true", help="retrain and re-evaluate the base even if cached")
    ap.add_argument("--grad-accum", type=int, default=1)
    # SFT rows per pack kind. A CPU run affords ~60 steps of batch 1: with the default pack only ~15 of
    # them are tool calls, and 50 steps of it learn prose answers and lose tool calls, so the default
    # weights tool calls up; "" = the pack's own sizes
    ap.add_argument("--pack", default="toolcall=120,grounded_answer=30,write_refusal=25,memory_type=30,"
                                      "privacy_refusal=25,question_card=15")
    args = ap.parse_args()
    t_all = time.perf_counter()
    WORK.mkdir(parents=True, exist_ok=True)
    max_tokens = {"toolcall": 96, "markdown": 200, "classification": 32}

    t0 = time.perf_counter()
    base_hf, pre = resolve_base("qwen2.5-coder-0.5b")
    print(f"base model ready in {time.perf_counter() - t0:.0f} s: {base_hf}", flush=True)

    sizes = dict(kv.split("=") for kv in args.pack.split(",")) if args.pack else {}
    sft, dpo = generate_pack({k: int(v) for k, v in sizes.items()} or None)
    build = build_datasets([], sft, dpo)
    write_dataset(build.sft_rows, WORK / "sft", "sft", {"pack_version": PACK_VERSION, "source_date_range": None})
    eval_rows = read_jsonl(WORK / "sft" / "eval.jsonl")
    probes = [r["messages"][:-1] for r in eval_rows[: args.probes]]
    smoke = next(r for r in eval_rows if r["kind"] == "toolcall")["messages"][:-1]

    # the base goes through exactly the tuned model's path: HF folder → f16 GGUF → q8_0
    base_gguf = WORK / "base" / "base-q8_0.gguf"
    if not base_gguf.exists():
        shutil.rmtree(WORK / "base", ignore_errors=True)
        (WORK / "base").mkdir(parents=True)
        merged_base = WORK / "base" / "merged"
        shutil.copytree(base_hf, merged_base)
        (merged_base / "chat_template.jinja").write_text(serving_template())
        f16 = gguf_export.convert(merged_base, WORK / "base" / "base-f16.gguf", "f16", pre_tokenizer=pre)
        gguf_export.quantize(f16, base_gguf, "q8_0")
        f16.unlink()
        shutil.rmtree(merged_base)

    tag = hashlib.sha256(args.pack.encode()).hexdigest()[:6]
    run = WORK / f"run-s{args.max_steps}-lr{args.lr:g}-r{args.rank}-ga{args.grad_accum}-p{tag}"  # one folder per setting
    if args.fresh:
        shutil.rmtree(run, ignore_errors=True)
    params = LoraParams(rank=args.rank, alpha=2 * args.rank, learning_rate=args.lr, max_steps=args.max_steps,
                        grad_accum=args.grad_accum,
                        seq_len=args.seq_len, target_modules=("q_proj", "k_proj", "v_proj", "o_proj",
                                                              "gate_proj", "up_proj", "down_proj"))
    result_path = run / "train_result.json"
    if result_path.exists() and (run / "adapter").exists():
        trained = json.loads(result_path.read_text())
    else:
        trained = train(base_hf, WORK / "sft", run, params,
                        progress=lambda step, total, loss: print(f"  step {step}/{total} loss {loss:.4f}", flush=True)).to_json()
    print(f"trained {trained['steps']} steps in {trained['wall_s']:.0f} s at {trained['tokens_per_s']} tokens/s; "
          f"loss {trained['losses'][0]} -> {trained['losses'][-1]}", flush=True)

    t0 = time.perf_counter()
    merged = merge(base_hf, run / "adapter", run / "merged", serving_template())
    exp = export_gguf(merged, run / "quants", probes, smoke, pre_tokenizer=pre, max_tokens=64)
    shutil.rmtree(merged)
    export_s = time.perf_counter() - t0
    print(f"export {export_s:.0f} s: selected {exp.selected}, agreement with f16 {exp.agreement_with_f16}, "
          f"smoke parses={exp.smoke_parses}", flush=True)
    # does the delta survive each quantization? a tuned file answering exactly like the base means it vanished
    base_out = gguf_export_outputs(base_gguf, probes)
    vanished = {q: round(gguf_export.agreement(outs, base_out), 3) for q, outs in exp.outputs.items()}
    print(f"agreement with the base (1.0 = fine-tune vanished): {vanished}", flush=True)

    scores = {}
    for name, gguf in (("base", base_gguf), ("tuned", Path(exp.selected_path))):
        limits = {"toolcall": args.limit_toolcall, "markdown": args.limit_markdown,
                  "classification": args.limit_classification}
        scores[name] = evaluate(gguf, WORK / f"eval-{name}", args.temperatures, limits, max_tokens,
                                reuse=name == "base" and not args.fresh)
        print(f"{name}: evaluated in {scores[name]['wall_s']:.0f} s", flush=True)

    print()
    print(f"{'objective':<16}{'temp':>6}{'base':>8}{'tuned':>8}")
    for t in scores["base"]["scores"]:
        for obj in OBJECTIVES:
            b = scores["base"]["scores"][t]["objectives"][obj]["score"]
            u = scores["tuned"]["scores"][t]["objectives"][obj]["score"]
            print(f"{obj:<16}{t:>6}{b:>8.3f}{u:>8.3f}")
    for name in ("base", "tuned"):
        st = scores[name]["stats"]
        print(f"{name} generation: {st.get('tokens_per_s')} tokens/s over {st.get('requests')} requests")
    print(f"train: {trained['steps']} steps, {trained['tokens_per_s']} tokens/s, {trained['wall_s']:.0f} s; "
          f"gguf export {export_s:.0f} s; total wall {time.perf_counter() - t_all:.0f} s")
    summary = {"scores": {k: v["scores"] for k, v in scores.items()}, "train": trained, "export": {
        "selected": exp.selected, "agreement_with_f16": exp.agreement_with_f16, "agreement_with_base": vanished,
        "sizes_mb": exp.sizes_mb}, "args": vars(args)}
    (WORK / "summary.json").write_text(json.dumps(summary, indent=2, default=str))
    t = next(iter(scores["base"]["scores"]))
    print(f"toolcall_base={scores['base']['scores'][t]['objectives']['toolcall']['score']:.3f} "
          f"toolcall_tuned={scores['tuned']['scores'][t]['objectives']['toolcall']['score']:.3f}")


def gguf_export_outputs(gguf: Path, prompts: list[list[dict]]) -> list[str]:
    from truffle_assets.training.artifacts import greedy_outputs

    return greedy_outputs(gguf, prompts, 64)


if __name__ == "__main__":
    main()
