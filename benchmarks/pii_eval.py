"""PII/secrets guard quality and speed on the synthetic corpus, scored against its ground truth.

    .venv/bin/python benchmarks/pii_eval.py                 # 400K tokens, 10 chats, seed 7 (cached)
    .venv/bin/python benchmarks/pii_eval.py --tokens 5000000

Scoring, per (message id, type):
- recall: a planted secret counts when its message is flagged with the matching type AND the value
  (verbatim, and as bare digits for digit values) no longer appears in the redacted text.
- precision: flagged (message, type) pairs that match a planted (message, type) over all flagged
  pairs. Decoys and ordinary chat text that get flagged are false positives. The generator plants
  no other PII (contact cards are "<name>.vcf (file attached)" with no number; locations are map
  URLs, which the guard deliberately skips), so nothing is excluded: every unmatched flag counts.
Only message ids and types are printed, never values. Last line:
`pii_recall=<r> pii_precision=<p>`.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import polars as pl  # noqa: E402

from truffle_assets.ingest.exports import load_chat, scan_exports  # noqa: E402
from truffle_assets.pii import redact_messages  # noqa: E402
from benchmarks.corpus import corpus as shared_corpus  # noqa: E402

USER = "Arjun Mehta"
# ground-truth type -> guard type
GT_TYPES = {
    "otp": "otp", "card_number": "card", "cvv": "cvv", "bank_account": "account", "ifsc": "ifsc", "upi_id": "upi",
    "aadhaar": "aadhaar", "pan": "pan", "password": "password", "pin": "pin", "email": "email", "phone": "phone",
}






def corpus(work: Path, tokens: int, chats: int, seed: int) -> tuple[Path, dict]:
    out, truth, _ = shared_corpus(tokens, chats, seed, work=work)
    return out, truth


def load_messages(exports: Path) -> pl.DataFrame:
    frames = [load_chat(cid, paths, user=USER).rows for cid, paths in scan_exports(exports).items()]
    return pl.concat(frames)


def score(pii: pl.DataFrame, gt: dict) -> dict:
    flagged = {(mid, t) for mid, ts in zip(pii["id"].to_list(), pii["pii_types"].to_list()) for t in ts}
    redacted = dict(zip(pii["id"].to_list(), pii["redacted_text"].to_list()))
    planted = {(s["message_id"], GT_TYPES[s["type"]]) for s in gt["secrets"]}
    per: dict[str, Counter] = {}
    hit = 0
    for s in gt["secrets"]:
        t = GT_TYPES[s["type"]]
        c = per.setdefault(t, Counter())
        c["planted"] += 1
        text = redacted.get(s["message_id"], "")
        bare = "".join(ch for ch in s["value"] if ch.isdigit())
        gone = s["value"] not in text and not (len(bare) >= 6 and bare in "".join(ch for ch in text if ch.isdigit()))
        if (s["message_id"], t) in flagged and gone:
            hit += 1
            c["found"] += 1
    decoy_ids = {d["message_id"] for d in gt["decoys"]}
    fp_where: Counter = Counter()
    for mid, t in flagged:
        c = per.setdefault(t, Counter())
        c["flagged"] += 1
        if (mid, t) in planted:
            c["tp"] += 1
        else:
            fp_where["decoy" if mid in decoy_ids else "chat text"] += 1
    tp = sum(c["tp"] for c in per.values())
    return {
        "per": per, "fp_where": fp_where,
        "recall": hit / len(gt["secrets"]) if gt["secrets"] else 1.0,
        "precision": tp / len(flagged) if flagged else 1.0,
        "fp_decoy_messages": sorted({mid for mid, _ in flagged if mid in decoy_ids}),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--tokens", type=int, default=400_000)
    ap.add_argument("--chats", type=int, default=10)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--work", type=Path, default=ROOT / "benchmarks" / ".work")
    args = ap.parse_args()

    out, gt = corpus(args.work, args.tokens, args.chats, args.seed)
    msgs = load_messages(out)
    redact_messages(msgs.head(1000))  # warm-up (regex compilation, polars threads)
    t0 = time.perf_counter()
    pii = redact_messages(msgs)
    took = time.perf_counter() - t0
    res = score(pii, gt)

    print(f"corpus {out.name}: {msgs.height:,} messages, {len(gt['secrets'])} planted secrets, "
          f"{len(gt['decoys'])} decoys")
    print(f"redact_messages: {took:.3f}s  ({msgs.height / took:,.0f} messages/s)")
    counts = Counter(pii["sensitivity"].to_list())
    print("sensitivity: " + ", ".join(f"{k}={counts.get(k, 0)}" for k in ("none", "pii", "secret")))
    print(f"{'type':<10}{'planted':>8}{'found':>7}{'flagged':>8}{'tp':>5}{'fp':>5}")
    for t in sorted(res["per"]):
        c = res["per"][t]
        print(f"{t:<10}{c['planted']:>8}{c['found']:>7}{c['flagged']:>8}{c['tp']:>5}{c['flagged'] - c['tp']:>5}")
    print("false positives by source: " + (", ".join(f"{k}={v}" for k, v in res["fp_where"].items()) or "none"))
    if res["fp_decoy_messages"]:
        print("decoy messages flagged (ids): " + ", ".join(res["fp_decoy_messages"]))
    print(f"pii_recall={res['recall']:.3f} pii_precision={res['precision']:.3f}")


if __name__ == "__main__":
    main()
