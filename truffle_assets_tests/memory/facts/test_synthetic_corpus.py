"""End to end on the synthetic corpus: the facts benchmark's pipeline must find the planted facts."""

import importlib.util
import sys
from pathlib import Path

import polars as pl


def _bench():
    spec = importlib.util.spec_from_file_location("facts_eval", Path(__file__).resolve().parents[3] / "benchmarks" / "facts_eval.py")
    mod = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("facts_eval", mod)
    spec.loader.exec_module(mod)
    return mod


def test_synthetic_corpus(tmp_path):
    from truffle_assets.synth import write_corpus

    fe = _bench()
    write_corpus(tmp_path, chats=4, tokens=40_000, seed=7)
    gt = __import__("json").loads((tmp_path / "ground_truth.json").read_text(encoding="utf-8"))
    inputs, _ = fe.normalized_messages(fe.load_messages(tmp_path, gt["user"]))
    claims_df, facts = fe.facts_for(inputs)
    s = fe.score(facts, gt)
    assert s["precision"] >= 0.95, s
    assert s["evidence_correct"] == 1.0
    assert s["recall"] >= 0.8
    assert all(ok for _, ok, _ in s["supersession"]), s["supersession"]
    # only the user's own messages produce claims, and every claim cites a real message
    ids = set(inputs["id"])
    assert set(claims_df["message_id"]) <= ids
    user_ids = set(inputs.filter(pl.col("is_user"))["id"])
    assert set(claims_df["message_id"]) <= user_ids
