"""Training stage: datasets → LoRA adapter → merged model → GGUF → Modelfile → model card.

Not partitioned: a training run reads every rated turn in its date window plus the synthetic pack.
Model files live on disk (`ModelsResource`), never in an IO manager; the candidate run folder ties
the stages together.
"""

import json
import os
import shutil
import time
from pathlib import Path

import dagster as dg

from truffle_assets.defs.feedback.assets import feedback, transcripts
from truffle_assets.defs.metadata import png_md
from truffle_assets.defs.resources import ModelsResource
from truffle_assets.files import json_text
from truffle_assets.training import datasets as ds
from truffle_assets.training.pack import PACK_VERSION, generate_pack
from truffle_assets.training.params import LoraParams
from truffle_assets.feedback.turns import read_store
from truffle_assets.forget.runtime_purge import forgotten_turns

TRAINING = {"group_name": "training"}


class DatasetConfig(dg.Config):
    eval_percent: int = 10
    since: str | None = None  # YYYY-MM-DD window over the runtime's transcript days
    until: str | None = None
    include_pack: bool = True
    pack_seed: int = 0
    pack_sizes: dict[str, int] = {}  # SFT rows per pack kind; empty = the pack's defaults


def _build(config: DatasetConfig, models: ModelsResource) -> tuple[ds.DatasetBuild, dict]:
    read = read_store(models.runtime_dir, since=config.since, until=config.until)
    sft, dpo = generate_pack(config.pack_sizes or None, seed=config.pack_seed, eval_percent=config.eval_percent) \
        if config.include_pack else ([], [])
    forgotten = forgotten_turns(models.runtime_dir, since=config.since, until=config.until)
    build = ds.build_datasets(read.turns, sft, dpo, eval_percent=config.eval_percent, forgotten=forgotten)
    days = sorted(t.day for t in read.turns)
    meta = {"pack_version": PACK_VERSION if config.include_pack else None,
            "source_date_range": [days[0], days[-1]] if days else None,
            "torn_lines": len(read.torn_lines)}
    return build, meta


def _dataset_result(kind: str, build: ds.DatasetBuild, meta: dict, models: ModelsResource) -> dg.MaterializeResult:
    rows = build.sft_rows if kind == "sft" else build.dpo_rows
    out = models.dataset_dir(kind)
    manifest = ds.write_dataset(rows, out, kind, {**meta, "dropped": build.dropped(kind)})
    invalid = [i for i in build.invalid if i.kind == kind]
    counts = manifest.row_counts
    return dg.MaterializeResult(
        metadata={
            "dagster/row_count": counts.train + counts.eval,
            "dagster/uri": f"file://{out}",
            "train_rows": counts.train,
            "eval_rows": counts.eval,
            "rows_by_kind": dg.MetadataValue.json(counts.by_kind),
            "rows_by_source": dg.MetadataValue.json(counts.by_source),
            "content_hash": manifest.content_hash,
            "schema_version": manifest.schema_version,
            "pack_version": str(manifest.pack_version),
            "source_date_range": dg.MetadataValue.json(manifest.source_date_range),
            "build_stats": dg.MetadataValue.json(vars(build.stats)),
            "dropped": dg.MetadataValue.json(manifest.dropped),
        },
        check_results=[dg.AssetCheckResult(
            check_name=f"{kind}_rows_valid", passed=not invalid,
            metadata={"invalid_rows": len(invalid),
                      "reasons": dg.MetadataValue.json([i.reason for i in invalid[:20]])},
        )],
    )


@dg.asset(
    **TRAINING,
    deps=[transcripts, feedback],
    kinds={"jsonl"},
    check_specs=[dg.AssetCheckSpec("sft_rows_valid", asset="sft_dataset", blocking=True,
                                   description="Every row matches the SFT schema; invalid rows block training.")],
    description=(
        "Supervised rows: rated runtime turns (thumbs-down, redacted/denied principals and forgotten turns dropped, "
        "counted in the manifest's `dropped`) plus the "
        "versioned synthetic pack; train.jsonl / eval.jsonl split by hash of the source id, and manifest.json "
        "(row counts, source dates, schema version, content hash) that the trainer verifies before it starts."
    ),
)
def sft_dataset(config: DatasetConfig, models: ModelsResource) -> dg.MaterializeResult:
    build, meta = _build(config, models)
    return _dataset_result("sft", build, meta, models)


@dg.asset(
    **TRAINING,
    deps=[transcripts, feedback],
    kinds={"jsonl"},
    check_specs=[dg.AssetCheckSpec("dpo_rows_valid", asset="dpo_dataset", blocking=True,
                                   description="Every preference triple matches the DPO schema.")],
    description=(
        "Preference triples (prompt, chosen, rejected) for DPO and ORPO: re-rolls where one answer was rated "
        "above the other, plus the pack's realistic failures (prose around tool calls, fences, leaked secrets)."
    ),
)
def dpo_dataset(config: DatasetConfig, models: ModelsResource) -> dg.MaterializeResult:
    build, meta = _build(config, models)
    return _dataset_result("dpo", build, meta, models)


class LoraConfig(LoraParams, dg.Config):
    """The trainer's `LoraParams` (fields and defaults) plus what only a Dagster run chooses."""

    base_model: str = "qwen2.5-coder-0.5b"  # or "tiny" (tests), a local HF folder, or an HF id
    backend: str = "auto"  # auto = Unsloth when CUDA and the `gpu` extra are there, else TRL + PEFT
    resume: bool = True
    sft_from: str | None = None  # an earlier run id: start from its SFT checkpoints (same base, rows, settings)
    dpo_from: str | None = None  # an earlier run id: a second DPO stage on its finished adapter (no SFT)
    # ["RUN:WEIGHT", ...]: no training; the weighted average of those runs' adapters (`training.blend`)
    blend: list[str] = []


def base_for(config_base: str, models: ModelsResource, sft_dir: Path) -> tuple[str, str | None]:
    """(trainable base folder, llama.cpp pre-tokenizer override) for the configured base model."""
    if config_base == "tiny":
        from truffle_assets.training.tiny import LLAMA_CPP_PRE, build_tiny_model

        rows = ds.read_jsonl(sft_dir / "train.jsonl")
        texts = [m["content"] for r in rows for m in r["messages"]]
        return str(build_tiny_model(Path(models.root) / "tiny-base", texts)), LLAMA_CPP_PRE
    from truffle_assets.training.base_models import resolve_base

    base, pre = resolve_base(config_base)  # the base is assembled once, shared by every data root
    return str(base), pre


@dg.asset(
    **TRAINING,
    deps=[sft_dataset, dpo_dataset],
    kinds={"pytorch", "peft"},
    code_version="1",
    description=(
        "LoRA adapter trained with TRL SFTTrainer (then optional DPOTrainer) + PEFT on CPU, or Unsloth when a "
        "CUDA GPU is present. Fails fast on 0 trainable params, unmatched target modules or fully masked rows; "
        "checkpoints let an interrupted run resume. Starts a new candidate run folder."
    ),
)
def lora_adapter(context: dg.AssetExecutionContext, config: LoraConfig, models: ModelsResource) -> dg.MaterializeResult:
    from truffle_assets.training.trainer import (check_same_sft, finished_adapter, loss_plot_png, reuse_sft,
                                                 select_backend, train)

    if sum(map(bool, (config.sft_from, config.dpo_from, config.blend))) > 1:  # before a run folder is made
        raise dg.Failure("sft_from, dpo_from and blend each pick where the adapter comes from; set one")
    blend = _blend_sources(config, Path(models.root) / "runs") if config.blend else []
    sft_dir, dpo_dir = models.dataset_dir("sft"), models.dataset_dir("dpo")
    manifest = ds.check_manifest(sft_dir)
    base, pre = base_for(config.base_model, models, sft_dir)
    run_meta = {"base_model": config.base_model, "base_path": base, "pre_tokenizer": pre,
                "sft_content_hash": manifest.content_hash, "params": config.model_dump()}
    init_adapter, stages = None, []
    if config.dpo_from:  # checked before a run folder is made the candidate, as a blend's sources are
        src = Path(models.root) / "runs" / config.dpo_from
        init_adapter = finished_adapter(src / "adapter")
        # every run the adapter went through, first (SFT + DPO) to this one, read from the last run alone;
        # the pack's SFT rows may have changed since (this stage trains on today's pairs only)
        stages = check_same_sft(src, run_meta, rows=False).get("stages", [config.dpo_from])
    run_dir = models.new_run_dir(context.run.run_id)
    backend = select_backend(None if config.backend == "auto" else config.backend)
    every = max(1, (config.max_steps if config.max_steps > 0 else 100) // 10)

    def progress(step: int, total: int, loss: float) -> None:
        if step % every == 0 or step == total:
            context.log.info(f"step {step}/{total} loss {loss:.4f}")

    if config.sft_from:
        reuse_sft(run_dir.parent / config.sft_from, run_dir, run_meta)
    if blend:
        return _blended(context, blend, run_dir, run_meta)
    if config.dpo_from:
        run_meta["stages"] = [*stages, run_dir.name]
    result = train(base, sft_dir, run_dir, config, dpo_dir=dpo_dir if config.dpo else None,
                   backend=backend, resume=config.resume or bool(config.sft_from), progress=progress,
                   init_adapter=init_adapter)
    (run_dir / "base.json").write_text(json_text(run_meta), encoding="utf-8")
    return dg.MaterializeResult(metadata={
        "dagster/uri": f"file://{result.adapter_dir}",
        "run_dir": dg.MetadataValue.path(str(run_dir)),
        "backend": result.backend,
        "base_model": config.base_model,
        "steps": result.steps,
        "final_loss": result.losses[-1] if result.losses else None,
        "trainable_params": result.trainable_params,
        "total_params": result.total_params,
        "train_tokens": result.train_tokens,
        "tokens_per_s": result.tokens_per_s,
        "wall_s": result.wall_s,
        "resumed_from": str(result.resumed_from),
        "sft_content_hash": run_meta["sft_content_hash"],
        "loss_curve": png_md(loss_plot_png(result.losses, result.dpo_losses), "loss curve"),
    })


def _blend_sources(config: LoraConfig, runs: Path) -> list[tuple[str, Path, float]]:
    """(run, adapter folder, weight) of each finished run `blend` names, checked before a run folder
    is made and named the candidate."""
    from truffle_assets.training.blend import BlendError, parse_parts

    try:
        out = []
        for run, weight in parse_parts(config.blend):
            src = runs / run
            if not (src / "base.json").exists() or not (src / "adapter").is_dir():
                raise BlendError(f"{src}: not a finished run (no base.json or adapter)")
            if (base := json.loads((src / "base.json").read_text())).get("base_model") != config.base_model:
                raise BlendError(f"{run}: trained on {base.get('base_model')!r}, this run's base is {config.base_model!r}")
            out.append((run, src / "adapter", weight))
        return out
    except BlendError as e:
        raise dg.Failure(str(e)) from e


def _blended(context: dg.AssetExecutionContext, blend: list[tuple[str, Path, float]], run_dir: Path,
             run_meta: dict) -> dg.MaterializeResult:
    """The run's adapter as the weighted average of earlier runs' adapters on the same base; no training."""
    from truffle_assets.training.blend import BlendError, blend_adapters

    t0 = time.perf_counter()
    try:
        out = blend_adapters([(adapter, w) for _, adapter, w in blend], run_dir / "adapter")
    except BlendError as e:
        raise dg.Failure(str(e)) from e
    wall = round(time.perf_counter() - t0, 2)
    from truffle_assets.training.card import training_record

    # each part's training as its own files say, kept with the blend (its card; a shipped copy)
    run_meta["blend"] = [{"run": r, "weight": w, "training": training_record(adapter.parent)}
                         for r, adapter, w in blend]
    (run_dir / "base.json").write_text(json_text(run_meta), encoding="utf-8")
    (run_dir / "train_result.json").write_text(json_text(
        {"adapter_dir": str(out), "backend": "blend", "steps": 0, "losses": [], "dpo_losses": [], "wall_s": wall}),
        encoding="utf-8")
    context.log.info("blended " + ", ".join(f"{r} × {w:g}" for r, _, w in blend))
    return dg.MaterializeResult(metadata={
        "dagster/uri": f"file://{out}", "run_dir": dg.MetadataValue.path(str(run_dir)), "backend": "blend",
        "base_model": run_meta["base_model"], "blend": dg.MetadataValue.json(run_meta["blend"]), "wall_s": wall,
    })


@dg.asset(
    **TRAINING,
    deps=[lora_adapter],
    kinds={"safetensors"},
    code_version="1",
    description="The adapter folded into the base weights: a float32 safetensors master with the serving template.",
)
def merged_model(models: ModelsResource) -> dg.MaterializeResult:
    from truffle_assets.files import sha256_file
    from truffle_assets.chat_format.template import serving_template
    from truffle_assets.training.trainer import merge

    run_dir = models.candidate_dir()
    base = json.loads((run_dir / "base.json").read_text())
    out = merge(base["base_path"], run_dir / "adapter", run_dir / "merged", serving_template())
    weights = sorted(out.glob("*.safetensors"))
    return dg.MaterializeResult(metadata={
        "dagster/uri": f"file://{out}",
        "size_mb": round(sum(w.stat().st_size for w in weights) / 1e6, 1),
        "weights_sha256": sha256_file(weights[0]) if len(weights) == 1 else "sharded",
    })


class GGUFConfig(dg.Config):
    quants: list[str] = ["q8_0", "q4_k_m"]
    min_agreement: float = 0.9  # share of held-out prompts where a quantization answers like f16
    probes: int = 8
    max_tokens: int = 64


def probe_prompts(sft_dir: Path, n: int) -> tuple[list[list[dict]], list[dict]]:
    """Held-out prompts (eval split) for the agreement measure, and one tool-call prompt for the smoke test."""
    rows = ds.read_jsonl(sft_dir / "eval.jsonl") or ds.read_jsonl(sft_dir / "train.jsonl")
    prompts = [r["messages"][:-1] for r in rows[:n]]
    tool_rows = [r for r in rows if r["kind"] == "toolcall" and r["messages"][-1]["content"].startswith('{"toolCalls"')]
    smoke = (tool_rows or rows)[0]["messages"][:-1]
    return prompts, smoke


@dg.asset(
    **TRAINING,
    deps=[merged_model],
    kinds={"gguf", "llamacpp"},
    code_version="1",
    check_specs=[dg.AssetCheckSpec("gguf_answers_tool_call", asset="gguf_model", blocking=True,
                                   description="llama.cpp loads the selected GGUF and its greedy answer to a "
                                               "held-out tool-call prompt parses as an exact envelope.")],
    description=(
        "f16 GGUF from llama.cpp's converter, quantized with llama_model_quantize (q8_0, q4_k_m). Each file is "
        "compared with f16 greedily on held-out prompts and the smallest one that keeps the fine-tune is "
        "selected (a LoRA delta on Q4-derived weights can vanish at q4_k_m)."
    ),
)
def gguf_model(config: GGUFConfig, models: ModelsResource) -> dg.MaterializeResult:
    from truffle_assets.training.artifacts import export_gguf
    from truffle_assets.files import sha256_file

    run_dir = models.candidate_dir()
    base = json.loads((run_dir / "base.json").read_text())
    probes, smoke = probe_prompts(models.dataset_dir("sft"), config.probes)
    t0 = time.perf_counter()
    exp = export_gguf(run_dir / "merged", run_dir / "quants", probes, smoke, quants=tuple(config.quants),
                      min_agreement=config.min_agreement, pre_tokenizer=base.get("pre_tokenizer"),
                      max_tokens=config.max_tokens)
    selected = run_dir / "gguf" / Path(exp.selected_path).name
    shutil.rmtree(selected.parent, ignore_errors=True)
    selected.parent.mkdir(parents=True)
    os.link(exp.selected_path, selected)  # the registry expects exactly one GGUF in run/gguf
    return dg.MaterializeResult(
        metadata={
            "dagster/uri": f"file://{selected}",
            "selected": exp.selected,
            "sha256": sha256_file(selected),
            "sizes_mb": dg.MetadataValue.json(exp.sizes_mb),
            "agreement_with_f16": dg.MetadataValue.json(exp.agreement_with_f16),
            "probes": exp.probes,
            "export_seconds": round(time.perf_counter() - t0, 1),
        },
        check_results=[dg.AssetCheckResult(
            check_name="gguf_answers_tool_call", passed=exp.smoke_parses,
            metadata={"output": dg.MetadataValue.md(f"```\n{exp.smoke_output}\n```")},
        )],
    )


class ModelfileConfig(dg.Config):
    ollama_name: str = "truffle"
    temperature: float = 0.7
    top_p: float = 0.8
    repeat_penalty: float = 1.05


@dg.asset(
    **TRAINING,
    deps=[gguf_model],
    kinds={"ollama"},
    description="Ollama Modelfile next to the GGUF (FROM, num_ctx 16384, sampling, TEMPLATE generated from "
                "the canonical jinja, SYSTEM from prompts/, stop tokens); `ollama create` runs when ollama is installed.",
)
def modelfile(config: ModelfileConfig, models: ModelsResource) -> dg.MaterializeResult:
    from truffle_assets.training.modelfile import ollama_create, write_modelfile
    from truffle_assets.chat_format.prompt import system_prompt

    run_dir = models.candidate_dir()
    gguf = next((run_dir / "gguf").glob("*.gguf"))
    path = run_dir / "Modelfile"
    text = write_modelfile(gguf, path, system_prompt(), params={
        "temperature": config.temperature, "top_p": config.top_p, "repeat_penalty": config.repeat_penalty})
    created = ollama_create(path, config.ollama_name)
    return dg.MaterializeResult(metadata={
        "dagster/uri": f"file://{path}",
        "ollama_created": created,
        "modelfile": dg.MetadataValue.md(f"```\n{text[:3000]}\n```"),
    })
