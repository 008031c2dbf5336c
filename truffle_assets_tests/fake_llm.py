"""A real OpenAI-compatible HTTP server for tests: ThreadingHTTPServer on 127.0.0.1, random port.

    with FakeLLM() as llm:
        cfg = LLMConfig(base_url=llm.base_url, timeout_s=1, backoff_s=0.05)
        ...
        llm.mode = "http500"
        assert llm.requests == 3

Modes (settable at any time through `.mode`):
  ok              valid JSON derived from the request: translations for `[i] text` batches, else a
                  summary citing the `[mN]` refs (or 20-hex message ids) found in the prompt, plus
                  one fact when the system prompt asks for `facts`; plain text when no JSON asked.
  no_json_mode    HTTP 400 to any request with `response_format`, ok otherwise (servers without it)
  prose_json      the ok answer wrapped in prose and a ```json fence (clients must cope)
  prose           prose only, no JSON at all
  invalid_json    a truncated JSON object
  http500         HTTP 500 with an OpenAI-style error body
  http429_then_ok the first request with a given body gets 429 (Retry-After: 0), its re-send gets ok
  slow            sleeps `delay_s` (default 3 s) before answering ok: longer than test timeouts
  garbage_ids     valid JSON whose evidence cites ids that are not in the prompt

`responder` (body -> content str) overrides the ok content for other protocols (runtime tests).
A request with `"stream": true` gets the content as `chat.completion.chunk` server-sent events, a
few words each, `stream_delay_s` apart (a usage chunk too when `stream_options.include_usage`);
`streams_cut` counts streams the client closed before the end.
A down endpoint: `closed_port_url()` gives a base URL nobody listens on.
"""

from __future__ import annotations

import hashlib
import json
import re
import socket
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

_PIECE = re.compile(r"\S+\s*|\s+")  # the fake's tokens: a word and the space after it

MODES = ("ok", "no_json_mode", "prose_json", "prose", "invalid_json", "http500", "http429_then_ok", "slow", "garbage_ids")

_REF = re.compile(r"\[(m\d+)\]")
_HEX_ID = re.compile(r"\b[0-9a-f]{20}\b")
_TRANSLATE_LINE = re.compile(r"^\[(\d+)\]\s?(.*)$", re.MULTILINE)


def closed_port_url() -> str:
    """Base URL of a port that was just free: connections are refused (a down endpoint)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    return f"http://127.0.0.1:{port}/v1"


def _messages_text(body: dict, role: str) -> str:
    return "\n".join(str(m.get("content") or "") for m in body.get("messages", []) if m.get("role") == role)


def ok_content(body: dict, garbage_ids: bool = False) -> str:
    """The well-behaved answer for a chat.completions request body."""
    system = _messages_text(body, "system")
    user = _messages_text(body, "user")
    wants_json = "response_format" in body or "JSON" in system
    if not wants_json:
        return "ok"
    if '"translations"' in system or "translations" in system.split("JSON Schema", 1)[-1]:
        items = [{"i": int(i), "en": f"EN: {t.strip()}"} for i, t in _TRANSLATE_LINE.findall(user)]
        return json.dumps({"translations": items})
    refs = list(dict.fromkeys(_REF.findall(user))) or list(dict.fromkeys(_HEX_ID.findall(user)))
    cited = ["m999", "f" * 20] if garbage_ids else refs[:2]
    out: dict[str, Any] = {
        "summary": f"LLM summary of {len(refs)} messages about the plan.",
        "keywords": ["plan", "summary"],
        "entities": ["Alice"],
        "evidence_message_ids": cited,
    }
    if '"facts"' in system or "`facts`" in system:
        out["facts"] = [{
            "subject": "Alice", "predicate": "likes", "value": "mangoes", "category": "preference",
            "fact_text": "Alice likes mangoes.", "confidence": 0.9,
            "evidence_message_ids": ["m998"] if garbage_ids else refs[-1:],
        }, {
            "subject": "Alice", "predicate": "lives_in", "value": "Atlantis", "category": "identity",
            "fact_text": "Alice lives in Atlantis.", "confidence": 0.5,
            "evidence_message_ids": ["m12345"],  # never valid: must be dropped by the caller
        }]
    return json.dumps(out)


class FakeLLM:
    def __init__(self, mode: str = "ok", delay_s: float = 3.0, responder: Callable[[dict], str] | None = None):
        if mode not in MODES:
            raise ValueError(mode)
        self.mode = mode
        self.delay_s = delay_s
        self.responder = responder
        self.stream_delay_s = 0.0
        self.streams_cut = 0
        self.requests = 0
        self.in_flight = 0
        self.max_in_flight = 0
        self.bodies: list[dict] = []
        self.model = "fake-model"
        self._seen: set[str] = set()
        self._lock = threading.Lock()
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # -------------------------------------------------------------- lifecycle

    def start(self) -> FakeLLM:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:
                pass

            def do_GET(self) -> None:  # noqa: N802
                if self.path.rstrip("/").endswith("/models"):
                    fake._send(self, 200, {"object": "list", "data": [{"id": fake.model, "object": "model"}]})
                else:
                    fake._send(self, 404, {"error": {"message": "not found"}})

            def do_POST(self) -> None:  # noqa: N802
                try:
                    n = int(self.headers.get("Content-Length") or 0)
                    body = json.loads(self.rfile.read(n) or b"{}")
                except ValueError:
                    fake._send(self, 400, {"error": {"message": "bad json"}})
                    return
                if not self.path.rstrip("/").endswith("/chat/completions"):
                    fake._send(self, 404, {"error": {"message": "not found"}})
                    return
                fake._handle(self, body)

        server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        server.daemon_threads = True
        server.block_on_close = False
        self._server = server
        self._thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def __enter__(self) -> FakeLLM:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def port(self) -> int:
        assert self._server is not None, "server not started"
        return self._server.server_address[1]

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def drain(self, timeout_s: float = 10.0) -> None:
        """Wait for requests still being answered (a slow reply whose client timed out) to finish."""
        deadline = time.monotonic() + timeout_s
        while self.in_flight and time.monotonic() < deadline:
            time.sleep(0.05)

    def reset(self) -> None:
        with self._lock:
            self.requests = 0
            self.max_in_flight = 0
            self.streams_cut = 0
            self.stream_delay_s = 0.0
            self.bodies.clear()
            self._seen.clear()

    # -------------------------------------------------------------- protocol

    def _send(self, h: BaseHTTPRequestHandler, status: int, payload: dict, headers: dict | None = None) -> None:
        data = json.dumps(payload).encode()
        try:
            h.send_response(status)
            h.send_header("Content-Type", "application/json")
            h.send_header("Content-Length", str(len(data)))
            for k, v in (headers or {}).items():
                h.send_header(k, v)
            h.end_headers()
            h.wfile.write(data)
        except (BrokenPipeError, ConnectionResetError, OSError):
            pass  # the client gave up (timeout)

    def _completion(self, body: dict, content: str) -> dict:
        prompt_chars = sum(len(str(m.get("content") or "")) for m in body.get("messages", []))
        pt, ct = max(1, prompt_chars // 4), max(1, len(content) // 4)
        return {
            "id": "chatcmpl-fake", "object": "chat.completion", "created": int(time.time()),
            "model": body.get("model", self.model),
            "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": content}}],
            "usage": {"prompt_tokens": pt, "completion_tokens": ct, "total_tokens": pt + ct},
        }

    def _stream(self, h: BaseHTTPRequestHandler, body: dict, content: str) -> None:
        base = {"id": "chatcmpl-fake", "object": "chat.completion.chunk", "created": int(time.time()),
                "model": body.get("model", self.model)}
        pieces = _PIECE.findall(content)
        events = [{**base, "choices": [{"index": 0, "delta": {"role": "assistant", "content": ""}, "finish_reason": None}]}]
        events += [{**base, "choices": [{"index": 0, "delta": {"content": "".join(pieces[i:i + 2])}, "finish_reason": None}]}
                   for i in range(0, len(pieces), 2)]
        events.append({**base, "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]})
        if (body.get("stream_options") or {}).get("include_usage"):
            done = self._completion(body, content)["usage"]
            events.append({**base, "choices": [], "usage": done})
        try:
            h.send_response(200)
            h.send_header("Content-Type", "text/event-stream")
            h.send_header("Cache-Control", "no-cache")
            h.end_headers()
            for ev in events:
                h.wfile.write(f"data: {json.dumps(ev)}\n\n".encode())
                h.wfile.flush()
                if self.stream_delay_s:
                    time.sleep(self.stream_delay_s)
            h.wfile.write(b"data: [DONE]\n\n")
            h.wfile.flush()
        except (BrokenPipeError, ConnectionResetError, OSError):
            with self._lock:
                self.streams_cut += 1

    def _handle(self, h: BaseHTTPRequestHandler, body: dict) -> None:
        with self._lock:
            self.in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)
        try:
            self._respond(h, body)
        finally:
            with self._lock:
                self.in_flight -= 1

    def _respond(self, h: BaseHTTPRequestHandler, body: dict) -> None:
        digest = hashlib.sha256(json.dumps(body.get("messages"), sort_keys=True).encode()).hexdigest()
        with self._lock:
            self.requests += 1
            self.bodies.append(body)
            mode = self.mode
            # the responder as the request arrived: a slow reply that wakes after its test has ended
            # must not call the next test's responder
            responder = self.responder
            first_time = digest not in self._seen
            self._seen.add(digest)

        def ok() -> str:
            return responder(body) if responder else ok_content(body)

        if body.get("stream") and mode in ("ok", "prose", "slow"):
            if mode == "slow":
                time.sleep(self.delay_s)
            content = "Sure! The friends talked about their plans for the weekend." if mode == "prose" else ok()
            self._stream(h, body, content)
        elif mode == "no_json_mode" and "response_format" in body:
            self._send(h, 400, {"error": {"message": "response_format is not supported", "type": "invalid_request_error"}})
        elif mode == "http500":
            self._send(h, 500, {"error": {"message": "internal error", "type": "server_error"}})
        elif mode == "http429_then_ok" and first_time:
            self._send(h, 429, {"error": {"message": "rate limited", "type": "rate_limit"}}, {"Retry-After": "0"})
        elif mode == "slow":
            time.sleep(self.delay_s)
            self._send(h, 200, self._completion(body, ok()))
        elif mode == "invalid_json":
            self._send(h, 200, self._completion(body, '{"summary": "cut off mid-'))
        elif mode == "prose":
            self._send(h, 200, self._completion(body, "Sure! The friends talked about their plans for the weekend."))
        elif mode == "prose_json":
            self._send(h, 200, self._completion(body, f"Here is the JSON you asked for:\n```json\n{ok()}\n```\nHope it helps."))
        elif mode == "garbage_ids":
            self._send(h, 200, self._completion(body, ok_content(body, garbage_ids=True)))
        else:
            self._send(h, 200, self._completion(body, ok()))
