"""Chat ids: the rule, names that meet on one id, the persistent map, and reading an old store's ids."""

from __future__ import annotations

import json
import subprocess
import sys
import time
import unicodedata
from pathlib import Path

import pytest

from truffle_assets import store
from truffle_assets.ingest.chat_ids import ChatIdMap, assign, held_in_store
from truffle_assets.ingest.exports import IngestedDays, scan_chats, scan_exports
from truffle_assets.ids import chat_id_for, chat_id_for_name, export_name, hashed_chat_id, legacy_chat_id
from truffle_assets_tests.conftest import write_export

LINES = ["12/01/2024, 09:00 - {who}: hi", "12/01/2024, 09:01 - Arjun: hello"]


def export(folder: Path, name: str, who: str = "Someone") -> Path:
    return write_export(folder, name, [line.format(who=who) for line in LINES])


@pytest.mark.parametrize("path, expected", [
    ("WhatsApp Chat with Alice.txt", "alice"), ("WhatsApp Chat with Alice Smith.txt", "alice-smith"),
    ("WhatsApp Chat with alice_smith.txt", "alice-smith"), ("WhatsApp Chat with O'Brien-Smith Jr..txt", "o-brien-smith-jr"),
    ("WhatsApp Chat - NIT Batch 2016.zip", "nit-batch-2016"), ("exports/WhatsApp Chat - Priya/_chat.txt", "priya"),
])
def test_a_plain_ascii_name_keeps_the_slug_it_always_had(path, expected):
    assert chat_id_for(path) == legacy_chat_id(path) == expected


def test_names_differing_by_accents_or_emoji_get_their_own_ids():
    pairs = [("Zoë", "Zoe"), ("Mom 😀", "Mom"), ("Lucía Fernández", "Lucia Fernandez"), ("Alice & Bob", "Alice Bob")]
    for odd, plain in pairs:
        a, b = chat_id_for(f"WhatsApp Chat with {odd}.txt"), chat_id_for(f"WhatsApp Chat with {plain}.txt")
        assert a != b and a.startswith(b + "-") and len(a) == len(b) + 9, (odd, a, b)
        # what the old rule did: one id for both
        assert legacy_chat_id(f"WhatsApp Chat with {odd}.txt") == legacy_chat_id(f"WhatsApp Chat with {plain}.txt")
    assert chat_id_for("WhatsApp Chat with Mom 😀.txt") != chat_id_for("WhatsApp Chat with Mom 😎.txt")


def test_non_latin_names_keep_their_hashed_ids():
    for name in ("Дима", "प्रिया", "王伟"):
        path = f"WhatsApp Chat with {name}.txt"
        assert chat_id_for(path) == legacy_chat_id(path) and chat_id_for(path).startswith("chat-")


def test_display_name_is_the_same_for_every_form_of_one_chat():
    """A re-export of one chat, however it arrives, has one display name and so one id."""
    forms = ["WhatsApp Chat with Zoë.txt", "WhatsApp Chat - Zoë.zip", "exports/WhatsApp Chat - Zoë/_chat.txt",
             unicodedata.normalize("NFD", "WhatsApp Chat with Zoë.txt")]  # as macOS may store the name
    assert {export_name(f) for f in forms} == {"Zoë"}
    assert len({chat_id_for(f) for f in forms}) == 1


def test_scan_keeps_re_exports_together_and_distinct_contacts_apart(workdir):
    ex = workdir / "exports"
    files = [export(ex, "WhatsApp Chat with Zoë.txt"), export(ex / "WhatsApp Chat - Zoë", "_chat.txt"),
             export(ex, "WhatsApp Chat with Zoe.txt"), export(ex, "WhatsApp Chat with Mom.txt"),
             export(ex, "WhatsApp Chat with Mom 😀.txt")]
    chats = scan_exports(ex)
    assert sorted(chats) == sorted(["zoe", chat_id_for_name("Zoë"), "mom", chat_id_for_name("Mom 😀")])
    assert sorted(chats[chat_id_for_name("Zoë")]) == sorted([files[0], files[1]])
    assert chats["zoe"] == [files[2]] and chats["mom"] == [files[3]]


def test_names_that_meet_on_one_id_are_kept_apart_and_reported(workdir):
    ex = workdir / "exports"
    for name in ("Alice Smith", "alice_smith", "Alice  Smith"):
        export(ex, f"WhatsApp Chat with {name}.txt")
    scan = scan_chats(ex)
    ids = {export_name(files[0]): cid for cid, files in scan.chats.items()}
    # the first in sorted order keeps the id; every later one takes its hashed form
    assert ids == {"Alice  Smith": "alice-smith", "Alice Smith": hashed_chat_id("Alice Smith"),
                   "alice_smith": hashed_chat_id("alice_smith")}
    assert [(c.name, c.wanted, c.taken_by, c.chat_id) for c in scan.collisions] == [
        ("Alice Smith", "alice-smith", "Alice  Smith", hashed_chat_id("Alice Smith")),
        ("alice_smith", "alice-smith", "Alice  Smith", hashed_chat_id("alice_smith"))]
    listed = scan.collisions[0].as_dict()
    assert Path(listed["file"]).name == "WhatsApp Chat with Alice Smith.txt" and listed["taken_by"] == "Alice  Smith"
    assert "WhatsApp Chat with Alice Smith.txt" in str(scan.collisions[0]) and "kept apart" in str(scan.collisions[0])


def test_a_name_that_looks_like_a_hashed_id_pushes_the_next_one_on():
    lookalike = hashed_chat_id("zoe").replace("zoe-", "ZOE ")  # its slug is `zoe`'s collision form
    ids = assign({"Zoe": "zoe", "zoe": "zoe", lookalike: hashed_chat_id("zoe")})
    assert ids == {lookalike: hashed_chat_id("zoe"), "Zoe": "zoe", "zoe": hashed_chat_id("zoe", 1)}


def test_ids_never_move_once_given(workdir):
    ex, cache = workdir / "exports", workdir / "cache"
    id_map = ChatIdMap(cache / "chat_ids.json")
    export(ex, "WhatsApp Chat with alice_smith.txt")
    assert list(scan_exports(ex, id_map)) == ["alice-smith"]
    # a name sorting before it arrives later: it does not take the id, it is the one kept apart
    export(ex, "WhatsApp Chat with Alice Smith.txt")
    scan = scan_chats(ex, id_map)
    assert {cid: export_name(f[0]) for cid, f in scan.chats.items()} == {
        "alice-smith": "alice_smith", hashed_chat_id("Alice Smith"): "Alice Smith"}
    assert [c.name for c in scan.collisions] == ["Alice Smith"]
    saved = json.loads((cache / "chat_ids.json").read_text(encoding="utf-8"))
    assert saved == {"version": 1, "ids": {"Alice Smith": hashed_chat_id("Alice Smith"), "alice_smith": "alice-smith"}}
    # without the map (a fresh folder) the sorted order decides: that is why the map is kept
    assert scan_exports(ex)["alice-smith"][0].name == "WhatsApp Chat with Alice Smith.txt"
    # a name whose file is gone keeps its id reserved: back again, it has it still
    (ex / "WhatsApp Chat with alice_smith.txt").unlink()
    assert list(scan_exports(ex, id_map)) == [hashed_chat_id("Alice Smith")]
    export(ex, "WhatsApp Chat with alice_smith.txt")
    assert "alice-smith" in scan_exports(ex, id_map)


def test_a_damaged_map_is_refused_naming_the_file(workdir):
    path = workdir / "cache" / "chat_ids.json"
    path.parent.mkdir()
    export(workdir / "exports", "WhatsApp Chat with Zoë.txt")
    for text in ("{not json", json.dumps({"version": 1, "ids": {"Zoe": "zoe", "Zoë": "zoe"}})):
        path.write_text(text)
        with pytest.raises(ValueError, match="chat_ids.json: not a chat id map"):
            scan_exports(workdir / "exports", ChatIdMap(path))


def test_migration_keeps_the_legacy_id_for_the_name_the_store_holds():
    legacy = {"Zoe": "zoe", "Zoë": "zoe", "Mom 😀": "mom"}
    # a lone accented or emoji name already stored under its folded id keeps it
    assert assign({"Zoë": "zoe"}, {}, {("zoe", "Zoë")}) == {"Zoë": "zoe"}
    # two names stored under one legacy id: the first, in sorted order, keeps it
    both = assign(legacy, {}, {("zoe", "Zoe"), ("zoe", "Zoë"), ("mom", "Mom 😀")})
    assert both == {"Zoe": "zoe", "Zoë": chat_id_for_name("Zoë"), "Mom 😀": "mom"}
    # a name with rows claims its id before a name without (here the plain one, sorted first)
    assert assign(legacy, {}, {("zoe", "Zoë")}) == {"Zoë": "zoe", "Zoe": hashed_chat_id("Zoe"), "Mom 😀": chat_id_for_name("Mom 😀")}
    # no store: the rule alone
    assert assign(legacy) == {"Zoe": "zoe", "Zoë": chat_id_for_name("Zoë"), "Mom 😀": chat_id_for_name("Mom 😀")}
    # a lost map is rebuilt from what the store holds, collision forms included
    again = {"Alice Smith": "alice-smith", "alice_smith": "alice-smith"}
    assert assign(again, {}, {("alice-smith", "alice_smith"), (hashed_chat_id("Alice Smith"), "Alice Smith")}) == {
        "alice_smith": "alice-smith", "Alice Smith": hashed_chat_id("Alice Smith")}


def _old_store(path: Path, rows: list[tuple[str, str]]) -> None:
    with store.connect(path) as con:
        for i, (chat, source) in enumerate(rows):
            con.execute("INSERT INTO messages VALUES (?, ?, DATE '2024-01-12', TIMESTAMP '2024-01-12 09:00', 'A', false,"
                        " 'text', 'hi', false, ?, 1, 1, 'h')", [f"m{i}", chat, source])


def test_what_a_store_holds_is_read_by_export_name(workdir):
    db = workdir / "memory.duckdb"
    _old_store(db, [("zoe", "/elsewhere/WhatsApp Chat with Zoë.txt"), ("zoe", "/elsewhere/WhatsApp Chat with Zoe.txt"),
                    ("mom", "/x/WhatsApp Chat - Mom 😀.zip!WhatsApp Chat with Mom 😀.txt"),
                    ("priya", "/x/WhatsApp Chat - Priya/_chat.txt")])
    held = held_in_store(db)({})
    assert held == {("zoe", "Zoë"), ("zoe", "Zoe"), ("mom", "Mom 😀"), ("priya", "Priya")}
    assert held_in_store(workdir / "no-store.duckdb")({}) == set()


def test_a_busy_store_falls_back_to_the_planners_record(workdir):
    db, ingested = workdir / "memory.duckdb", workdir / "cache" / "ingested"
    _old_store(db, [("zoe", "WhatsApp Chat with Zoë.txt")])
    IngestedDays(ingested).publish_months("zoe", [], {})
    holder = subprocess.Popen([sys.executable, "-c", (
        "import sys, time; from truffle_assets import store\n"
        f"with store.writer_lock({str(db)!r}):\n    print('held', flush=True); time.sleep(60)")],
        stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "held"
        t0 = time.monotonic()
        held = held_in_store(db, ingested, wait_s=0.5)({"Zoe": "zoe", "Zoë": "zoe", "Bob": "bob"})
        assert time.monotonic() - t0 < 5
    finally:
        holder.kill()
        holder.wait()
    assert held == {("zoe", "Zoe")}  # the record knows the id, not the name: the first in sorted order


def test_the_map_reads_the_store_only_when_a_name_could_depend_on_it(workdir):
    ex = workdir / "exports"
    asked = []
    id_map = ChatIdMap(workdir / "chat_ids.json", lambda names: asked.append(dict(names)) or set())
    export(ex, "WhatsApp Chat with Bob.txt")
    scan_exports(ex, id_map)
    export(ex, "WhatsApp Chat with Carol.txt")
    scan_exports(ex, id_map)
    assert asked == []  # plain names: the rule alone decides, a busy store is never waited on
    export(ex, "WhatsApp Chat with Zoë.txt")
    scan_exports(ex, id_map)
    scan_exports(ex, id_map)
    assert asked == [{"Bob": "bob", "Carol": "carol", "Zoë": "zoe"}]  # once: then the map knows


def test_the_synth_corpus_ground_truth_names_the_chats_ingest_finds(tmp_path):
    from truffle_assets.synth import write_corpus

    write_corpus(tmp_path, chats=12, tokens=20_000, seed=7)
    truth = json.loads((tmp_path / "ground_truth.json").read_text(encoding="utf-8"))
    titles = {c["chat_id"]: c["title"] for c in truth["chats"]}
    assert "Lucía Fernández" in titles.values()  # an accented name: its id carries the hash
    id_map = ChatIdMap(tmp_path / "cache" / "chat_ids.json")
    assert set(scan_exports(tmp_path, id_map)) == set(scan_exports(tmp_path)) == set(titles)
    assert {f["chat_id"] for f in truth["facts"]} <= set(titles)
