"""The API's errors reach the official `openai` SDK as its own exception types, sync and streamed."""

from __future__ import annotations

import openai
import pytest

from truffle_assets.runtime.api import create_app
from truffle_assets.runtime.limits import ApiLimits
from truffle_assets_tests.fake_llm import closed_port_url
from truffle_assets_tests.runtime_api.conftest import QUESTION, TOKEN, live_server

LIMITS = ApiLimits(max_body_bytes=4096, max_question_chars=200)


@pytest.fixture
def url(make_service):
    with live_server(create_app(make_service(closed_port_url()), token=TOKEN, limits=LIMITS)) as base:
        yield base


def _client(url: str, key: str = TOKEN) -> openai.OpenAI:
    return openai.OpenAI(base_url=f"{url}/v1", api_key=key, max_retries=0, timeout=30)


@pytest.mark.parametrize("stream", [False, True])
def test_sdk_raises_its_own_error_types(url, stream):
    client = _client(url)

    def create(content: str, **extra):
        out = client.chat.completions.create(model="truffle", messages=[{"role": "user", "content": content}],
                                             stream=stream, **extra)
        return list(out) if stream else out

    with pytest.raises(openai.AuthenticationError) as auth:
        _client(url, "wrong-token-0123456789").chat.completions.create(
            model="truffle", messages=[{"role": "user", "content": QUESTION}], stream=stream)
    assert auth.value.status_code == 401 and auth.value.code == "invalid_api_key"

    with pytest.raises(openai.BadRequestError) as long_q:
        create("x" * (LIMITS.max_question_chars + 1))
    assert long_q.value.code == "question_too_long" and long_q.value.param == "messages.0.content"

    with pytest.raises(openai.UnprocessableEntityError) as bad:
        create(QUESTION, temperature=5)
    assert bad.value.status_code == 422 and bad.value.type == "invalid_request_error"

    with pytest.raises(openai.APIStatusError) as big:  # 413 has no class of its own in the SDK
        create(QUESTION, user="u" * LIMITS.max_body_bytes)
    assert big.value.status_code == 413 and big.value.code == "request_too_large"
    assert "u" * 50 not in str(big.value.body)  # the body is never echoed


def test_unknown_route_is_the_sdks_not_found(url):
    with pytest.raises(openai.NotFoundError) as missing:
        _client(url).get("/nowhere", cast_to=object)
    assert missing.value.status_code == 404 and missing.value.code == "not_found"
