"""OpenAI-compatible LLM client for the optional tiers: cached, budgeted, never raising.

Works against any `/v1/chat/completions` endpoint: a local llama.cpp / vLLM / Ollama server or
OpenRouter (`OPENROUTER_BASE_URL`, the documented remote default, with an API key). Every call
goes through the same path:

1. file cache lookup (one JSON file per entry under `cache_dir`, keyed by sha256 of model, prompt,
   schema name and the caller's cache key, written atomically so concurrent processes are safe);
2. run budget check (tokens and estimated USD for this client's lifetime = one run);
3. the request, retried with exponential backoff and jitter on connection errors, timeouts,
   408/409/429 and 5xx;
4. JSON extraction (```json fences, <think> blocks and leading prose are tolerated) and pydantic
   validation, with one repair round-trip when the reply is not valid.

Anything that goes wrong yields `None` so the caller can fall back to its non-LLM path. A circuit
breaker stops calling for the rest of the run after `breaker_threshold` consecutive connection
failures/timeouts, `breaker_calls` consecutive failed calls or any authentication error, so a down
or misconfigured endpoint costs seconds rather than minutes.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import random
import re
import tempfile
import threading
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, fields
from functools import lru_cache
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ValidationError

from truffle_assets.paths import PROMPTS_DIR

log = logging.getLogger(__name__)

OPENROUTER_BASE_URL = "https://openrouter.ai/api/v1"
DEFAULT_MODEL = "qwen/qwen3-30b-a3b-instruct-2507"

Job = tuple[str, str, type[BaseModel], str | None]  # (system, user, schema, cache_key)


class LLMLimits(BaseModel):
    """How long a call may take, how much one run may spend and at what price, and the model's
    context: the knobs the Dagster `LLMResource` exposes, declared once for it and for `LLMConfig`."""

    timeout_s: float = 60.0
    max_retries: int = 3
    max_concurrency: int = 4
    max_tokens_per_run: int = 2_000_000
    max_cost_usd: float = 5.0
    context_tokens: int = 8192  # the model's context window: batched fact reads are cut to fit it
    # per million tokens: the cost estimate before a run and the `max_cost_usd` guard (0 for a local server)
    price_in_per_mtok: float = 0.10
    price_out_per_mtok: float = 0.40


class LLMConfig(LLMLimits):
    """Where the OpenAI-compatible endpoint is and how much one run may spend on it.

    The LLM tiers are enabled only when `base_url` is set.
    """

    base_url: str | None = None
    model: str = DEFAULT_MODEL
    api_key: str | None = None
    backoff_s: float = 1.0
    cache_dir: str | None = None
    json_mode: bool = True
    temperature: float = 0.2
    max_output_tokens: int = 1024
    breaker_threshold: int = 4  # consecutive connection failures / timeouts
    breaker_calls: int = 8  # consecutive calls that ended without a valid answer

    @property
    def enabled(self) -> bool:
        return bool(self.base_url)

    @classmethod
    def from_env(cls, **overrides: Any) -> LLMConfig:
        """Fields from the variables `endpoint_env` names, then `overrides`."""
        values: dict[str, Any] = {f: os.environ[name] for f, name in endpoint_env().items()}
        values.update(limits_env())
        values.update(overrides)
        return cls(**values)


ENV_VARS = {"base_url": "TRUFFLE_LLM_BASE_URL", "model": "TRUFFLE_LLM_MODEL", "api_key": "TRUFFLE_LLM_API_KEY",
            "cache_dir": "TRUFFLE_LLM_CACHE_DIR"}
# a local server on a CPU answers one request at a time, slowly: these two let the command line say so
LIMIT_ENV_VARS = {"timeout_s": "TRUFFLE_LLM_TIMEOUT_S", "max_concurrency": "TRUFFLE_LLM_MAX_CONCURRENCY"}


def limits_env() -> dict[str, float | int]:
    """The call limits set in the environment (`LIMIT_ENV_VARS`), as numbers; a bad value is an error
    naming the variable, not a silent default."""
    out: dict[str, float | int] = {}
    for key, name in LIMIT_ENV_VARS.items():
        raw = os.environ.get(name, "").strip()
        if not raw:
            continue
        kind = int if key == "max_concurrency" else float
        try:
            value = kind(raw)
        except ValueError:
            raise ValueError(f"{name}={raw!r}: expected a {'whole ' if kind is int else ''}number") from None
        if value <= 0:
            raise ValueError(f"{name}={raw!r}: must be above 0")
        out[key] = value
    return out


def endpoint_env() -> dict[str, str]:
    """Config field -> the set, non-empty environment variable that configures it (`ENV_VARS`, and
    `OPENROUTER_API_KEY` for the key when the base URL is OpenRouter's and no Truffle key is set).

    One rule for both readers: `LLMConfig.from_env` reads the values, the Dagster `LLMResource`
    binds the names as `dg.EnvVar`s."""
    env = os.environ
    names = {f: name for f, name in ENV_VARS.items() if env.get(name)}
    if "api_key" not in names and "openrouter.ai" in env.get(ENV_VARS["base_url"], "") and env.get("OPENROUTER_API_KEY"):
        names["api_key"] = "OPENROUTER_API_KEY"
    return names


@dataclass
class LLMStats:
    """Counters for one client (one run). Update through `add`; read with `as_dict`.

    calls: HTTP requests sent; retries: requests that were re-sends; failures: requests that
    errored or answered something unusable; fallbacks: calls that returned None (any reason).
    """

    calls: int = 0
    cache_hits: int = 0
    failures: int = 0
    retries: int = 0
    fallbacks: int = 0
    tokens_in: int = 0
    tokens_out: int = 0
    cost_usd: float = 0.0
    budget_exhausted: bool = False
    breaker_open: bool = False
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)

    def add(self, **deltas: float) -> None:
        with self._lock:
            for k, v in deltas.items():
                setattr(self, k, getattr(self, k) + v)

    def set(self, **values: Any) -> None:
        with self._lock:
            for k, v in values.items():
                setattr(self, k, v)

    def as_dict(self) -> dict[str, Any]:
        with self._lock:
            d = {f.name: getattr(self, f.name) for f in fields(self) if not f.name.startswith("_")}
        d["cost_usd"] = round(d["cost_usd"], 6)
        return d


@dataclass(frozen=True)
class LLMResult:
    value: BaseModel
    tokens_in: int
    tokens_out: int
    cached: bool


class _Skip(Exception):
    """Budget exhausted or breaker open: stop without counting as an endpoint failure."""


class _Failed(Exception):
    """The endpoint gave no usable HTTP answer after the retries."""


@lru_cache(maxsize=32)
def load_prompt(name: str) -> str:
    """Text of `prompts/<name>.md`."""
    return (PROMPTS_DIR / f"{name}.md").read_text(encoding="utf-8").strip()


_THINK = re.compile(r"<think>.*?</think>", re.DOTALL | re.IGNORECASE)
_FENCE = re.compile(r"```(?:json|JSON)?\s*\n?(.*?)```", re.DOTALL)


def extract_json_object(text: str | None) -> dict | None:
    """The first JSON object in a model reply: fences, <think> blocks and prose around it ignored."""
    if not text:
        return None
    text = _THINK.sub("", text).strip()
    candidates = [m.group(1).strip() for m in _FENCE.finditer(text)] + [text]
    decoder = json.JSONDecoder()
    for cand in candidates:
        try:
            obj = json.loads(cand)
            if isinstance(obj, dict):
                return obj
        except ValueError:
            pass
        for m in re.finditer(r"\{", cand):
            try:
                obj, _ = decoder.raw_decode(cand, m.start())
            except ValueError:
                continue
            if isinstance(obj, dict):
                return obj
    return None


def _estimate_tokens(text: str) -> int:
    return max(1, len(text) // 4)


def _sha(*parts: str) -> str:
    h = hashlib.sha256()
    for p in parts:
        h.update(p.encode("utf-8", "surrogatepass"))
        h.update(b"\x1f")
    return h.hexdigest()


class JsonFileCache:
    """One JSON file per key under `root/<2 hex>/<key>.json`; atomic writes, corrupt files = miss."""

    def __init__(self, root: str | Path):
        self.root = Path(root)

    def _path(self, key: str) -> Path:
        return self.root / key[:2] / f"{key}.json"

    def get(self, key: str) -> dict | None:
        try:
            data = json.loads(self._path(key).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        return data if isinstance(data, dict) else None

    def put(self, key: str, data: dict) -> None:
        path = self._path(key)
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-", suffix=".json")
            try:
                with os.fdopen(fd, "w", encoding="utf-8") as f:
                    json.dump(data, f, ensure_ascii=False)
                os.replace(tmp, path)
            except BaseException:
                Path(tmp).unlink(missing_ok=True)
                raise
        except OSError as e:  # a read-only or full disk must not fail the run
            log.warning("llm cache write failed: %s", e)


class _Translation(BaseModel):
    i: int
    en: str


class Translations(BaseModel):
    translations: list[_Translation]


class LLMClient:
    """Thread-safe; one instance per run (the budget and circuit breaker live on it)."""

    def __init__(self, config: LLMConfig | None = None):
        self.config = config or LLMConfig()
        self.stats = LLMStats()
        self.cache = JsonFileCache(self.config.cache_dir) if self.config.cache_dir else None
        self._lock = threading.Lock()
        self._tripped = threading.Event()
        self._consec_conn = 0
        self._consec_calls = 0
        self._reserved = 0
        self._json_mode = self.config.json_mode
        self._client = None
        if self.config.enabled:
            import openai  # imported lazily: the no-LLM path never needs it

            self._client = openai.OpenAI(
                base_url=self.config.base_url,
                api_key=self.config.api_key or "sk-no-key",
                timeout=self.config.timeout_s,
                max_retries=0,  # retries are ours: backoff, breaker and budget aware
            )

    @property
    def enabled(self) -> bool:
        return self.config.enabled

    @property
    def model(self) -> str:
        return self.config.model

    @property
    def breaker_open(self) -> bool:
        return self._tripped.is_set()

    def close(self) -> None:
        if self._client is not None:
            try:
                self._client.close()
            except Exception:  # pragma: no cover
                pass

    def __enter__(self) -> LLMClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ------------------------------------------------------------------ public API

    def complete_json(self, system: str, user: str, schema: type[BaseModel], cache_key: str | None) -> BaseModel | None:
        """A validated `schema` instance, or None when the caller should fall back."""
        r = self.call_json(system, user, schema, cache_key)
        return r.value if r is not None else None

    def call_json(self, system: str, user: str, schema: type[BaseModel], cache_key: str | None) -> LLMResult | None:
        """Like `complete_json`, with token usage (the original usage on a cache hit)."""
        try:
            return self._call_json(system, user, schema, cache_key)
        except Exception as e:  # never raise into the pipeline
            log.warning("llm call failed unexpectedly: %r", e)
            self.stats.add(fallbacks=1, failures=1)
            return None

    def map_json(self, jobs: Sequence[Job]) -> list[BaseModel | None]:
        return [r.value if r is not None else None for r in self.map_call_json(jobs)]

    def map_call_json(self, jobs: Sequence[Job]) -> list[LLMResult | None]:
        """`call_json` over jobs with at most `max_concurrency` in flight; results in job order."""
        if not jobs:
            return []
        workers = max(1, min(self.config.max_concurrency, len(jobs)))
        if workers == 1:
            return [self.call_json(*job) for job in jobs]
        with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="llm") as pool:
            return list(pool.map(lambda job: self.call_json(*job), jobs))

    def to_english(self, texts: Sequence[str], batch_size: int = 20, max_batch_chars: int = 6000) -> list[str | None]:
        """Concise English for each text (None where unavailable), batched and cached per text."""
        out: list[str | None] = [None] * len(texts)
        system = load_prompt("to_english")
        keys = {}
        todo: list[str] = []
        for t in dict.fromkeys(t for t in texts if t and t.strip()):
            key = _sha("to_english", self.config.model, system, t)
            keys[t] = key
            hit = self.cache.get(key) if self.cache else None
            if hit is not None and isinstance(hit.get("en"), str):
                self.stats.add(cache_hits=1)
                continue
            todo.append(t)
        found: dict[str, str] = {}
        batches: list[list[str]] = []
        cur: list[str] = []
        size = 0
        for t in todo:
            if cur and (len(cur) >= batch_size or size + len(t) > max_batch_chars):
                batches.append(cur)
                cur, size = [], 0
            cur.append(t)
            size += len(t)
        if cur:
            batches.append(cur)
        jobs: list[Job] = []
        for batch in batches:
            user = "\n".join(f"[{i}] " + " ".join(t.split()) for i, t in enumerate(batch))
            jobs.append((system, user, Translations, None))
        for batch, res in zip(batches, self.map_json(jobs)):
            if res is None:
                continue
            for item in res.translations:  # type: ignore[attr-defined]
                if 0 <= item.i < len(batch) and item.en.strip():
                    t = batch[item.i]
                    found[t] = item.en.strip()
                    if self.cache:
                        # `src` lets a forget find the entry made from a text it removes
                        self.cache.put(keys[t], {"model": self.config.model, "en": found[t],
                                                 "src": hashlib.sha256(t.encode("utf-8", "surrogatepass")).hexdigest()})
        for idx, t in enumerate(texts):
            if t in found:
                out[idx] = found[t]
            elif t in keys and self.cache:
                hit = self.cache.get(keys[t])
                if hit is not None and isinstance(hit.get("en"), str):
                    out[idx] = hit["en"]
        return out

    # ------------------------------------------------------------------ internals

    def _cache_key(self, system: str, user: str, schema: type[BaseModel], cache_key: str) -> str:
        return _sha(self.config.model, system, user, schema.__name__, cache_key)

    def _call_json(self, system: str, user: str, schema: type[BaseModel], cache_key: str | None) -> LLMResult | None:
        key = self._cache_key(system, user, schema, cache_key) if (self.cache and cache_key is not None) else None
        if key is not None:
            hit = self.cache.get(key)  # type: ignore[union-attr]
            if hit is not None:
                try:
                    value = schema.model_validate(hit["value"])
                    self.stats.add(cache_hits=1)
                    return LLMResult(value, int(hit.get("tokens_in", 0)), int(hit.get("tokens_out", 0)), True)
                except (KeyError, TypeError, ValueError, ValidationError):
                    pass  # stale or corrupt entry: recompute
        if self._client is None or self._tripped.is_set():
            self.stats.add(fallbacks=1)
            return None

        schema_json = json.dumps(schema.model_json_schema(), separators=(",", ":"), ensure_ascii=False)
        messages = [
            {"role": "system", "content": f"{system}\n\nReply with a single JSON object matching this JSON Schema:\n{schema_json}"},
            {"role": "user", "content": user},
        ]
        tin = tout = 0
        try:
            for attempt in range(2):  # the answer, then at most one repair round-trip
                content, i, o = self._request(messages)
                tin, tout = tin + i, tout + o
                obj = extract_json_object(content)
                error = "no JSON object found"
                if obj is not None:
                    try:
                        value = schema.model_validate(obj)
                    except ValidationError as e:
                        error = str(e)[:600]
                    else:
                        self._call_outcome(ok=True)
                        if key is not None:
                            self.cache.put(key, {  # type: ignore[union-attr]
                                "model": self.config.model, "schema": schema.__name__, "cache_key": cache_key,
                                "value": value.model_dump(mode="json"), "tokens_in": tin, "tokens_out": tout,
                            })
                        return LLMResult(value, tin, tout, False)
                self.stats.add(failures=1)
                if attempt == 0:
                    messages = messages + [
                        {"role": "assistant", "content": (content or "")[:2000]},
                        {"role": "user", "content": f"That reply was not a valid JSON object for the schema ({error}). "
                                                    "Reply with only the corrected JSON object."},
                    ]
            self._call_outcome(ok=False)
        except _Failed:
            self._call_outcome(ok=False)
        except _Skip:
            pass
        self.stats.add(fallbacks=1)
        return None

    def _call_outcome(self, ok: bool) -> None:
        with self._lock:
            self._consec_calls = 0 if ok else self._consec_calls + 1
            trip = self._consec_calls >= self.config.breaker_calls
        if trip:
            self._trip(f"{self.config.breaker_calls} consecutive failed calls")

    def _trip(self, why: str) -> None:
        if not self._tripped.is_set():
            log.warning("llm circuit breaker open for the rest of the run: %s", why)
            self._tripped.set()
            self.stats.set(breaker_open=True)

    def _reserve(self, est_in: int) -> int:
        cfg = self.config
        est = est_in + cfg.max_output_tokens
        est_cost = (est_in * cfg.price_in_per_mtok + cfg.max_output_tokens * cfg.price_out_per_mtok) / 1e6
        with self._lock:
            s = self.stats
            if (s.tokens_in + s.tokens_out + self._reserved + est > cfg.max_tokens_per_run
                    or s.cost_usd + est_cost > cfg.max_cost_usd):
                exhausted = True
            else:
                exhausted = False
                self._reserved += est
        if exhausted:
            if not self.stats.budget_exhausted:
                log.warning("llm run budget exhausted (%s tokens, $%.4f): falling back", cfg.max_tokens_per_run, cfg.max_cost_usd)
            self.stats.set(budget_exhausted=True)
            raise _Skip()
        return est

    def _release(self, reserved: int, tin: int, tout: int) -> None:
        cfg = self.config
        cost = (tin * cfg.price_in_per_mtok + tout * cfg.price_out_per_mtok) / 1e6
        with self._lock:  # one step, so a concurrent _reserve never sees the tokens in neither place
            self._reserved -= reserved
            self.stats.add(tokens_in=tin, tokens_out=tout, cost_usd=cost)

    def _sleep_backoff(self, attempt: int, retry_after: float | None = None) -> None:
        delay = self.config.backoff_s * (2 ** attempt) * (0.5 + random.random())
        if retry_after is not None:
            delay = max(delay, min(retry_after, 30.0))
        if self._tripped.wait(delay):  # wake up at once when the breaker opens
            raise _Skip()

    def _request(self, messages: list[dict]) -> tuple[str | None, int, int]:
        """One logical request with retries: (content, tokens_in, tokens_out).

        Raises _Skip (budget / breaker) or _Failed (endpoint unusable after retries)."""
        import openai

        est_in = sum(_estimate_tokens(m["content"]) for m in messages)
        attempt = 0
        while True:
            if self._tripped.is_set():
                raise _Skip()
            reserved = self._reserve(est_in)
            kwargs: dict[str, Any] = {
                "model": self.config.model, "messages": messages,
                "temperature": self.config.temperature, "max_tokens": self.config.max_output_tokens,
            }
            json_mode = self._json_mode
            if json_mode:
                kwargs["response_format"] = {"type": "json_object"}
            self.stats.add(calls=1, retries=1 if attempt else 0)
            retry_after: float | None = None
            try:
                resp = self._client.chat.completions.create(**kwargs)  # type: ignore[union-attr]
            except openai.APIConnectionError as e:  # includes APITimeoutError
                self._release(reserved, 0, 0)
                self.stats.add(failures=1)
                with self._lock:
                    self._consec_conn += 1
                    trip = self._consec_conn >= self.config.breaker_threshold
                if trip:
                    self._trip(f"{self.config.breaker_threshold} consecutive connection failures ({type(e).__name__})")
                    raise _Skip() from None
            except openai.APIStatusError as e:
                self._release(reserved, 0, 0)
                self.stats.add(failures=1)
                with self._lock:
                    self._consec_conn = 0
                status = e.status_code
                if status in (401, 403):
                    self._trip(f"authentication failed (HTTP {status})")
                    raise _Skip() from None
                if status in (400, 422) and json_mode and re.search(r"response_format|json", str(e), re.I):
                    log.warning("endpoint rejected response_format=json_object (HTTP %s): continuing without it", status)
                    self._json_mode = False
                elif status not in (408, 409, 429) and status < 500:
                    raise _Failed(f"HTTP {status}") from None  # not retryable: let the caller fall back
                try:
                    retry_after = float(e.response.headers.get("retry-after", ""))
                except (TypeError, ValueError, AttributeError):
                    retry_after = None
            else:
                with self._lock:
                    self._consec_conn = 0
                content = None
                try:
                    content = resp.choices[0].message.content
                except (AttributeError, IndexError, TypeError):
                    pass
                usage = getattr(resp, "usage", None)
                tin = getattr(usage, "prompt_tokens", None) or est_in
                tout = getattr(usage, "completion_tokens", None) or _estimate_tokens(content or "")
                self._release(reserved, int(tin), int(tout))
                return content, int(tin), int(tout)
            if attempt >= self.config.max_retries:
                raise _Failed("retries exhausted")
            self._sleep_backoff(attempt, retry_after)
            attempt += 1
