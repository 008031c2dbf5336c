"""A gate-passed tiny run shipped as its adapter and rebuilt into the very GGUF that was evaluated."""

import json
import shutil
import struct
import time
from pathlib import Path

import pytest

from truffle_assets.cli import main as truffle
from truffle_assets.files import sha256_file
from truffle_assets.registry import Registry
from truffle_assets.training.shipped import (MANIFEST, ShipError, ShipRefused, adapter_for, install, read_manifest,
                                             ship)

pytestmark = pytest.mark.training  # builds or trains a tiny model

pytest.importorskip("llama_cpp")

KEY = "test-key"
SYSTEM = {"role": "system", "content": "You answer from the user's memory."}


def _rows() -> list[dict]:
    from truffle_assets.training.schemas import row_id

    rows = []
    for i in range(4):
        msgs = [SYSTEM, {"role": "user", "content": f"When did I meet friend {i}?"},
                {"role": "assistant", "content": json.dumps(
                    {"toolCalls": [{"name": "search_memory", "arguments": {"query": f"friend {i}"}}]})}]
        sid = f"toolcall/{i}"
        rows.append({"id": row_id("synthetic", sid, msgs), "source": "synthetic", "source_id": sid,
                     "kind": "toolcall", "messages": msgs, "split": "train"})
    return rows


def _report(run: Path, passed: bool) -> None:
    (run / "eval").mkdir(parents=True, exist_ok=True)
    gguf = next((run / "gguf").glob("*.gguf")).name
    (run / "eval" / "report.json").write_text(json.dumps(
        {"meta": {"run_id": run.name, "gguf": gguf}, "gate": {"passed": passed, "reasons": []}}))
    (run / "eval" / "report.md").write_text(f"# Evaluation report\n\n**Gate: {'passed' if passed else 'FAILED'}**\n")


@pytest.fixture(scope="module")
def tiny_run(tmp_path_factory):
    """A training run laid out as the chain writes it: a few LoRA steps on the tiny base, merged with the
    serving template, exported (f16 → q8_0) by `export_gguf`, a Modelfile and a passing eval report."""
    from truffle_assets.chat_format.prompt import system_prompt
    from truffle_assets.chat_format.template import serving_template
    from truffle_assets.training.artifacts import export_gguf
    from truffle_assets.training.datasets import write_dataset
    from truffle_assets.training.modelfile import write_modelfile
    from truffle_assets.training.tiny import LLAMA_CPP_PRE, build_tiny_model
    from truffle_assets.training.trainer import LoraParams, merge, train

    root = tmp_path_factory.mktemp("shipped")
    rows = _rows()
    write_dataset(rows, root / "sft", "sft", {"pack_version": "test", "source_date_range": None})
    base = build_tiny_model(root / "tiny-base", [m["content"] for r in rows for m in r["messages"]])
    run = root / "runs" / "20260101-000000-tinyrun0"
    train(base, root / "sft", run, LoraParams(rank=8, alpha=16, seq_len=512, max_steps=4, learning_rate=1e-2,
                                              target_modules=("q_proj", "k_proj", "v_proj", "o_proj")))
    (run / "base.json").write_text(json.dumps({"base_model": "tiny", "base_path": str(base),
                                               "pre_tokenizer": LLAMA_CPP_PRE}))
    merge(base, run / "adapter", run / "merged", serving_template())
    prompt = rows[0]["messages"][:-1]
    exp = export_gguf(run / "merged", run / "quants", [prompt], prompt, quants=("q8_0",), min_agreement=0.0,
                      pre_tokenizer=LLAMA_CPP_PRE, max_tokens=4)
    (run / "gguf").mkdir()
    gguf = run / "gguf" / Path(exp.selected_path).name
    shutil.copyfile(exp.selected_path, gguf)
    write_modelfile(gguf, run / "Modelfile", system_prompt())
    _report(run, passed=True)
    (run / "model_card.md").write_text("# Model card\n")
    shipped = ship(run, root / "shipped")
    return {"root": root, "base": base, "run": run, "gguf": gguf, "shipped": shipped}


def test_ship_copies_the_adapter_and_records_the_evaluated_gguf(tiny_run):
    shipped, run = tiny_run["shipped"], tiny_run["run"]
    manifest = read_manifest(shipped)
    assert manifest["run_id"] == run.name and manifest["quant"] == "q8_0"
    assert manifest["gguf_name"] == "model-q8_0.gguf" and manifest["gguf_sha256"] == sha256_file(tiny_run["gguf"])
    assert manifest["pre_tokenizer"] == "qwen2" and manifest["base_model"] == "tiny"
    assert sorted(manifest["adapter_sha256"]) == sorted(p.name for p in (shipped / "adapter").iterdir())
    assert (shipped / "adapter" / "adapter_model.safetensors").read_bytes() == \
        (run / "adapter" / "adapter_model.safetensors").read_bytes()
    # nothing of the training machine's layout: no base path, no merged weights, no GGUF
    assert str(tiny_run["base"]) not in (shipped / "adapter" / "adapter_config.json").read_text()
    assert "base_path" not in json.loads((shipped / "base.json").read_text())
    assert not list(shipped.rglob("*.gguf")) and not (shipped / "merged").exists()
    for rel in ("eval/report.json", "eval/report.md", "model_card.md", "serving_template.jinja"):
        assert (shipped / rel).is_file(), rel


def test_install_rebuilds_the_evaluated_gguf_and_promotes_it(tiny_run, tmp_path):
    registry = Registry(tmp_path / "registry", key=KEY)
    t0 = time.perf_counter()
    result = install(tiny_run["shipped"], tmp_path / "runs", registry, base_dir=tiny_run["base"])
    wall = time.perf_counter() - t0
    print(f"tiny install wall time: {wall:.1f} s")
    rebuilt = tmp_path / "runs" / tiny_run["run"].name / "gguf" / "model-q8_0.gguf"
    assert result.status == "installed" and result.rebuilt
    assert sha256_file(rebuilt) == sha256_file(tiny_run["gguf"])
    active = registry.active()
    assert active.run_id == tiny_run["run"].name and Path(active.gguf_path) == rebuilt.resolve()
    assert active.gguf_sha256 == sha256_file(tiny_run["gguf"]) and not active.forced
    assert "shipped with the repository" in registry.history()[-1].why
    run = rebuilt.parent.parent
    # the installed card names the registry's rollback target (none: nothing was active before), not the
    # one of the registry it was shipped from
    assert registry.rollback_target() is None and "- Rollback target: none" in (run / "model_card.md").read_text()
    assert (run / "Modelfile").read_text().startswith("FROM ./gguf/model-q8_0.gguf")
    assert not (run / "merged").exists() and not (run / "quants").exists()  # the big intermediates go
    # the adapter stays beside it: a `--dpo-from` stage or a blend on the installed model starts from it
    shipped_adapter = tiny_run["shipped"] / "adapter"
    assert {p.name: p.read_bytes() for p in (run / "adapter").iterdir()} == \
        {p.name: p.read_bytes() for p in shipped_adapter.iterdir()}
    assert registry.verify_audit().ok

    again = install(tiny_run["shipped"], tmp_path / "runs", registry, base_dir=tiny_run["base"], force=True)
    assert again.status == "skipped" and not again.rebuilt and "already the active model" in again.message
    assert len(registry.history()) == 1


def test_an_active_model_is_the_users_choice(tiny_run, tmp_path):
    mine = tmp_path / "runs" / "20260102-000000-mine0000"
    shutil.copytree(tiny_run["run"], mine, ignore=shutil.ignore_patterns("merged", "quants", "checkpoints"))
    registry = Registry(tmp_path / "registry", key=KEY)
    registry.promote(mine, gate_passed=True, reason="my own run")
    result = install(tiny_run["shipped"], tmp_path / "runs", registry, base_dir=tiny_run["base"])
    assert result.status == "skipped" and "already serves 20260102-000000-mine0000" in result.message
    assert registry.active().run_id == mine.name and len(registry.history()) == 1
    assert not (tmp_path / "runs" / tiny_run["run"].name).exists()  # nothing rebuilt


def test_a_run_whose_gate_failed_is_not_shipped(tiny_run, tmp_path):
    run = tmp_path / tiny_run["run"].name
    shutil.copytree(tiny_run["run"], run, ignore=shutil.ignore_patterns("merged", "quants", "checkpoints"))
    _report(run, passed=False)
    with pytest.raises(ShipRefused, match="gate failed"):
        ship(run, tmp_path / "shipped")
    (run / "eval" / "report.json").unlink()
    with pytest.raises(ShipRefused, match="not recorded"):
        ship(run, tmp_path / "shipped")
    assert not (tmp_path / "shipped" / run.name).exists()


def _flip_sign(safetensors: Path) -> None:
    """Negate the largest lora_B weight: one byte changed, the file still loads, the merged delta moves."""
    import numpy as np

    data = bytearray(safetensors.read_bytes())
    (n,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8:8 + n])
    name = next(k for k in sorted(header) if "lora_B" in k)
    assert header[name]["dtype"] == "F32"
    lo, hi = header[name]["data_offsets"]
    values = np.frombuffer(bytes(data[8 + n + lo:8 + n + hi]), dtype="<f4")
    assert np.abs(values).max() > 0  # the adapter trained: B moved off its zero init
    data[8 + n + lo + 4 * int(np.abs(values).argmax()) + 3] ^= 0x80  # sign bit of a little-endian float32
    safetensors.write_bytes(bytes(data))


def test_a_changed_adapter_is_not_installed(tiny_run, tmp_path):
    shipped = tmp_path / "shipped" / tiny_run["run"].name
    shutil.copytree(tiny_run["shipped"], shipped)
    weights = shipped / "adapter" / "adapter_model.safetensors"
    _flip_sign(weights)
    registry = Registry(tmp_path / "registry", key=KEY)
    with pytest.raises(ShipRefused, match="adapter_model.safetensors: sha256 .* is not the shipped"):
        install(shipped, tmp_path / "runs", registry, base_dir=tiny_run["base"])

    # the recorded hash updated too: only the rebuilt GGUF's own hash can tell
    manifest = json.loads((shipped / MANIFEST).read_text())
    manifest["adapter_sha256"]["adapter_model.safetensors"] = sha256_file(weights)
    (shipped / MANIFEST).write_text(json.dumps(manifest))
    with pytest.raises(ShipRefused) as err:
        install(shipped, tmp_path / "runs", registry, base_dir=tiny_run["base"])
    assert manifest["gguf_sha256"] in str(err.value) and "not promoted" in str(err.value)
    assert registry.active() is None and registry.history() == []
    run = tmp_path / "runs" / tiny_run["run"].name
    assert not list(run.glob("gguf/*.gguf")) and not (run / "Modelfile").exists()  # `truffle promote` cannot take it


def test_cli_ship_and_install_shipped(tiny_run, tmp_path, capsys):
    runs, to, reg = tmp_path / "train-runs", tmp_path / "shipped", tmp_path / "registry"
    failed = runs / "20260103-000000-failed00"
    for run, passed in ((runs / tiny_run["run"].name, True), (failed, False)):
        shutil.copytree(tiny_run["run"], run, ignore=shutil.ignore_patterns("merged", "quants", "checkpoints"))
        _report(run, passed)
    # a run trained on a local base folder names it in base.json: install resolves it without --base-dir
    base_json = runs / tiny_run["run"].name / "base.json"
    base_json.write_text(json.dumps({**json.loads(base_json.read_text()), "base_model": str(tiny_run["base"])}))

    assert truffle(["ship", failed.name, "--runs", str(runs), "--to", str(to)]) == 2
    assert "gate failed" in capsys.readouterr().err
    assert truffle(["ship", tiny_run["run"].name, "--runs", str(runs), "--to", str(to)]) == 0
    assert f"git add {to / tiny_run['run'].name}" in capsys.readouterr().out

    args = ["install-shipped", "--from", str(to), "--runs", str(tmp_path / "runs"), "--registry", str(reg)]
    assert truffle(args) == 0
    assert "is the active model" in capsys.readouterr().out
    assert Registry(reg).active().gguf_sha256 == sha256_file(tiny_run["gguf"])
    assert truffle(args) == 0
    assert "already the active model" in capsys.readouterr().out
    assert truffle(["install-shipped", "--from", str(tmp_path / "nothing"), "--registry", str(reg)]) == 0
    assert "nothing shipped" in capsys.readouterr().out
    assert truffle(["ship", "no-such-run", "--runs", str(runs), "--to", str(to)]) == 1
    assert "no run folder" in capsys.readouterr().err

    _flip_sign(to / tiny_run["run"].name / "adapter" / "adapter_model.safetensors")
    fresh = ["install-shipped", "--from", str(to), "--runs", str(tmp_path / "runs2"), "--registry", str(tmp_path / "r2")]
    assert truffle(fresh) == 2
    assert "is not the shipped" in capsys.readouterr().err
    assert Registry(tmp_path / "r2").active() is None


@pytest.fixture(scope="module")
def tiny_blend(tiny_run):
    """A gate-passed blend of the tiny run and a second adapter (the first's B weights scaled by -0.5),
    merged and exported as the chain does."""
    from safetensors.torch import load_file, save_file

    from truffle_assets.chat_format.template import serving_template
    from truffle_assets.training.artifacts import export_gguf
    from truffle_assets.training.blend import blend_adapters
    from truffle_assets.training.trainer import merge

    runs, first = tiny_run["root"] / "runs", tiny_run["run"]
    other = runs / "20260101-000001-tinyrun1"
    shutil.copytree(first / "adapter", other / "adapter")
    weights = other / "adapter" / "adapter_model.safetensors"
    save_file({k: v * -0.5 if "lora_B" in k else v for k, v in load_file(str(weights)).items()}, str(weights))
    blend = runs / "20260101-000002-blend000"
    parts = [{"run": first.name, "weight": 0.7}, {"run": other.name, "weight": 0.3}]
    blend_adapters([(runs / p["run"] / "adapter", p["weight"]) for p in parts], blend / "adapter")
    (blend / "base.json").write_text(json.dumps({**json.loads((first / "base.json").read_text()), "blend": parts}))
    merge(tiny_run["base"], blend / "adapter", blend / "merged", serving_template())
    prompt = _rows()[0]["messages"][:-1]
    exp = export_gguf(blend / "merged", blend / "quants", [prompt], prompt, quants=("q8_0",), min_agreement=0.0,
                      pre_tokenizer="qwen2", max_tokens=4)
    (blend / "gguf").mkdir()
    gguf = blend / "gguf" / Path(exp.selected_path).name
    shutil.copyfile(exp.selected_path, gguf)
    _report(blend, passed=True)
    return {"run": blend, "gguf": gguf, "other": other, "shipped": ship(blend, tiny_run["root"] / "shipped")}


def test_a_blend_ships_as_its_parts_and_installs_the_evaluated_gguf(tiny_run, tiny_blend, tmp_path):
    shipped, blend = tiny_blend["shipped"], tiny_blend["run"]
    manifest = read_manifest(shipped)
    assert [p["run"] for p in manifest["blend"]] == [tiny_run["run"].name, tiny_blend["other"].name]
    # the concatenated weights are not shipped; each part's are, byte for byte (git stores a shared one once)
    assert not (shipped / "adapter" / "adapter_model.safetensors").exists()
    for part in (tiny_run["run"], tiny_blend["other"]):
        assert (shipped / "parts" / part.name / "adapter_model.safetensors").read_bytes() == \
            (part / "adapter" / "adapter_model.safetensors").read_bytes()
    assert (shipped / "parts" / tiny_run["run"].name / "adapter_model.safetensors").read_bytes() == \
        (tiny_run["shipped"] / "adapter" / "adapter_model.safetensors").read_bytes()
    assert manifest["adapter_sha256"]["adapter_model.safetensors"] == \
        sha256_file(blend / "adapter" / "adapter_model.safetensors")

    registry = Registry(tmp_path / "registry", key=KEY)
    result = install(shipped, tmp_path / "runs", registry, base_dir=tiny_run["base"])
    installed = tmp_path / "runs" / blend.name
    assert result.status == "installed" and result.rebuilt
    assert sha256_file(installed / "gguf" / "model-q8_0.gguf") == sha256_file(tiny_blend["gguf"])
    assert registry.active().run_id == blend.name
    # the blended adapter is there for a later stage to start from, as for a trained run
    assert (installed / "adapter" / "adapter_model.safetensors").read_bytes() == \
        (blend / "adapter" / "adapter_model.safetensors").read_bytes()
    assert not (installed / ".adapter.tmp").exists() and not (installed / "merged").exists()
    # a run folder holding another adapter under that id is not overwritten
    _flip_sign(installed / "adapter" / "adapter_model.safetensors")
    with pytest.raises(ShipError, match="another adapter than the shipped blend"):
        adapter_for(shipped, manifest, installed)


def test_a_blend_with_a_changed_part_is_neither_shipped_nor_installed(tiny_run, tiny_blend, tmp_path):
    shipped = tmp_path / "shipped" / tiny_blend["run"].name
    shutil.copytree(tiny_blend["shipped"], shipped)
    part = shipped / "parts" / tiny_blend["other"].name / "adapter_model.safetensors"
    _flip_sign(part)
    registry = Registry(tmp_path / "registry", key=KEY)
    with pytest.raises(ShipRefused, match="adapter_model.safetensors: sha256 .* is not the shipped"):
        install(shipped, tmp_path / "runs", registry, base_dir=tiny_run["base"])
    manifest = json.loads((shipped / MANIFEST).read_text())  # the part's hash updated too: the blend tells
    manifest["parts_sha256"][f"{tiny_blend['other'].name}/adapter_model.safetensors"] = sha256_file(part)
    (shipped / MANIFEST).write_text(json.dumps(manifest))
    with pytest.raises(ShipRefused, match="blending .* not the shipped"):
        install(shipped, tmp_path / "runs", registry, base_dir=tiny_run["base"])
    assert registry.active() is None and not list((tmp_path / "runs").glob("*/gguf/*.gguf"))

    # a part trained on after the blend was made: shipping it would not rebuild the evaluated model
    runs = tmp_path / "train-runs"
    for run in (tiny_run["run"], tiny_blend["other"], tiny_blend["run"]):
        shutil.copytree(run, runs / run.name, ignore=shutil.ignore_patterns("merged", "quants", "checkpoints"))
    _flip_sign(runs / tiny_blend["other"].name / "adapter" / "adapter_model.safetensors")
    with pytest.raises(ShipError, match="does not give"):
        ship(runs / tiny_blend["run"].name, tmp_path / "shipped2")
    assert not (tmp_path / "shipped2" / tiny_blend["run"].name).exists()


def test_files_over_the_chunk_size_ship_in_chunks_and_install_whole(tiny_run, tiny_blend, tmp_path):
    """GitHub refuses files over 100 MB, and a stage on a blend has ~280 MB of adapter: such files ship
    as byte chunks that install joins again, exactly (the rebuilt GGUF is still the evaluated one)."""
    weights = "adapter_model.safetensors"
    chunk = 8 * 1024
    assert (tiny_run["run"] / "adapter" / weights).stat().st_size > 2 * chunk
    for source, gguf in ((tiny_run["run"], tiny_run["gguf"]), (tiny_blend["run"], tiny_blend["gguf"])):
        shipped = ship(source, tmp_path / "shipped", chunk_bytes=chunk)
        manifest = read_manifest(shipped)
        chunks = [len(h) for rel, h in manifest["split"].items() if rel.endswith(weights)]  # a blend: each part's
        assert chunks and min(chunks) >= 3
        assert all(p.stat().st_size <= chunk for p in shipped.rglob("*") if p.is_file())
        assert not list(shipped.rglob(weights))  # only chunks of the weights
        registry = Registry(tmp_path / f"registry-{source.name}", key=KEY)
        result = install(shipped, tmp_path / "runs", registry, base_dir=tiny_run["base"])
        installed = tmp_path / "runs" / source.name
        assert result.status == "installed" and result.rebuilt
        assert sha256_file(installed / "gguf" / "model-q8_0.gguf") == sha256_file(gguf)
        assert (installed / "adapter" / weights).read_bytes() == (source / "adapter" / weights).read_bytes()
        assert not (installed / ".shipped").exists()

    # one changed chunk: refused before anything is rebuilt, naming that chunk
    first = next(iter(manifest["split"]))
    bad = shipped / f"{first}.001"
    bad.write_bytes(bytes(b ^ 0xFF for b in bad.read_bytes()))
    registry = Registry(tmp_path / "registry-bad", key=KEY)
    with pytest.raises(ShipRefused, match=rf"{first}\.001: sha256 .* is not the shipped"):
        install(shipped, tmp_path / "runs-bad", registry, base_dir=tiny_run["base"])
    assert registry.active() is None
