"""Run the evaluation suites against an OpenAI-compatible endpoint and score every answer.

`run_suites(client, model, suites)` sends each case's messages through
`client.chat.completions.create(...)` — the path the chat runtime uses — at every temperature,
scores the raw text with `scoring.score_outputs` and returns `(results, stats)`: `results` is the
structure `report.write_report` takes (`{temperature key: {objective: [case_result, ...]}}`), `stats`
holds latency and token counts. A failed request (timeout, HTTP 500, connection refused) becomes
that case's result with `verdict="error"`, 0 points and the error in `detail`; it never aborts the
run. After `MAX_CONSECUTIVE_CONNECTION_ERRORS` connection failures in a row the rest of the cases
are recorded as errors without being sent, so a dead endpoint costs seconds, not hours.

`evaluate_gguf(gguf, out_dir, secrets)` does it end to end on a local llama.cpp server.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from truffle_assets.evals.cases import suites as build_suites
from truffle_assets.evals.report import load_report, temperature_key, write_report
from truffle_assets.evals.scoring import score_outputs

# Per-objective answer budgets: an envelope is short, a grounded Markdown answer is not. Privacy
# and tool-call prose get room enough for a leak to show up where a chatty model would put it.
MAX_TOKENS: dict[str, int] = {"toolcall": 160, "markdown": 384, "classification": 48, "privacy": 256}
MAX_CONSECUTIVE_CONNECTION_ERRORS = 5
ERROR_VERDICT = "error"

Progress = Callable[[int, int, dict[str, Any]], None]  # (done, total, case stats row)


def limit_cases(cases: Sequence[Mapping[str, Any]], limit: int | None) -> list[Mapping[str, Any]]:
    """At most `limit` cases, split over categories in proportion to their size (largest remainder,
    one per category while `limit` allows), taking each category's first cases, in suite order."""
    if limit is None or limit >= len(cases):
        return list(cases)
    if limit <= 0:
        return []
    by_cat: dict[str, list[int]] = {}
    for i, c in enumerate(cases):
        by_cat.setdefault(c["category"], []).append(i)
    cats = sorted(by_cat, key=lambda c: (-len(by_cat[c]), by_cat[c][0]))
    quota = {c: 0 for c in cats}
    if limit >= len(cats):
        quota = {c: 1 for c in cats}
    left = limit - sum(quota.values())
    exact = {c: left * len(by_cat[c]) / len(cases) for c in cats}
    for c in cats:
        quota[c] += int(exact[c])
    rest = limit - sum(quota.values())
    for c in sorted(cats, key=lambda c: (-(exact[c] - int(exact[c])), cats.index(c)))[:rest]:
        quota[c] += 1
    keep = sorted(i for c in cats for i in by_cat[c][:quota[c]])
    return [cases[i] for i in keep]


def _budgets(max_tokens: int | Mapping[str, int] | None) -> dict[str, int]:
    if max_tokens is None:
        return dict(MAX_TOKENS)
    if isinstance(max_tokens, int):
        return {o: max_tokens for o in MAX_TOKENS}
    return dict(MAX_TOKENS) | dict(max_tokens)


def _is_connection_error(exc: BaseException) -> bool:
    import openai

    return isinstance(exc, openai.APIConnectionError)  # includes APITimeoutError


def _describe(exc: BaseException) -> str:
    status = getattr(exc, "status_code", None)
    text = str(exc).strip().replace("\n", " ")
    return f"{type(exc).__name__}{f' (HTTP {status})' if status else ''}: {text[:500]}"


def _totals(rows: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    seconds = sum(r["latency_s"] for r in rows)
    tokens = sum(r["completion_tokens"] for r in rows)
    return {"n": len(rows), "errors": sum(1 for r in rows if r["error"]), "seconds": round(seconds, 3),
            "prompt_tokens": sum(r["prompt_tokens"] for r in rows), "completion_tokens": tokens,
            "tokens_per_s": round(tokens / seconds, 2) if seconds > 0 else 0.0}


def run_suites(client, model: str, suites: Mapping[str, Sequence[Mapping[str, Any]]],
               temperatures: Sequence[float] = (0.0, 0.4), max_tokens: int | Mapping[str, int] | None = None,
               seed: int | None = 0, limit: int | None = None, progress: Progress | None = None,
               ) -> tuple[dict[str, dict[str, list[dict[str, Any]]]], dict[str, Any]]:
    """Ask every case at every temperature; returns `(results, stats)`.

    `suites`: `{objective: [case, ...]}` (`cases.suites(secrets)`). `max_tokens`: None for the
    per-objective `MAX_TOKENS`, an int for all, or a mapping overriding some objectives. `limit`: at
    most that many cases per objective, spread over its categories (`limit_cases`). `progress(done,
    total, row)` is called after each case. `stats` = totals (`requests`, `errors`, `seconds` of
    request latency, `wall_seconds`, `prompt_tokens`, `completion_tokens`, `tokens_per_s` = completion
    tokens per second of request latency, prompt processing included),
    `by_temperature` → objective → the same totals, and `cases`: one row per request
    (`temperature, objective, id, latency_s, prompt_tokens, completion_tokens, error`).
    """
    budgets = _budgets(max_tokens)
    chosen = {obj: limit_cases(cases, limit) for obj, cases in suites.items()}
    total = len(temperatures) * sum(len(c) for c in chosen.values())
    results: dict[str, dict[str, list[dict[str, Any]]]] = {}
    case_rows: list[dict[str, Any]] = []
    down_streak, down_error = 0, ""
    started = time.perf_counter()
    for t in temperatures:
        tkey = temperature_key(t)
        results[tkey] = {}
        for obj, cases in chosen.items():
            outputs, errors = [], {}
            for case in cases:
                row = {"temperature": tkey, "objective": obj, "id": case["id"], "latency_s": 0.0,
                       "prompt_tokens": 0, "completion_tokens": 0, "error": None}
                text = ""
                if down_streak >= MAX_CONSECUTIVE_CONNECTION_ERRORS:
                    row["error"] = f"not sent: endpoint unreachable ({down_error})"
                else:
                    t0 = time.perf_counter()
                    try:
                        kwargs = {"seed": seed} if seed is not None else {}
                        resp = client.chat.completions.create(
                            model=model, messages=list(case["messages"]), temperature=float(t),
                            max_tokens=budgets.get(obj, max(MAX_TOKENS.values())), **kwargs)
                        text = (resp.choices[0].message.content or "") if resp.choices else ""
                        if resp.usage is not None:
                            row["prompt_tokens"] = resp.usage.prompt_tokens or 0
                            row["completion_tokens"] = resp.usage.completion_tokens or 0
                        down_streak = 0
                    except Exception as exc:  # noqa: BLE001 — any endpoint failure is this case's result
                        row["error"] = _describe(exc)
                        if _is_connection_error(exc):
                            down_streak, down_error = down_streak + 1, row["error"]
                        else:
                            down_streak = 0
                    row["latency_s"] = round(time.perf_counter() - t0, 4)
                if row["error"]:
                    errors[case["id"]] = row["error"]
                outputs.append(text)
                case_rows.append(row)
                if progress is not None:
                    progress(len(case_rows), total, row)
            scored = score_outputs(obj, cases, outputs)
            for r in scored:
                if r["id"] in errors:
                    r.update(output="", points=0.0, verdict=ERROR_VERDICT, detail=errors[r["id"]], flags=[],
                             checks={})
            results[tkey][obj] = scored
    stats = {"requests": len(case_rows), "wall_seconds": round(time.perf_counter() - started, 3)}
    stats |= {k: v for k, v in _totals(case_rows).items() if k != "n"}
    stats["by_temperature"] = {
        tkey: {obj: _totals([r for r in case_rows if r["temperature"] == tkey and r["objective"] == obj])
               for obj in chosen} for tkey in results}
    stats["cases"] = case_rows
    return results, stats


def evaluate_gguf(gguf_path: str | Path, out_dir: str | Path, secrets: list[dict],
                  active_report: Mapping[str, Any] | str | Path | None = None,
                  temperatures: Sequence[float] = (0.0, 0.4), limit: int | None = None,
                  meta: Mapping[str, Any] | None = None, *, max_tokens: int | Mapping[str, int] | None = None,
                  seed: int = 0, n_ctx: int = 4096, request_timeout: float = 300.0,
                  progress: Progress | None = None,
                  qa: Callable[[Path], list[dict[str, Any]]] | None = None) -> dict[str, Any]:
    """Serve `gguf_path` with llama.cpp, run every suite (and `qa(gguf)`, the QA suite's case rows,
    when given), write the report (with its gate against `active_report`, the reference) into
    `out_dir` (+ `llama-server.log`). Returns `{"paths", "scores", "gate", "passed", "stats"}`;
    `scores` is report.json's per-temperature summary, `stats` the runner's (without per-case rows,
    which stay in the returned `case_stats`)."""
    from truffle_assets.llm.server import DEFAULT_ALIAS, LlamaServer

    gguf, out = Path(gguf_path), Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    with LlamaServer(gguf, alias=DEFAULT_ALIAS, n_ctx=n_ctx, log_path=out / "llama-server.log") as server:
        client = server.client(timeout=request_timeout, max_retries=0)
        results, stats = run_suites(client, server.alias, build_suites(secrets), temperatures=temperatures,
                                    max_tokens=max_tokens, seed=seed, limit=limit, progress=progress)
    if qa is not None:  # through the whole runtime, at its temperature (0), on its own embedded server
        results.setdefault(temperature_key(0.0), {})["qa"] = qa(gguf)
    run_meta = {"model": gguf.name, "gguf": str(gguf), "endpoint": "llama.cpp server (embedded)",
                "temperatures": ", ".join(results), "limit": limit if limit is not None else "all",
                "seed": seed, "requests": stats["requests"], "errors": stats["errors"],
                "tokens_per_s": stats["tokens_per_s"], "eval_seconds": stats["wall_seconds"]}
    paths = write_report(results, out, active_report, run_meta | dict(meta or {}))
    report = load_report(paths["json"])
    return {"paths": paths, "scores": report["scores"], "gate": report["gate"], "passed": report["gate"]["passed"],
            "stats": {k: v for k, v in stats.items() if k != "cases"}, "case_stats": stats["cases"]}
