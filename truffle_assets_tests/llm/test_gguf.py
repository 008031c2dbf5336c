"""`served_gguf`: the one fallback chain for what the embedded llama.cpp server serves."""

from pathlib import Path

from truffle_assets.llm.gguf import QWEN_GGUF_NAME, active_gguf, qwen_gguf, served_gguf
from truffle_assets.registry import Registry
from truffle_assets_tests.test_registry import KEY, make_run


def test_explicit_then_active_then_demo_model(tmp_path):
    registry = tmp_path / "registry"
    assert active_gguf(registry) is None and not registry.exists()  # asking creates no registry
    demo = served_gguf(None, registry)
    assert Path(demo).name == QWEN_GGUF_NAME and demo == str(qwen_gguf())

    run = make_run(tmp_path, "run-a")
    Registry(registry, key=KEY).promote(run, gate_passed=True, reason="test")
    promoted = str(run.resolve() / "gguf" / "run-a-q4_k_m.gguf")
    assert active_gguf(registry) == promoted and served_gguf(None, registry) == promoted
    assert served_gguf(tmp_path / "mine.gguf", registry) == str(tmp_path / "mine.gguf")
