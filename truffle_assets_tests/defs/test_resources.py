"""Secrets reach the resources as dg.EnvVar, bound only when set: with none the build runs offline."""

import dagster as dg
import pytest

from truffle_assets.defs.resources import LLMResource, env_var_if_set


@dg.asset
def endpoint(llm: LLMResource) -> dict:
    cfg = llm.config()
    return {"base_url": cfg.base_url, "api_key": cfg.api_key, "enabled": llm.client.enabled}


def test_no_variables_set_means_no_binding_and_no_llm(tmp_path, monkeypatch):
    for name in ("TRUFFLE_LLM_BASE_URL", "TRUFFLE_LLM_API_KEY", "OPENROUTER_API_KEY", "TRUFFLE_AUDIT_KEY"):
        monkeypatch.delenv(name, raising=False)
    assert env_var_if_set("TRUFFLE_AUDIT_KEY") is None
    llm = LLMResource.from_env(cache_dir=str(tmp_path))
    assert llm.base_url is None and llm.api_key is None
    result = dg.materialize([endpoint], resources={"llm": llm})
    assert result.output_for_node("endpoint") == {"base_url": None, "api_key": None, "enabled": False}


def test_openrouter_key_is_bound_by_name_and_read_at_run_time(tmp_path, monkeypatch):
    monkeypatch.setenv("TRUFFLE_LLM_BASE_URL", "https://openrouter.ai/api/v1")
    monkeypatch.setenv("OPENROUTER_API_KEY", "sk-or-test")
    monkeypatch.delenv("TRUFFLE_LLM_API_KEY", raising=False)
    llm = LLMResource.from_env(cache_dir=str(tmp_path))
    # the resource holds the variable's name, not its value (the UI and run config show only the name)
    assert isinstance(llm.api_key, dg.EnvVar) and llm.api_key.env_var_name == "OPENROUTER_API_KEY"
    assert LLMResource.from_env(base_url="http://127.0.0.1:9/v1").base_url == "http://127.0.0.1:9/v1"  # fields win
    result = dg.materialize([endpoint], resources={"llm": llm})
    assert result.output_for_node("endpoint") == {
        "base_url": "https://openrouter.ai/api/v1", "api_key": "sk-or-test", "enabled": True}


@dg.asset
def limits(llm: LLMResource) -> dict:
    cfg = llm.config()
    return {"timeout_s": cfg.timeout_s, "max_concurrency": cfg.max_concurrency}


def test_a_slow_local_server_gets_its_limits_from_the_environment(tmp_path, monkeypatch):
    monkeypatch.setenv("TRUFFLE_LLM_BASE_URL", "http://127.0.0.1:8080/v1")
    monkeypatch.setenv("TRUFFLE_LLM_TIMEOUT_S", "900")
    monkeypatch.setenv("TRUFFLE_LLM_MAX_CONCURRENCY", "1")
    llm = LLMResource.from_env(cache_dir=str(tmp_path))
    result = dg.materialize([limits], resources={"llm": llm})
    assert result.output_for_node("limits") == {"timeout_s": 900.0, "max_concurrency": 1}
    assert LLMResource.from_env(timeout_s=30.0).config().timeout_s == 30.0  # fields win
    monkeypatch.delenv("TRUFFLE_LLM_TIMEOUT_S")
    assert LLMResource.from_env().config().timeout_s == 60.0  # unset: the default


def test_a_bad_limit_in_the_environment_is_named(monkeypatch):
    monkeypatch.setenv("TRUFFLE_LLM_MAX_CONCURRENCY", "one")
    with pytest.raises(ValueError, match="TRUFFLE_LLM_MAX_CONCURRENCY='one': expected a whole number"):
        LLMResource.from_env()
    monkeypatch.setenv("TRUFFLE_LLM_MAX_CONCURRENCY", "0")
    with pytest.raises(ValueError, match="must be above 0"):
        LLMResource.from_env()
