"""The whole fine-tuning chain as Dagster assets on a tiny model: datasets → … → eval → card → promotion."""

import json
import shutil
from pathlib import Path

import dagster as dg
import pytest

from truffle_assets.cli import main as truffle
from truffle_assets.defs.registry.jobs import promote_model, rollback_model
from truffle_assets.defs.resources import ExportsResource, ModelsResource
from truffle_assets.definitions import TRAINING_CHAIN
from truffle_assets.feedback.turns import append_feedback, write_turn
from truffle_assets.registry import Registry

pytestmark = pytest.mark.training  # builds or trains a tiny model

pytest.importorskip("llama_cpp")

SYSTEM = {"role": "system", "content": "You answer from the user's memory."}


def _turns(runtime: Path) -> None:
    """A liked turn, a disliked one, a re-roll that fixed it, and a turn from a denied principal."""
    def turn(tid, q, a, **kw):
        write_turn(runtime, tid, "c1", messages=[SYSTEM, {"role": "user", "content": q}], answer=a,
                   ts="2026-11-20T10:00:00+00:00", model="tiny", **kw)
    turn("t-good", "Who is Asha?", "Your sister [msg:0a1b2c3d4e5f].")
    append_feedback(runtime, "t-good", 1)
    turn("t-bad", "Where did I park?", "<b>No idea</b>")
    append_feedback(runtime, "t-bad", -1, "raw html")
    turn("t-fix", "Where did I park?", "Level 2, bay 14 [msg:1a2b3c4d5e6f].", reroll_of="t-bad")
    append_feedback(runtime, "t-fix", 1)
    turn("t-denied", "What is my PIN?", "It is 4321.", principals=["denied"])


@pytest.fixture(scope="module")
def chain(tmp_path_factory):
    root = tmp_path_factory.mktemp("training")
    _turns(root / "runtime")
    models = ModelsResource(root=str(root / "models"), datasets_dir=str(root / "datasets"),
                            runtime_dir=str(root / "runtime"), registry_dir=str(root / "registry"))
    resources = {"models": models, "exports": ExportsResource(exports_dir=str(root / "exports"))}
    pack = {"toolcall": 8, "grounded_answer": 0, "write_refusal": 0, "memory_type": 0,
            "privacy_refusal": 0, "question_card": 0, "grounded_runtime": 0}
    dataset = {"eval_percent": 0, "pack_sizes": pack}
    run_config = {"ops": {
        "sft_dataset": {"config": dataset}, "dpo_dataset": {"config": dataset},
        # a tiny random model memorises its eight tool calls in ~80 steps at this learning rate
        "lora_adapter": {"config": {"base_model": "tiny", "max_steps": 80, "learning_rate": 1e-2, "rank": 16,
                                    "seq_len": 1024}},
        "gguf_model": {"config": {"quants": ["q8_0"], "probes": 3}},
        "eval_report": {"config": {"temperatures": [0.0], "limit": 4, "qa_tokens": 4000, "qa_chats": 2, "qa_limit": 3}},
    }}
    instance = dg.DagsterInstance.ephemeral()
    result = dg.materialize(TRAINING_CHAIN, instance=instance, resources=resources, run_config=run_config)
    return result, models, instance, resources


def _meta(result, key):
    mats = result.asset_materializations_for_node(key)
    return {k: v.value for k, v in mats[-1].metadata.items()}


def test_chain_materializes_with_lineage_and_metadata(chain):
    result, models, _, _ = chain
    assert result.success
    sft = _meta(result, "sft_dataset")
    # thumbs-down and the denied principal left SFT; the liked turn and the fixed re-roll stayed
    assert sft["rows_by_source"] == {"synthetic": 8, "transcript": 2}
    assert sft["build_stats"]["dropped_thumbs_down"] == 1 and sft["build_stats"]["dropped_principal"] == 1
    dpo = _meta(result, "dpo_dataset")
    assert dpo["rows_by_source"]["transcript"] == 1  # the re-roll pair: fixed answer chosen over the HTML one
    pair = [json.loads(x) for x in (models.dataset_dir("dpo") / "train.jsonl").read_text().splitlines()]
    tpair = next(r for r in pair if r["source"] == "transcript")
    assert tpair["chosen"].startswith("Level 2") and tpair["rejected"] == "<b>No idea</b>"

    lora = _meta(result, "lora_adapter")
    assert lora["backend"] == "trl" and lora["steps"] == 80 and lora["trainable_params"] > 0
    run_dir = models.candidate_dir()
    losses = json.loads((run_dir / "train_result.json").read_text())["losses"]
    assert losses[-1] < losses[0] / 2
    gguf = _meta(result, "gguf_model")
    assert gguf["selected"] == "q8_0" and gguf["agreement_with_f16"]["q8_0"] >= 0.9
    assert len(list((run_dir / "gguf").glob("*.gguf"))) == 1

    modelfile = (run_dir / "Modelfile").read_text()
    assert modelfile.startswith("FROM ./gguf/") and "PARAMETER num_ctx 16384" in modelfile
    for name in ("report.json", "report.md", "diff.md", "scores.png"):
        assert (run_dir / "eval" / name).stat().st_size > 0
    # the QA suite asked its questions through the whole runtime on the GGUF, over a memory built for it
    report = json.loads((run_dir / "eval" / "report.json").read_text())
    qa = report["results"]["0.0"]["qa"]
    assert len(qa) == 3 and {r["category"] for r in qa} <= {"current", "temporal", "none", "secret"}
    assert (Path(models.root) / "qa-memory" / "memory" / "published" / "latest.json").is_file()
    assert "qa" in report["scores"]["0.0"]["objectives"] and report["scores"]["0.0"]["leaks"] == 0
    card = (run_dir / "model_card.md").read_text()
    assert "promoting this run then would leave no rollback target" in card and "q8_0" in card
    assert "nan" not in card and "None" not in card and "{'" not in card


def test_checks_guard_the_chain(chain):
    result, _, _, _ = chain
    checks = {e.asset_check_key.name: e for e in result.get_asset_check_evaluations()}
    assert checks["sft_rows_valid"].passed and checks["dpo_rows_valid"].passed
    # the fine-tune survives into llama.cpp: the GGUF's greedy answer is an exact envelope
    assert checks["gguf_answers_tool_call"].passed
    # a tiny model cannot pass the promotion gate, and the check says why
    assert not checks["eval_gate"].passed
    assert checks["eval_gate"].metadata["reasons"].value


def test_promotion_needs_the_gate_or_force_and_is_audited(chain, capsys):
    _, models, instance, resources = chain
    refused = promote_model.execute_in_process(instance=instance, resources=resources, raise_on_error=False)
    assert not refused.success and models.registry().active() is None

    forced = promote_model.execute_in_process(
        instance=instance, resources=resources,
        run_config={"ops": {"promote_run": {"config": {"force": True, "reason": "tiny model in CI"}}}})
    assert forced.success
    first = models.candidate_dir()
    active = models.registry().active()
    assert active.run_id == first.name and active.forced

    # a second candidate (a copy of the first) promoted from the CLI, then rolled back by the job
    second = first.with_name(first.name + "-b")
    shutil.copytree(first, second)
    registry = ["--registry", models.registry_dir]
    assert truffle(["promote", second.name, "--runs", str(first.parent), "--force", "--reason", "copy", *registry]) == 0
    assert models.registry().active().run_id == second.name
    assert rollback_model.execute_in_process(instance=instance, resources=resources).success
    assert models.registry().active().run_id == first.name
    assert truffle(["audit", "verify", *registry]) == 0

    log = Path(models.registry_dir) / "audit.log"
    lines = log.read_text().splitlines()
    tampered = json.loads(lines[1])
    tampered["data"]["forced"] = False
    lines[1] = json.dumps(tampered)
    log.write_text("\n".join(lines) + "\n")
    assert truffle(["audit", "verify", *registry]) == 1
    assert "line 2" in capsys.readouterr().err


def test_a_run_can_start_from_an_earlier_runs_sft(chain):
    """`sft_from` copies an earlier run's SFT checkpoints, so only DPO trains; other SFT settings refuse."""
    from truffle_assets.defs.training.assets import lora_adapter

    _, models, instance, resources = chain
    pointer = Path(models.root) / "runs" / "candidate.json"
    before = pointer.read_text()
    first = models.candidate_dir()
    lora = {"base_model": "tiny", "max_steps": 80, "learning_rate": 1e-2, "rank": 16, "seq_len": 1024,
            "sft_from": first.name, "dpo": True, "dpo_max_steps": 2}
    try:
        dpo = dg.materialize([lora_adapter], instance=instance, resources=resources,
                             run_config={"ops": {"lora_adapter": {"config": lora}}})
        again = json.loads((models.candidate_dir() / "train_result.json").read_text())
        earlier = json.loads((first / "train_result.json").read_text())
        assert dpo.success and models.candidate_dir() != first
        assert again["resumed_from"].endswith("checkpoint-80") and again["losses"][:80] == earlier["losses"]
        assert len(again["dpo_losses"]) == 2
        other = dg.materialize([lora_adapter], instance=instance, resources=resources, raise_on_error=False,
                               run_config={"ops": {"lora_adapter": {"config": {**lora, "learning_rate": 2e-2}}}})
        assert not other.success
        failure = next(e for e in other.all_events if e.is_step_failure)
        assert "learning_rate: 0.01 there, 0.02 here" in str(failure.event_specific_data.error)
    finally:
        pointer.write_text(before)


def test_a_second_dpo_stage_starts_from_an_earlier_runs_adapter(chain):
    """`dpo_from` trains a finished run's adapter further with DPO alone, against a frozen copy of
    that adapter: the first step's loss is log 2 only if the reference is that policy, not the base."""
    import math

    from safetensors.torch import load_file

    from truffle_assets.defs.training.assets import lora_adapter
    from truffle_assets.training.card import write_model_card

    _, models, instance, resources = chain
    pointer = Path(models.root) / "runs" / "candidate.json"
    before = pointer.read_text()
    first = models.candidate_dir()
    lora = {"base_model": "tiny", "max_steps": 80, "learning_rate": 1e-2, "rank": 16, "seq_len": 1024,
            "dpo": True, "dpo_max_steps": 3}
    try:
        stage = dg.materialize([lora_adapter], instance=instance, resources=resources,
                               run_config={"ops": {"lora_adapter": {"config": {**lora, "dpo_from": first.name}}}})
        second = models.candidate_dir()
        result = json.loads((second / "train_result.json").read_text())
        assert stage.success and second != first
        assert result["steps"] == 0 and result["losses"] == [] and len(result["dpo_losses"]) == 3
        assert result["resumed_from"] == str(first / "adapter")
        assert math.isclose(result["dpo_losses"][0], math.log(2), abs_tol=1e-3)
        assert json.loads((second / "base.json").read_text())["stages"] == [first.name, second.name]
        card = write_model_card(second, None).read_text()
        assert f"Stages: {first.name} → {second.name}" in card and "- DPO: 3 steps, final loss" in card
        assert result["train_tokens"] == 0 < result["dpo_tokens"]  # no SFT here; what DPO read is counted
        assert f"- Tokens: DPO {result['dpo_tokens']:,} " in card and "- SFT:" not in card
        weights = "adapter_model.safetensors"
        old, new = load_file(first / "adapter" / weights), load_file(second / "adapter" / weights)
        assert old.keys() == new.keys() and any(not (old[k] == new[k]).all() for k in old)

        both = dg.materialize([lora_adapter], instance=instance, resources=resources, raise_on_error=False,
                              run_config={"ops": {"lora_adapter": {"config": {
                                  **lora, "dpo_from": first.name, "sft_from": first.name}}}})
        assert not both.success
        other = dg.materialize([lora_adapter], instance=instance, resources=resources, raise_on_error=False,
                               run_config={"ops": {"lora_adapter": {"config": {
                                   **lora, "dpo_from": first.name, "rank": 8}}}})
        failure = next(e for e in other.all_events if e.is_step_failure)
        assert "rank: 16 there, 8 here" in str(failure.event_specific_data.error)
        pruned = dg.materialize([lora_adapter], instance=instance, resources=resources, raise_on_error=False,
                                run_config={"ops": {"lora_adapter": {"config": {**lora, "dpo_from": "no-such-run"}}}})
        failure = next(e for e in pruned.all_events if e.is_step_failure)
        assert "no-such-run/adapter: no finished adapter" in str(failure.event_specific_data.error)
        assert models.candidate_dir() == second  # both refused before a run folder was made the candidate
    finally:
        pointer.write_text(before)


def test_a_blend_of_finished_runs_is_merged_as_their_weighted_average(chain):
    """`blend` trains nothing: the new run's merged weights are the base plus 0.7 × the first run's
    delta and 0.3 × a DPO stage's, and the card says what went in; a bad blend fails before any run."""
    from safetensors.torch import load_file

    from truffle_assets.defs.training.assets import lora_adapter, merged_model

    _, models, instance, resources = chain
    pointer = Path(models.root) / "runs" / "candidate.json"
    before = pointer.read_text()
    first = models.candidate_dir()
    lora = {"base_model": "tiny", "max_steps": 80, "learning_rate": 1e-2, "rank": 16, "seq_len": 1024}
    try:
        assert dg.materialize([lora_adapter], instance=instance, resources=resources, run_config={"ops": {
            "lora_adapter": {"config": {**lora, "dpo": True, "dpo_max_steps": 2, "dpo_from": first.name}}}}).success
        second = models.candidate_dir()
        for run in (first, second):
            if not (run / "merged").is_dir():
                base = json.loads((run / "base.json").read_text())["base_path"]
                from truffle_assets.chat_format.template import serving_template
                from truffle_assets.training.trainer import merge
                merge(base, run / "adapter", run / "merged", serving_template())
        blend = [f"{first.name}:0.7", f"{second.name}:0.3"]
        result = dg.materialize([lora_adapter, merged_model], instance=instance, resources=resources,
                                run_config={"ops": {"lora_adapter": {"config": {**lora, "blend": blend}}}})
        third = models.candidate_dir()
        assert result.success and third not in (first, second)
        assert json.loads((third / "train_result.json").read_text())["backend"] == "blend"

        base_dir = Path(json.loads((third / "base.json").read_text())["base_path"])
        weights = lambda d: load_file(str(next(d.glob("*.safetensors"))))  # noqa: E731
        w0, w1, w2, w3 = (weights(d) for d in (base_dir, first / "merged", second / "merged", third / "merged"))
        key = next(k for k in w3 if k.endswith("q_proj.weight"))
        # the stage moved the weights a little; the blend sits where the average says, far closer than that
        apart = (w1[key] - w2[key]).abs().max().item()
        off = (w3[key] - (w0[key] + 0.7 * (w1[key] - w0[key]) + 0.3 * (w2[key] - w0[key]))).abs().max().item()
        assert apart > 0 and off < apart / 100, (apart, off)
        from truffle_assets.training.card import write_model_card
        card = write_model_card(third, None).read_text()
        assert f"| 1 | {first.name} | 0.7 |" in card and f"| 2 | {second.name} | 0.3 |" in card
        part = card.split("### Part 1")[1].split("### Part 2")[0]  # the first run's training, recorded by the blend
        assert "- SFT: 80 steps, final loss" in part and "recorded when the blend was made" in part
        # a blend has no SFT of its own: a DPO stage may start from it (the rank-32 adapter trains on)
        stage = dg.materialize([lora_adapter], instance=instance, resources=resources, run_config={"ops": {
            "lora_adapter": {"config": {**lora, "dpo": True, "dpo_max_steps": 1, "dpo_from": third.name}}}})
        fourth = models.candidate_dir()
        assert stage.success and json.loads((fourth / "base.json").read_text())["stages"] == [third.name, fourth.name]
        assert json.loads((fourth / "adapter" / "adapter_config.json").read_text())["r"] == 32

        bad = dg.materialize([lora_adapter], instance=instance, resources=resources, raise_on_error=False,
                             run_config={"ops": {"lora_adapter": {"config": {**lora, "blend": [
                                 f"{first.name}:0.7", "no-such-run:0.3"]}}}})
        failure = next(e for e in bad.all_events if e.is_step_failure)
        assert "no-such-run: not a finished run" in str(failure.event_specific_data.error)
        assert models.candidate_dir() == fourth  # refused before a run folder was made the candidate
    finally:
        pointer.write_text(before)


def test_an_active_report_from_older_runtime_code_is_re_asked_before_the_gate_compares(chain, tmp_path):
    """The gate compares a candidate with the active model's report; when that report's QA answers went
    through other runtime code (or it does not say), the active model is evaluated again on today's,
    once (cached), and the candidate is compared with that."""
    from truffle_assets.definitions import EVAL_CHAIN
    from truffle_assets.evals.qa import runtime_fingerprint

    _, models, instance, resources = chain
    runs = Path(models.root) / "runs"
    pointer = runs / "candidate.json"
    before = pointer.read_text()
    first = min(d for d in runs.iterdir() if (d / "gguf").is_dir() and (d / "eval" / "report.json").exists())
    active = first.with_name(first.name + "-active")
    shutil.copytree(first, active, ignore=shutil.ignore_patterns("merged", "quants", "checkpoints"))
    report = json.loads((active / "eval" / "report.json").read_text())
    report["meta"]["qa_runtime"] = "older-code"
    (active / "eval" / "report.json").write_text(json.dumps(report))
    registry = tmp_path / "registry"
    Registry(registry).promote(active, gate_passed=False, force=True, reason="reference test")
    own = {"models": ModelsResource(root=models.root, datasets_dir=models.datasets_dir, runtime_dir=models.runtime_dir,
                                    registry_dir=str(registry))}
    config = {"ops": {"eval_report": {"config": {"temperatures": [0.0], "limit": 1, "qa_tokens": 4000, "qa_chats": 2,
                                                 "qa_limit": 2}}}}
    try:
        pointer.write_text(json.dumps({"run_id": first.name, "run_dir": str(first)}))
        assert dg.materialize(EVAL_CHAIN, instance=instance, resources=resources | own, run_config=config).success
        meta = json.loads((first / "eval" / "report.json").read_text())["meta"]
        assert meta["reference"] == f"{active.name} (re-evaluated on today's runtime)"
        assert meta["qa_runtime"] == runtime_fingerprint()
        cached = list((Path(models.root) / "reference-eval").glob("*/report.json"))
        assert len(cached) == 1
        again = json.loads(cached[0].read_text())["meta"]
        assert (again["run_id"], again["qa_runtime"]) == (active.name, runtime_fingerprint())
        assert "**Gate: not applied** (the active model asked again" in (cached[0].parent / "report.md").read_text()
        stamp = cached[0].stat().st_mtime_ns
        assert dg.materialize(EVAL_CHAIN, instance=instance, resources=resources | own, run_config=config).success
        assert cached[0].stat().st_mtime_ns == stamp  # asked once per runtime, not per candidate

        report["meta"]["qa_runtime"] = runtime_fingerprint()  # a report from today's code is used as it is
        (active / "eval" / "report.json").write_text(json.dumps(report))
        assert dg.materialize(EVAL_CHAIN, instance=instance, resources=resources | own, run_config=config).success
        assert json.loads((first / "eval" / "report.json").read_text())["meta"]["reference"] == active.name
    finally:
        pointer.write_text(before)
        shutil.rmtree(active, ignore_errors=True)


def test_eval_re_evaluates_a_finished_run_without_training(chain, tmp_path, monkeypatch, capsys):
    """`truffle eval RUN`: the run becomes the candidate, its GGUF is evaluated again (here at another
    temperature) and its gate re-checked; the earlier report is kept. The active model is not
    compared with itself."""
    _, models, _, _ = chain
    monkeypatch.setenv("DAGSTER_HOME", str(tmp_path / "dagster"))
    runs = Path(models.root) / "runs"
    pointer = runs / "candidate.json"
    before = pointer.read_text()
    run = min(d for d in runs.iterdir() if (d / "gguf").is_dir())
    registry = tmp_path / "registry"  # its own: the promotion test leaves the chain's audit log tampered with
    Registry(registry).promote(run, gate_passed=False, force=True, reason="eval test")
    try:
        common = ["--runs", str(runs), "--registry", str(registry)]
        assert truffle(["eval", run.name, *common, "--temperatures", "0.4", "--eval-limit", "2", "--no-qa"]) == 0
        assert json.loads(pointer.read_text())["run_id"] == run.name
        report = json.loads((run / "eval" / "report.json").read_text())
        assert list(report["scores"]) == ["0.4"] and "qa" not in report["scores"]["0.4"]["objectives"]
        assert report["meta"]["reference"] == "no reference"  # the tiny base has no GGUF; never the run itself
        kept = [d for d in run.iterdir() if d.name.startswith("eval-")]
        assert len(kept) == 1 and list(json.loads((kept[0] / "report.json").read_text())["scores"]) == ["0.0"]
        assert "gate: FAILED" in capsys.readouterr().out

        untrained = runs / "untrained"
        (untrained / "gguf").mkdir(parents=True)
        assert truffle(["eval", "untrained", *common]) == 1
        assert "holds no GGUF" in capsys.readouterr().err

        # an evaluation that fails (a GGUF llama.cpp cannot load) leaves the earlier report, not none
        broken = runs / "broken"
        shutil.copytree(run / "eval", broken / "eval")
        (broken / "gguf").mkdir()
        (broken / "gguf" / "model.gguf").write_bytes(b"GGUF" + bytes(64))
        assert truffle(["eval", "broken", *common, "--eval-limit", "1", "--no-qa"]) == 1
        assert (broken / "eval" / "report.json").read_bytes() == (run / "eval" / "report.json").read_bytes()
        assert not [d for d in broken.iterdir() if d.name.startswith("eval-")]
    finally:
        pointer.write_text(before)
