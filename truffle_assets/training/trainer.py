"""LoRA fine-tuning: TRL + PEFT on CPU (or any torch device), Unsloth when a CUDA GPU is present.

The trainer refuses to start on a dataset whose manifest does not verify, and fails fast on the
three silent failure modes of LoRA runs: zero trainable parameters, a target module name that
matches nothing, and a row whose labels are fully masked (nothing to learn, not even the EOS).
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from collections.abc import Callable, Sequence
from typing import Literal

from truffle_assets.files import json_text
from truffle_assets.training.datasets import check_manifest, read_jsonl
from truffle_assets.training.params import LoraParams
from truffle_assets.chat_format.template import training_template

Backend = Literal["trl", "unsloth"]
Progress = Callable[[int, int, float], None]  # (step, max steps, loss)


class TrainingError(RuntimeError):
    """A run that cannot produce a useful adapter; the message says which check failed."""


@dataclass
class TrainResult:
    adapter_dir: str
    backend: str
    steps: int
    losses: list[float]
    dpo_losses: list[float] = field(default_factory=list)
    trainable_params: int = 0
    total_params: int = 0
    train_tokens: int = 0  # SFT: rows seen × mean row length
    dpo_tokens: int = 0  # DPO: pairs seen × mean length of its two sequences
    tokens_per_s: float = 0.0
    wall_s: float = 0.0
    resumed_from: str | None = None

    def to_json(self) -> dict:
        return asdict(self)


def select_backend(prefer: str | None = None) -> Backend:
    """Unsloth only where it works: a CUDA GPU and the optional `gpu` extra installed."""
    if prefer in ("trl", "unsloth"):
        return prefer  # type: ignore[return-value]
    import torch

    if torch.cuda.is_available() and importlib.util.find_spec("unsloth") is not None:
        return "unsloth"
    return "trl"


def read_rows(dataset_dir: str | Path, split: str = "train") -> list[dict]:
    return read_jsonl(Path(dataset_dir) / f"{split}.jsonl")


def unmatched_targets(model, targets: Sequence[str]) -> list[str]:
    names = [name for name, _ in model.named_modules()]
    return [t for t in targets if not any(n == t or n.endswith("." + t) for n in names)]


def label_coverage(tokenizer, rows: list[dict], seq_len: int) -> list[tuple[str, int]]:
    """(row id, trained tokens) per row, after truncation to seq_len, as SFT will see them."""
    out = []
    for row in rows:
        enc = tokenizer.apply_chat_template(
            row["messages"], tokenize=True, return_dict=True, return_assistant_tokens_mask=True,
        )
        mask = enc["assistant_masks"][:seq_len]
        out.append((row["id"], int(sum(mask))))
    return out


def preflight(model, tokenizer, rows: list[dict], params: LoraParams) -> None:
    missing = unmatched_targets(model, params.target_modules)
    if missing:
        raise TrainingError(f"LoRA target modules match nothing in the model: {missing}")
    empty = [rid for rid, n in label_coverage(tokenizer, rows, params.seq_len) if n == 0]
    if empty:
        raise TrainingError(
            f"{len(empty)} row(s) have every label masked after truncation to {params.seq_len} tokens "
            f"(no assistant token, not even the EOS, is trained): {empty[:5]}"
        )


def check_trainable(model) -> tuple[int, int]:
    trainable = sum(p.numel() for p in model.parameters() if p.requires_grad)
    total = sum(p.numel() for p in model.parameters())
    if trainable == 0:
        raise TrainingError("the model has 0 trainable parameters: LoRA was not attached")
    return trainable, total


def load_base(base_dir: str | Path, backend: Backend = "trl", seq_len: int = 512):
    """Base model + tokenizer, with the canonical training template on the tokenizer."""
    if backend == "unsloth":  # GPU path: its own environment (see pyproject extra `gpu`)
        from unsloth import FastLanguageModel

        model, tokenizer = FastLanguageModel.from_pretrained(str(base_dir), max_seq_length=seq_len, load_in_4bit=False)
    else:
        import torch
        from transformers import AutoModelForCausalLM, AutoTokenizer

        tokenizer = AutoTokenizer.from_pretrained(str(base_dir))
        model = AutoModelForCausalLM.from_pretrained(str(base_dir), dtype=torch.float32)
    tokenizer.chat_template = training_template()
    if tokenizer.pad_token is None:
        tokenizer.pad_token = tokenizer.eos_token
    return model, tokenizer


def attach_lora(model, params: LoraParams, backend: Backend = "trl"):
    if backend == "unsloth":
        from unsloth import FastLanguageModel

        return FastLanguageModel.get_peft_model(
            model, r=params.rank, lora_alpha=params.alpha, lora_dropout=params.dropout,
            target_modules=list(params.target_modules), random_state=params.seed,
        )
    from peft import LoraConfig, get_peft_model

    cfg = LoraConfig(
        r=params.rank, lora_alpha=params.alpha, lora_dropout=params.dropout,
        target_modules=list(params.target_modules), task_type="CAUSAL_LM",
    )
    return get_peft_model(model, cfg)


def _last_checkpoint(ckpt_dir: Path) -> str | None:
    if not ckpt_dir.is_dir():
        return None
    from transformers.trainer_utils import get_last_checkpoint

    return get_last_checkpoint(str(ckpt_dir))


def _losses(log_history: list[dict]) -> list[float]:
    return [round(float(e["loss"]), 5) for e in log_history if "loss" in e]


def _common_args(params: LoraParams, out: Path, max_steps: int, save_steps: int) -> dict:
    return dict(
        output_dir=str(out), per_device_train_batch_size=params.batch_size,
        gradient_accumulation_steps=params.grad_accum, learning_rate=params.learning_rate,
        num_train_epochs=params.epochs, max_steps=max_steps, logging_steps=1,
        save_steps=save_steps, save_total_limit=2, seed=params.seed, report_to=[],
        use_cpu=not _cuda(), dataloader_num_workers=0, disable_tqdm=True, max_length=params.seq_len,
        gradient_checkpointing=params.gradient_checkpointing,
        # TRL defaults to bf16 autocast; on a CPU without bf16 units that sends every matmul to
        # torch's scalar fallback GEMM (~10x slower than fp32 BLAS): bf16 only on a GPU that has it
        bf16=_bf16(), fp16=False,
    )


def _quiet(trainer, progress: Progress | None) -> None:
    # losses are kept in state.log_history and reported as metadata; no per-step prints in run logs
    from transformers.trainer_callback import PrinterCallback, TrainerCallback

    trainer.remove_callback(PrinterCallback)
    if progress is not None:
        class _Progress(TrainerCallback):
            def on_log(self, args, state, control, logs=None, **kwargs):
                if logs and "loss" in logs:
                    progress(state.global_step, state.max_steps, float(logs["loss"]))

        trainer.add_callback(_Progress())


def _bf16() -> bool:
    import torch

    return torch.cuda.is_available() and torch.cuda.is_bf16_supported()


def _cuda() -> bool:
    import torch

    return torch.cuda.is_available()


def train(
    base_dir: str | Path, sft_dir: str | Path, out_dir: str | Path, params: LoraParams,
    dpo_dir: str | Path | None = None, backend: Backend | None = None, resume: bool = True,
    save_steps: int = 50, progress: Progress | None = None, init_adapter: str | Path | None = None,
) -> TrainResult:
    """SFT (then optional DPO) LoRA run; writes `out_dir/adapter` and `out_dir/train_result.json`.

    Checkpoints go to `out_dir/checkpoints/{sft,dpo}` every `save_steps`; with `resume` an
    interrupted run continues from the newest one instead of starting over. With `init_adapter`
    (an earlier run's finished adapter) there is no SFT: DPO trains that adapter further, against a
    frozen copy of it as the reference (a second DPO stage).
    """
    from datasets import Dataset
    from trl import SFTConfig, SFTTrainer

    check_manifest(sft_dir)  # raises on any drift between manifest and rows
    if params.dpo and dpo_dir is not None:
        check_manifest(dpo_dir)
    backend = backend or select_backend()
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    rows = read_rows(sft_dir)
    if not rows:
        raise TrainingError(f"{sft_dir}/train.jsonl has no rows")

    model, tokenizer = load_base(base_dir, backend, params.seq_len)
    preflight(model, tokenizer, rows, params)
    if init_adapter is not None:
        return _second_stage(model, tokenizer, Path(init_adapter), dpo_dir, out, params, backend, resume,
                             save_steps, progress)
    model = attach_lora(model, params, backend)
    trainable, total = check_trainable(model)

    train_ds = Dataset.from_list([{"messages": r["messages"]} for r in rows])
    ckpt = out / "checkpoints" / "sft"
    last = _last_checkpoint(ckpt) if resume else None
    args = SFTConfig(**_common_args(params, ckpt, params.max_steps, save_steps), assistant_only_loss=True, packing=False)
    trainer = SFTTrainer(model=model, args=args, train_dataset=train_ds, processing_class=tokenizer)
    _quiet(trainer, progress)
    tokens = sum(len(x) for x in trainer.train_dataset["input_ids"])
    t0 = time.perf_counter()
    trainer.train(resume_from_checkpoint=last)
    sft_s = time.perf_counter() - t0
    steps = trainer.state.global_step
    epochs_run = steps * params.batch_size * params.grad_accum / max(len(rows), 1)
    trained_tokens = int(tokens * epochs_run)  # rows seen × mean row length
    result = TrainResult(
        adapter_dir=str(out / "adapter"), backend=backend, steps=steps, losses=_losses(trainer.state.log_history),
        trainable_params=trainable, total_params=total, train_tokens=trained_tokens,
        tokens_per_s=round(trained_tokens / sft_s, 1) if sft_s > 0 else 0.0, wall_s=round(sft_s, 2),
        resumed_from=last,
    )

    if params.dpo and dpo_dir is not None:
        result.dpo_losses, result.dpo_tokens = _train_dpo(model, tokenizer, dpo_dir, out, params, resume,
                                                          save_steps, progress)
        result.wall_s = round(time.perf_counter() - t0, 2)

    return _save(model, tokenizer, out, result)


def _save(model, tokenizer, out: Path, result: TrainResult) -> TrainResult:
    model.save_pretrained(result.adapter_dir)
    tokenizer.save_pretrained(result.adapter_dir)
    (out / "train_result.json").write_text(json_text(result.to_json()), encoding="utf-8")
    return result


def _second_stage(model, tokenizer, init_adapter: Path, dpo_dir, out: Path, params: LoraParams, backend: Backend,
                  resume: bool, save_steps: int, progress: Progress | None) -> TrainResult:
    """DPO on top of a finished adapter: its SFT and first DPO are kept, and TRL's frozen "ref"
    copy of it makes that policy the reference the new pairs are measured against."""
    from peft import PeftModel

    if backend != "trl":
        raise TrainingError("a second DPO stage runs on the TRL + PEFT backend only")
    if not (params.dpo and dpo_dir is not None):
        raise TrainingError("starting from an earlier adapter trains DPO only: set dpo and a DPO dataset")
    finished_adapter(init_adapter)
    model = PeftModel.from_pretrained(model, str(init_adapter), is_trainable=True)
    trainable, total = check_trainable(model)
    t0 = time.perf_counter()
    dpo_losses, dpo_tokens = _train_dpo(model, tokenizer, dpo_dir, out, params, resume, save_steps, progress)
    result = TrainResult(adapter_dir=str(out / "adapter"), backend=backend, steps=0, losses=[],
                         dpo_losses=dpo_losses, dpo_tokens=dpo_tokens, trainable_params=trainable, total_params=total,
                         wall_s=round(time.perf_counter() - t0, 2), resumed_from=str(init_adapter))
    return _save(model, tokenizer, out, result)


SFT_PARAMS = ("rank", "alpha", "dropout", "learning_rate", "epochs", "max_steps", "seq_len", "batch_size",
              "grad_accum", "target_modules", "seed")


def reuse_sft(src_run: str | Path, out_dir: str | Path, run_meta: dict) -> None:
    """Copy an earlier run's SFT checkpoints into `out_dir`, so `train` resumes past SFT.

    Several DPO runs can then start from one SFT (on this CPU 150 SFT steps take ~40 min; a DPO step 18-63 s).
    `run_meta` is what the new run records in `base.json`; the earlier run's must agree on the base,
    the SFT rows and every SFT setting, or the copy would be another run's SFT under this one's name.
    """
    src = Path(src_run)
    last = _last_checkpoint(src / "checkpoints" / "sft")
    if last is None:
        raise TrainingError(f"{src}: no finished run with SFT checkpoints to start from")
    check_same_sft(src, run_meta)  # and refuses a folder with no base.json
    # resuming needs only the newest checkpoint (its optimizer state is ~2x the adapter); not the older one
    shutil.copytree(last, Path(out_dir) / "checkpoints" / "sft" / Path(last).name)


def finished_adapter(adapter: Path) -> Path:
    """`adapter`, when it is a finished adapter folder a later stage can start from."""
    if not (adapter / "adapter_config.json").is_file():
        raise TrainingError(f"{adapter}: no finished adapter (adapter_config.json) to start from")
    return adapter


def check_same_sft(src: Path, run_meta: dict, *, rows: bool = True) -> dict:
    """The earlier run's `base.json`, when it agrees with `run_meta` on the base, the SFT rows and
    every SFT setting; otherwise its adapter would be another run's SFT under this one's name.
    `rows=False` (a DPO stage on a finished adapter, which trains no SFT) lets the SFT rows differ:
    the stage then records the rows its adapter was trained on, not today's."""
    if not (src / "base.json").exists():
        raise TrainingError(f"{src}: not a finished run (no base.json)")
    old = json.loads((src / "base.json").read_text())
    if old.get("blend"):  # an average of finished runs: no SFT of its own to compare, only the base
        if old.get("base_model") != run_meta["base_model"]:
            raise TrainingError(f"cannot start from {src.name}: base_model: {old.get('base_model')!r} there, "
                                f"{run_meta['base_model']!r} here")
        return old
    same = ("base_model", "sft_content_hash") if rows else ("base_model",)
    diffs = [f"{k}: {old.get(k)!r} there, {run_meta[k]!r} here" for k in same if old.get(k) != run_meta[k]]
    diffs += [f"{k}: {old['params'].get(k)!r} there, {run_meta['params'][k]!r} here" for k in SFT_PARAMS
              if old["params"].get(k) != run_meta["params"][k]]
    if diffs:
        raise TrainingError(f"cannot start from {src.name}: " + "; ".join(diffs))
    if not rows:
        run_meta["sft_content_hash"] = old.get("sft_content_hash")
    return old


def _train_dpo(model, tokenizer, dpo_dir, out: Path, params: LoraParams, resume: bool, save_steps: int,
               progress: Progress | None) -> tuple[list[float], int]:
    """(DPO losses, tokens of the pairs seen) of a DPO run on `dpo_dir`'s pairs."""
    from datasets import Dataset
    from trl import DPOConfig, DPOTrainer

    rows = read_rows(dpo_dir)
    if params.dpo_kinds:
        kinds = sorted({r["kind"] for r in rows})
        rows = [r for r in rows if r["kind"] in params.dpo_kinds]
        if not rows:  # a misspelt kind would otherwise skip DPO without a word
            raise TrainingError(f"no DPO pairs of kind {', '.join(params.dpo_kinds)} in {dpo_dir}; "
                                f"its kinds: {', '.join(kinds)}")
    if not rows:
        return [], 0
    ds = Dataset.from_list([
        {"prompt": r["prompt"], "chosen": [{"role": "assistant", "content": r["chosen"]}],
         "rejected": [{"role": "assistant", "content": r["rejected"]}]}
        for r in rows
    ])
    ckpt = out / "checkpoints" / "dpo"
    last = _last_checkpoint(ckpt) if resume else None
    # no second model: TRL copies the SFT adapter into a frozen "ref" adapter, so the reference is the SFT policy
    common = _common_args(params, ckpt, params.dpo_max_steps, save_steps)
    if params.dpo_learning_rate is not None:
        common["learning_rate"] = params.dpo_learning_rate
    if params.dpo_seed is not None:  # the order pairs are drawn in (batch 1: which pairs a short run sees)
        common["seed"] = params.dpo_seed
    losses = {"loss_type": ["sigmoid", "sft"], "loss_weights": [1.0, params.dpo_sft_weight]} \
        if params.dpo_sft_weight > 0 else {}
    args = DPOConfig(**common, beta=params.dpo_beta, **losses)
    trainer = DPOTrainer(model=model, args=args, train_dataset=ds, processing_class=tokenizer)
    _quiet(trainer, progress)
    trainer.train(resume_from_checkpoint=last)
    tokenized = trainer.train_dataset  # a pair is two sequences: prompt + chosen, prompt + rejected
    per_pair = sum(2 * len(p) + len(c) + len(r) for p, c, r in zip(
        tokenized["prompt_ids"], tokenized["chosen_ids"], tokenized["rejected_ids"])) / max(len(tokenized), 1)
    seen = trainer.state.global_step * params.batch_size * params.grad_accum
    return _losses(trainer.state.log_history), int(per_pair * seen)


def merge(base_dir: str | Path, adapter_dir: str | Path, out_dir: str | Path, chat_template: str) -> Path:
    """Fold the adapter into the base weights and save a safetensors master with the serving template."""
    import torch
    from peft import PeftModel
    from transformers import AutoModelForCausalLM, AutoTokenizer

    base = AutoModelForCausalLM.from_pretrained(str(base_dir), dtype=torch.float32)
    merged = PeftModel.from_pretrained(base, str(adapter_dir)).merge_and_unload()
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    merged.save_pretrained(str(out), safe_serialization=True)
    tokenizer = AutoTokenizer.from_pretrained(str(adapter_dir))
    tokenizer.chat_template = chat_template  # the GGUF converter copies this into the file's metadata
    tokenizer.save_pretrained(str(out))
    return out


def loss_plot_png(losses: list[float], dpo_losses: list[float] | None = None) -> bytes:
    import io

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6, 3), dpi=100)
    ax.plot(range(1, len(losses) + 1), losses, label="SFT")
    if dpo_losses:
        ax.plot(range(1, len(dpo_losses) + 1), dpo_losses, label="DPO")
    ax.set_xlabel("step")
    ax.set_ylabel("loss")
    ax.legend()
    fig.tight_layout()
    buf = io.BytesIO()
    fig.savefig(buf, format="png")
    plt.close(fig)
    return buf.getvalue()


os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")  # forked dataloaders would warn on every run
