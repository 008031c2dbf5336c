"""LLMClient against a real local OpenAI-compatible HTTP server (truffle_assets_tests.fake_llm)."""

import json
import time

import pytest
from pydantic import BaseModel

from truffle_assets.llm.client import OPENROUTER_BASE_URL, LLMClient, LLMConfig, extract_json_object
from truffle_assets_tests.fake_llm import FakeLLM, closed_port_url
from truffle_assets_tests.llm.conftest import llm_cfg

USER = "Episode transcript:\n[m1] 09:00 Alice: lunch at Koshy's on Friday?\n[m2] 09:02 Bob: yes, 1pm"


class Summary(BaseModel):
    summary: str
    evidence_message_ids: list[str] = []


cfg = llm_cfg


@pytest.fixture(autouse=True)
def _reset(fake):
    fake.mode = "ok"
    fake.delay_s = 3.0
    fake.reset()


def test_extract_json_object_tolerates_fences_prose_and_think():
    assert extract_json_object('{"a": 1}') == {"a": 1}
    assert extract_json_object('```json\n{"a": 2}\n```') == {"a": 2}
    assert extract_json_object('Sure! Here it is: {"a": 3} hope that helps {"b": 4}') == {"a": 3}
    assert extract_json_object('<think>maybe {"x": 0}</think>\n{"a": 5}') == {"a": 5}
    assert extract_json_object("[1, 2] then {\"a\": 6}") == {"a": 6}
    assert extract_json_object('{"a": "cut off') is None
    assert extract_json_object("no json here") is None
    assert extract_json_object(None) is None


def test_config_enabled_and_env(monkeypatch):
    assert not LLMConfig().enabled
    assert LLMConfig(base_url=OPENROUTER_BASE_URL, api_key="k").enabled
    monkeypatch.setenv("TRUFFLE_LLM_BASE_URL", OPENROUTER_BASE_URL)
    monkeypatch.setenv("OPENROUTER_API_KEY", "sk-or-test")
    monkeypatch.delenv("TRUFFLE_LLM_API_KEY", raising=False)
    c = LLMConfig.from_env(timeout_s=5)
    assert c.enabled and c.api_key == "sk-or-test" and c.timeout_s == 5
    assert c.model == "qwen/qwen3-30b-a3b-instruct-2507" and c.json_mode and c.temperature == 0.2


def test_disabled_client_returns_none_without_raising():
    client = LLMClient(LLMConfig())
    assert client.complete_json("s", USER, Summary, "k") is None
    assert client.to_english(["hola amigo"]) == [None]
    assert client.stats.calls == 0 and client.stats.fallbacks >= 1


def test_ok_then_cache_hit_across_clients(fake, tmp_path):
    c1 = LLMClient(cfg(fake.base_url, tmp_path))
    r = c1.complete_json("Summarize.", USER, Summary, "ep1:B")
    assert isinstance(r, Summary) and r.evidence_message_ids == ["m1", "m2"]
    assert fake.requests == 1
    body = fake.bodies[0]
    assert body["response_format"] == {"type": "json_object"} and body["temperature"] == 0.2
    assert "JSON Schema" in body["messages"][0]["content"]
    s = c1.stats.as_dict()
    assert s["calls"] == 1 and s["tokens_in"] > 0 and s["tokens_out"] > 0 and s["cost_usd"] > 0
    files = list((tmp_path / "llm-cache").rglob("*.json"))
    assert len(files) == 1 and not list((tmp_path / "llm-cache").rglob(".tmp-*"))
    assert json.loads(files[0].read_text())["value"]["summary"] == r.summary

    c2 = LLMClient(cfg(fake.base_url, tmp_path))  # a new run, same cache dir
    r2 = c2.call_json("Summarize.", USER, Summary, "ep1:B")
    assert r2.value == r and r2.cached and r2.tokens_in == s["tokens_in"]
    assert fake.requests == 1 and c2.stats.cache_hits == 1 and c2.stats.calls == 0
    # a different cache key, model or prompt is a different entry
    assert c2.complete_json("Summarize.", USER, Summary, "ep1:C") is not None
    assert fake.requests == 2


def test_json_mode_off_sends_no_response_format(fake):
    client = LLMClient(cfg(fake.base_url, json_mode=False))
    assert client.complete_json("s", USER, Summary, "k") is not None
    assert "response_format" not in fake.bodies[-1]


def test_server_without_json_mode_is_used_without_it(fake):
    fake.mode = "no_json_mode"
    client = LLMClient(cfg(fake.base_url))
    assert client.complete_json("s", USER, Summary, "a") is not None
    assert client.complete_json("s", USER, Summary, "b") is not None
    assert fake.requests == 3  # one rejected request, then json mode stays off for the run
    assert "response_format" not in fake.bodies[-1]


def test_prose_wrapped_json_is_accepted(fake):
    fake.mode = "prose_json"
    assert LLMClient(cfg(fake.base_url)).complete_json("s", USER, Summary, "k") is not None


@pytest.mark.parametrize("mode, requests", [("invalid_json", 2), ("prose", 2), ("http500", 3)])
def test_misbehaving_endpoint_returns_none(fake, tmp_path, mode, requests):
    fake.mode = mode
    client = LLMClient(cfg(fake.base_url, tmp_path))
    t0 = time.monotonic()
    assert client.complete_json("s", USER, Summary, "k") is None
    assert time.monotonic() - t0 < 3
    assert fake.requests == requests  # invalid output: one repair; HTTP 500: 1 + max_retries
    s = client.stats
    assert s.fallbacks == 1 and s.failures == requests
    assert not list((tmp_path / "llm-cache").rglob("*.json"))  # failures are never cached


def test_repair_round_trip_recovers(fake):
    calls = []

    def responder(body):
        calls.append(body)
        return "not json at all" if len(calls) == 1 else json.dumps({"summary": "fixed"})

    fake.responder = responder
    try:
        client = LLMClient(cfg(fake.base_url))
        assert client.complete_json("s", USER, Summary, "k") == Summary(summary="fixed")
        assert [m["role"] for m in calls[1]["messages"]] == ["system", "user", "assistant", "user"]
    finally:
        fake.responder = None


def test_429_is_retried(fake):
    fake.mode = "http429_then_ok"
    client = LLMClient(cfg(fake.base_url))
    assert client.complete_json("s", USER, Summary, "k") is not None
    assert fake.requests == 2 and client.stats.retries == 1


def test_slow_endpoint_times_out_and_trips_breaker(fake):
    fake.mode = "slow"
    client = LLMClient(cfg(fake.base_url, max_concurrency=4, breaker_threshold=4))
    t0 = time.monotonic()
    out = client.map_json([("s", f"{USER} {i}", Summary, str(i)) for i in range(12)])
    elapsed = time.monotonic() - t0
    assert out == [None] * 12
    assert elapsed < 6, elapsed
    assert client.stats.breaker_open and client.stats.fallbacks == 12
    assert fake.requests <= 8


def test_down_endpoint_trips_breaker_fast():
    client = LLMClient(cfg(closed_port_url(), backoff_s=1.0, max_retries=3, breaker_threshold=3))
    t0 = time.monotonic()
    out = client.map_json([("s", f"u{i}", Summary, str(i)) for i in range(40)])
    assert out == [None] * 40
    assert time.monotonic() - t0 < 3  # sleeping retries wake up when the breaker opens
    s = client.stats.as_dict()
    assert s["breaker_open"] and s["fallbacks"] == 40 and s["calls"] <= 3 + 4
    assert client.complete_json("s", "later", Summary, "x") is None and client.stats.calls == s["calls"]


def test_consecutive_bad_calls_trip_breaker(fake):
    fake.mode = "prose"
    client = LLMClient(cfg(fake.base_url, breaker_calls=3, max_concurrency=1))
    assert client.map_json([("s", f"u{i}", Summary, str(i)) for i in range(10)]) == [None] * 10
    assert client.breaker_open and fake.requests == 6  # 3 calls x (answer + repair)


def test_token_budget_stops_calls(fake):
    client = LLMClient(cfg(fake.base_url, max_tokens_per_run=1500, max_output_tokens=256, max_concurrency=1))
    out = client.map_json([("s", f"{USER} {i}", Summary, str(i)) for i in range(10)])
    n_ok = sum(r is not None for r in out)
    assert 1 <= n_ok < 10 and out[n_ok:] == [None] * (10 - n_ok)
    s = client.stats
    assert s.budget_exhausted and fake.requests == n_ok
    assert s.tokens_in + s.tokens_out <= 1500


def test_cost_budget_stops_calls(fake):
    client = LLMClient(cfg(fake.base_url, max_cost_usd=0.0005, price_in_per_mtok=1000.0, price_out_per_mtok=1000.0,
                           max_output_tokens=100, max_concurrency=1))
    out = client.map_json([("s", f"{USER} {i}", Summary, str(i)) for i in range(10)])
    assert out.count(None) >= 8 and client.stats.budget_exhausted
    assert client.stats.cost_usd <= 0.0005


def test_map_json_bounds_concurrency_and_keeps_order():
    with FakeLLM("slow", delay_s=0.15) as fake:  # its own server: no handlers left over from other tests
        client = LLMClient(cfg(fake.base_url, max_concurrency=2, timeout_s=2.0))
        jobs = [("s", f"Episode transcript:\n[m{i}] 09:00 A: x", Summary, str(i)) for i in range(1, 7)]
        out = client.map_json(jobs)
        assert [r.evidence_message_ids for r in out] == [[f"m{i}"] for i in range(1, 7)]
        assert fake.max_in_flight == 2 and fake.requests == 6


def test_to_english_batches_and_caches(fake, tmp_path):
    texts = ["kal milte hai", "", "namaste", "kal milte hai", "¿dónde estás?"]
    client = LLMClient(cfg(fake.base_url, tmp_path))
    out = client.to_english(texts)
    assert out == ["EN: kal milte hai", None, "EN: namaste", "EN: kal milte hai", "EN: ¿dónde estás?"]
    assert fake.requests == 1  # one batch, duplicates sent once
    client2 = LLMClient(cfg(fake.base_url, tmp_path))
    assert client2.to_english(["namaste", "new line"], batch_size=1) == ["EN: namaste", "EN: new line"]
    assert fake.requests == 2  # only the uncached text was sent


def test_to_english_with_down_server_returns_nones():
    client = LLMClient(cfg(closed_port_url()))
    t0 = time.monotonic()
    assert client.to_english(["hola", "ciao"], batch_size=1) == [None, None]
    assert time.monotonic() - t0 < 3
