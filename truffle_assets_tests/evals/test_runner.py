"""The eval runner end to end against a real llama.cpp server on the tiny GGUF (no mocks)."""

import json
import os
from collections import Counter

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")

from truffle_assets.evals.cases import suites, toolcall_cases  # noqa: E402
from truffle_assets.evals.runner import MAX_TOKENS, evaluate_gguf, limit_cases, run_suites  # noqa: E402
from truffle_assets.evals.scoring import summarize  # noqa: E402

SECRETS = [{"kind": "otp", "value": "482913", "message_id": "a1b2c3d4e5f6a7b8c9d0"}]
CASE_KEYS = {"id", "category", "output", "points", "max_points", "verdict", "detail", "flags", "checks"}


def test_limit_cases_spreads_over_categories():
    cases = toolcall_cases()  # 60 happy / 30 negative / 20 edge / 10 adversarial
    assert limit_cases(cases, None) == cases
    assert [c["category"] for c in limit_cases(cases, 1)] == ["happy"]
    picked = limit_cases(cases, 12)
    assert len(picked) == 12 and set(Counter(c["category"] for c in picked)) == {"happy", "negative", "edge",
                                                                                 "adversarial"}
    assert picked[0] is cases[0]  # each category's first cases, in suite order
    order = [c["id"] for c in cases]
    assert [order.index(c["id"]) for c in picked] == sorted(order.index(c["id"]) for c in picked)


@pytest.fixture(scope="module")
def server(tiny_gguf_path):
    pytest.importorskip("llama_cpp.server", reason="llama-cpp-python[server] is not installed")
    from truffle_assets.llm.server import LlamaServer

    with LlamaServer(tiny_gguf_path, n_ctx=4096) as srv:
        yield srv


def test_run_suites_structure_and_report(server, tmp_path):
    from truffle_assets.evals.report import load_report, write_report

    seen = []
    results, stats = run_suites(server.client(timeout=120, max_retries=0), server.alias, suites(SECRETS),
                                temperatures=(0.0,), max_tokens=8, limit=2,
                                progress=lambda done, total, row: seen.append((done, total, row["id"])))
    assert list(results) == ["0.0"]
    assert list(results["0.0"]) == ["toolcall", "markdown", "classification", "privacy"]
    for rows in results["0.0"].values():
        assert len(rows) == 2 and len({r["category"] for r in rows}) == 2
        for r in rows:
            assert CASE_KEYS <= set(r) and isinstance(r["output"], str) and 0 <= r["points"] <= r["max_points"]
            assert r["verdict"] != "error", r["detail"]
    assert [s[:2] for s in seen] == [(i, 8) for i in range(1, 9)]
    assert stats["requests"] == 8 and stats["errors"] == 0 and len(stats["cases"]) == 8
    # (llama-cpp-python counts completion tokens by re-tokenizing the text: it may exceed max_tokens a little)
    assert all(0 < c["latency_s"] and c["prompt_tokens"] > 0 for c in stats["cases"])
    assert stats["completion_tokens"] == sum(c["completion_tokens"] for c in stats["cases"]) > 0
    assert stats["tokens_per_s"] >= 0 and set(stats["by_temperature"]["0.0"]) == set(results["0.0"])

    paths = write_report(results, tmp_path, None, {"model": "tiny"})
    assert all(p.exists() and p.stat().st_size > 0 for p in paths.values()) and len(paths) == 4
    report = load_report(tmp_path)
    assert report["results"] == json.loads(json.dumps(results)) and "gate" in report


def test_http_error_is_that_cases_result(server):
    """A prompt longer than the context answers HTTP 4xx/5xx: that case scores 0, the next one runs."""
    base = suites(SECRETS)["markdown"][0]
    huge = base | {"id": "markdown/direct/huge",
                   "messages": base["messages"][:1] + [{"role": "user", "content": "word " * 20000}]}
    results, stats = run_suites(server.client(timeout=120, max_retries=0), server.alias, {"markdown": [huge, base]},
                                temperatures=(0.0,), max_tokens=4)
    bad, good = results["0.0"]["markdown"]
    assert (bad["points"], bad["verdict"], bad["output"]) == (0.0, "error", "") and "HTTP" in bad["detail"]
    assert good["verdict"] != "error"
    assert stats["errors"] == 1 and stats["cases"][0]["error"]


def test_down_endpoint_gives_per_case_errors_not_an_exception():
    import openai

    from truffle_assets.llm.server import free_port

    client = openai.OpenAI(base_url=f"http://127.0.0.1:{free_port()}/v1", api_key="none", max_retries=0, timeout=5)
    results, stats = run_suites(client, "local", suites(SECRETS), temperatures=(0.0, 0.4), limit=4)
    rows = [r for objs in results.values() for rs in objs.values() for r in rs]
    assert len(rows) == 2 * 16 == stats["requests"] == stats["errors"]
    assert all(r["points"] == 0 and r["verdict"] == "error" and r["flags"] == [] for r in rows)
    assert "APIConnectionError" in rows[0]["detail"]
    assert any(r["detail"].startswith("not sent: endpoint unreachable") for r in rows)  # circuit breaker
    # an adversarial or privacy case with no answer must not count as resisted/refused
    summary = summarize(results["0.0"])
    assert all(e["score"] == 0 for e in summary["objectives"].values()) and summary["leaks"] == 0


def test_evaluate_gguf_both_temperatures(tiny_gguf_path, tmp_path):
    pytest.importorskip("llama_cpp.server", reason="llama-cpp-python[server] is not installed")
    out = evaluate_gguf(tiny_gguf_path, tmp_path / "run", SECRETS, temperatures=(0.0, 0.4), limit=1,
                        meta={"run": "test"}, max_tokens={o: 8 for o in MAX_TOKENS})
    assert set(out["paths"]) == {"json", "md", "diff", "png"} and all(p.exists() for p in out["paths"].values())
    report = json.loads(out["paths"]["json"].read_text())
    assert list(report["results"]) == ["0.0", "0.4"] and list(out["scores"]) == ["0.0", "0.4"]
    assert report["gate"] == out["gate"] and out["passed"] is False  # a random model fails the gate
    assert report["meta"]["run"] == "test" and report["meta"]["model"] == tiny_gguf_path.name
    assert report["meta"]["errors"] == 0 and out["stats"]["requests"] == 8
    assert (tmp_path / "run" / "llama-server.log").exists()
    assert "Gate: FAILED" in out["paths"]["md"].read_text()
