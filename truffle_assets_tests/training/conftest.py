import pytest

from truffle_assets_tests.model_fixtures import shared_tiny_gguf


@pytest.fixture(scope="session")
def tiny_gguf_path(tmp_path_factory):
    """An f16 GGUF of the tiny random model, with the serving chat template in its metadata."""
    return shared_tiny_gguf(tmp_path_factory)
