"""model_card.md from a run's real files: every figure readable, a blend's parts shown, and the
rollback target the registry names."""

import json
import re
from pathlib import Path

from truffle_assets.registry import Registry
from truffle_assets.training.card import training_record, write_model_card

SHIPPED = Path(__file__).resolve().parents[2] / "models" / "shipped"
BLEND = SHIPPED / "20261201-013907-e62e794c"
KEY = "test-key"
# what Python's reprs and missing values look like in text
BROKEN = re.compile(r"\bnan\b|\bNone\b|\{'|\['|\bNone of\b")


def _json(path: Path, data) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=2))


def trained_run(runs: Path, name: str, *, steps=80, dpo_steps=0, wall=1234.5, sft_hash="a" * 64) -> Path:
    """A run folder as lora_adapter, gguf_model and eval_report leave it (TrainResult, base.json, export)."""
    run = runs / name
    _json(run / "train_result.json", {
        "adapter_dir": str(run / "adapter"), "backend": "trl", "steps": steps,
        "losses": [2.5 - i * 0.01 for i in range(steps)], "dpo_losses": [0.69 - i * 0.01 for i in range(dpo_steps)],
        "trainable_params": 17_596_416, "total_params": 647_763_840, "train_tokens": 98_304 if steps else 0,
        "dpo_tokens": 4_096 * dpo_steps, "tokens_per_s": 79.6 if steps else 0.0, "wall_s": wall,
        "resumed_from": None})
    _json(run / "base.json", {"base_model": "qwen2.5-coder-0.5b", "pre_tokenizer": "qwen2",
                              "sft_content_hash": sft_hash,
                              "params": {"rank": 16, "alpha": 32, "learning_rate": 0.001, "max_steps": steps,
                                         "target_modules": ["q_proj", "v_proj"], "dpo": bool(dpo_steps),
                                         "dpo_max_steps": dpo_steps, "dpo_learning_rate": None, "dpo_kinds": [],
                                         "sft_from": None, "blend": []}})
    _json(run / "quants" / "export.json", {"selected": "q8_0", "agreement_with_f16": {"f16": 1.0, "q8_0": 0.875},
                                           "sizes_mb": {"f16": 1266.42, "q8_0": 675.71}})
    report = json.loads((BLEND / "eval" / "report.json").read_text())
    _json(run / "eval" / "report.json", report)
    return run


def finished(run: Path) -> Path:
    """What promote needs besides the card: one GGUF and a Modelfile."""
    (run / "gguf").mkdir(exist_ok=True)
    (run / "gguf" / "model-q8_0.gguf").write_bytes(b"GGUF" + run.name.encode())
    (run / "Modelfile").write_text("FROM ./gguf/model-q8_0.gguf\n")
    return run


def test_a_trained_runs_card_reads_cleanly(tmp_path):
    run = trained_run(tmp_path / "runs", "20260101-000000-aaaaaaaa")
    card = write_model_card(run).read_text()
    assert not BROKEN.search(card), card
    assert "- SFT: 80 steps, final loss 1.7100" in card
    assert "- Tokens: SFT 98,304 at 79.6 tokens/s" in card
    assert "- Trainable parameters: 17,596,416 of 647,763,840 (2.72%)" in card
    assert "- Time: 20 min 34 s (1,234 s)" in card and "Wh (" in card
    assert "target modules q_proj, v_proj" in card and "dpo" not in card.split("Hyperparameters")[1].split("\n")[0]
    assert "  - q8_0: 676 MB, agrees with f16 on 88% of held-out prompts" in card
    assert "| 0.0 | 0.735 | 0.550 | 0.550 | 0.925 | 0.606 |" in card
    assert "Gate: passed, compared with the reference: 20261129-123037-6801aa5f" in card


def test_a_dpo_stage_shows_no_sft_it_did_not_run(tmp_path):
    run = trained_run(tmp_path / "runs", "20260101-000000-bbbbbbbb", steps=0, dpo_steps=3, wall=60.0)
    card = write_model_card(run).read_text()
    assert not BROKEN.search(card), card
    assert "- SFT:" not in card and "- DPO: 3 steps, final loss 0.6700" in card
    assert "- Tokens: DPO 12,288" in card


def test_a_blend_shows_its_parts_and_their_training(tmp_path):
    runs = tmp_path / "runs"
    a = trained_run(runs, "20260101-000000-aaaaaaaa", sft_hash="a" * 64)
    b = trained_run(runs, "20260102-000000-bbbbbbbb", steps=0, dpo_steps=80, wall=4739.0, sft_hash="b" * 64)
    blend = runs / "20260103-000000-cccccccc"
    # base.json and train_result.json as `_blended` writes them, from the shipped blend's own shape
    base = json.loads((BLEND / "base.json").read_text())
    base["blend"] = [{"run": a.name, "weight": 0.85}, {"run": b.name, "weight": 0.15}]
    _json(blend / "base.json", base)
    _json(blend / "train_result.json", {"adapter_dir": "x", "backend": "blend", "steps": 0, "losses": [],
                                        "dpo_losses": [], "wall_s": 2.4})
    card = write_model_card(blend).read_text()
    assert not BROKEN.search(card), card
    assert f"| 1 | {a.name} | 0.85 |" in card and f"| 2 | {b.name} | 0.15 |" in card
    part_a, part_b = card.split("### Part 1")[1].split("### Part 2")
    assert "- SFT: 80 steps, final loss 1.7100" in part_a and f"SFT dataset `{'a' * 64}`" in part_a
    assert "- DPO: 80 steps, final loss" in part_b and "- Time: 1 h 18 min (4,739 s)" in part_b
    assert f"SFT dataset `{'b' * 64}`" in part_b and "Estimated energy" in part_b
    # the record kept in the blend's base.json outlives the parts' folders (a shipped copy)
    base["blend"] = [{"run": r.name, "weight": w, "training": training_record(r)} for r, w in ((a, 0.85), (b, 0.15))]
    _json(blend / "base.json", base)
    for r in (a, b):
        (r / "base.json").unlink()
    kept = write_model_card(blend).read_text()
    assert "- SFT: 80 steps, final loss 1.7100" in kept and "recorded when the blend was made" in kept


def test_the_shipped_blends_card_reads_cleanly(tmp_path):
    run = tmp_path / BLEND.name
    for rel in ("base.json", "ship.json", "eval/report.json"):
        _json(run / rel, json.loads((BLEND / rel).read_text()))
    card = write_model_card(run).read_text()
    assert not BROKEN.search(card), card
    assert "| 1 | 20261201-000026-51111c18 | 0.85 |" in card and "| 2 | 20261129-123037-6801aa5f | 0.15 |" in card
    assert "Served quantization: f16 (`model-f16.gguf`, 1,266 MB" in card
    assert "`truffle models` names the rollback target" in card  # a shipped copy belongs to no registry yet
    committed = (BLEND / "model_card.md").read_text()  # the card in the repository, written the same way
    assert not BROKEN.search(committed) and "| 1 | 20261201-000026-51111c18 | 0.85 |" in committed


def test_card_and_registry_name_one_rollback_target(tmp_path):
    runs = tmp_path / "runs"
    a = finished(trained_run(runs, "20260101-000000-aaaaaaaa"))
    b = finished(trained_run(runs, "20260102-000000-bbbbbbbb"))
    reg = Registry(tmp_path / "registry", key=KEY)

    def target(run: Path) -> str:
        return re.search(r"- Rollback target: (\S+)", (run / "model_card.md").read_text()).group(1)

    write_model_card(a, reg)  # as the model_card asset does for a candidate
    assert "promoting this run then would leave no rollback target" in (a / "model_card.md").read_text()
    reg.promote(a, gate_passed=True)
    assert reg.rollback_target() is None and target(a) == "none"
    write_model_card(b, reg)
    assert f"served {a.name}; promoting this run then would make {a.name} the rollback target" in \
        (b / "model_card.md").read_text()
    reg.promote(b, gate_passed=True)
    assert reg.rollback_target().run_id == a.name == target(b)
    assert "- Not the active model" in (a / "model_card.md").read_text()
    reg.rollback()
    assert reg.rollback_target() is None and target(a) == "none"
    assert "- Not the active model" in (b / "model_card.md").read_text()
    assert reg.verify_audit().ok
