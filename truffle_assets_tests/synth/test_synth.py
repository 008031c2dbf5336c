"""The synthetic corpus: deterministic, parseable by our parser, ground truth pinned to real ids."""

from __future__ import annotations

import json
import random
import re
import time
import zipfile
from collections import Counter
from datetime import datetime
from pathlib import Path

import pytest

from truffle_assets.ids import chat_id_for, message_ids
from truffle_assets.parsing import parse_file, read_export
from truffle_assets.synth import USER, CorpusError, luhn_valid, verhoeff_valid, write_corpus
from truffle_assets.synth.checksums import luhn_check_digit, verhoeff_check_digit
from truffle_assets.synth.corpus import ChatBuilder, Msg, _verify, _write
from truffle_assets.synth.persona import make_persona

DEVANAGARI = re.compile("[\u0900-\u097f]")
LATIN_WORD = re.compile("[A-Za-z]{3,}")


def _files(d: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(d.iterdir()) if p.is_file()}


@pytest.fixture(scope="module")
def corpus(tmp_path_factory) -> tuple[Path, dict, dict]:
    out = tmp_path_factory.mktemp("synth")
    t0 = time.perf_counter()
    summary = write_corpus(out, chats=12, tokens=40_000, seed=7)
    summary["elapsed"] = time.perf_counter() - t0
    gt = json.loads((out / "ground_truth.json").read_text(encoding="utf-8"))
    return out, summary, gt


@pytest.fixture(scope="module")
def parsed(corpus) -> dict[str, tuple[Path, list, list[str]]]:
    out, _, gt = corpus
    res = {}
    for c in gt["chats"]:
        path = out / c["file"]
        entries = parse_file(path).entries
        res[c["chat_id"]] = (path, entries, message_ids(chat_id_for(path), entries))
    return res


def test_small_corpus_is_fast_and_summarised(corpus):
    out, summary, gt = corpus
    assert summary["elapsed"] < 2.0
    assert summary["files"] == 12 == len(gt["chats"])
    assert summary["messages"] == sum(c["messages"] for c in gt["chats"])
    assert 30_000 < summary["approx_tokens"] < 60_000  # plants and features set a floor on tiny budgets
    assert summary["facts"] == len(gt["facts"]) >= 20
    assert summary["secrets"] == len(gt["secrets"]) >= 15 and summary["decoys"] == len(gt["decoys"]) >= 5
    assert gt["synthetic"] is True and gt["user"] == USER
    assert "SYNTHETIC" in (out / "README.txt").read_text(encoding="utf-8")


def test_deterministic_for_a_seed_and_different_across_seeds(tmp_path):
    a, b, c = tmp_path / "a", tmp_path / "b", tmp_path / "c"
    write_corpus(a, chats=3, tokens=20_000, seed=11)
    write_corpus(b, chats=3, tokens=20_000, seed=11)
    write_corpus(c, chats=3, tokens=20_000, seed=12)
    fa, fb, fc = _files(a), _files(b), _files(c)
    assert fa == fb
    assert fa.keys() == fc.keys()
    assert all(fa[k] != fc[k] for k in fa if k != "README.txt")


def test_every_file_round_trips_through_the_parser(corpus, parsed):
    out, _, gt = corpus
    for c in gt["chats"]:
        res = parse_file(out / c["file"])
        assert res.quarantined == [], (c["file"], res.quarantined[:3])
        assert len(res.entries) == c["messages"], c["file"]
        assert res.lines_total == res.header_lines + res.continuation_lines + res.system_lines
        assert chat_id_for(out / c["file"]) == c["chat_id"]
        ts = [e.ts for e in res.entries]
        assert ts == sorted(ts) and ts[0].isoformat() == c["first"][: len(ts[0].isoformat())]
        assert {e.author for e in res.entries if e.kind != "system"} <= set(c["members"])


def test_generated_authors_and_timestamps_match_a_sample(tmp_path):
    """Rebuild one chat with the generator's own builder and compare every entry to what it wrote."""
    persona = make_persona(random.Random("truffle-synth:5"), 4)
    for chat in persona.chats:
        b = ChatBuilder(chat, 5)
        b.add_system_lines()
        b.add_features()
        b.add_filler(8_000, 5)
        path = _write(tmp_path, chat, b.render())
        entries = parse_file(path).entries
        assert len(entries) == len(b.msgs)
        for e, m in zip(entries, b.msgs):
            assert e.author == m.author
            assert e.ts == b.fmt.visible(m.ts)
            assert e.kind == m.kind and e.text == m.body and e.line_start == m.line_start


def test_verification_catches_a_misread(tmp_path):
    persona = make_persona(random.Random("x"), 3)
    b = ChatBuilder(persona.chats[1], 1)  # Android family group
    b.add_system_lines()
    b.msgs.append(Msg(datetime(2020, 5, 5, 10, 0), USER, "see below\n05/05/20, 10:01 - Mummy: fake header"))
    path = _write(tmp_path, persona.chats[1], b.render())
    with pytest.raises(CorpusError):
        _verify(path, b)


def test_fact_ids_resolve_to_stating_messages(corpus, parsed):
    _, _, gt = corpus
    categories = Counter(f["category"] for f in gt["facts"])
    assert set(categories) == {"identity", "preference", "relationship", "event", "goal"}
    for f in gt["facts"]:
        assert f["statements"] and len(f["statements"]) == len(f["message_ids"])
        for mid, stmt, who, _chat_id in zip(f["message_ids"], f["statements"], f["stated_by"],
                                            [f["chat_id"]] * len(f["statements"])):
            hits = [(cid, e) for cid, (_, entries, ids) in parsed.items() for e, i in zip(entries, ids) if i == mid]
            assert len(hits) == 1, (f["id"], mid)
            cid, e = hits[0]
            assert cid in f["chat_ids"]
            assert stmt in e.text and e.author == who
    # facts that change over time
    by_pred = Counter(f["predicate"] for f in gt["facts"])
    assert by_pred["job"] == 2 and by_pred["lives_in"] == 2 and by_pred["partner"] == 2
    closed = [f for f in gt["facts"] if f["valid_to"]]
    assert any(f["predicate"] == "lives_in" and f["valid_to"].startswith("2022") for f in closed)
    assert any(who != USER for f in gt["facts"] for who in f["stated_by"])  # others state facts too


def test_secret_ids_and_lines_resolve(corpus, parsed):
    out, _, gt = corpus
    texts = {}
    for c in gt["chats"]:
        texts[c["chat_id"]] = read_export(out / c["file"]).text.split("\n")
    types = Counter(s["type"] for s in gt["secrets"])
    for t in ("otp", "card_number", "ifsc", "upi_id", "aadhaar", "pan", "password", "pin", "bank_account", "email", "phone"):
        assert types[t] >= 1, t
    for row in gt["secrets"] + gt["decoys"]:
        _, entries, ids = parsed[row["chat_id"]]
        (e,) = [e for e, i in zip(entries, ids) if i == row["message_id"]]
        assert row["value"] in e.text
        assert row["value"] in texts[row["chat_id"]][row["line"] - 1]
        assert e.line_start <= row["line"] <= e.line_end


def test_checksums_of_planted_numbers(corpus):
    _, _, gt = corpus
    assert luhn_valid("4111 1111 1111 1111") and not luhn_valid("4111 1111 1111 1112")
    assert verhoeff_valid("2363") and not verhoeff_valid("2364")
    assert luhn_valid("7992739871" + luhn_check_digit("7992739871")) and verhoeff_check_digit("236") == "3"
    cards = [s["value"] for s in gt["secrets"] if s["type"] == "card_number"]
    assert len(cards) >= 3 and all(luhn_valid(c) for c in cards)
    assert len({re.sub(r"\d", "9", c) for c in cards}) >= 3  # several spacings
    aadhaar = [s["value"] for s in gt["secrets"] if s["type"] == "aadhaar"]
    assert aadhaar and all(verhoeff_valid(a) and len(re.sub(r"\D", "", a)) == 12 for a in aadhaar)
    for s in gt["secrets"]:
        if s["type"] == "pan":
            assert re.fullmatch(r"[A-Z]{3}P[A-Z]\d{4}[A-Z]", s["value"])
        if s["type"] == "ifsc":
            assert re.fullmatch(r"[A-Z]{4}0[A-Z0-9]{6}", s["value"])
    decoys = {d["type"]: d["value"] for d in gt["decoys"]}
    assert not luhn_valid(decoys["tracking_number"]) and len(decoys["tracking_number"]) == 16
    assert not verhoeff_valid(decoys["booking_ref"])


def test_user_in_every_chat(corpus, parsed):
    _, _, gt = corpus
    for cid, (_, entries, _) in parsed.items():
        assert any(e.author == USER and e.kind != "system" for e in entries), cid
    assert all(USER in c["members"] for c in gt["chats"])


def test_formats_zip_and_content_variety(corpus, parsed):
    out, _, gt = corpus
    assert len({c["format"] for c in gt["chats"]}) >= 3
    zips = [c for c in gt["chats"] if c["container"] == "zip"]
    assert zips and all(c["file"].startswith("WhatsApp Chat - ") and c["file"].endswith(".zip") for c in zips)
    with zipfile.ZipFile(out / zips[0]["file"]) as zf:
        assert zf.namelist() == ["_chat.txt"]
        raw = zf.read("_chat.txt")
    assert b"\r\n" in raw and raw.startswith(b"[")
    assert all(c["file"].startswith("WhatsApp Chat with ") for c in gt["chats"] if c["container"] == "txt")
    joined = "\n".join(read_export(out / c["file"]).text[:200_000] for c in gt["chats"])
    assert re.search(r"^\d{2}/\d{2}/\d{2}, \d{2}:\d{2} - ", joined, re.M)  # Android day-first 24h
    assert re.search(r"^\d{1,2}/\d{1,2}/\d{2}, \d{1,2}:\d{2} [AP]M - ", joined, re.M)  # Android US 12h
    assert re.search(r"^\d{1,2}/\d{1,2}/\d{2}, \d{1,2}:\d{2}\u202f[AP]M - ", joined, re.M)  # U+202F before AM/PM
    assert re.search(r"^\d{2}\.\d{2}\.\d{2}, \d{2}:\d{2} - ", joined, re.M)  # German dots
    assert re.search(r"^\u200e?\[\d{2}/\d{2}/\d{4}, \d{2}:\d{2}:\d{2}\] ", joined, re.M)  # iOS
    assert "\u200eimage omitted" in joined and "<Media omitted>" in joined and "<attached: " in joined
    kinds = Counter(e.kind for _, entries, _ in parsed.values() for e in entries)
    for k in ("message", "media", "deleted", "location", "contact", "poll", "call", "system"):
        assert kinds[k] > 0, k
    entries = [e for _, es, _ in parsed.values() for e in es]
    assert any(e.edited for e in entries)
    assert any("\n" in e.text and e.kind == "message" for e in entries)
    sys_text = " ".join(e.text for e in entries if e.kind == "system")
    assert "end-to-end encrypted" in sys_text and "created group" in sys_text and " added " in sys_text
    years = {e.ts.year for e in entries}
    assert {2019, 2020, 2021, 2022, 2023, 2024} <= years


def test_languages_present(corpus, parsed):
    msgs = [e.text for _, es, _ in parsed.values() for e in es if e.kind == "message"]
    assert any(DEVANAGARI.search(t) and LATIN_WORD.search(t) for t in msgs)  # code-mixed Devanagari
    assert any(DEVANAGARI.search(t) and not LATIN_WORD.search(t) for t in msgs)
    assert any(re.search(r"\b(?:yaar|kya|hai|nahi)\b", t) for t in msgs)  # Hinglish in Latin script
    assert any(re.search(r"[¿¡ñ]|\bQué\b", t) for t in msgs)  # Spanish
