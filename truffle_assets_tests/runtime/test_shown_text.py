"""The prompt shows a message as the person wrote it (redacted raw text: their spelling and emoji,
secrets as [CARD]); search runs on the normalized stream; an index built before `shown_text`
still renders, from the search text with its emoji back."""

from __future__ import annotations

import json
import re
from datetime import date, datetime
from pathlib import Path

import polars as pl
import pytest

from truffle_assets.index.lance import RAW_TABLE, MemoryIndex, raw_rows_from
from truffle_assets.memory.rosetta import normalize_messages
from truffle_assets.pii.redact import redact_messages
from truffle_assets.retrieval import retrieve, retrieve_baseline
from truffle_assets.runtime import ChatService, RuntimeConfig
from truffle_assets.runtime.context import evidence_line
from truffle_assets.runtime.display import emojize
from truffle_assets.runtime.published import fetch_messages
from truffle_assets.runtime.published import item_from_row
from truffle_assets_tests.index.memory_fixtures import shared_embedder
from truffle_assets_tests.runtime.conftest import context_message

DAY = date(2024, 3, 1)
CARD = "4111 1111 1111 1111"
# fullwidth "ｋｙａ" and a skin tone: both as typed here, both gone from the normalized stream
PLAN = (f"Yaaar ｋｙａ scene hai 🎉🍕 kal Toit pe, mera card {CARD} use karna 👍🏽\n"
        "bill split kar lenge na 😂")
MESSAGES = [("Priya", PLAN), ("Arjun", "Haan done, 8 baje milte hai"), ("Priya", "Board games bhi le aana 🎲")]
SHORTCODE = re.compile(r":[a-z0-9]+(?:_[a-z0-9]+)*:")


def _frames() -> tuple[pl.DataFrame, pl.DataFrame, pl.DataFrame, pl.DataFrame]:
    """messages -> message_pii -> message_streams, run by the pipeline's own functions, plus one episode."""
    msgs = pl.DataFrame([{"id": f"{i:020x}", "chat_id": "priya", "day": DAY, "ts": datetime(2024, 3, 1, 20, i),
                          "author": a, "is_user": a == "Arjun", "kind": "message", "raw_text": t}
                         for i, (a, t) in enumerate(MESSAGES, 1)])
    pii = redact_messages(msgs)
    streams = normalize_messages(pii.select("id", "chat_id", "day", "redacted_text"))
    eps = pl.DataFrame({"id": ["ep1"], "message_ids": [msgs["id"].to_list()], "salience": [0.5]})
    return msgs, pii, streams, eps


def _publish(root: Path, *, without_shown: bool = False) -> Path:
    msgs, pii, streams, eps = _frames()
    idx = MemoryIndex(root / "index", shared_embedder())
    idx.upsert_partitions("priya", [DAY], raw_rows_from(msgs, streams, eps, pii))
    if without_shown:  # what an index written before the column holds
        idx.table(RAW_TABLE).drop_columns(["shown_text"])
    idx.refresh_indexes()
    idx.publish(root / "published" / "latest.json")
    return root / "published"


@pytest.fixture(scope="module")
def published(tmp_path_factory) -> Path:
    return _publish(tmp_path_factory.mktemp("shown"))


@pytest.fixture(scope="module")
def published_old(tmp_path_factory) -> Path:
    return _publish(tmp_path_factory.mktemp("shown_old"), without_shown=True)


def _service(published: Path, llm, tmp_path: Path, qwen_tokens) -> ChatService:
    return ChatService(RuntimeConfig(
        published_dir=published, store_dir=tmp_path / "runtime", registry_dir=tmp_path / "registry",
        tokenizer=str(qwen_tokens.source), endpoint={"base_url": llm.base_url, "model": "fake-model", "timeout_s": 5.0}))


def _plan_id() -> str:
    return f"{1:020x}"


def _expected_shown() -> str:
    return PLAN.replace(CARD, "[CARD]")


def test_index_holds_the_search_text_and_the_text_as_written(published):
    rows = pl.from_arrow(MemoryIndex.open(published / "latest.json").table(RAW_TABLE).to_arrow())
    row = rows.filter(pl.col("message_id") == _plan_id()).row(0, named=True)
    assert row["shown_text"] == _expected_shown()  # message_pii.redacted_text, byte for byte
    assert "kya scene" in row["text"] and ":slice_of_pizza:" in row["text"] and "🍕" not in row["text"]
    assert row["passage"] == f"Priya: {row['text']}"  # embedded and BM25-indexed: the search stream only
    assert not any(CARD in str(v) for r in rows.to_dicts() for v in r.values())


def test_search_runs_on_the_normalized_text(published):
    # "pizza" and "kya" are only in the normalized stream (the raw text has 🍕 and fullwidth ｋｙａ)
    hits = retrieve_baseline("pizza kya", published / "latest.json", k=3, mode="bm25")
    assert hits.items and hits.items[0].message_id == _plan_id()
    pack = retrieve("kya scene hai, pizza at Toit?", published / "latest.json", k=3)
    item = next(i for i in pack.items if i.message_id == _plan_id())
    assert item.shown_text == _expected_shown() and SHORTCODE.search(item.text)


def test_prompt_shows_the_message_as_written_never_the_card(published, llm, tmp_path, qwen_tokens):
    svc = _service(published, llm, tmp_path, qwen_tokens)
    turn = svc.ask([{"role": "user", "content": "What's the plan at Toit tomorrow?"}])
    assert turn.fallback is None
    ctx = context_message(llm.bodies[-1])
    line = next(ln for ln in ctx.splitlines() if ln.startswith(f"[msg:{_plan_id()}]"))
    # one line, the person's spelling and emoji (skin tone too), the card as its placeholder
    assert line == (f"[msg:{_plan_id()}] Priya (1 March 2024): Yaaar ｋｙａ scene hai 🎉🍕 kal Toit pe, mera card [CARD] "
                    "use karna 👍🏽 / bill split kar lenge na 😂")
    sent = json.dumps(llm.bodies, ensure_ascii=False)
    assert "4111" not in sent and not SHORTCODE.search(ctx.split("Retrieved messages:", 1)[1])
    # the evidence API and a cited source show it as written too (line breaks kept there)
    assert svc.evidence(_plan_id())["text"] == _expected_shown()
    assert [r["text"] for r in svc.day("priya", DAY.isoformat())][0] == _expected_shown()


def test_recalled_messages_are_shown_as_written(published):
    """`get_messages` / `get_fact` evidence goes through `fetch_messages` rows, not retrieval."""
    row = fetch_messages(published / "latest.json", [_plan_id()])[0]
    _, author, text = evidence_line(item_from_row(row, 1.0, 1, "recall"))
    assert (author, text) == ("Priya", _expected_shown().replace("\n", " / "))


def test_an_index_without_the_column_still_renders(published_old, llm, tmp_path, qwen_tokens):
    tbl = MemoryIndex.open(published_old / "latest.json").table(RAW_TABLE)
    assert "shown_text" not in tbl.schema.names
    svc = _service(published_old, llm, tmp_path, qwen_tokens)
    turn = svc.ask([{"role": "user", "content": "What's the plan at Toit tomorrow?"}])
    assert turn.fallback is None
    ctx = context_message(llm.bodies[-1])
    line = next(ln for ln in ctx.splitlines() if ln.startswith(f"[msg:{_plan_id()}]"))
    # the search text with its emoji back: normalized spelling, no skin tone, still no card
    assert "kya scene hai 🎉🍕" in line and "[CARD]" in line and " / bill split" in line
    assert "ｋｙａ" not in line and "👍🏽" not in line and not SHORTCODE.search(line)
    assert "4111" not in json.dumps(llm.bodies, ensure_ascii=False)
    row = fetch_messages(published_old / "latest.json", [_plan_id()])[0]
    assert "shown_text" not in row
    assert svc.evidence(_plan_id())["text"] == emojize(row["text"])
    item = next(i for i in retrieve("pizza at Toit", published_old / "latest.json", k=3).items
                if i.message_id == _plan_id())
    assert item.shown_text is None
