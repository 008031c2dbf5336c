"""The store when every annotated statement is read as its annotation says: what consolidation makes of a
perfect reading, beside what the offline reader reads now.

    .venv/bin/python benchmarks/facts_ceiling.py          # held-out natural set: figures only
    .venv/bin/python benchmarks/facts_ceiling.py --dev    # the tuning sets, with every fact still current

The configured model is the tier that finds what the offline reader misses (the issue's "endings the
reader does not find"). Whether its reading would then show the right facts as current is a question
about consolidation alone, and this answers it without a capable model: per natural set, beside the
offline reader's claims, it adds one claim per annotated fact and stating line (filed under the first
predicate the scorer maps the annotation's attribute to, with the annotated value, at that message's time,
source `llm`) and, for a fact that supersedes another, the `end:<predicate>` claim with the old value that
`prompts/extract_facts.md` asks the model for. Then `consolidate` and the scorer run as in `facts_eval`.

Last line: `ceiling_stale_current=<n> ceiling_ended_closed=<c>/<k> ceiling_linked=<l>/<m>` for the
held-out set (with `--dev`, `dev_…` and `dev2_…`): n facts shown as current whose annotated value ended,
c of k ended facts found and closed, l of m closed facts linked to their successor. Annotations whose
attribute maps to no predicate are left out (counted on the set's line).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import polars as pl  # noqa: E402

from benchmarks.facts_eval import DEVSET, DEVSET2, HELDOUT, _line_ids, load_messages, normalized_messages  # noqa: E402
from truffle_assets.evals import fact_scoring as hf  # noqa: E402
from truffle_assets.memory.facts.consolidation import consolidate  # noqa: E402
from truffle_assets.memory.facts.extraction import extract_claims  # noqa: E402
from truffle_assets.memory.facts.lexicon import predicate_info  # noqa: E402
from truffle_assets.memory.facts.schema import CLAIM_SCHEMA, ENDING_PREFIX, stable_id  # noqa: E402


def filed_under(attribute: str) -> str | None:
    """The predicate a reader files an annotated attribute under: the scorer's first for it."""
    preds = hf.ATTRIBUTE_PREDICATES.get(attribute, ())
    return preds[0] if preds else None


def annotated_reading(annotated: list[hf.Annotated], messages: pl.DataFrame) -> tuple[pl.DataFrame, int]:
    """(claims a reader filing every annotated statement as annotated makes, annotations it cannot file)."""
    at = {r["id"]: r for r in messages.select("id", "chat_id", "day", "ts").iter_rows(named=True)}
    by_id = {a.id: a for a in annotated}
    rows, unfiled = [], 0

    def claim(a: hf.Annotated, predicate: str, value: str, mid: str) -> None:
        m = at[mid]
        rows.append({"id": stable_id("annotated", a.id, predicate, mid), "chat_id": m["chat_id"], "day": m["day"],
                     "subject": a.subject, "predicate": predicate, "value": value,
                     "category": predicate_info(predicate.removeprefix(ENDING_PREFIX)).category,
                     "fact_text": f"{predicate}: {value}", "confidence": 0.9, "message_id": mid, "ts": m["ts"],
                     "source": "llm"})

    for a in annotated:
        predicate = filed_under(a.attribute)
        if predicate is None:
            unfiled += 1
            continue
        for mid in sorted(a.evidence, key=lambda i: at[i]["ts"]):
            claim(a, predicate, a.value, mid)
        old = by_id.get(a.supersedes or "")
        old_predicate = old and filed_under(old.attribute)
        if old_predicate:  # the ending the extraction prompt asks for, said where the new value is
            claim(a, ENDING_PREFIX + old_predicate, old.value, min(a.evidence, key=lambda i: at[i]["ts"]))
    return pl.DataFrame(rows, schema=CLAIM_SCHEMA), unfiled


def run(root: Path, name: str, show: bool) -> hf.Score:
    ann = json.loads((root / "annotations.json").read_text(encoding="utf-8"))
    user = ann["user"]
    messages = load_messages(root, user)
    inputs, _ = normalized_messages(messages)
    annotated, distractors = hf.natural_annotations(ann, _line_ids(messages, lambda _c, f: Path(f).name))
    offline = extract_claims(inputs.filter(pl.col("kind") == "message"))
    perfect, unfiled = annotated_reading(annotated, messages)
    facts = consolidate(pl.concat([offline, perfect], how="vertical_relaxed"))
    preds = hf.predicted_from_rows(facts.filter(pl.col("subject") == user).iter_rows(named=True))
    sc = hf.score(preds, annotated, distractors)
    print(f"{name}: {len(annotated)} annotated facts, {len(annotated) - unfiled} read as annotated ({unfiled} map to "
          f"no predicate), beside {offline.height} offline claims -> {len(preds)} facts about the user; "
          f"found {sc.found}/{sc.annotated}; {sc.closed}/{sc.ended_found} ended facts closed, "
          f"{sc.linked}/{sc.link_cases} linked; {len(sc.stale_current)} shown current though ended")
    if show and sc.stale_current:
        ann_by = {a.id: a for a in annotated}
        for pid in sc.stale_current:
            p = next(p for p in preds if p.id == pid)
            a = ann_by[sc.matches[pid]]
            print(f"  still current: {p.predicate}={p.value!r} (annotated {a.id} {a.attribute}={a.value!r}, "
                  f"ended {a.valid_to})")
    return sc


def main(argv: list[str] | None = None) -> dict[str, hf.Score]:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--dev", action="store_true", help="the tuning sets (benchmarks/devset, devset2), with details")
    args = ap.parse_args(argv)
    sets = [(DEVSET, "dev"), (DEVSET2, "dev2")] if args.dev else [(HELDOUT / "natural", "heldout")]
    out = {name: run(root, name, show=args.dev) for root, name in sets if (root / "annotations.json").exists()}
    prefix = (lambda n: n) if args.dev else (lambda _n: "ceiling")
    print(" ".join(f"{prefix(n)}_stale_current={len(s.stale_current)} {prefix(n)}_ended_closed={s.closed}/{s.ended_found} "
                   f"{prefix(n)}_linked={s.linked}/{s.link_cases}" for n, s in out.items()))
    return out


if __name__ == "__main__":
    main()
