"""`served_gguf`: the one fallback chain for what the embedded llama.cpp server serves."""

import json
from pathlib import Path

import pytest

from truffle_assets import paths
from truffle_assets.files import sha256_file
from truffle_assets.llm.gguf import (DEFAULT_MODEL_ENV, QWEN_GGUF_NAME, BaseModelError, active_gguf, installed_shipped,
                                     qwen_gguf, served, served_gguf)
from truffle_assets.registry import KEY_ENV, AuditFailed, Registry
from truffle_assets_tests.test_registry import KEY, make_run


def install_fake_shipped(shared: Path, run_id: str, shipped_at: str = "2026-01-01T00:00:00+00:00") -> Path:
    """A run as `truffle install-shipped` leaves it in the shared models folder: its GGUF and ship.json."""
    run = make_run(shared, run_id)
    gguf = run / "gguf" / f"{run_id}-q4_k_m.gguf"
    (run / "base.json").write_text(json.dumps({"base_model": "qwen2.5-coder-0.5b"}))
    (run / "ship.json").write_text(json.dumps({
        "run_id": run_id, "base_model": "qwen2.5-coder-0.5b", "quant": "q4_k_m", "gguf_name": gguf.name,
        "gguf_sha256": sha256_file(gguf), "gguf_bytes": gguf.stat().st_size, "shipped_at": shipped_at}))
    return gguf


def files_under(root: Path) -> list[Path]:
    return [p for p in root.rglob("*") if p.is_file()] if root.exists() else []


def test_a_new_data_root_serves_the_shared_shipped_fine_tune(tmp_path, monkeypatch):
    """A fresh `$TRUFFLE_HOME` serves the fine-tune installed once in the shared models folder, by
    reference: nothing is copied into the new root, and the newest installed run whose GGUF is the
    evaluated one wins."""
    shared, home = tmp_path / "shared", tmp_path / "home"
    monkeypatch.setenv(KEY_ENV, KEY)
    monkeypatch.setenv(paths.HOME_ENV, str(home))
    monkeypatch.setenv(paths.SHARED_MODELS_ENV, str(shared))
    monkeypatch.delenv(DEFAULT_MODEL_ENV, raising=False)
    older = install_fake_shipped(shared, "run-old", "2026-01-01T00:00:00+00:00")
    newer = install_fake_shipped(shared, "run-new", "2026-02-01T00:00:00+00:00")

    gguf, info = served()
    assert gguf == str(newer) and info["source"] == "shipped" and info["run_id"] == info["id"] == "run-new"
    assert info["description"] == "run-new (shipped fine-tune of qwen2.5-coder-0.5b)"
    assert files_under(home) == []  # served by reference: no base model, no copy, not even a registry

    newer.write_bytes(b"GGUF" + b"x" * (newer.stat().st_size - 4))  # same size, another model
    assert installed_shipped()[0] == older and served()[1]["run_id"] == "run-old"

    # an explicit active model in this root's registry is the person's choice
    run = make_run(tmp_path, "run-mine")
    Registry(paths.registry_dir(), key=KEY).promote(run, gate_passed=True, reason="test")
    gguf, info = served()
    assert info["source"] == "registry" and info["run_id"] == "run-mine" and gguf.startswith(str(run.resolve()))
    assert info["description"] == "run-mine (fine-tune, the registry's active model)"


def test_the_base_model_when_asked_for(tmp_path, monkeypatch):
    """`TRUFFLE_DEFAULT_MODEL=base` serves the base, from the shared folder too; an unknown choice is refused."""
    home = tmp_path / "home"
    monkeypatch.setenv(paths.HOME_ENV, str(home))
    monkeypatch.delenv(paths.SHARED_MODELS_ENV, raising=False)  # the checkout's models/, where setup put the base
    monkeypatch.setenv(DEFAULT_MODEL_ENV, "base")
    gguf, info = served()
    assert Path(gguf).parent == paths.shared_models_dir() and Path(gguf).name == QWEN_GGUF_NAME
    assert info["source"] == "base" and info["description"].endswith("(base model, not fine-tuned)")
    assert files_under(home) == []
    monkeypatch.setenv(DEFAULT_MODEL_ENV, "finetuned")
    with pytest.raises(BaseModelError, match="TRUFFLE_DEFAULT_MODEL is 'finetuned'"):
        served()
    monkeypatch.delenv(DEFAULT_MODEL_ENV)
    monkeypatch.setenv(paths.SHARED_MODELS_ENV, str(tmp_path / "empty"))
    assert installed_shipped() is None


def test_explicit_then_active_then_demo_model(tmp_path, monkeypatch):
    monkeypatch.setenv(KEY_ENV, KEY)  # the key the runtime verifies the registry with
    monkeypatch.setenv(DEFAULT_MODEL_ENV, "base")
    registry = tmp_path / "registry"
    assert active_gguf(registry) is None and not registry.exists()  # asking creates no registry
    demo = served_gguf(None, registry)
    assert Path(demo).name == QWEN_GGUF_NAME and demo == str(qwen_gguf())

    run = make_run(tmp_path, "run-a")
    Registry(registry, key=KEY).promote(run, gate_passed=True, reason="test")
    promoted = str(run.resolve() / "gguf" / "run-a-q4_k_m.gguf")
    assert active_gguf(registry) == promoted and served_gguf(None, registry) == promoted
    assert served_gguf(tmp_path / "mine.gguf", registry) == str(tmp_path / "mine.gguf")


def test_a_tampered_active_model_is_not_served(tmp_path, monkeypatch, capsys):
    """`truffle serve` verifies the registry before starting llama.cpp: an edited active.json is
    refused with the file and the difference named (exit 2), not served and not replaced by Qwen."""
    from truffle_assets.cli import main

    monkeypatch.setenv(KEY_ENV, KEY)
    monkeypatch.setenv("TRUFFLE_HOME", str(tmp_path / "home"))
    for var in ("TRUFFLE_LLM_BASE_URL", "OPENROUTER_API_KEY"):  # no endpoint: the embedded server
        monkeypatch.delenv(var, raising=False)
    reg = Registry(tmp_path / "home" / "models" / "registry")
    a, b = make_run(tmp_path, "run-a"), make_run(tmp_path, "run-b")
    reg.promote(a, gate_passed=True)
    reg.promote(b, gate_passed=True)
    rec = json.loads(reg.active_path.read_text())
    reg.active_path.write_text(json.dumps(rec | {"gguf_path": str(a.resolve() / "gguf" / "run-a-q4_k_m.gguf")}))
    with pytest.raises(AuditFailed, match="active.json differs .* gguf_path is '.*run-a-q4_k_m.gguf'"):
        served_gguf(None, reg.root)
    assert main(["serve", "--port", "0"]) == 2
    err = capsys.readouterr().err
    assert "error: refusing to serve the active model" in err and "active.json differs" in err
    for command in (["ask", "hello"], ["chat"]):  # the same one line, not a traceback
        assert main(command) == 2, command
        err = capsys.readouterr().err
        assert err.startswith("error: refusing to serve the active model") and "Traceback" not in err
