"""The HTTP API's limits in one place: the API, `truffle serve`, the tests and the benchmarks import them.

- A request body over `MAX_BODY_BYTES` is refused with 413 while it streams in: a declared
  Content-Length is checked before anything is read, a chunked body is counted as it arrives, and
  the app never holds more than the limit plus one chunk. The body is never echoed.
- A chat message longer than `MAX_QUESTION_CHARS` characters is refused with 400
  (`question_too_long`) before any tokenizer or retrieval sees it.
- A bearer token shorter than `MIN_TOKEN_CHARS` or with fewer than `MIN_TOKEN_DISTINCT` different
  characters is refused by `truffle serve` (`weak_token_reason`).

Both size limits are configurable: `RuntimeConfig.api` or `$TRUFFLE_API_MAX_BODY_BYTES` /
`$TRUFFLE_API_MAX_QUESTION_CHARS` (read by `RuntimeConfig.from_env`).
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

MAX_BODY_BYTES = 1 << 20          # 1 MiB: a 32K-character question plus a long dialogue fits many times over
MAX_QUESTION_CHARS = 32_000       # per message; about 8K tokens, far past what a dialogue budget keeps
MIN_TOKEN_CHARS = 16
MIN_TOKEN_DISTINCT = 8            # "aaaaaaaaaaaaaaaa" and "abababab…" are not secrets
MAX_ERROR_DETAILS = 10            # validation errors listed per response
MAX_ERROR_TEXT = 200              # characters per message / location part in an error body

BODY_ENV = "TRUFFLE_API_MAX_BODY_BYTES"
QUESTION_ENV = "TRUFFLE_API_MAX_QUESTION_CHARS"
TOKEN_HINT = 'python -c "import secrets; print(secrets.token_urlsafe(32))"'


class ApiLimits(BaseModel):
    model_config = ConfigDict(extra="forbid")

    max_body_bytes: int = Field(MAX_BODY_BYTES, ge=1024)
    max_question_chars: int = Field(MAX_QUESTION_CHARS, ge=1)


def weak_token_reason(token: str) -> str | None:
    """Why `token` is too weak to guard the memory, or None when it is strong enough."""
    if len(token) < MIN_TOKEN_CHARS:
        return f"it has {len(token)} character{'s' if len(token) != 1 else ''}; at least {MIN_TOKEN_CHARS} are required"
    if len(set(token)) < MIN_TOKEN_DISTINCT:
        return f"it uses only {len(set(token))} different characters; at least {MIN_TOKEN_DISTINCT} are required"
    return None


def clip(text: object, limit: int = MAX_ERROR_TEXT) -> str:
    s = str(text)
    return s if len(s) <= limit else s[: limit - 1] + "…"
