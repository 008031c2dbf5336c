"""The runtime side of a forget, on a store the real chat service wrote over a real published memory
(the synthetic world of `defs/conftest.py`): turns that cited or quoted a forgotten message go
from every day file and retrieval log, an unrelated turn stays, the store still reads, a second
purge removes nothing, a dry run changes nothing; the dataset export leaves forgotten turns out
(also when a restored backup brings them back) and says so in its manifest; `purge_datasets`
takes them out of an export already on disk and `check_manifest` still passes."""

from __future__ import annotations

import fcntl
import json
import re
import os
import shutil
from dataclasses import dataclass
from pathlib import Path

import dagster as dg
import duckdb
import pytest

from truffle_assets.defs.resources import ModelsResource
from truffle_assets.defs.training.assets import dpo_dataset, sft_dataset
from truffle_assets.feedback.turns import StoreError, append_feedback, read_store, write_turn
from truffle_assets.ids import SHOWN_FACT_ID
from truffle_assets.forget.runtime_purge import (LEDGER, MIN_QUOTE_CHARS, Forgotten, _Matcher, find_turns,
                                                  forgotten_turns, purge_datasets, purge_runtime)
from truffle_assets.retrieval import RetrievalLog, retrieve
from truffle_assets.runtime import ChatService, RuntimeConfig
from truffle_assets.training.datasets import check_manifest, read_jsonl
from truffle_assets_tests.defs.conftest import _no_llm_env, corpus, fake_llm, world  # noqa: F401 - fixtures
from truffle_assets_tests.runtime.conftest import chat_llm, memory, qwen_tokens, shown_ids  # noqa: F401

Q_HOME = "Where does Arjun live now?"
Q_CHARGER = "What was the scene with the charger?"


@dataclass
class Store:
    root: Path  # holds runtime/ (the chat store) and runtime.duckdb (`truffle recall`'s log)
    a: str  # cites the forgotten message
    a_reroll: str  # a re-roll of it, rated above it (1 over 0): a DPO pair
    b: str  # quotes the other forgotten message in its question, in capitals
    c: str  # unrelated
    old: str  # an unrelated turn on an older day, whose file ends in a torn line
    m_a: str
    texts_a: list[str]  # raw and redacted
    text_b: str  # the quoted message's text

    @property
    def runtime(self) -> Path:
        return self.root / "runtime"

    def forgotten(self) -> Forgotten:
        # the quoted message is forgotten by its text only: its turn must go by the quote
        return Forgotten(message_ids={self.m_a}, texts=[*self.texts_a, self.text_b, "short"])

    def copy(self, dest: Path) -> Store:
        shutil.copytree(self.root, dest)
        return Store(**{**vars(self), "root": dest})


def _respond(body: dict) -> str:
    """Cites the first message shown; a re-roll (temperature > 0) answers differently."""
    ids = shown_ids(body)
    cite = f" [msg:{ids[0]}]" if ids else ""
    return ("Here is what I found" if not body.get("temperature") else "Let me put it another way") + f"{cite}."


def _log_rows(path: Path) -> list[tuple]:
    with duckdb.connect(str(path), read_only=True) as con:
        return con.execute("SELECT query, item_ids FROM retrieval_logs ORDER BY logged_at").fetchall()


def _records(runtime: Path) -> dict[str, list[dict]]:
    out = {}
    for stream in ("turns", "content", "feedback"):
        out[stream] = [json.loads(line) for p in sorted((runtime / stream).glob("*.jsonl"))
                       for line in p.read_bytes().splitlines() if line.strip().endswith(b"}")]
    return out


def _snapshot(root: Path) -> dict[str, bytes]:
    """Every file's bytes, lock files aside (empty; a purge that ran leaves its own)."""
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*"))
            if p.is_file() and p.suffix != ".lock"}


@pytest.fixture(scope="module")
def base(tmp_path_factory, world, memory, qwen_tokens, chat_llm) -> Store:  # noqa: F811
    root = tmp_path_factory.mktemp("forget-runtime") / "data"
    (root / "runtime").mkdir(parents=True)  # the retrieval log never creates its directory
    chat_llm.reset()
    chat_llm.mode, chat_llm.responder = "ok", _respond
    # logging is opt-in elsewhere: every toggle on, explicitly
    svc = ChatService(RuntimeConfig(
        published_dir=memory, store_dir=root / "runtime", registry_dir=root / "registry",
        tokenizer=str(qwen_tokens.source), k_raw=4, transcripts=True, content=True, feedback=True,
        retrieval_log=True, endpoint={"base_url": chat_llm.base_url, "model": "fake-model", "timeout_s": 5.0}))
    try:
        a = svc.ask([{"role": "user", "content": Q_HOME}])
        a2 = svc.reroll(a.turn_id)
        c = svc.ask([{"role": "user", "content": Q_CHARGER}])
        assert a.citations and not c.fallback
        m_a = a.citations[0]
        # the quote: a message neither A nor C showed (the month is small: summaries carry much of it)
        shown = json.dumps([t.messages for t in read_store(root / "runtime").turns], ensure_ascii=False).casefold()
        with duckdb.connect(str(world.db), read_only=True) as con:
            raw_a = con.execute("SELECT raw_text FROM messages WHERE id = ?", [m_a]).fetchone()[0]
            texts = con.execute("SELECT raw_text FROM messages WHERE kind = 'message' AND id <> ? ORDER BY ts",
                                [m_a]).fetchall()
        quote = next(t for (t,) in texts if len(t) >= 20 and t.casefold() not in shown and "password" not in t)
        b = svc.ask([{"role": "user", "content": f'WHO SAID "{quote.upper()}"?'}])
    finally:
        chat_llm.responder = None
    svc.feedback(a.turn_id, 0, "wrong flat")
    svc.feedback(a2.turn_id, 1)
    svc.feedback(b.turn_id, 0)
    svc.feedback(c.turn_id, 1, "right")
    # `truffle recall`'s log beside runtime/, through the real retrieve()
    pointer = memory / "latest.json"
    retrieve(Q_HOME, pointer, k=4, log=RetrievalLog(root / "runtime.duckdb"))
    retrieve(Q_CHARGER, pointer, k=4, log=RetrievalLog(root / "runtime.duckdb"))
    # an older day whose turns file ends in a torn line that names nothing forgotten
    write_turn(root / "runtime", "old-turn", "conv-old", messages=[{"role": "user", "content": "hello there"}],
               answer="hi", ts="2025-02-01T09:00:00+00:00")
    with (root / "runtime" / "turns" / "2025-02-01.jsonl").open("ab") as f:
        f.write(b'{"conversation_id":"conv-old","latency_ms":1.0,"mod')
    texts_a = [raw_a, svc.evidence(m_a)["text"]]
    store = Store(root, a.turn_id, a2.turn_id, b.turn_id, c.turn_id, "old-turn", m_a, texts_a, quote)

    # what makes the test mean something: A and C share nothing forgotten; B quotes without citing m_a
    turns = {t.turn_id: t for t in read_store(store.runtime).turns}
    assert set(turns) == {a.turn_id, a2.turn_id, b.turn_id, c.turn_id, "old-turn"}
    assert m_a in turns[a.turn_id].meta["retrieval_ids"] and m_a in turns[a2.turn_id].meta["retrieval_ids"]
    for t in (turns[b.turn_id], turns[c.turn_id]):
        assert m_a not in json.dumps([t.meta, t.messages, t.answer])
        assert all(x.casefold() not in json.dumps([t.messages, t.answer], ensure_ascii=False).casefold()
                   for x in texts_a)
    assert quote.upper() in turns[b.turn_id].messages[-1]["content"]
    assert quote.casefold() not in json.dumps([turns[c.turn_id].messages, turns[c.turn_id].answer],
                                              ensure_ascii=False).casefold()
    assert len(_log_rows(store.runtime / "retrieval.duckdb")) == 4  # a, its re-roll, c, b
    assert len(raw_a) >= MIN_QUOTE_CHARS
    return store


def test_purge_removes_citing_and_quoting_turns_everywhere(base, tmp_path):
    s = base.copy(tmp_path / "data")
    gone = {s.a, s.a_reroll, s.b}
    log = s.runtime / "retrieval.duckdb"
    recall_log = s.root / "runtime.duckdb"
    before_log, before_recall = _log_rows(log), _log_rows(recall_log)
    assert all(s.m_a.encode() in db.read_bytes() for db in (log, recall_log))
    today = next(p for p in (s.runtime / "content").glob("*.jsonl") if s.a.encode() in p.read_bytes())
    with today.open("ab") as f:  # a crash mid-append of a content record quoting the message
        f.write(json.dumps({"answer": f"as they said: {s.texts_a[0]}"}, ensure_ascii=False)[:-1].encode())
    # a trace that could not get the log's lock waits in the spool; the purge finds it there too
    lock = os.open(str(log) + ".lock", os.O_RDWR)
    fcntl.flock(lock, fcntl.LOCK_EX)
    try:
        spool = RetrievalLog(log, lock_wait_s=0.05)
        assert spool.write(query=f"again: {s.text_b}", params={}, item_ids=["x"], scores=[1.0], uncertain=[False],
                           latency_ms=1.0, timing={}, index_versions={})
        assert spool.spooled == 1
    finally:
        os.close(lock)
    old_day = (s.runtime / "turns" / "2025-02-01.jsonl").read_bytes()

    counts = purge_runtime(s.runtime, s.forgotten())

    assert counts == {"runtime_turns": 3, "runtime_content": 3, "runtime_feedback": 3, "runtime_torn_lines": 1,
                      "retrieval_logs": 3 + 1 + 1}  # runtime log a/a2/b + spooled, recall log's home query
    recs = _records(s.runtime)
    for stream, rows in recs.items():
        assert not gone & {r["turn_id"] for r in rows}, stream
        assert s.c in {r["turn_id"] for r in rows}, stream
    # nothing of them left in the bytes either (the torn line quoting the message went too)
    for p in (s.runtime / "content").glob("*.jsonl"):
        data = p.read_bytes().decode()
        assert s.m_a not in data and all(t not in data for t in s.texts_a) and data.endswith("\n")
    assert (s.runtime / "turns" / "2025-02-01.jsonl").read_bytes() == old_day  # untouched, torn tail kept
    read = read_store(s.runtime)
    assert {t.turn_id for t in read.turns} == {s.c, s.old}
    [c] = [t for t in read.turns if t.turn_id == s.c]
    assert c.has_content and c.rating == 1 and c.feedback[0].note == "right"
    assert read.torn_lines == [f"{s.runtime / 'turns' / '2025-02-01.jsonl'}:2"]

    kept = _log_rows(log)
    assert kept == [r for r in before_log if s.m_a not in r[1] and s.text_b.casefold() not in r[0].casefold()]
    assert len(kept) == 1 and kept[0][0] == Q_CHARGER
    assert not list((s.runtime / "retrieval.duckdb.spool").glob("*.json"))
    assert [q for q, _ in _log_rows(recall_log)] == [q for q, ids in before_recall if s.m_a not in ids] == [Q_CHARGER]
    for db in (log, recall_log):  # rewritten into a fresh file: DELETE alone leaves the strings in it
        assert s.m_a.encode() not in db.read_bytes()
        assert not Path(str(db) + ".wal").exists() and not Path(str(db) + ".purge").exists()
    RetrievalLog(log).write(query="after", params={}, item_ids=[], scores=[], uncertain=[], latency_ms=0.0,
                            timing={}, index_versions={})
    assert [q for q, _ in _log_rows(log)] == [Q_CHARGER, "after"]  # the runtime keeps logging into it

    # the ledger: ids and counts, no content
    ledger = json.loads((s.runtime / LEDGER).read_text())
    assert set(ledger["turns"]) == gone and ledger["purges"][-1]["counts"] == counts
    assert all(t not in json.dumps(ledger) for t in [*s.texts_a, s.text_b, s.m_a])
    assert forgotten_turns(s.runtime) == gone and forgotten_turns(s.runtime, since="2999-01-01") == set()

    # idempotent: nothing left to remove, nothing rewritten
    snap = _snapshot(s.root)
    again = purge_runtime(s.runtime, s.forgotten())
    assert set(again.values()) == {0}
    assert _snapshot(s.root) == snap


def test_each_link_alone_is_enough(base, memory):  # noqa: F811
    # read only: which turns each kind of link reaches
    by_id = Forgotten(message_ids={base.m_a}, texts=[])
    assert find_turns(base.runtime, by_id) == {base.a, base.a_reroll}
    by_quote = Forgotten(message_ids=set(), texts=[base.text_b])  # the question quoted it in capitals
    assert find_turns(base.runtime, by_quote) == {base.b}
    assert find_turns(base.runtime, Forgotten(set(), [base.text_b[:MIN_QUOTE_CHARS - 1]])) == set()
    # a fact shown in the context block as "(…, fact <its id's first digits>)": the turns whose prompt carried it
    content = {t.turn_id: json.dumps(t.messages) for t in read_store(base.runtime).turns if t.messages}
    shown = re.search(r"fact ([0-9a-f]{%d})[,)]" % SHOWN_FACT_ID, content[base.c]).group(1)
    fid = next(f["fact_id"] for f in json.loads((memory / "facts.json").read_text())["facts"]
               if f["fact_id"].startswith(shown))
    assert len(shown) == SHOWN_FACT_ID < len(fid)
    carried = {t for t, c in content.items() if f"fact {shown}" in c}
    assert base.c in carried and find_turns(base.runtime, Forgotten(set(), [], fact_ids={fid})) == carried
    assert find_turns(base.runtime, Forgotten(set(), [])) == set()


def test_dry_run_reports_the_same_and_changes_nothing(base, tmp_path):
    dry, real = base.copy(tmp_path / "dry"), base.copy(tmp_path / "real")
    snap = _snapshot(dry.root)
    reported = purge_runtime(dry.runtime, dry.forgotten(), dry_run=True)
    assert _snapshot(dry.root) == snap and not (dry.runtime / LEDGER).exists()
    assert find_turns(dry.runtime, dry.forgotten()) == {base.a, base.a_reroll, base.b}
    assert reported == purge_runtime(real.runtime, real.forgotten())
    assert reported["runtime_turns"] == 3 and reported["retrieval_logs"] == 4


def test_malformed_line_stops_the_purge_naming_it(base, tmp_path):
    s = base.copy(tmp_path / "data")
    path = next((s.runtime / "feedback").glob("*.jsonl"))
    data = path.read_bytes()
    path.write_bytes(b'{"turn_id": "x", "rat\n' + data)
    snap = _snapshot(s.root)
    with pytest.raises(StoreError, match=rf"{path}:1: malformed"):
        purge_runtime(s.runtime, s.forgotten())
    assert _snapshot(s.root) == snap


def _export(s: Store, datasets: Path) -> dict[str, dict]:
    models = ModelsResource(root=str(s.root / "models"), datasets_dir=str(datasets), runtime_dir=str(s.runtime))
    config = {"config": {"include_pack": False, "eval_percent": 0}}
    result = dg.materialize([sft_dataset, dpo_dataset], resources={"models": models},
                            run_config={"ops": {"sft_dataset": config, "dpo_dataset": config}})
    assert result.success
    return {k: {m: v.value for m, v in result.asset_materializations_for_node(f"{k}_dataset")[-1].metadata.items()}
            for k in ("sft", "dpo")}


def _turn_ids(folder: Path) -> set[str]:
    rows = read_jsonl(folder / "train.jsonl") + read_jsonl(folder / "eval.jsonl")
    return {t for r in rows if r["source"] == "transcript" for t in r["source_id"].split(">")}


def test_export_leaves_forgotten_turns_out_even_when_restored(base, tmp_path):
    s = base.copy(tmp_path / "data")
    backup = base.copy(tmp_path / "backup")
    meta = _export(s, tmp_path / "before")
    assert {s.a, s.a_reroll, s.b, s.c} <= _turn_ids(tmp_path / "before" / "sft")
    assert _turn_ids(tmp_path / "before" / "dpo") == {s.a_reroll, s.a}
    assert meta["sft"]["dropped"]["forgotten"] == 0

    purge_runtime(s.runtime, s.forgotten())
    meta = _export(s, tmp_path / "after")
    sft, dpo = check_manifest(tmp_path / "after" / "sft"), check_manifest(tmp_path / "after" / "dpo")
    assert _turn_ids(tmp_path / "after" / "sft") == {s.c, s.old}
    assert _turn_ids(tmp_path / "after" / "dpo") == set()
    assert sft.dropped == {"forgotten": 3, "missing_content": 0, "principal": 0, "thumbs_down": 0}
    assert dpo.dropped["forgotten"] == 3 and meta["sft"]["dropped"] == sft.dropped

    # a backup of the store restored over the purged one: the ledger still keeps them out
    for stream in ("turns", "content", "feedback"):
        shutil.rmtree(s.runtime / stream)
        shutil.copytree(backup.runtime / stream, s.runtime / stream)
    assert {s.a, s.b} <= {t.turn_id for t in read_store(s.runtime).turns}
    _export(s, tmp_path / "restored")
    assert _turn_ids(tmp_path / "restored" / "sft") == {s.c, s.old}
    assert check_manifest(tmp_path / "restored" / "sft").dropped["forgotten"] == 3
    # a window that holds none of them counts none
    assert forgotten_turns(s.runtime, until="2025-12-31") == set()


def test_purge_datasets_on_an_export_already_on_disk(base, tmp_path):
    s = base.copy(tmp_path / "data")
    training = tmp_path / "training"
    _export(s, training)
    sft_before = check_manifest(training / "sft")
    files_before = _snapshot(training)

    # a dry run (its purge recorded nothing yet) finds the rows by what they cite and quote
    assert purge_datasets(training, set(), dry_run=True, forgotten=s.forgotten()) == {"dataset_sft": 3,
                                                                                    "dataset_dpo": 1}
    assert _snapshot(training) == files_before
    purge_runtime(s.runtime, s.forgotten())
    with pytest.raises(TypeError):
        purge_datasets(training, str(s.runtime))
    assert purge_datasets(training, s.runtime) == {"dataset_sft": 3, "dataset_dpo": 1}

    sft, dpo = check_manifest(training / "sft"), check_manifest(training / "dpo")
    assert _turn_ids(training / "sft") == {s.c, s.old} and _turn_ids(training / "dpo") == set()
    assert sft.dropped["forgotten_rows"] == 3 and dpo.dropped["forgotten_rows"] == 1
    assert sft.row_counts.train == sft_before.row_counts.train - 3
    assert sft.source_date_range == sft_before.source_date_range and sft.extra == sft_before.extra
    assert purge_datasets(training, s.runtime) == {"dataset_sft": 0, "dataset_dpo": 0}
    assert purge_datasets(tmp_path / "nothing-here", s.runtime) == {"dataset_sft": 0, "dataset_dpo": 0}


def test_a_damaged_dataset_loses_the_rows_and_keeps_failing_its_check(base, tmp_path):
    s = base.copy(tmp_path / "data")
    training = tmp_path / "training"
    _export(s, training)
    train = training / "sft" / "train.jsonl"
    train.write_bytes(train.read_bytes() + b"not json, quoting " + s.text_b.encode() + b"\n")
    manifest = (training / "sft" / "manifest.json").read_bytes()
    with pytest.raises(Exception, match="content_hash mismatch"):
        check_manifest(training / "sft")
    removed = purge_datasets(training, set(), forgotten=s.forgotten())
    assert removed["dataset_sft"] == 4  # three transcript rows and the damaged line quoting the message
    assert s.text_b.encode() not in train.read_bytes() and _turn_ids(training / "sft") == {s.c, s.old}
    assert (training / "sft" / "manifest.json").read_bytes() == manifest
    with pytest.raises(Exception, match="content_hash mismatch"):
        check_manifest(training / "sft")


def test_many_texts_take_the_scanning_path_with_the_same_answers():
    texts = [f"message number {i:04d} about the flat" for i in range(200)]
    many = _Matcher([], texts)
    assert len(many.needles) > 64
    hays = ["xx MESSAGE NUMBER 0199 ABOUT THE FLAT yy", "message number 0200 about the flat",
            "message number 0001\n  about the flat", "message number 0002 / about the flat",
            "message  number\t0003 about\u00a0the flat", "message number 0004 about the fla"]
    wanted = [True, False, False, False, True, False]
    assert [many.hits({"a": [h]}) for h in hays] == wanted
    # the same texts, a few at a time (the search-per-text path), give the same answers
    assert [any(_Matcher([], texts[k:k + 50]).hits([h]) for k in range(0, 200, 50)) for h in hays] == wanted
    # line breaks are read the way the prompt renders them
    wrapped = _Matcher([], ["first line of it\nsecond line"])
    assert wrapped.hits("[msg:x] A: first line of it / second line")
    assert wrapped.hits("FIRST LINE OF IT\r\n second line") and not wrapped.hits("first line of it second line")
    ids = _Matcher(["abc123", "msg-1"], [])
    assert ids.hits("[msg:abc123]") and not ids.hits("xabc1234") and ids.hits("see msg-1 here")


def test_lines_appended_while_a_file_is_rewritten_are_carried_over(base, tmp_path, monkeypatch):
    """The runtime never locks: a turn recorded between the purge's read and its rename lands in the
    old file, and must reach the new one (a late rating of a forgotten turn must not)."""
    import truffle_assets.forget.runtime_purge as rp

    s = base.copy(tmp_path / "data")
    real_write, appended = rp.atomic_write, []

    def write_while_the_runtime_appends(path, data):
        if not appended and path.parent.name == "feedback":  # the last stream rewritten
            day = path.stem
            write_turn(s.runtime, "late-turn", "conv-late", messages=[{"role": "user", "content": "late question"}],
                       answer="late answer", ts=f"{day}T23:59:59+00:00")
            append_feedback(s.runtime, s.b, -1, "changed my mind", ts=f"{day}T23:59:59+00:00")
            append_feedback(s.runtime, "late-turn", 1, ts=f"{day}T23:59:59+00:00")
            appended.append(path)
        real_write(path, data)

    monkeypatch.setattr(rp, "atomic_write", write_while_the_runtime_appends)
    counts = purge_runtime(s.runtime, s.forgotten())
    assert appended and counts["runtime_feedback"] == 4  # three ratings, and the late one for b
    turns = {t.turn_id: t for t in read_store(s.runtime).turns}
    assert set(turns) == {s.c, s.old, "late-turn"}
    assert turns["late-turn"].has_content and turns["late-turn"].rating == 1
    assert s.b not in {r["turn_id"] for r in _records(s.runtime)["feedback"]}
