"""The memory stages' LLM tests reuse the LLM package's fake server fixture."""

from truffle_assets_tests.llm.conftest import fake  # noqa: F401  (a fixture, found by name)
