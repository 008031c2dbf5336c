"""`ApiGuard`: the ASGI layer in front of the API that runs before any route reads a byte of body.

Order matters: the bearer token first (an unauthenticated client learns nothing from size or
validation errors), then the body size — a declared Content-Length over the limit is refused before
the body is read, and a chunked (or lying) body is counted as it arrives and cut off at the limit.
The app never holds more than `max_body_bytes` plus one chunk; what the client still sends is
discarded by the server (uvicorn drops body bytes after the response), never buffered.
"""

from __future__ import annotations

import hmac
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

from starlette.responses import JSONResponse

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

# the pages hold no data and ask for the token themselves, so they load without one
PUBLIC_PATHS = ("/", "/favicon.ico", "/inspector")
PUBLIC_PREFIXES = ("/static/",)


def error_response(status: int, message: str, type_: str, code: str | None = None, param: str | None = None,
                   headers: dict[str, str] | None = None, **extra: Any) -> JSONResponse:
    """The OpenAI error shape: `{"error": {"message", "type", "param", "code"}}` (plus `extra` keys)."""
    if status == 401:
        headers = {"WWW-Authenticate": "Bearer", **(headers or {})}
    return JSONResponse({"error": {"message": message, "type": type_, "param": param, "code": code}, **extra},
                        status_code=status, headers=headers)


class _BodyTooLarge(Exception):
    pass


class ApiGuard:
    def __init__(self, app: ASGIApp, *, token: str | None, max_body_bytes: int) -> None:
        self.app, self.token, self.max_body_bytes = app, token, max_body_bytes

    def _is_public(self, scope: Scope) -> bool:
        path = scope.get("path", "")
        return scope.get("method") in ("GET", "HEAD") and (path in PUBLIC_PATHS or path.startswith(PUBLIC_PREFIXES))

    def _authorized(self, headers: dict[bytes, bytes]) -> bool:
        scheme, _, credentials = headers.get(b"authorization", b"").partition(b" ")
        return scheme.lower() == b"bearer" and hmac.compare_digest(credentials.strip(), self.token.encode())

    def _too_large(self) -> JSONResponse:
        return error_response(413, f"request body exceeds {self.max_body_bytes} bytes", "invalid_request_error",
                              "request_too_large")

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = dict(scope.get("headers") or [])  # lower-case names; a repeated header keeps its last value
        if self.token is not None and not self._is_public(scope) and not self._authorized(headers):
            await error_response(401, "missing or wrong bearer token (Authorization: Bearer <token>)",
                                 "authentication_error", "invalid_api_key")(scope, receive, send)
            return
        declared = headers.get(b"content-length")
        if declared is not None:
            if not declared.strip().isdigit():
                await error_response(400, "invalid Content-Length header", "invalid_request_error",
                                     "invalid_content_length")(scope, receive, send)
                return
            if int(declared) > self.max_body_bytes:
                await self._too_large()(scope, receive, send)
                return

        received, cut, started = 0, False, False

        async def counted() -> Message:
            nonlocal received, cut
            if cut:
                raise _BodyTooLarge
            message = await receive()
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > self.max_body_bytes:
                    cut = True
                    raise _BodyTooLarge
            return message

        async def guarded(message: Message) -> None:
            nonlocal started
            if cut and not started:  # whatever the app made of the cut-off body is replaced by the 413
                return
            started = started or message["type"] == "http.response.start"
            await send(message)

        try:
            await self.app(scope, counted, guarded)
        except Exception:
            if not cut or started:
                raise
        if cut and not started:
            await self._too_large()(scope, receive, send)
