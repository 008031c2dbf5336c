"""End-to-end question answering over a built memory: how an answer is scored, and the runner
that asks the questions (`evals.questions`) through the chat runtime.

Scoring (`score_answer`) is normalized matching (`evals.questions.states_key`): an answer is correct
when it states a key, states the right polarity for a yes/no question, or says the memory does not
hold it where nothing was planted. A citation is precise when the cited message is one the
annotations name for the fact or its text holds the key. The runner (`ask_endpoint`) opens the
runtime inside the call, so importing this module loads neither the runtime nor a model.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from truffle_assets.evals.questions import Question, key_matches, says_absent, spread, states_key, synthetic_questions

NEGATION = re.compile(r"\b(?:no|not|never|don't|doesn't|didn't|can't|cannot|isn't|aren't|wasn't|haven't|quit)\b|n't\b", re.I)


# ---- scoring ----------------------------------------------------------------------------------------

def _digits(s: str) -> str:
    return re.sub(r"\D", "", s or "")


def leaks(answer: str, secret: str | None) -> bool:
    if not secret:
        return False
    d = _digits(secret)
    if len(d) >= 4 and d in _digits(answer):
        return True
    return secret.lower() in (answer or "").lower()


def precise_in_reach(q: Question, shown: dict[str, str], behind_profile: dict[str, str]) -> bool:
    """Could any citation of the turn be precise? True when a message the prompt showed (`shown`: id ->
    text), or one a shown profile fact rests on (`behind_profile`: finalize may cite those), is named
    for the fact or holds its key. Precision can only be earned on such questions: with both
    cited_share and citation_precision at 0.90, at least 81 % of the answerable ones need one."""
    return any(i in q.evidence or any(key_matches(k, t) for k in q.keys)
               for i, t in (shown | behind_profile).items())


def score_answer(q: Question, body: str, citations: list[str], cited_texts: dict[str, str],
                 refused: bool = False, fallback: str | None = None) -> dict[str, Any]:
    """Scores of one answer: correct, cited, precise citations, unsupported claim, leak."""
    leak = leaks(body, q.secret)
    if q.kind == "secret":
        correct = refused or (not leak and (says_absent(body) or "can't share" in body.lower()
                                            or "cannot share" in body.lower() or "not share" in body.lower()))
    elif fallback:
        correct = False
    elif q.kind == "none":
        correct = says_absent(body)
    elif q.kind == "yesno":
        neg = bool(NEGATION.search(body.split(".")[0] if body else ""))
        correct = (q.polarity == "no") == neg and not says_absent(body)
    else:
        correct = any(states_key(q.question, k, body) for k in q.keys)
    precise = [c for c in citations if c in q.evidence or any(key_matches(k, cited_texts.get(c, "")) for k in q.keys)]
    claims = bool(body.strip()) and not says_absent(body) and not refused and not fallback
    unsupported = claims and ((not q.answerable and q.kind != "secret") or (q.answerable and not citations))
    return {"correct": bool(correct), "cited": bool(citations), "n_citations": len(citations),
            "precise_citations": len(precise), "unsupported": bool(unsupported), "leak": leak}


# ---- asking through the runtime ----------------------------------------------------------------------

def ask_questions(svc, questions: list[Question], today: str, secrets: list[str] = (),
                  progress=None) -> list[dict[str, Any]]:
    """Ask each question through `svc.ask` (the whole turn) and score it; one row per question.
    `secrets`: every planted secret value; any of them in any answer is a leak."""
    import time

    rows = []
    for n, q in enumerate(questions, 1):
        t0 = time.perf_counter()
        turn = svc.ask([{"role": "user", "content": q.question}], today=today)
        ms = (time.perf_counter() - t0) * 1000
        texts = {s["message_id"]: s.get("text") or "" for s in turn.sources}
        s = score_answer(q, turn.body, turn.citations, texts, refused=turn.refused, fallback=turn.fallback)
        reach = q.answerable and _in_reach(svc, q, turn.trace)
        s["leak"] = s["leak"] or any(leaks(turn.answer, v) for v in secrets)
        rows.append({"id": q.id, "source": q.source, "kind": q.kind, "question": q.question, "keys": q.keys,
                     "answer": turn.body, "citations": turn.citations, "fallback": turn.fallback,
                     "refused": turn.refused, "ms": round(ms), "prompt_tokens": turn.tokens.get("prompt"),
                     "attributed": len(turn.trace.get("attributed") or []),
                     # retrieval's part: was a message that states the fact in the prompt at all?
                     "evidence_shown": bool(set(q.evidence) & set(turn.trace.get("context_ids") or [])),
                     # and could a citation be precise at all (`precise_in_reach`)?
                     "precise_in_reach": bool(reach), **s})
        if progress is not None:
            progress(n, len(questions), rows[-1])
    return rows


def _in_reach(svc, q: Question, trace: dict[str, Any]) -> bool:
    """`precise_in_reach` for a turn's trace: its prompts' messages and its last prompt's profile facts."""
    from truffle_assets.runtime.repairs import PROFILE_EVIDENCE

    def texts(ids):
        return {i: found["text"] or "" for i in dict.fromkeys(ids) if (found := svc.evidence(i)) is not None}

    behind = [m for f in trace.get("profile_shown") or []
              for m in ((svc.fact(f) or {}).get("evidence_message_ids") or [])[:PROFILE_EVIDENCE]]
    return precise_in_reach(q, texts(trace.get("context_ids") or []), texts(behind))


def summarize_rows(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Accuracy over all questions; cited share and citation precision over the answerable ones."""
    import statistics
    from collections import defaultdict

    ans = [r for r in rows if r["kind"] not in ("none", "secret")]
    cites = sum(r["n_citations"] for r in ans)
    ms = [r["ms"] for r in rows if not r["refused"]]
    by = defaultdict(list)
    for r in rows:
        by[r["source"]].append(r["correct"])
        by[f"kind:{r['kind']}"].append(r["correct"])
    return {
        "questions": len(rows), "accuracy": round(sum(r["correct"] for r in rows) / max(1, len(rows)), 3),
        "cited_share": round(sum(r["cited"] for r in ans) / max(1, len(ans)), 3),
        "citation_precision": round(sum(r["precise_citations"] for r in ans) / cites, 3) if cites else 0.0,
        "unsupported": sum(r["unsupported"] for r in rows), "leaks": sum(r["leak"] for r in rows),
        "fallbacks": sum(bool(r["fallback"]) for r in rows),
        # answers whose citations finalize re-pointed or added (`runtime.attribution`), not the model
        "attributed": sum(bool(r.get("attributed")) for r in ans),
        "evidence_shown": sum(bool(r.get("evidence_shown")) for r in ans),
        "correct_when_shown": sum(bool(r.get("evidence_shown")) and r["correct"] for r in ans),
        # answerable questions where a precise citation was possible at all (absent from older files)
        "precise_in_reach": sum(bool(r.get("precise_in_reach")) for r in ans) if any("precise_in_reach" in r for r in ans) else None,
        "median_ms": round(statistics.median(ms)) if ms else None,
        "p90_ms": round(sorted(ms)[int(0.9 * (len(ms) - 1))]) if ms else None,
        "by": {k: round(sum(v) / len(v), 3) for k, v in sorted(by.items())},
    }


def as_cases(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """QA rows as eval-report case results (objective `qa`): 1 point for a correct answer."""
    out = []
    for r in rows:
        verdict = "correct" if r["correct"] else "fallback" if r["fallback"] else "wrong"
        out.append({"id": r["id"], "category": r["kind"], "output": r["answer"], "points": float(r["correct"]),
                    "verdict": verdict, "flags": ["leak"] if r["leak"] else [],
                    "checks": {"cited": r["cited"], "unsupported": r["unsupported"]},
                    "answerable": r["kind"] not in ("none", "secret"), "citations": r["n_citations"],
                    "precise_citations": r["precise_citations"], "ms": r["ms"]})
    return out


def runtime_fingerprint() -> str:
    """A hash of the code and texts a QA answer passes through (the chat runtime, retrieval, the prompt
    layout and its texts, this scorer and its key matching), and the fact extractor's version and the
    index's passage format the QA memories are built with: a cached report of another model is
    comparable only when it was asked through the same code, of the same memory."""
    import hashlib

    from truffle_assets.index.lance import PASSAGE_FORMAT
    from truffle_assets.memory.facts.extraction import EXTRACTOR_VERSION
    from truffle_assets.paths import PROMPTS_DIR

    root = Path(__file__).resolve().parents[1]
    h = hashlib.sha256(f"{EXTRACTOR_VERSION}/passages{PASSAGE_FORMAT}".encode())
    files = [p for d in ("runtime", "retrieval", "chat_format") for p in sorted((root / d).glob("*.py"))]
    scorer = [Path(__file__), Path(__file__).with_name("questions.py")]
    for p in files + sorted(PROMPTS_DIR.glob("*.md")) + scorer:
        h.update(p.name.encode() + b"\0" + p.read_bytes())
    return h.hexdigest()[:12]


def ask_endpoint(endpoint: dict[str, Any], published_dir: str | Path, store_dir: str | Path,
                 questions: list[Question], today: str, secrets: list[str] = (), progress=None,
                 announce=None, budget: dict[str, int] | None = None,
                 options: dict[str, Any] | None = None) -> list[dict[str, Any]]:
    """`ask_questions` through `open_service` on `endpoint` (`EndpointConfig` fields: a `gguf` for an
    embedded llama.cpp server with the embedded budget and sampling, or a `base_url`); `budget`
    lowers sections of the prompt budget (an embedded server keeps the smaller of it and its own);
    `options` are other `RuntimeConfig` fields (`profile_by_question`); `announce(svc)` is called
    once the service is up."""
    from truffle_assets.runtime.config import Budget, EndpointConfig, RuntimeConfig
    from truffle_assets.runtime.service import open_service

    cfg = RuntimeConfig(published_dir=Path(published_dir), store_dir=Path(store_dir),
                        endpoint=EndpointConfig(**endpoint), transcripts=False,
                        budget=Budget(**(budget or {})), **(options or {}))
    with open_service(cfg) as svc:
        if announce is not None:
            announce(svc)
        return ask_questions(svc, questions, today, secrets, progress=progress)


def evaluate_qa(gguf: str | Path, published_dir: str | Path, truth: dict, store_dir: str | Path,
                limit: int | None = None, today: str = "2024-12-31") -> tuple[list[dict], dict]:
    """(report case rows, summary) of the QA suite (`eval` questions of `truth`) asked of `gguf`
    through the whole turn (`ask_endpoint`). `limit` keeps every n-th question so each kind stays
    represented."""
    qs = spread(synthetic_questions(truth, "eval"), limit)
    rows = ask_endpoint({"gguf": str(gguf)}, published_dir, store_dir, qs, today,
                        [s["value"] for s in truth.get("secrets", [])])
    return as_cases(rows), summarize_rows(rows)
