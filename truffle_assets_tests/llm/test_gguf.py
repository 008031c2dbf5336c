"""`served_gguf`: the one fallback chain for what the embedded llama.cpp server serves."""

import json
from pathlib import Path

import pytest

from truffle_assets.llm.gguf import QWEN_GGUF_NAME, active_gguf, qwen_gguf, served_gguf
from truffle_assets.registry import KEY_ENV, AuditFailed, Registry
from truffle_assets_tests.test_registry import KEY, make_run


def test_explicit_then_active_then_demo_model(tmp_path, monkeypatch):
    monkeypatch.setenv(KEY_ENV, KEY)  # the key the runtime verifies the registry with
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
