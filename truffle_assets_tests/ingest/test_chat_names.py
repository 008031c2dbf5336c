"""A chat named as a person names it: id or display name, any case; an unknown one lists the chats."""

import json

import duckdb
import pytest

from truffle_assets.ingest.chat_names import (
    Chat, UnknownChat, chats_in_exports, in_exports, in_published, in_store, resolve, resolve_all,
)
from truffle_assets_tests.conftest import write_export

CHATS = [Chat("meera-iyer", "Meera Iyer"), Chat("rahul", "Rahul"), Chat("zoe-1a2b3c4d", "Zoë")]


def test_an_id_or_a_display_name_in_any_case():
    assert resolve("MEERA IYER", CHATS, "here") == "meera-iyer"
    assert resolve("Meera-Iyer", CHATS, "here") == "meera-iyer"
    assert resolve(" rahul ", CHATS, "here") == "rahul"
    assert resolve("ZOË", CHATS, "here") == "zoe-1a2b3c4d"
    assert resolve_all(["rahul", "Rahul", "meera iyer"], CHATS, "here") == ["rahul", "meera-iyer"]
    assert resolve_all(None, CHATS, "here") is None


def test_an_unknown_name_lists_every_chat_with_its_id_and_name():
    with pytest.raises(UnknownChat) as exc:
        resolve("Meera", CHATS, "in the memory at /x")
    text = str(exc.value)
    assert text.startswith("no chat 'Meera' in the memory at /x; the chats there (id, name):")
    assert "\n  meera-iyer    Meera Iyer" in text and "\n  rahul         Rahul" in text
    with pytest.raises(UnknownChat, match="there are no chats there yet"):
        resolve("rahul", [], "in the memory at /x")


def test_a_name_two_chats_answer_to_is_refused():
    twins = [Chat("alice-smith", "Alice Smith"), Chat("alice-smith-9f8e7d6c", "alice smith")]
    with pytest.raises(UnknownChat, match="names more than one chat"):
        resolve("ALICE SMITH", twins, "here")
    assert resolve("alice-smith-9f8e7d6c", twins, "here") == "alice-smith-9f8e7d6c"


def test_the_chats_of_the_store_the_index_and_the_exports(tmp_path):
    cache = tmp_path / "cache"
    cache.mkdir()
    (cache / "chat_ids.json").write_text(json.dumps({"version": 1, "ids": {"Meera Iyer": "meera-iyer"}}))
    db = tmp_path / "memory.duckdb"
    with duckdb.connect(str(db)) as con:
        con.execute("CREATE TABLE messages (chat_id VARCHAR, source_file VARCHAR)")
        con.execute("INSERT INTO messages VALUES ('meera-iyer', 'x/WhatsApp Chat with Meera Iyer.txt'), "
                    "('rahul', 'x/WhatsApp Chat with Rahul.zip!_chat.txt')")
    # the map names Meera; Rahul's name comes from the store's own source file
    assert in_store(db, cache) == [Chat("meera-iyer", "Meera Iyer"), Chat("rahul", "Rahul")]
    assert in_store(tmp_path / "none.duckdb", cache) == []
    pointer = {"watermarks": {"meera-iyer": "2024-04-20T19:05:00", "anu": "2024-01-01T00:00:00"}}
    assert in_published(pointer, cache) == [Chat("anu", None), Chat("meera-iyer", "Meera Iyer")]
    write_export(tmp_path / "exports", "WhatsApp Chat with Meera Iyer.txt", ["12/01/2024, 09:00 - Meera: hi"])
    write_export(tmp_path / "exports", "WhatsApp Chat with New Friend.txt", ["12/01/2024, 09:00 - Nia: hi"])
    assert in_exports(tmp_path / "exports", cache) == [Chat("meera-iyer", "Meera Iyer"), Chat("new-friend", "New Friend")]
    assert chats_in_exports(["new friend"], tmp_path / "exports", db) == ["new-friend"]
    assert chats_in_exports(None, tmp_path / "exports", db) is None
