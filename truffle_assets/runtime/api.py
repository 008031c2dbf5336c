"""The HTTP face of the chat runtime: an OpenAI-compatible API plus the web page, over one `ChatService`.

    app = create_app(ChatService(config), token="s3cret")   # uvicorn.run(app, ...) — see serve.py

- `POST /v1/chat/completions` answers from the memory in the OpenAI `chat.completion` shape (the
  model's answer as the message content) with an extra `truffle` object: `turn_id,
  conversation_id, citations, uncertain, watermarks, tokens, fallback, refused`. `stream: true`
  sends the answer as `chat.completion.chunk` server-sent events while the model writes it
  (`ChatService.ask_stream`: settled, scrubbed text only), the `truffle` object in the last chunk,
  ending in `data: [DONE]`, so any OpenAI client can stream it. `GET /v1/models` lists the one model
  that answers, under its own id (a run id, a GGUF's name, an endpoint's model) with a `description`
  of what it is (`llm.gguf.describe`: "20261201-013907-e62e794c (shipped fine-tune of
  qwen2.5-coder-0.5b)"); a request may name any model, the served one answers.
- `POST /api/feedback`, `POST /api/reroll`, `GET /api/evidence/{message_id}[?around=N]` (with N
  neighbours each side), `GET /api/day/{chat_id}/{YYYY-MM-DD}`, `GET /api/facts/{fact_id}`: the
  page's (and any client's) way to rate, regenerate and inspect; the last three are the memory tools'
  results (`tool_exec`: redacted, a fact by its full or shortened id). `GET /api/memory/coverage`: the
  published memory's chats, their display names and watermarks (`coverage_api`), the page's header.
- `GET /` and `/static/*`: the web page (no external resources, no build step).

With `token` set, every endpoint but the page's static files needs `Authorization: Bearer
<token>`, checked before the body is read (`api_guard.ApiGuard`, which also refuses a body over
`limits.max_body_bytes` with 413 as it streams in). Every error — ours, validation, Starlette's
404/405, an unexpected 500 — is OpenAI-style JSON (`{"error": {"message", "type", "param", "code"}}`),
never a stack trace and never an echo of the request: the service already degrades to
retrieval-only answers, anything it still raises becomes a JSON error here.
"""

from __future__ import annotations

import json
import logging
import math
import re
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, Literal

from fastapi import FastAPI, Query, Request
from fastapi.encoders import jsonable_encoder
from fastapi.exceptions import RequestValidationError
from fastapi.responses import FileResponse, JSONResponse, Response, StreamingResponse
from fastapi.staticfiles import StaticFiles
from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator
from starlette.exceptions import HTTPException

from truffle_assets.llm.gguf import describe
from truffle_assets.runtime import forget_api
from truffle_assets.runtime.api_guard import ApiGuard, error_response
from truffle_assets.runtime.coverage_api import coverage, summary_line
from truffle_assets.runtime.coverage_api import router as coverage_router
from truffle_assets.runtime.health_api import router as health_router
from truffle_assets.runtime.inspector_api import register_inspector
from truffle_assets.runtime.limits import MAX_ERROR_DETAILS, ApiLimits, clip
from truffle_assets.runtime.settings_api import router as settings_router
from truffle_assets.runtime.tool_exec import ToolError, ToolExecutor
from truffle_assets.tools.inputs import MAX_AROUND

log = logging.getLogger(__name__)

STATIC_DIR = Path(__file__).with_name("static")
MODEL_ID = "truffle"  # a completion's `model` when nothing names the served one; the request's is ignored
# the `truffle` object of a completion; `body` is the answer without its freshness lines
TURN_FIELDS = ("turn_id", "conversation_id", "citations", "uncertain", "watermarks", "tokens", "fallback", "refused",
               "reroll_of", "body")
_DAY = re.compile(r"\d{4}-\d{2}-\d{2}")
STREAM_CHUNK_CHARS = 24  # roughly a few words per SSE event
_WORDS = re.compile(r"\S+\s*|\s+")
# the `type` of an error body per status, as OpenAI names them
ERROR_TYPES = {400: "invalid_request_error", 401: "authentication_error", 403: "permission_error",
               404: "not_found_error", 405: "invalid_request_error", 413: "invalid_request_error",
               422: "invalid_request_error", 429: "rate_limit_error", 500: "server_error",
               503: "service_unavailable"}


# ---- request bodies ---------------------------------------------------------------------------------

class ChatMessage(BaseModel):
    model_config = ConfigDict(extra="allow")

    role: Literal["system", "user", "assistant", "tool", "developer"]
    content: str | list[dict[str, Any]] | None = None

    def text(self) -> str:
        """OpenAI content parts (`[{"type": "text", "text": ...}]`) are joined; other parts ignored."""
        if isinstance(self.content, list):
            return "".join(str(p.get("text", "")) for p in self.content if p.get("type") in ("text", "input_text"))
        return self.content or ""


def _non_finite(value: Any, where: str = "") -> str | None:
    """The path of the first NaN/Infinity in parsed JSON (Python's json reads those literals, and
    1e999 as inf), or None."""
    if isinstance(value, float) and not math.isfinite(value):
        return where or "body"
    items = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else ()
    for key, item in items:
        found = _non_finite(item, f"{where}.{key}" if where else str(key))
        if found:
            return found
    return None


class ChatCompletionRequest(BaseModel):
    model_config = ConfigDict(extra="allow")  # top_p, max_tokens, user, ... are accepted and ignored

    model: str | None = None
    messages: list[ChatMessage] = Field(min_length=1)
    temperature: float | None = Field(default=None, ge=0, le=2, allow_inf_nan=False)
    stream: bool = False
    conversation_id: str | None = Field(default=None, max_length=200)

    @model_validator(mode="before")
    @classmethod
    def _finite_numbers(cls, data: Any) -> Any:
        where = _non_finite(data)
        if where:  # the ignored fields too: NaN is not JSON, whoever sends it is not an OpenAI client
            raise ValueError(f"{clip(where, 80)} must be a finite number (NaN and Infinity are not JSON)")
        return data

    @field_validator("messages")
    @classmethod
    def _has_question(cls, messages: list[ChatMessage]) -> list[ChatMessage]:
        if not any(m.role == "user" and m.text().strip() for m in messages):
            raise ValueError("messages must contain a non-empty user message")
        return messages


class FeedbackRequest(BaseModel):
    turn_id: str = Field(min_length=1, max_length=200)
    rating: Literal[-1, 0, 1]
    note: str = Field(default="", max_length=2000)


class RerollRequest(BaseModel):
    turn_id: str = Field(min_length=1, max_length=200)


# ---- helpers ----------------------------------------------------------------------------------------

class ApiError(Exception):
    def __init__(self, status: int, message: str, type_: str, code: str | None = None, param: str | None = None):
        super().__init__(message)
        self.status, self.message, self.type, self.code, self.param = status, message, type_, code, param


def turn_json(result: Any, *, trace: bool = False) -> dict[str, Any]:
    """A `TurnResult` (or a dict of its fields) as plain JSON; the trace only when asked for."""
    data = result.model_dump(mode="json") if isinstance(result, BaseModel) else dict(result)
    if not trace:
        data.pop("trace", None)
    data["citations"] = list(data.get("citations") or [])
    data["uncertain"] = list(data.get("uncertain") or [])
    data["watermarks"] = dict(data.get("watermarks") or {})
    data["tokens"] = dict(data.get("tokens") or {})
    data["answer"] = data.get("answer") or ""
    data["refused"] = bool(data.get("refused", False))
    data.setdefault("fallback", None)
    data.setdefault("reroll_of", None)
    data["body"] = data.get("body") or data["answer"]
    return jsonable_encoder(data)


def _usage(turn: dict[str, Any]) -> dict[str, int]:
    """What the model reported over the turn's calls (trace.usage); without a model call (retrieval-only
    answer, refusal) the composed prompt's size and no completion."""
    usage = (turn.get("trace") or {}).get("usage") or {}
    prompt = int(usage.get("prompt_tokens") or turn["tokens"].get("prompt") or 0)
    completion = int(usage.get("completion_tokens") or 0)
    return {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion}


def _chunks(text: str, size: int = STREAM_CHUNK_CHARS) -> Iterator[str]:
    """Split on word boundaries into pieces of about `size` characters; joined they are `text`."""
    buf = ""
    for word in _WORDS.findall(text):
        buf += word
        if len(buf) >= size:
            yield buf
            buf = ""
    if buf:
        yield buf


def _turn_parts(result: Any) -> tuple[dict[str, Any], dict[str, int], dict[str, Any]]:
    """(the turn as JSON without its trace, usage, the `truffle` object of a completion)."""
    turn = turn_json(result, trace=True)
    usage = _usage(turn)
    turn.pop("trace", None)
    return turn, usage, {k: turn.get(k) for k in TURN_FIELDS}


def _streamed(events: Iterator[dict], served_model: str | None) -> Iterator[bytes]:
    """`chat.completion.chunk` server-sent events of a turn as the model writes it: a role chunk at
    once, a content chunk per settled piece of the answer, the rest of the answer (its freshness
    lines, or all of it for an answer the model did not write) and the `truffle` object in the last
    chunk, then `[DONE]`. A turn that fell back after prose was sent adds its answer after a blank
    line and says `replaced` (the page shows `truffle.answer` alone)."""
    created = int(time.time())
    base = {"id": f"chatcmpl-{created}", "object": "chat.completion.chunk", "created": created,
            "model": served_model or MODEL_ID}

    def chunk(delta: dict, finish: str | None = None, **extra: Any) -> bytes:
        return _sse({**base, "choices": [{"index": 0, "delta": delta, "finish_reason": finish}], **extra})

    yield chunk({"role": "assistant", "content": ""})
    sent = ""
    try:
        for event in events:
            if "delta" in event:
                sent += event["delta"]
                yield chunk({"content": event["delta"]})
                continue
            turn, usage, extra = _turn_parts(event["turn"])
            answer = turn["answer"]
            replaced = bool(sent) and not answer.startswith(sent)
            rest = ("\n\n" + answer) if replaced else answer[len(sent):]
            for piece in _chunks(rest):
                yield chunk({"content": piece})
            base["id"] = f"chatcmpl-{turn.get('turn_id') or created}"
            yield chunk({}, "stop", usage=usage, truffle={**extra, "answer": answer, "replaced": replaced})
    except Exception as exc:  # noqa: BLE001 - the status line is gone: the error travels as an event
        log.exception("chat stream failed")
        yield _sse({"error": {"message": clip(f"the chat service failed: {type(exc).__name__}"),
                              "type": "service_unavailable", "param": None, "code": "service_error"}})
    yield b"data: [DONE]\n\n"


def _sse(obj: Any) -> bytes:
    return f"data: {json.dumps(obj, ensure_ascii=False, separators=(',', ':'))}\n\n".encode()


def _model_name(service: Any) -> str:
    for get in (lambda: service.model, lambda: service.config.endpoint.model, lambda: service.config.model):
        try:
            name = get()
        except Exception:  # noqa: BLE001 - any shape of service/config
            continue
        if isinstance(name, str) and name:
            return name
    return MODEL_ID


def _listed_model(service: Any) -> dict[str, Any]:
    """The served model as `/v1/models` lists it: its id, what it is, and `truffle.model`, the
    status `GET /api/health` reports (source, file, run_id, sha256, since …)."""
    name = _model_name(service)
    try:
        status = dict(service.model_status())
    except Exception:  # noqa: BLE001 - a service without model status still lists its model
        status = {}
    model_id = status.get("id") or name
    description = status.get("description") or describe({"id": model_id, "source": "endpoint"})
    try:  # what the memory behind the model covers; while it builds, the description says so
        cov = coverage(service.config.published_dir)
    except Exception:  # noqa: BLE001 - a service without a published memory still lists its model
        cov = None
    memory = None if cov is None else {
        "chats": len(cov["chats"]), "current_to": cov["current_to"], "building": cov["building"]}
    building = summary_line(cov) if cov else None
    return {"id": model_id, "object": "model", "created": 0, "owned_by": "truffle",
            "description": f"{description.rstrip('.')}. {building}" if building else description,
            "truffle": {"backend": name, "model": status, "memory": memory}}


# ---- the app ----------------------------------------------------------------------------------------

def create_app(service: Any, token: str | None = None, limits: ApiLimits | None = None,
               forgetter: forget_api.Forgetter | None = None, *, mcp: bool = True, mcp_forget: bool = False) -> FastAPI:
    """The FastAPI app over `service` (a `runtime.service.ChatService`). `token`: bearer token that
    every API endpoint requires (the page's static files stay public so the page can ask for it).
    `limits`: body and question sizes (default: `service.config.api`, else `ApiLimits()`). `forgetter`:
    the pipeline's forget behind `/api/forget` (`forget_api.Forgetter`; without one those routes answer 503).
    `mcp`: serve the MCP server at `/mcp` (`runtime.mcp.http`; its sessions live in the app's lifespan),
    with the forget tool when `mcp_forget` (and a `forgetter`)."""
    if limits is None:
        limits = getattr(getattr(service, "config", None), "api", None) or ApiLimits()
    mcp_route, lifespan = None, None
    if mcp:
        from truffle_assets.runtime.mcp.http import mcp_app

        mcp_route, lifespan = mcp_app(service, token=token, limits=limits, allow_forget=mcp_forget, forgetter=forgetter)
    app = FastAPI(title="truffle", version="0.1", docs_url=None, redoc_url=None, openapi_url=None, lifespan=lifespan)
    app.state.service = service
    app.state.limits = limits
    app.add_middleware(ApiGuard, token=token, max_body_bytes=limits.max_body_bytes)

    def call(fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        """Run a service method; what it raises becomes a JSON error, never a 500 stack trace."""
        try:
            return fn(*args, **kwargs)
        except ApiError:
            raise
        except ToolError as exc:  # a memory tool's own answer: no memory yet, an unknown fact
            raise ApiError(exc.status, exc.message, "not_found_error" if exc.status == 404 else "invalid_request_error",
                           exc.code) from exc
        except LookupError as exc:  # KeyError & co: an unknown turn / message / fact
            raise ApiError(404, _msg(exc, "not found"), "not_found_error", "not_found") from exc
        except ValueError as exc:
            raise ApiError(422, clip(_msg(exc, "invalid request")), "invalid_request_error", "invalid_value") from exc
        except Exception as exc:  # noqa: BLE001 - the contract: JSON, not a trace
            log.exception("chat service failed in %s", getattr(fn, "__name__", fn))
            raise ApiError(503, clip(f"the chat service failed: {type(exc).__name__}: {_msg(exc, '')}".rstrip(": ")),
                           "service_unavailable", "service_error") from exc

    # -- errors
    @app.exception_handler(ApiError)
    async def _api_error(_: Request, exc: ApiError) -> JSONResponse:
        return error_response(exc.status, exc.message, exc.type, exc.code, exc.param)

    @app.exception_handler(RequestValidationError)
    async def _invalid(_: Request, exc: RequestValidationError) -> JSONResponse:
        # locations and messages only: pydantic's `input`/`ctx` would echo the body (a 20 MB
        # question, a secret) back to the client and into logs
        errors = [{"loc": [clip(p, 80) for p in e.get("loc", ()) if p != "body"], "msg": clip(e.get("msg", "invalid")),
                   "type": clip(e.get("type", ""), 80)} for e in exc.errors()[:MAX_ERROR_DETAILS]]
        first = errors[0] if errors else {"loc": [], "msg": "invalid request"}
        where = ".".join(str(p) for p in first["loc"])
        message = f"{where}: {first['msg']}" if where else first["msg"]
        return error_response(422, message, "invalid_request_error", "invalid_request", where or None, detail=errors)

    @app.exception_handler(HTTPException)  # Starlette's own too: unknown route 404, wrong method 405
    async def _http(_: Request, exc: HTTPException) -> JSONResponse:
        status = exc.status_code
        code = {404: "not_found", 405: "method_not_allowed"}.get(status)
        return error_response(status, clip(exc.detail), ERROR_TYPES.get(status, "invalid_request_error"), code,
                              headers=dict(exc.headers or {}))

    @app.exception_handler(Exception)
    async def _unexpected(_: Request, exc: Exception) -> JSONResponse:
        log.exception("unhandled error")
        return error_response(500, f"internal error: {type(exc).__name__}", "server_error", "internal_error")

    # -- OpenAI-compatible
    @app.get("/v1/models")
    def list_models() -> dict[str, Any]:
        return {"object": "list", "data": [_listed_model(service)]}

    @app.post("/v1/chat/completions")
    def chat_completions(body: ChatCompletionRequest) -> Response:
        messages = [{"role": m.role, "content": m.text()} for m in body.messages]
        for i, m in enumerate(messages):
            if len(m["content"]) > limits.max_question_chars:  # before any tokenizer or retrieval sees it
                raise ApiError(400, f"messages[{i}] is {len(m['content'])} characters long; the limit is "
                               f"{limits.max_question_chars}", "invalid_request_error", "question_too_long",
                               f"messages.{i}.content")
        kwargs: dict[str, Any] = {"conversation_id": body.conversation_id}
        if body.temperature is not None:
            kwargs["temperature"] = body.temperature
        if body.stream:
            return StreamingResponse(_streamed(call(service.ask_stream, messages, **kwargs), _model_name(service)),
                                     media_type="text/event-stream",
                                     headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"})
        result = call(service.ask, messages, **kwargs)
        turn, usage, extra = _turn_parts(result)
        created = int(time.time())
        return JSONResponse({
            "id": f"chatcmpl-{turn.get('turn_id') or created}", "object": "chat.completion", "created": created,
            "model": turn.get("model") or _model_name(service),
            "choices": [{"index": 0, "finish_reason": "stop", "logprobs": None,
                         "message": {"role": "assistant", "content": turn["answer"]}}],
            "usage": usage, "truffle": extra})

    # -- the page's API
    @app.post("/api/feedback")
    def feedback(body: FeedbackRequest) -> dict[str, Any]:
        recorded = call(service.feedback, body.turn_id, body.rating, body.note)
        # False: the feedback toggle is off (nothing stored), which is not an error for the client
        return {"ok": True, "recorded": recorded is not False, "turn_id": body.turn_id, "rating": body.rating}

    @app.post("/api/reroll")
    def reroll(body: RerollRequest) -> dict[str, Any]:
        result = call(service.reroll, body.turn_id)
        return {"reroll_of": body.turn_id, **turn_json(result)}

    # -- the memory, through its tools (tool_exec): the shapes and redaction an MCP client gets
    tools = ToolExecutor(service)

    @app.get("/api/evidence/{message_id}")
    def evidence(message_id: str, around: int = Query(0, ge=0, le=MAX_AROUND)) -> Any:
        found = call(tools.get_messages, [message_id], around or None).messages
        if not found:
            raise ApiError(404, f"no evidence message with id {message_id!r} in the published memory",
                           "not_found_error", "message_not_found")
        return found[0].model_dump(mode="json", exclude={"neighbours"} if found[0].neighbours is None else None)

    @app.get("/api/day/{chat_id}/{day}")
    def day(chat_id: str, day: str) -> Any:
        if not _DAY.fullmatch(day):
            raise ApiError(422, f"day must be YYYY-MM-DD, not {clip(day, 40)!r}", "invalid_request_error",
                           "invalid_value", "day")
        return call(tools.get_day, chat_id, day).model_dump(mode="json")

    @app.get("/api/facts/{fact_id}")
    def fact(fact_id: str) -> Any:
        return call(tools.get_fact, fact_id).model_dump(mode="json")  # unknown: 404 fact_not_found

    forget_api.register(app, ApiError, forgetter)  # POST/GET /api/forget

    register_inspector(app, service, tools)  # the memory inspector: GET /api/memory/*, the /inspector page

    app.include_router(settings_router)  # GET/PUT /api/settings: what the store keeps
    app.include_router(health_router)  # GET /api/health: the model served now
    app.include_router(coverage_router)  # GET /api/memory/coverage: the chats and dates the memory covers

    # -- the page (public: it holds no data and asks for the token itself)
    @app.get("/", include_in_schema=False)
    def index() -> FileResponse:
        return FileResponse(STATIC_DIR / "index.html", headers={"Cache-Control": "no-cache"})

    @app.get("/favicon.ico", include_in_schema=False)
    def favicon() -> Response:
        return Response(status_code=204)

    app.mount("/static", StaticFiles(directory=STATIC_DIR), name="static")
    if mcp_route is not None:  # MCP over streamable HTTP, behind the same ApiGuard as every route
        app.router.routes.append(mcp_route)
    return app


def _msg(exc: BaseException, default: str) -> str:
    if isinstance(exc, KeyError) and exc.args:  # str(KeyError('x')) is "'x'"
        return str(exc.args[0])
    return str(exc) or default
