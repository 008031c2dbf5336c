"""One turn end to end on a real llama.cpp server (the tiny random GGUF: its text is noise)."""

from __future__ import annotations

import pytest

from truffle_assets.runtime import RuntimeConfig, open_service
from truffle_assets_tests.model_fixtures import shared_tiny_gguf


@pytest.fixture(scope="module")
def tiny_gguf(tmp_path_factory):
    return shared_tiny_gguf(tmp_path_factory)


def test_turn_on_an_embedded_llama_cpp_server(memory, tmp_path, tiny_gguf):
    cfg = RuntimeConfig(published_dir=memory, store_dir=tmp_path / "runtime", registry_dir=tmp_path / "registry",
                        endpoint={"gguf": str(tiny_gguf), "model": "tiny", "timeout_s": 60},
                        budget={"profile": 100, "summaries": 200, "raw": 800, "dialogue": 200, "answer": 48,
                                "cap": 4096}, max_recalls=1)
    with open_service(cfg, n_ctx=4096) as svc:
        assert svc.endpoint.base_url.startswith("http://127.0.0.1:")
        assert svc.counter.source == str(tiny_gguf) and svc.counter.proxy_for is None  # the served model's vocab
        turn = svc.ask([{"role": "user", "content": "What did Priya say about the trip?"}])
        # streamed, with the embedded anti-repetition sampling: llama.cpp's server takes the knobs
        ep = svc.config.endpoint
        assert ep.repeat_penalty == 1.15 and ep.frequency_penalty == 0.3 and ep.stop and ep.timeout_s == 60
        events = list(svc.ask_stream([{"role": "user", "content": "What did Priya say about the trip?"}]))
    streamed = events[-1]["turn"]
    step = [s for s in streamed.trace["steps"] if s["step"] == "answer_or_request_recall"][0]
    assert step["streamed"] and step["finish_reason"] in ("stop", "length", "loop")
    assert streamed.fallback in (None, "malformed_output", "recall_limit"), streamed.trace["fallback_detail"]
    assert streamed.trace["usage"]["completion_tokens"] > 0
    assert turn.answer and not turn.refused
    assert turn.fallback in (None, "malformed_output", "recall_limit"), turn.trace["fallback_detail"]
    assert turn.trace["llm_calls"] >= 1 and turn.model
    assert set(turn.citations) <= set(turn.trace["context_ids"])  # random text cites nothing it was not shown
    assert turn.tokens["total"] <= 4096 and turn.tokens["raw"] <= 800
