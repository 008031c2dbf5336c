"""End to end on a small synthetic corpus: every planted secret redacted, no decoy flagged."""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl
import pytest

from truffle_assets.ingest.exports import load_chat, scan_exports
from truffle_assets.pii import SECRET_TYPES, redact_messages
from truffle_assets.synth import write_corpus

GT_TYPES = {
    "otp": "otp", "card_number": "card", "cvv": "cvv", "bank_account": "account", "ifsc": "ifsc", "upi_id": "upi",
    "aadhaar": "aadhaar", "pan": "pan", "password": "password", "pin": "pin", "email": "email", "phone": "phone",
}


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> tuple[pl.DataFrame, pl.DataFrame, dict]:
    out = tmp_path_factory.mktemp("synth")
    write_corpus(out, chats=4, tokens=40_000, seed=7)
    gt = json.loads((Path(out) / "ground_truth.json").read_text(encoding="utf-8"))
    msgs = pl.concat([load_chat(c, p, user="Arjun Mehta").rows for c, p in scan_exports(out).items()])
    return msgs, redact_messages(msgs), gt


def test_every_planted_secret_is_flagged_and_gone(corpus) -> None:
    msgs, pii, gt = corpus
    assert gt["secrets"], "the generator planted nothing"
    by_id = {r["id"]: r for r in pii.iter_rows(named=True)}
    for s in gt["secrets"]:
        row = by_id[s["message_id"]]
        assert GT_TYPES[s["type"]] in row["pii_types"], s["type"]
        assert s["value"] not in row["redacted_text"], s["type"]
        assert s["value"] not in row["spans"]
        assert row["sensitivity"] == "secret" if GT_TYPES[s["type"]] in SECRET_TYPES else row["sensitivity"] != "none"


def test_no_decoy_flagged(corpus) -> None:
    _, pii, gt = corpus
    assert gt["decoys"]
    flagged = dict(zip(pii["id"].to_list(), pii["pii_types"].to_list()))
    for d in gt["decoys"]:
        assert flagged[d["message_id"]] == [], d["type"]


def test_only_planted_messages_flagged(corpus) -> None:
    msgs, pii, gt = corpus
    planted = {s["message_id"] for s in gt["secrets"]}
    flagged = set(pii.filter(pl.col("sensitivity") != "none")["id"].to_list())
    assert flagged == planted
    assert pii.height == msgs.height and pii["id"].to_list() == msgs["id"].to_list()
