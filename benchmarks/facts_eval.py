"""Fact extraction vs ground truth (synthetic corpus, then the held-out sets): precision, recall, evidence, supersession.

    .venv/bin/python benchmarks/facts_eval.py                  # 400K tokens, 10 chats, seed 7 (cached)
    .venv/bin/python benchmarks/facts_eval.py --tokens 40000 --chats 4
    .venv/bin/python benchmarks/facts_eval.py --skip-synthetic # held-out sets only (seconds)
    .venv/bin/python benchmarks/facts_eval.py --dev --llm add --base-url URL --model M  # + LLM tier C

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
evidence message ids of matched facts that are among that ground-truth fact's message_ids, or among those of
another ground-truth fact whose value the prediction's value is compatible with
(evidence_correct_all also counts every evidence id of unmatched facts as wrong).
Supersession: for single-valued predicates (lives_in, job, diet, partner) each ended ground-truth value
must have valid_to set, and superseded_by must name the fact matched to its successor when there is one.

Held-out sets (benchmarks/heldout/, frozen; written without looking at the rules): the same pipeline
runs on them, and `truffle_assets.evals.fact_scoring` scores the predictions against the annotations (attribute
map from the annotators' vocabulary to our predicates, value normalization; precision, lenient precision,
recall, evidence, supersession: see that module's doc).
- natural: 11 exports of one user (English and Hinglish), 167 annotated facts, 55 distractor lines; the
  user is the annotations' user (the exporter detection is printed beside it).
- fixtures: the real third-party exports in ../shared/fixtures/whatsapp (TRUFFLE_FIXTURES overrides),
  each file its own chat, every author taken as "the user" in turn (facts are scored per file and
  speaker), 35 annotated self-statements (23 clear, 12 borderline).

LLM facts (`--llm add|only`): the dev or natural set's episodes are scored for salience as the memory build
scores them; the salient ones go through the summaries stage's tier-C call (summary + `prompts/extract_facts.md`)
and the others holding a candidate statement about the user through the routed extraction
(`truffle_assets.memory.llm_facts`; `--route salience` leaves it out, `--route all` reads every episode at tier
C), at an OpenAI-compatible endpoint (`--base-url`/`--model`, else TRUFFLE_LLM_*), or the embedded llama.cpp
server on `--gguf` / the served model; the claims are consolidated with the offline tier's (`add`, what the
memory build does) or alone (`only`). Answers are cached under `--work`/llm-cache. The fixtures set is always
offline only. A line `llm_coverage=<c> llm_token_share=<s> ...` precedes the last one: c is the share of the
set's annotated facts with an evidence message among the lines sent to fact extraction, s the transcript
tokens sent for facts over the set's transcript tokens (`memory.episodes.approx_tokens`), then the client's
calls, cache hits, fallbacks and tokens (instructions included).

The last line is `fact_precision=<p> fact_recall=<r> heldout_precision=<hp> heldout_recall=<hr>
heldout_stale_current=<n> heldout_ended_closed=<c>/<k> evidence_correct=<e>`: p and r are the synthetic
figures, the rest the natural held-out set's: n = facts the store shows as current (no valid_to) whose
annotated value ended, c of k = ended annotated facts that were found and closed (valid_to set), e = share
of matched facts citing an annotated line; the fixtures figures are on the line above.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import time
from datetime import date
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import polars as pl  # noqa: E402

from truffle_assets.memory.facts.consolidation import consolidate  # noqa: E402
from truffle_assets.memory.facts.extraction import extract_claims  # noqa: E402
from truffle_assets.memory.facts.values import compatible, value_tokens  # noqa: E402
from truffle_assets.ingest.exports import author_profile, detect_user, load_chat, scan_exports  # noqa: E402
from benchmarks.corpus import corpus as shared_corpus  # noqa: E402
from truffle_assets.evals import fact_scoring as hf  # noqa: E402

USER = "Arjun Mehta"
SUPERSEDING = ("lives_in", "job", "diet", "partner")
HELDOUT = ROOT / "benchmarks" / "heldout"
FIXTURES = Path(os.environ.get("TRUFFLE_FIXTURES", ROOT.parent / "shared" / "fixtures" / "whatsapp"))


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


def facts_for(messages: pl.DataFrame, llm: TierC | None = None) -> tuple[pl.DataFrame, pl.DataFrame]:
    msgs = messages.filter(pl.col("kind") == "message") if "kind" in messages.columns else messages
    claims = extract_claims(msgs)
    if llm is not None:
        llm_claims = llm.claims(msgs)
        claims = llm_claims if llm.only else pl.concat([claims, llm_claims], how="vertical_relaxed")
    return claims, consolidate(claims)


class TierC:
    """The LLM fact tiers as the memory build runs them: episodes scored for salience, tier C (summary +
    facts) over the salient ones and the detector-routed extraction (`memory.llm_facts`) over the rest
    that hold a candidate statement, through an OpenAI-compatible endpoint or the embedded llama.cpp
    server. `route`: "build" (that), "salience" (tier C alone), "all" (every episode read at tier C).
    Tier B summaries extract no facts and are not called. Answers are cached under the work dir, so a
    re-run only scores.

    Per set it records what reached extraction: `coverage(annotated)` is the share of annotated facts
    with an evidence message among the lines sent; `token_share` the transcript tokens sent over the
    set's."""

    def __init__(self, endpoint, work: Path, only: bool, limit: int | None, route: str = "build",
                 context_tokens: int = 8192, embedded: bool = False) -> None:
        from truffle_assets.llm.client import LLMClient, LLMConfig

        self.only, self.limit, self.route, self.context_tokens = only, limit, route, context_tokens
        self.calls = self.planned = 0
        self.sent_ids: set[str] = set()
        self.sent_tokens = self.corpus_tokens = 0
        self.figures: dict[str, tuple[float, float]] = {}  # set name -> (llm_coverage, llm_token_share)
        where = {} if endpoint is None else {"base_url": endpoint.base_url, "model": endpoint.model,
                                             "api_key": endpoint.api_key}  # None: count only, call nothing
        # the embedded server answers one request at a time, slowly on a shared CPU: no queue, no timeout
        local = {"max_concurrency": 1, "timeout_s": 1800.0, "max_retries": 1} if embedded else {}
        self.client = LLMClient(LLMConfig(**where, **local, cache_dir=str(work / "llm-cache"), price_in_per_mtok=0.0,
                                          price_out_per_mtok=0.0, max_output_tokens=1024, context_tokens=context_tokens))

    TIER_C = 0.7  # SummariesConfig's default

    def reach(self, msgs: pl.DataFrame):
        """(episodes, tier-C episodes, routed episodes) for these messages; records the lines and
        transcript tokens sent for facts, and the transcript's tokens. Calls nothing."""
        from truffle_assets.memory.episodes import approx_tokens, build_episodes
        from truffle_assets.memory.llm_facts import route
        from truffle_assets.memory.salience import score_episodes, term_document_counts

        eps = build_episodes(msgs.sort("chat_id", "ts"))
        eps = score_episodes(eps, msgs, {}, term_document_counts(msgs)) if self.route != "all" else \
            eps.with_columns(salience=pl.lit(1.0))
        if self.limit is not None:
            eps = eps.head(self.limit)
        read = eps.filter(pl.col("salience") >= (0.0 if self.route == "all" else self.TIER_C))
        routed = route(eps, msgs, skip=set(read["id"].to_list())) if self.route == "build" else []
        self.sent_ids = {m for ids in read["message_ids"].to_list() for m in ids}
        self.sent_ids |= {list(r.episode["message_ids"])[i] for r in routed for i in r.excerpt}
        self.corpus_tokens = sum(approx_tokens(t) for t in eps["text"].to_list())
        self.sent_tokens = sum(approx_tokens(t) for t in read["text"].to_list()) + sum(r.tokens for r in routed)
        return eps, read, routed

    def claims(self, msgs: pl.DataFrame) -> pl.DataFrame:
        from truffle_assets.memory.llm_facts import extract_facts, route
        from truffle_assets.memory.summaries import FACT_CLAIMS_SCHEMA, summarize_episodes

        from truffle_assets.memory.llm_facts import batches

        eps, read, routed = self.reach(msgs)
        # one call per tier-C episode and per batch of routed episodes, every call answering
        self.planned += read.height + len(batches(routed, self.client.config, self.context_tokens))
        if not self.client.enabled:
            return pl.DataFrame(schema=FACT_CLAIMS_SCHEMA)
        tier_c = 0.0 if self.route == "all" else self.TIER_C
        # tier B extracts no facts: only tier C is called
        summ, claims = summarize_episodes(eps.filter(pl.col("salience") >= tier_c), self.client, tier_c, tier_c)
        self.calls = read.height
        if self.route != "build":
            return claims
        answered = set(summ.filter((pl.col("tier") == "C") & (pl.col("source") == "llm"))["episode_id"].to_list())
        routed = routed + route(read.filter(~pl.col("id").is_in(sorted(answered))), msgs)  # tier C failed
        facts, stats = extract_facts(routed, self.client, self.context_tokens)
        self.calls += stats["batches"]
        return pl.concat([claims, facts], how="vertical_relaxed")

    def coverage(self, annotated) -> float:
        return sum(1 for a in annotated if a.evidence & self.sent_ids) / len(annotated) if annotated else 0.0

    @property
    def token_share(self) -> float:
        return self.sent_tokens / self.corpus_tokens if self.corpus_tokens else 0.0


# ---- scoring ---------------------------------------------------------------------------------------

def _pred_ok(pred: str, gt_pred: str) -> bool:
    if pred == gt_pred:
        return True
    if pred == "favourite" and gt_pred.startswith("favourite_"):
        return True
    if pred == "relationship_status" and gt_pred == "engaged":  # "engaged" is the status half of the event
        return True
    if pred == "employer" and gt_pred == "job":  # "Zentrix Labs" is the employer half of "Data Engineer at Zentrix Labs"
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
        # a cited message is right when the ground truth lists it for this fact, or for another fact about
        # the same value ("Priya and I are engaged" is listed under the engagement, and names the partner too)
        good = set(g["message_ids"]) | {m for o in gt_facts if o["subject"] == user and o is not g
                                        and value_tokens(f["value"]) & value_tokens(o["value"])
                                        and _value_ok(f["predicate"], f["value"], o["value"])
                                        for m in o["message_ids"]}
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


def run_synthetic(args: argparse.Namespace, llm: TierC | None = None) -> dict:
    t0 = time.perf_counter()
    exports, gt = corpus(args.work, args.tokens, args.chats, args.seed)
    messages = load_messages(exports, gt.get("user", USER))
    t1 = time.perf_counter()
    inputs, how = normalized_messages(messages)
    t2 = time.perf_counter()
    claims, facts = facts_for(inputs)
    t3 = time.perf_counter()
    s = score(facts, gt)
    if llm is not None:  # what the LLM would read of the corpus; never called here (the corpus is large)
        llm.reach(inputs.filter(pl.col("kind") == "message"))
        gt_cov = sum(1 for g in gt["facts"] if set(g["message_ids"]) & llm.sent_ids) / max(1, len(gt["facts"]))
        s["llm_reach"] = (gt_cov, llm.token_share, llm.corpus_tokens)

    print(f"== synthetic corpus {_rel(exports)} ({messages.height:,} messages, {gt.get('approx_tokens', 0):,} tokens); text: {how}")
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
    print(f"synthetic: fact_precision={s['precision']:.3f} fact_recall={s['recall']:.3f} "
          f"evidence_correct={s['evidence_correct']:.3f}")
    return s


# ---- held-out sets -----------------------------------------------------------------------------------

def _rel(path: Path) -> str:
    """A path as printed: relative to the repository (or ../ for shared/), the same in every clone."""
    path = Path(path).resolve()
    for base, prefix in ((ROOT, ""), (ROOT.parent, "../")):
        if path.is_relative_to(base):
            return prefix + str(path.relative_to(base))
    return str(path)


def _line_ids(messages: pl.DataFrame, key) -> dict[tuple[str, int], str]:
    """(file key, header line) -> message id, for resolving annotated lines."""
    return {(key(r["chat_id"], r["source_file"]), r["line_start"]): r["id"]
            for r in messages.select("id", "chat_id", "source_file", "line_start").iter_rows(named=True)}


def _print_predictions(preds: list[hf.Predicted], sc: hf.Score, annotated: list[hf.Annotated], label=lambda s: s) -> None:
    ann = {a.id: a for a in annotated}
    print(f"{'predicted fact':52} {'valid_to':>10} {'ev':>3}  verdict")
    for p in sorted(preds, key=lambda p: (p.subject, p.predicate, p.first_seen or date.min)):
        a = ann.get(sc.matches[p.id] or "")
        v = sc.verdict[p.id]
        if v == "matched":
            ok = sum(1 for e in p.evidence if e in a.evidence)
            v = f"{a.id} [{a.attribute}={a.value}] ({ok}/{len(p.evidence)} evidence ok)"
        elif v == "distractor" and a is not None:
            v += f" (would match {a.id})"
        who = label(p.subject)
        text = f"{who + ': ' if who else ''}{p.predicate}={p.value}"[:52]
        print(f"{text:52} {str(p.valid_to or ''):>10} {len(p.evidence):>3}  {v}")


def _print_summary(name: str, sc: hf.Score) -> None:
    groups = ", ".join(f"{k} {f}/{n}" for k, (f, n) in sc.by_group.items())
    print(f"{name}: {sc.predicted} predicted = {sc.matched} matched + {sc.distractor_hits} on distractor lines + "
          f"{sc.unannotated} unannotated + {sc.wrong} wrong; found {sc.found}/{sc.annotated} "
          f"(loosely, counting every fact a prediction matches: {sc.found_any}); {groups}")
    print(f"{name}: evidence {sc.evidence_ok}/{sc.matched} matched facts cite an annotated line "
          f"(evidence ids {sc.evidence_ids_ok}/{sc.evidence_ids}); supersession: {sc.closed}/{sc.ended_found} "
          f"ended facts found were closed, {sc.linked}/{sc.link_cases} linked to their successor; "
          f"stale (still current): {', '.join(sc.stale) or 'none'}; {len(sc.stale_current)} current facts whose value ended")


DEVSET = ROOT / "benchmarks" / "devset" / "natural"
DEVSET2 = ROOT / "benchmarks" / "devset2" / "natural"  # a second tuning persona, by another author


def run_natural(root: Path = HELDOUT / "natural", name: str = "natural", llm: TierC | None = None) -> hf.Score:
    ann = json.loads((root / "annotations.json").read_text(encoding="utf-8"))
    user = ann["user"]
    t0 = time.perf_counter()
    chats = scan_exports(root)
    detected = detect_user({cid: [author_profile(p) for p in paths] for cid, paths in chats.items()})
    messages = pl.concat([load_chat(cid, paths, user=user).rows for cid, paths in sorted(chats.items())])
    inputs, how = normalized_messages(messages)
    claims, facts = facts_for(inputs, llm)
    took = time.perf_counter() - t0
    if llm is not None:
        how += (f"; {'only ' if llm.only else '+ '}LLM facts ({llm.route} routing) in {llm.calls} calls "
                f"({llm.client.config.model})")
    annotated, distractors = hf.natural_annotations(ann, _line_ids(messages, lambda _c, f: Path(f).name))
    if llm is not None:
        llm.figures[name] = (llm.coverage(annotated), llm.token_share)
    preds = hf.predicted_from_rows(facts.filter(pl.col("subject") == user).iter_rows(named=True))
    sc = hf.score(preds, annotated, distractors)

    print(f"== {'held-out ' if name == 'natural' else ''}{name} {_rel(root)} ({len(chats)} chats, {messages.height:,} messages; "
          f"user {user}, detected {detected}); text: {how}; {took:.1f}s")
    print(f"{claims.height} claims -> {facts.height} facts, {len(preds)} about the user")
    print()
    _print_predictions(preds, sc, annotated, label=lambda _s: "")
    missed = [a for a in annotated if a.id not in sc.found_ids]
    by_attr: dict[str, list[str]] = {}
    for a in missed:
        by_attr.setdefault(a.attribute if hf.predicates_for(a.attribute) else "(no predicate) " + a.attribute.split(".")[0],
                           []).append(a.id)
    print()
    print(f"annotated facts missed ({len(missed)}):")
    for k in sorted(by_attr):
        print(f"  {k}: {', '.join(by_attr[k])}")
    _print_summary(name, sc)
    print(f"{name}: heldout_precision={sc.precision:.3f} lenient_precision={sc.lenient_precision:.3f} "
          f"heldout_recall={sc.recall:.3f} evidence_correct={sc.evidence_correct:.3f} "
          f"supersession_closed={sc.closed}/{sc.ended_found}")
    return sc


def run_fixtures(root: Path = FIXTURES, ann_path: Path = HELDOUT / "fixtures" / "annotations.json") -> hf.Score | None:
    if not root.is_dir():
        print(f"== held-out fixtures: skipped ({root} not found)")
        return None
    ann = json.loads(ann_path.read_text(encoding="utf-8"))
    t0 = time.perf_counter()
    file_of: dict[str, str] = {}
    frames, failed = [], []
    for i, f in enumerate(x for x in ann["files"] if x["export"]):
        cid = f"fx{i:03d}"
        try:
            rows = load_chat(cid, [root / f["file"]]).rows
        except Exception as e:  # a fixture the parser refuses: its annotated facts count as missed
            failed.append(f"{f['file']}: {type(e).__name__}: {e}"[:160])
            continue
        file_of[cid] = f["file"]
        # every author is "the user" in turn: extraction reads is_user messages and names the author
        frames.append(rows.with_columns(is_user=pl.col("author").is_not_null()))
    messages = pl.concat(frames, how="vertical_relaxed")
    inputs, how = normalized_messages(messages)
    msgs = inputs.filter(pl.col("kind") == "message")
    claims = extract_claims(msgs)
    # a speaker is one person only within one file
    claims = claims.with_columns(subject=pl.col("chat_id").replace_strict(file_of) + "\x1f" + pl.col("subject"))
    facts = consolidate(claims)
    took = time.perf_counter() - t0

    def subject_of(file: str, speaker: str) -> str:
        return f"{file}\x1f{speaker}"
    annotated = hf.fixture_annotations(ann, _line_ids(messages, lambda c, _f: file_of[c]), subject_of)
    preds = hf.predicted_from_rows(facts.iter_rows(named=True))
    sc = hf.score(preds, annotated)
    print(f"== held-out fixtures {_rel(root)} ({len(file_of)} files loaded, {len(failed)} refused, "
          f"{messages.height:,} messages, every author as the user); text: {how}; {took:.1f}s")
    for f in failed:
        print(f"  refused: {f}")
    print(f"{claims.height} claims -> {facts.height} facts")
    print()
    _print_predictions(preds, sc, annotated, label=lambda s: s.split("\x1f")[-1])
    missed = [a for a in annotated if a.id not in sc.found_ids]
    print()
    print(f"annotated facts missed ({len(missed)}): " + ", ".join(f"{a.id} [{a.attribute}={a.value}]" for a in missed))
    _print_summary("fixtures", sc)
    return sc


def main(argv: list[str] | None = None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--tokens", type=int, default=400_000)
    ap.add_argument("--chats", type=int, default=10)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--work", type=Path, default=ROOT / "benchmarks" / ".work")
    ap.add_argument("--skip-synthetic", action="store_true", help="held-out sets only (synthetic figures print as na)")
    ap.add_argument("--dev", action="store_true",
                    help="the tuning sets only, benchmarks/devset (+ devset2): never the held-out sets; what rule work looks at")
    ap.add_argument("--llm", choices=("add", "only"), default=None,
                    help="also run the LLM tier C over every episode (add: beside the offline tier, as the memory build "
                         "does; only: tier C alone). Endpoint: --base-url, else TRUFFLE_LLM_BASE_URL, else the embedded GGUF")
    ap.add_argument("--base-url", default=None)
    ap.add_argument("--model", default=None)
    ap.add_argument("--gguf", default=None, help="the GGUF the embedded server runs (default: the served model)")
    ap.add_argument("--llm-limit", type=int, default=None, help="at most this many episodes per set (a quick look)")
    ap.add_argument("--route", choices=("build", "salience", "all"), default="build",
                    help="which episodes the LLM reads for facts: build (tier C by salience + the candidate detector, "
                         "as the memory build does), salience (tier C alone), all (every episode at tier C)")
    ap.add_argument("--llm-dry", action="store_true",
                    help="with --llm: count what the LLM would read (llm_coverage, token shares), start and call nothing")
    args = ap.parse_args(argv)
    if args.llm and args.llm_dry:
        return _main(args, TierC(None, args.work, args.llm == "only", args.llm_limit, args.route))
    if args.llm:
        from contextlib import ExitStack

        from truffle_assets.llm.gguf import served_gguf
        from truffle_assets.llm.server import open_endpoint, resolve_endpoint

        endpoint = resolve_endpoint(args.base_url, args.model, gguf=args.gguf or None)
        if endpoint.embedded and endpoint.gguf is None:
            endpoint = resolve_endpoint(args.base_url, args.model, gguf=served_gguf())
        with ExitStack() as stack:
            live = stack.enter_context(open_endpoint(endpoint, n_ctx=8192))
            # the embedded server names every GGUF "local": answers are cached per file, not per alias
            work = args.work / f"embedded-{Path(endpoint.gguf).stem}" if endpoint.embedded else args.work
            return _main(args, TierC(live, work, args.llm == "only", args.llm_limit, args.route,
                                     embedded=endpoint.embedded))
    return _main(args, None)


def _llm_line(llm: TierC, name: str) -> str:
    """The LLM tier's reach on one set: annotated facts whose evidence was sent, transcript tokens sent,
    and the client's counters (tokens_in counts the instructions too)."""
    cov, share = llm.figures[name]
    s = llm.client.stats
    return (f"llm_coverage={cov:.3f} llm_token_share={share:.3f} llm_calls_planned={llm.planned} "
            f"llm_calls={s.calls} llm_cache_hits={s.cache_hits} "
            f"llm_fallbacks={s.fallbacks} llm_tokens_in={s.tokens_in} llm_tokens_out={s.tokens_out}")


def _main(args: argparse.Namespace, llm: TierC | None) -> dict:
    if args.dev:
        dev = run_natural(DEVSET, name="dev", llm=llm)
        out = {"dev": dev, "llm": None}
        if (DEVSET2 / "annotations.json").exists():
            print()
            out["dev2"] = dev2 = run_natural(DEVSET2, name="dev2", llm=llm)
            print(f"dev2_precision={dev2.precision:.3f} dev2_recall={dev2.recall:.3f}")
        if llm is not None:
            print(_llm_line(llm, "dev"))
        print(f"dev_precision={dev.precision:.3f} dev_recall={dev.recall:.3f} dev_evidence_correct={dev.evidence_correct:.3f}")
        out["llm"] = llm and llm.client.stats.as_dict()
        return out

    syn = None if args.skip_synthetic else run_synthetic(args, llm)
    if syn is not None and "llm_reach" in syn:
        cov, share, total = syn["llm_reach"]
        print(f"synthetic_llm_coverage={cov:.3f} synthetic_llm_token_share={share:.3f} (of {total:,} transcript tokens; "
              f"{llm.route} routing, nothing sent)")
    print()
    nat = run_natural(llm=llm)
    print()
    fx = run_fixtures()
    print()
    fmt = lambda v: "na" if v is None else f"{v:.3f}"  # noqa: E731
    if fx is not None:
        clear = fx.by_group.get("strength:clear", (0, 0))
        print(f"fixtures_precision={fmt(fx.precision if fx.predicted else None)} fixtures_recall={fmt(fx.recall)} "
              f"fixtures_recall_clear={fmt(clear[0] / clear[1] if clear[1] else None)} "
              f"fixtures_evidence_correct={fmt(fx.evidence_correct if fx.matched else None)}")
    else:
        print("fixtures_precision=na fixtures_recall=na fixtures_recall_clear=na fixtures_evidence_correct=na")
    if llm is not None:
        print(_llm_line(llm, "natural"))
    print(f"fact_precision={fmt(syn and syn['precision'])} fact_recall={fmt(syn and syn['recall'])} "
          f"heldout_precision={fmt(nat.precision if nat.predicted else None)} heldout_recall={fmt(nat.recall)} "
          f"heldout_stale_current={len(nat.stale_current)} heldout_ended_closed={nat.closed}/{nat.ended_found} "
          f"evidence_correct={fmt(nat.evidence_correct if nat.matched else None)}")
    return {"synthetic": syn, "natural": nat, "fixtures": fx, "llm": llm and llm.client.stats.as_dict()}


if __name__ == "__main__":
    main()
