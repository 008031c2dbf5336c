"""Distinct contacts stay distinct chats through the real `truffle ingest`, and a store built when
`Zoë` and `Zoe` were folded into one chat `zoe` is split without losing or doubling a message."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import dagster as dg
import duckdb
import pytest

from truffle_assets.ids import chat_id_for_name, hashed_chat_id
from truffle_assets_tests.conftest import newcomer_env, write_export

pytestmark = pytest.mark.subprocess  # each case runs `truffle ingest`

TRUFFLE = str(Path(sys.executable).with_name("truffle"))

EXPORTS = {
    "WhatsApp Chat with Zoe.txt": [
        "12/01/2024, 09:00 - Zoe: hi, it's Zoe from the climbing gym",
        "12/01/2024, 09:01 - Arjun: hey Zoe!",
        "03/03/2024, 10:00 - Zoe: the gym moves to Baner next month",
    ],
    "WhatsApp Chat with Zoë.txt": [  # shares 12 January with Zoe; February is hers alone
        "12/01/2024, 11:00 - Zoë: bonjour Arjun, c'est Zoë de Lyon",
        "12/01/2024, 11:05 - Arjun: salut Zoë",
        "20/02/2024, 10:00 - Zoë: my flight lands on Friday",
        "20/02/2024, 10:02 - Arjun: I will pick you up",
    ],
    "WhatsApp Chat with Mom.txt": [
        "05/01/2024, 08:00 - Mom: did you eat?",
        "05/01/2024, 08:30 - Arjun: yes Mom",
    ],
    "WhatsApp Chat with Mom 😀.txt": [  # another contact saved as "Mom 😀": a friend's mother
        "05/01/2024, 19:00 - Mom 😀: Arjun beta, thanks for the sweets",
        "05/01/2024, 19:10 - Arjun: my pleasure aunty",
    ],
    "WhatsApp Chat with Lucía.txt": [  # an accented name alone: its old id `lucia` is kept
        "07/01/2024, 12:00 - Lucía: hola Arjun",
        "07/01/2024, 12:01 - Arjun: hola Lucía",
    ],
}

# `truffle ingest` as the code before distinct ids ran it: chats grouped by the folded slug, no id map
LEGACY_INGEST = """
import sys
from truffle_assets.ingest.chat_ids import ChatScan
from truffle_assets.defs.resources import ExportsResource
from truffle_assets.ingest.exports import scan_exports
from truffle_assets.ids import legacy_chat_id

def legacy_scan(self):
    chats = {}
    for p in sorted(p for files in scan_exports(self.exports_dir).values() for p in files):
        chats.setdefault(legacy_chat_id(p), []).append(p)
    return ChatScan(chats)

ExportsResource.scan = legacy_scan
from truffle_assets.cli import main
sys.exit(main(sys.argv[1:]))
"""


def _world(root: Path, names: list[str]) -> dict:
    for name in names:
        write_export(root / "exports", name, EXPORTS[name] if name in EXPORTS else [
            f"01/02/2024, 10:00 - {name[19:-4]}: hello from {name[19:-4]}", "01/02/2024, 10:05 - Arjun: hi"])
    return newcomer_env(root)


def _ingest(env: dict, *args: str, legacy: bool = False) -> dict:
    cmd = [sys.executable, "-c", LEGACY_INGEST] if legacy else [TRUFFLE]
    proc = subprocess.run([*cmd, "ingest", "--json", *args], env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return {**json.loads(proc.stdout), "stderr": proc.stderr}


def _per_file(db: Path) -> dict[str, tuple[str, int]]:
    """source file name -> (chat id, messages); one chat per file or the assertion says which is split."""
    with duckdb.connect(str(db), read_only=True) as con:
        rows = con.execute("SELECT source_file, chat_id, count(*) FROM messages GROUP BY ALL ORDER BY ALL").fetchall()
        assert con.execute("SELECT count(*) = count(DISTINCT id) FROM messages").fetchone()[0]
    out: dict[str, tuple[str, int]] = {}
    for src, chat, n in rows:
        assert Path(src).name not in out, f"{src} is in two chats"
        out[Path(src).name] = (chat, n)
    return out


def test_accents_emoji_and_look_alike_names_stay_separate_chats(tmp_path):
    names = ["WhatsApp Chat with Zoe.txt", "WhatsApp Chat with Zoë.txt", "WhatsApp Chat with Mom.txt",
             "WhatsApp Chat with Mom 😀.txt", "WhatsApp Chat with Alice Smith.txt", "WhatsApp Chat with alice_smith.txt"]
    env = _world(tmp_path, names)
    report = _ingest(env, "--messages-only")
    zoe2, mom2, alice2 = chat_id_for_name("Zoë"), chat_id_for_name("Mom 😀"), hashed_chat_id("alice_smith")
    assert _per_file(tmp_path / "memory.duckdb") == {
        "WhatsApp Chat with Zoe.txt": ("zoe", 3), "WhatsApp Chat with Zoë.txt": (zoe2, 4),
        "WhatsApp Chat with Mom.txt": ("mom", 2), "WhatsApp Chat with Mom 😀.txt": (mom2, 2),
        "WhatsApp Chat with Alice Smith.txt": ("alice-smith", 2), "WhatsApp Chat with alice_smith.txt": (alice2, 2)}
    assert {c: e["status"] for c, e in report["chats"].items()} == dict.fromkeys(
        ["alice-smith", alice2, "mom", mom2, "zoe", zoe2], "ingested")
    # the one pair that meets on an id is reported (report, stderr, UI), not merged; the run is whole
    assert report["status"] == "ok"
    assert [(Path(c["file"]).name, c["taken_by"], c["chat_id"]) for c in report["collisions"]] == [
        ("WhatsApp Chat with alice_smith.txt", "Alice Smith", alice2)]
    assert "chat name collision" in report["stderr"] and "alice_smith.txt" in report["stderr"]
    with dg.DagsterInstance.from_config(env["DAGSTER_HOME"]) as instance:
        obs = instance.fetch_observations(dg.AssetKey("whatsapp_exports"), limit=1).records[0].asset_observation
    assert [c["name"] for c in obs.metadata["id_collisions"].value] == ["alice_smith"]
    # the ids are kept: the next run finds the same chats, nothing to redo
    again = _ingest(env, "--messages-only")
    assert set(again["chats"]) == set(report["chats"])
    assert all(e["runs"][0]["days_redone"] == 0 for e in again["chats"].values())


def test_a_store_from_the_folding_rule_is_migrated_without_losing_or_doubling_a_message(tmp_path):
    env = _world(tmp_path, ["WhatsApp Chat with Zoe.txt", "WhatsApp Chat with Zoë.txt", "WhatsApp Chat with Lucía.txt"])
    db, cache = tmp_path / "memory.duckdb", tmp_path / "cache"
    old = _ingest(env, legacy=True)
    assert set(old["chats"]) == {"zoe", "lucia"}  # what the folding rule built: two contacts in one chat
    before = _per_file(db)
    assert before["WhatsApp Chat with Zoë.txt"][0] == before["WhatsApp Chat with Zoe.txt"][0] == "zoe"
    assert not (cache / "chat_ids.json").exists()
    with duckdb.connect(str(db), read_only=True) as con:
        assert con.execute("SELECT count(*) FROM episodes WHERE chat_id = 'zoe' AND day = DATE '2024-02-20'").fetchone()[0]

    new = _ingest(env)
    zoe2 = chat_id_for_name("Zoë")
    after = _per_file(db)
    # every file's messages are all there, once, and each contact is its own chat now
    assert {f: n for f, (_, n) in after.items()} == {f: n for f, (_, n) in before.items()}
    assert {f: c for f, (c, _) in after.items()} == {
        "WhatsApp Chat with Zoe.txt": "zoe", "WhatsApp Chat with Zoë.txt": zoe2,
        "WhatsApp Chat with Lucía.txt": "lucia"}  # alone, Lucía keeps her old id: nothing to redo
    assert json.loads((cache / "chat_ids.json").read_text(encoding="utf-8"))["ids"] == {
        "Lucía": "lucia", "Zoe": "zoe", "Zoë": zoe2}
    assert new["collisions"] == [] and new["status"] == "ok"
    assert new["chats"]["lucia"]["status"] == "up to date"
    # the merged chat split by itself: its January changed and its February (Zoë's alone) emptied
    assert [(r["first_month"], r["last_month"]) for r in new["chats"]["zoe"]["runs"]] == [("2024-01", "2024-02")]
    with duckdb.connect(str(db), read_only=True) as con:
        days = dict(con.execute("SELECT stage, list(DISTINCT day ORDER BY day)::VARCHAR FROM stage_days "
                                "WHERE chat_id = 'zoe' GROUP BY stage").fetchall())
        episodes = con.execute("SELECT count(*) FROM episodes WHERE chat_id = 'zoe' AND day = DATE '2024-02-20'").fetchone()[0]
    assert days and set(days.values()) == {"[2024-01-12, 2024-03-03]"}, days  # every stage, not just messages
    assert episodes == 0
    assert json.loads((cache / "ingested" / "zoe.json").read_text()).keys() == {"2024-01-12", "2024-03-03"}

    # converged: the next run redoes nothing
    third = _ingest(env)
    assert {c: e["status"] for c, e in third["chats"].items()} == dict.fromkeys(["lucia", "zoe", zoe2], "up to date")
    assert _per_file(db) == after
