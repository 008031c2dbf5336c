"""The runtime tests' published memory (the Dagster world of `defs/conftest.py`, built once per
package), its service factory and the chat FakeLLM, for running the tools on a real memory."""

from truffle_assets_tests.runtime.conftest import (  # noqa: F401 - fixtures
    _no_llm_env, chat_llm, corpus, fake_llm, llm, make_service, memory, qwen_tokens, world)
