"""Fact extraction vs the synthetic corpus's planted facts: precision, recall, evidence, supersession.

    .venv/bin/python benchmarks/facts_eval.py                  # 400K tokens, 10 chats, seed 7 (cached)
    .venv/bin/python benchmarks/facts_eval.py --tokens 40000 --chats 4

Pipeline, as the memory build runs it: every message of every export (load_chat) -> PII redaction
(`truffle_assets.pii.redact_messages`) -> Rosetta normalization (`truffle_assets.memory.rosetta.normalize_messages`)
-> `extract_claims` -> `consolidate`. Facts are read from normalized, redacted text only.

Matching rule (a predicted fact matches a ground-truth fact when all hold):
- subject is the exporting user (ground truth facts are all about the user);
- predicate agrees after aliasing our vocabulary to the ground truth's: identical names, or a generic
  `favourite` (type not said) against any `favourite_*`, or `started_job`/`left_job` against `job_change`;
- value agrees after normalization: lower-case, accents stripped, stopwords dropped (a, the, my, to, at,
  for, ...), and the content words of one value contain the other's ("HSR Layout, Bengaluru" ~
  "Bengaluru"; "learn Spanish" ~ "learn Spanish fluently"); birthdays compare day and month (and the
  year when both give one).
When a predicted fact is compatible with several ground-truth facts, the one sharing most content words
wins. precision = matched predicted facts / all predicted facts (nothing filtered out); recall = ground-
truth facts matched by at least one predicted fact / ground-truth facts; evidence_correct = share of the
evidence message ids of matched facts that are among that ground-truth fact's message_ids
(evidence_correct_all also counts every evidence id of unmatched facts as wrong).
Supersession: for single-valued predicates (lives_in, job, diet, partner) each ended ground-truth value
must have valid_to set, and superseded_by must name the fact matched to its successor when there is one.

The last line is `fact_precision=<p> fact_recall=<r> evidence_correct=<share>`.
"""

from __future__ import annotations

import argparse
import re
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import polars as pl  # noqa: E402

from truffle_assets.memory.facts.consolidation import consolidate  # noqa: E402
from truffle_assets.memory.facts.extraction import extract_claims  # noqa: E402
from truffle_assets.memory.facts.values import compatible, value_tokens  # noqa: E402
from truffle_assets.exports import load_chat, scan_exports  # noqa: E402
from benchmarks.corpus import corpus as shared_corpus  # noqa: E402

USER = "Arjun Mehta"
SUPERSEDING = ("lives_in", "job", "diet", "partner")






def corpus(work: Path, tokens: int, chats: int, seed: int) -> tuple[Path, dict]:
    out, truth, _ = shared_corpus(tokens, chats, seed, work=work, prefix="facts-corpus")
    return out, truth


def load_messages(exports: Path, user: str = USER) -> pl.DataFrame:
    frames = [load_chat(cid, paths, user=user).rows for cid, paths in sorted(scan_exports(exports).items())]
    return pl.concat(frames) if frames else pl.DataFrame()


def normalized_messages(messages: pl.DataFrame) -> tuple[pl.DataFrame, str]:
    """The extractor's input: messages with normalized_text from redact -> normalize."""
    try:
        from truffle_assets.pii import redact_messages
        from truffle_assets.memory.rosetta import normalize_messages
    except ImportError:  # FALLBACK while pii/rosetta are not importable: raw text stands in (never in production)
        return messages.with_columns(normalized_text=pl.col("raw_text")), "FALLBACK raw_text (pii/rosetta missing)"
    pii = redact_messages(messages)
    streams = normalize_messages(pii.select("id", "chat_id", "day", "redacted_text"))
    out = messages.select("id", "chat_id", "day", "ts", "author", "is_user", "kind").join(
        streams.select("id", "normalized_text"), on="id", how="left")
    return out, "redact_messages -> normalize_messages"


def facts_for(messages: pl.DataFrame) -> tuple[pl.DataFrame, pl.DataFrame]:
    msgs = messages.filter(pl.col("kind") == "message") if "kind" in messages.columns else messages
    claims = extract_claims(msgs)
    return claims, consolidate(claims)


# ---- scoring ---------------------------------------------------------------------------------------

def _pred_ok(pred: str, gt_pred: str) -> bool:
    if pred == gt_pred:
        return True
    if pred == "favourite" and gt_pred.startswith("favourite_"):
        return True
    return pred in ("started_job", "left_job") and gt_pred == "job_change"


def _value_ok(pred: str, value: str, gt_value: str) -> bool:
    if pred == "birthday":
        v, g = value.lstrip("-"), gt_value
        if re.fullmatch(r"\d{4}-\d{2}-\d{2}", v) and re.fullmatch(r"\d{4}-\d{2}-\d{2}", g):
            return v == g
        return v[-5:] == g[-5:]
    return compatible(value, gt_value)


def match(facts: pl.DataFrame, gt_facts: list[dict], user: str) -> dict[str, dict | None]:
    """Predicted fact id -> the ground-truth fact it matches (or None)."""
    out: dict[str, dict | None] = {}
    for f in facts.iter_rows(named=True):
        best, best_overlap = None, -1
        if f["subject"] == user:
            for g in gt_facts:
                if g["subject"] != user or not _pred_ok(f["predicate"], g["predicate"]):
                    continue
                if not _value_ok(f["predicate"], f["value"], g["value"]):
                    continue
                overlap = len(value_tokens(f["value"]) & value_tokens(g["value"]))
                if overlap > best_overlap:
                    best, best_overlap = g, overlap
        out[f["id"]] = best
    return out


def supersession_checks(facts: pl.DataFrame, gt_facts: list[dict], matched: dict[str, dict | None]) -> list[tuple[str, bool, str]]:
    by_gt: dict[str, list[dict]] = {}
    for f in facts.iter_rows(named=True):
        g = matched.get(f["id"])
        if g is not None:
            by_gt.setdefault(g["id"], []).append(f)
    checks = []
    for pred in SUPERSEDING:
        chain = sorted((g for g in gt_facts if g["predicate"] == pred), key=lambda g: g["valid_from"] or "")
        for i, g in enumerate(chain):
            if g["valid_to"] is None:
                continue
            preds = by_gt.get(g["id"], [])
            nxt = chain[i + 1] if i + 1 < len(chain) else None
            nxt_ids = {f["id"] for f in by_gt.get(nxt["id"], [])} if nxt else set()
            if not preds:
                checks.append((f"{pred} {g['value']!r} ended", False, "not extracted"))
                continue
            ok_to = all(f["valid_to"] is not None for f in preds)
            # superseded_by must point at the successor when the old value was replaced, not ended by itself
            sup = [f["superseded_by"] for f in preds if f["superseded_by"] is not None]
            ok_sup = (not nxt_ids) or any(s in nxt_ids for s in sup) or (not sup and pred == "partner")
            detail = f"valid_to={[str(f['valid_to']) for f in preds]} superseded_by={sup or None}"
            if nxt:
                detail += f" successor={nxt['value']!r} ids={sorted(nxt_ids) or None}"
            checks.append((f"{pred} {g['value']!r} ended", ok_to and ok_sup, detail))
    return checks


def score(facts: pl.DataFrame, gt: dict) -> dict:
    user = gt.get("user", USER)
    gt_facts = gt["facts"]
    matched = match(facts, gt_facts, user)
    n_pred = facts.height
    n_match = sum(1 for g in matched.values() if g is not None)
    hit_gt = {g["id"] for g in matched.values() if g is not None}
    ev_ok = ev_total = ev_all = 0
    for f in facts.iter_rows(named=True):
        g = matched[f["id"]]
        ev_all += len(f["evidence_message_ids"])
        if g is None:
            continue
        good = set(g["message_ids"])
        ev_total += len(f["evidence_message_ids"])
        ev_ok += sum(1 for m in f["evidence_message_ids"] if m in good)
    return {
        "precision": n_match / n_pred if n_pred else 0.0,
        "recall": len(hit_gt) / len(gt_facts) if gt_facts else 0.0,
        "evidence_correct": ev_ok / ev_total if ev_total else 0.0,
        "evidence_correct_all": ev_ok / ev_all if ev_all else 0.0,
        "predicted": n_pred, "matched": n_match, "gt": len(gt_facts), "gt_hit": len(hit_gt),
        "matched_map": matched, "supersession": supersession_checks(facts, gt_facts, matched),
    }


def main(argv: list[str] | None = None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--tokens", type=int, default=400_000)
    ap.add_argument("--chats", type=int, default=10)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--work", type=Path, default=ROOT / "benchmarks" / ".work")
    args = ap.parse_args(argv)

    t0 = time.perf_counter()
    exports, gt = corpus(args.work, args.tokens, args.chats, args.seed)
    messages = load_messages(exports, gt.get("user", USER))
    t1 = time.perf_counter()
    inputs, how = normalized_messages(messages)
    t2 = time.perf_counter()
    claims, facts = facts_for(inputs)
    t3 = time.perf_counter()
    s = score(facts, gt)

    print(f"corpus {exports} ({messages.height:,} messages, {gt.get('approx_tokens', 0):,} tokens); text: {how}")
    print(f"load {t1 - t0:.1f}s, redact+normalize {t2 - t1:.1f}s, extract+consolidate {t3 - t2:.2f}s; "
          f"{claims.height} claims -> {facts.height} facts")
    print()
    print(f"{'predicted fact':58} {'conf':>5} {'valid_from':>10} {'valid_to':>10} {'ev':>3}  ground truth")
    for f in facts.sort("category", "predicate", "first_seen_at").iter_rows(named=True):
        g = s["matched_map"][f["id"]]
        good = sum(1 for m in f["evidence_message_ids"] if g and m in set(g["message_ids"]))
        label = f"{f['predicate']}={f['value']}"[:58]
        gt_label = f"{g['id']} ({good}/{len(f['evidence_message_ids'])} evidence ok)" if g else "-- UNMATCHED"
        print(f"{label:58} {f['confidence']:5.2f} {str(f['valid_from'] or ''):>10} {str(f['valid_to'] or ''):>10} "
              f"{len(f['evidence_message_ids']):>3}  {gt_label}")
    hit = {g["id"] for g in s["matched_map"].values() if g}
    missed = [g for g in gt["facts"] if g["id"] not in hit]
    print()
    print(f"ground truth missed ({len(missed)}): " + (", ".join(f"{g['id']} [{g['predicate']}={g['value']}]" for g in missed) or "none"))
    print("supersession:")
    for name, ok, detail in s["supersession"]:
        print(f"  {'OK  ' if ok else 'FAIL'} {name}: {detail}")
    print(f"matched {s['matched']}/{s['predicted']} predicted, {s['gt_hit']}/{s['gt']} ground truth; "
          f"evidence_correct_all={s['evidence_correct_all']:.3f}")
    print(f"fact_precision={s['precision']:.3f} fact_recall={s['recall']:.3f} evidence_correct={s['evidence_correct']:.3f}")
    return s


if __name__ == "__main__":
    main()
