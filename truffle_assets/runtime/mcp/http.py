"""The MCP server over streamable HTTP, as a route of the API app (`/mcp` in `truffle serve`).

    route, lifespan = mcp_route(server, token=token, max_body_bytes=limits.max_body_bytes)

The route sits behind the app's `ApiGuard`, so the API's rules hold unchanged: a bearer token on
every request when one is configured (loopback binds may go without), and the body limit. The
session manager's task group lives in the app's lifespan (a manager runs once, so each app gets its
own). Without a token the app can only be bound to loopback (`serve.check_bind`), and there a web
page could still reach it through a rebound DNS name: the Host and Origin headers must then name
loopback (421 / 403 otherwise). With a token the token is the guard.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import AsyncIterator, Callable
from typing import Any

import anyio
from mcp.server.lowlevel import Server
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from mcp.server.transport_security import TransportSecuritySettings
from starlette.routing import Route

from truffle_assets.runtime.api_guard import error_response

PATH = "/mcp"
MAX_SESSIONS = 64  # one per connected client; a desktop or two, an agent or two
SESSION_IDLE_S = 1800.0
_LOOPBACK = ("127.0.0.1", "localhost", "[::1]")


class _SessionEndNoise(logging.Filter):
    """The SDK logs the normal end of a session (the client's DELETE closes its open GET stream) as
    an error with a traceback; that one record is dropped, every other error stays."""

    def filter(self, record: logging.LogRecord) -> bool:
        exc = record.exc_info[1] if record.exc_info else None
        return not (record.getMessage() == "Error in standalone SSE writer" and isinstance(exc, anyio.ClosedResourceError))


_SDK_LOG = logging.getLogger("mcp.server.streamable_http")
if not any(isinstance(f, _SessionEndNoise) for f in _SDK_LOG.filters):
    _SDK_LOG.addFilter(_SessionEndNoise())


def transport_security(token: str | None) -> TransportSecuritySettings:
    """DNS-rebinding protection when no token guards the endpoint (loopback), none behind a token."""
    if token is not None:
        return TransportSecuritySettings(enable_dns_rebinding_protection=False)
    return TransportSecuritySettings(
        enable_dns_rebinding_protection=True,
        allowed_hosts=[*_LOOPBACK, *(f"{h}:*" for h in _LOOPBACK)],
        allowed_origins=[o for h in _LOOPBACK for o in (f"http://{h}", f"http://{h}:*")])


class _Endpoint:
    """A raw ASGI endpoint (Starlette serves a non-function endpoint as an ASGI app, every method);
    `running` while the app's lifespan runs the session manager."""

    def __init__(self, manager: StreamableHTTPSessionManager) -> None:
        self.manager = manager
        self.running = False

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if not self.running:  # the app was started without its lifespan, or it has ended
            await error_response(503, "the MCP endpoint is not running (the server was started without its lifespan)",
                                 "service_unavailable", "mcp_not_running")(scope, receive, send)
            return
        await self.manager.handle_request(scope, receive, send)


def mcp_route(server: Server, *, token: str | None, max_body_bytes: int) -> tuple[Route, Callable[[Any], Any]]:
    """The `/mcp` route for `server` and the lifespan that runs its session manager."""
    # a tool answers once, with no progress to stream: a plain JSON response costs less than an SSE one
    manager = StreamableHTTPSessionManager(app=server, json_response=True, stateless=False,
                                           security_settings=transport_security(token),
                                           session_idle_timeout=SESSION_IDLE_S, max_request_body_size=max_body_bytes,
                                           max_sessions=MAX_SESSIONS)
    endpoint = _Endpoint(manager)

    @contextlib.asynccontextmanager
    async def lifespan(_app: Any) -> AsyncIterator[None]:
        async with manager.run():
            endpoint.running = True
            try:
                yield
            finally:
                endpoint.running = False

    return Route(PATH, endpoint=endpoint, include_in_schema=False), lifespan


def mcp_app(service: Any, *, token: str | None, limits: Any, allow_forget: bool = False,
            forgetter: Any = None) -> tuple[Route, Callable[[Any], Any]]:
    """`mcp_route` for a server over `service`'s tool executor (`create_app(..., mcp=True)`)."""
    from truffle_assets.runtime.mcp.server import build_server
    from truffle_assets.runtime.tool_exec import ToolExecutor

    server = build_server(ToolExecutor(service), service=service, limits=limits, allow_forget=allow_forget,
                          forgetter=forgetter)
    return mcp_route(server, token=token, max_body_bytes=limits.max_body_bytes)
