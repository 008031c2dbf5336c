"""The runtime tests' published memory (the Dagster world of `defs/conftest.py`, built once per
package) and its service factory, for running the tools on a real memory."""

from truffle_assets_tests.runtime.conftest import (  # noqa: F401 - fixtures
    _no_llm_env, corpus, fake_llm, memory, qwen_tokens, world)
