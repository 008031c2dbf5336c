"""LoRA training on the tiny model: fail-fast checks, resume from a checkpoint, DPO after SFT."""

import json
import math

import pytest

from truffle_assets.training.datasets import ManifestError, write_dataset
from truffle_assets.training.schemas import row_id
from truffle_assets.training.tiny import build_tiny_model
from truffle_assets.training.trainer import (
    LoraParams, TrainingError, check_same_sft, check_trainable, load_base, preflight, train,
)

pytestmark = pytest.mark.training  # builds or trains a tiny model

SYSTEM = {"role": "system", "content": "You are memory."}
# a small adapter keeps these runs quick (the trainer's defaults before they followed `truffle train`)
SMALL = {"rank": 8, "alpha": 16, "seq_len": 512, "target_modules": ["q_proj", "k_proj", "v_proj", "o_proj"]}


def _sft(i: int) -> dict:
    msgs = [SYSTEM, {"role": "user", "content": f"When did I meet friend {i}?"},
            {"role": "assistant", "content": json.dumps({"toolCalls": [{"name": "search_memory", "arguments": {"query": f"friend {i}"}}]})}]
    sid = f"toolcall/{i}"
    return {"id": row_id("synthetic", sid, msgs), "source": "synthetic", "source_id": sid, "kind": "toolcall",
            "messages": msgs, "split": "train"}


def _dpo(i: int) -> dict:
    prompt = [SYSTEM, {"role": "user", "content": f"Where is friend {i}?"}]
    chosen = json.dumps({"toolCalls": [{"name": "search_memory", "arguments": {"query": f"friend {i}"}}]})
    rejected = f"Sure! Here you go: ```{chosen}```"
    sid = f"toolcall/{i}"
    msgs = [*prompt, {"role": "assistant", "content": chosen}, {"role": "assistant", "content": rejected}]
    return {"id": row_id("synthetic", sid, msgs), "source": "synthetic", "source_id": sid, "kind": "toolcall",
            "prompt": prompt, "chosen": chosen, "rejected": rejected, "split": "train"}


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    root = tmp_path_factory.mktemp("trainer")
    sft = [_sft(i) for i in range(4)]
    dpo = [_dpo(i) for i in range(4)]
    write_dataset(sft, root / "sft", "sft", {"pack_version": "test", "source_date_range": None})
    write_dataset(dpo, root / "dpo", "dpo", {"pack_version": "test", "source_date_range": None})
    texts = [m["content"] for r in sft for m in r["messages"]] + [r["rejected"] for r in dpo]
    return root, build_tiny_model(root / "base", texts), sft


def test_unmatched_target_module_fails_fast(world):
    root, base, sft = world
    model, tok = load_base(base)
    with pytest.raises(TrainingError, match="match nothing.*qkv_proj"):
        preflight(model, tok, sft, LoraParams(target_modules=("q_proj", "qkv_proj")))


def test_fully_masked_rows_fail_fast(world):
    root, base, sft = world
    model, tok = load_base(base)
    # the system + user turns alone are longer than 8 tokens: truncation leaves no assistant label
    with pytest.raises(TrainingError, match="every label masked") as err:
        preflight(model, tok, sft, LoraParams(**{**SMALL, "seq_len": 8}))
    assert sft[0]["id"] in str(err.value)


def test_zero_trainable_params_fail_fast(world):
    _, base, _ = world
    model, _ = load_base(base)
    for p in model.parameters():
        p.requires_grad_(False)
    with pytest.raises(TrainingError, match="0 trainable"):
        check_trainable(model)


def test_tampered_dataset_is_refused_before_training(world, tmp_path):
    root, base, sft = world
    import shutil

    shutil.copytree(root / "sft", tmp_path / "sft")
    train_file = tmp_path / "sft" / "train.jsonl"
    train_file.write_text(train_file.read_text().replace("friend 1", "friend 9"))
    with pytest.raises(ManifestError):
        train(base, tmp_path / "sft", tmp_path / "run", LoraParams(**SMALL, max_steps=1))


def test_interrupted_run_resumes_from_its_checkpoint_then_dpo(world, tmp_path):
    root, base, _ = world
    first = train(base, root / "sft", tmp_path / "run", LoraParams(**SMALL, max_steps=4, learning_rate=1e-2),
                  save_steps=2)
    assert first.steps == 4 and first.resumed_from is None and first.trainable_params > 0
    assert (tmp_path / "run" / "adapter" / "adapter_model.safetensors").exists()
    # a longer run in the same folder continues from checkpoint-4 instead of starting over
    second = train(base, root / "sft", tmp_path / "run",
                   LoraParams(**SMALL, max_steps=6, learning_rate=1e-2, dpo=True, dpo_max_steps=3),
                   dpo_dir=root / "dpo", save_steps=2)
    assert second.resumed_from and second.resumed_from.endswith("checkpoint-4")
    # the checkpoint carries the log history: steps 1-4 are the first run's, only 5 and 6 are new
    assert second.steps == 6 and second.losses[:4] == first.losses and len(second.losses) == 6
    assert len(second.dpo_losses) == 3 and all(loss > 0 for loss in second.dpo_losses)
    saved = json.loads((tmp_path / "run" / "train_result.json").read_text())
    assert saved["dpo_losses"] == second.dpo_losses
    # the tokens DPO read are counted too (3 pairs seen, each two sequences sharing a prompt)
    assert saved["dpo_tokens"] == second.dpo_tokens and second.dpo_tokens > 3 * 2 * 16


def test_dpo_kinds_pick_pairs_and_a_kind_with_no_pairs_fails(world, tmp_path):
    root, base, _ = world
    params = dict(**SMALL, max_steps=1, learning_rate=1e-2, dpo=True, dpo_max_steps=2)
    # DPO's own learning rate of 0 leaves the policy where SFT put it, which is also DPO's reference:
    # every pair then scores log 2, so the rate reached the optimizer and the reference is the SFT policy
    kept = train(base, root / "sft", tmp_path / "a",
                 LoraParams(**params, dpo_kinds=["toolcall"], dpo_learning_rate=0.0), dpo_dir=root / "dpo")
    assert kept.dpo_losses == pytest.approx([math.log(2)] * 2, abs=1e-4)
    # an SFT term on the chosen answers adds their NLL (a random-init tiny model's is far above 1 nat)
    rpo = train(base, root / "sft", tmp_path / "c",
                LoraParams(**params, dpo_kinds=["toolcall"], dpo_learning_rate=0.0, dpo_sft_weight=1.0),
                dpo_dir=root / "dpo")
    assert all(loss > math.log(2) + 1 for loss in rpo.dpo_losses), rpo.dpo_losses
    with pytest.raises(TrainingError, match="no DPO pairs of kind privacy_refusal .* its kinds: toolcall"):
        train(base, root / "sft", tmp_path / "b", LoraParams(**params, dpo_kinds=["privacy_refusal"]),
              dpo_dir=root / "dpo")


def test_a_second_stage_needs_a_finished_adapter_and_dpo(world, tmp_path):
    root, base, _ = world
    params = LoraParams(**SMALL, max_steps=1, learning_rate=1e-2, dpo=True, dpo_max_steps=1)
    with pytest.raises(TrainingError, match="no finished adapter"):
        train(base, root / "sft", tmp_path / "a", params, dpo_dir=root / "dpo", init_adapter=tmp_path / "none")
    first = train(base, root / "sft", tmp_path / "b", params, dpo_dir=root / "dpo")
    with pytest.raises(TrainingError, match="DPO only"):
        train(base, root / "sft", tmp_path / "c", params, init_adapter=first.adapter_dir)


def test_a_dpo_stage_may_follow_new_sft_rows_and_records_its_adapters(tmp_path):
    """SFT from an earlier run needs its rows; a DPO stage trains none, so the pack's rows may have
    changed since, and the stage records the rows its adapter was trained on (not today's)."""
    params = LoraParams(**SMALL).model_dump()
    old = {"base_model": "tiny", "sft_content_hash": "aaa", "params": params, "stages": ["r1", "r2"]}
    (tmp_path / "base.json").write_text(json.dumps(old))
    today = {"base_model": "tiny", "sft_content_hash": "bbb", "params": dict(params)}
    with pytest.raises(TrainingError, match="sft_content_hash: 'aaa' there, 'bbb' here"):
        check_same_sft(tmp_path, dict(today))
    stage = dict(today)
    assert check_same_sft(tmp_path, stage, rows=False)["stages"] == ["r1", "r2"]
    assert stage["sft_content_hash"] == "aaa"
    # another base or another SFT setting is still another adapter
    with pytest.raises(TrainingError, match="base_model: 'tiny' there, 'qwen' here"):
        check_same_sft(tmp_path, {**today, "base_model": "qwen"}, rows=False)
    with pytest.raises(TrainingError, match="rank: 8 there, 4 here"):
        check_same_sft(tmp_path, {**today, "params": {**params, "rank": 4}}, rows=False)


def test_dpo_seed_changes_the_order_pairs_are_drawn_in(world, tmp_path):
    """At batch 1 the seed decides which pairs a short DPO run sees first. Stages on one finished
    adapter (no random LoRA init): the same seed repeats the DPO losses, another draws other pairs."""
    root, base, _ = world
    params = dict(**SMALL, max_steps=1, learning_rate=1e-2, dpo=True, dpo_max_steps=4, dpo_learning_rate=1e-2)
    first = train(base, root / "sft", tmp_path / "first", LoraParams(**params), dpo_dir=root / "dpo")
    runs = {name: train(base, root / "sft", tmp_path / name, LoraParams(**params, dpo_seed=seed),
                        dpo_dir=root / "dpo", init_adapter=first.adapter_dir).dpo_losses
            for name, seed in (("a", None), ("b", 0), ("c", 7))}
    assert runs["a"] == pytest.approx(runs["b"])  # None falls back to the run's seed (0)
    assert runs["c"] != pytest.approx(runs["a"])
