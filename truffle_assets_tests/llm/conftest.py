"""One fake OpenAI-compatible server per module and a short-timeout client config for LLM tests."""

from pathlib import Path

import pytest

from truffle_assets.llm.client import LLMConfig
from truffle_assets_tests.fake_llm import FakeLLM


def llm_cfg(base_url: str | None, tmp_path: Path | None = None, **kw) -> LLMConfig:
    base = dict(base_url=base_url, model="fake-model", timeout_s=1.0, backoff_s=0.05, max_retries=2,
                cache_dir=str(tmp_path / "llm-cache") if tmp_path else None)
    return LLMConfig(**{**base, **kw})


@pytest.fixture(scope="module")
def fake():
    with FakeLLM() as f:
        yield f
