"""The parser against real exports from nine public WhatsApp parsers (see SOURCES.md there).

EXPECTED.json holds what each peer's own tests assert. Peers count and print messages by their own
conventions, so every peer gets an explicit mapping (`PEERS`) from our entries to its numbers:
no entry is skipped, and every field an entry gives is checked.
"""

from __future__ import annotations

import json
import os
import re
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

import pytest

from truffle_assets.parsing import Entry, ParseResult, parse_file

DEFAULT_FIXTURES = Path(__file__).resolve().parents[3] / "shared/fixtures/whatsapp"
FIXTURES = Path(os.environ.get("TRUFFLE_FIXTURES") or DEFAULT_FIXTURES)
PRESENT = (FIXTURES / "EXPECTED.json").is_file()
MISSING = "<fixtures missing>"  # a placeholder parameter, so a missing directory fails instead of collecting 0 tests

# Our raw text keeps the bidi marks iOS writes (LRM/RLM, LRE..RLO); the peers' expectations do not.
BIDI = str.maketrans({c: None for c in "\u200e\u200f\u202a\u202b\u202c\u202d\u202e"})


def require_fixtures() -> None:
    if not PRESENT:
        pytest.fail(
            f"WhatsApp fixture directory not found: {FIXTURES} (no EXPECTED.json). "
            "Set TRUFFLE_FIXTURES to the folder holding the fixtures (normally /work/shared/fixtures/whatsapp).",
            pytrace=False,
        )


def export_files() -> list[str]:
    if not PRESENT:
        return [MISSING]
    return sorted(str(p.relative_to(FIXTURES)) for p in FIXTURES.rglob("*") if p.suffix.lower() in (".txt", ".zip"))


def expected_entries() -> list[dict]:
    if not PRESENT:
        return [{"file": MISSING}]
    return json.loads((FIXTURES / "EXPECTED.json").read_text(encoding="utf-8"))


_parsed: dict[str, ParseResult] = {}


def parsed(rel: str) -> ParseResult:
    require_fixtures()
    if rel not in _parsed:
        _parsed[rel] = parse_file(FIXTURES / rel)
    return _parsed[rel]


def unmarked(text: str) -> str:
    return text.translate(BIDI)


# ---------------------------------------------------------------------------------------------
# Every export file


def test_fixture_directory_present():
    require_fixtures()
    files = export_files()
    assert len(files) >= 90, f"expected the 87 .txt + 3 .zip exports of SOURCES.md, found {len(files)} in {FIXTURES}"
    named = {e["file"] for e in expected_entries()}
    assert named <= set(files), f"EXPECTED.json names files that are missing: {sorted(named - set(files))}"


@pytest.mark.parametrize("rel", export_files())
def test_every_export_parses_with_exact_line_accounting(rel):
    r = parsed(rel)
    assert sum(e.authored for e in r.entries) >= 1, r.summary()
    assert r.header_lines + r.continuation_lines + r.system_lines + len(r.quarantined) == r.lines_total, r.summary()
    assert r.quarantined == [], "real exports start with a header"
    # Entries tile the file: each starts on the line after the previous one ends.
    assert r.entries[0].line_start == 1
    for prev, nxt in zip(r.entries, r.entries[1:]):
        assert nxt.line_start == prev.line_end + 1
    assert r.entries[-1].line_end == r.lines_total


# ---------------------------------------------------------------------------------------------
# EXPECTED.json, one test per entry, through each peer's counting convention


def _all(entries: list[Entry]) -> list[Entry]:
    return list(entries)


def _authored_messages(entries: list[Entry]) -> list[Entry]:
    return [e for e in entries if e.authored and e.kind == "message"]


@dataclass(frozen=True)
class Peer:
    """One peer parser's conventions, stated as a mapping onto our entries."""

    counted: Callable[[list[Entry]], list[Entry]]  # the entries the peer calls its messages, in its order
    text: Callable[[str], str] = lambda t: t  # applied to both the peer's text and ours
    minute_precision: bool = False


PEERS: dict[str, Peer] = {
    # chat-miner keeps only authored text messages. Its `John Doe:.` line has no ": ", so it is a
    # system line for us too; it joins continuation lines with one space where we keep "\n".
    "joweich__chat-miner": Peer(_authored_messages, text=lambda t: " ".join(t.split("\n"))),
    # whatstk makes a row of every line with a username: it keeps the iOS-style encryption notice
    # attributed to the chat name ("Pokemon Chat", our kind "system") and drops author-less lines.
    # It strips the trailing spaces the lorem files carry.
    "lucasrodes__whatstk": Peer(lambda es: [e for e in es if e.author is not None], text=str.strip),
    # Pustur returns every entry, system lines included, and keeps a trailing "\n" in the text.
    "Pustur__whatsapp-chat-parser": Peer(_all, text=lambda t: t.rstrip("\n")),
    # chat-analytics drops author-less system lines and orders messages by time (stable sort).
    "mlomb__chat-analytics": Peer(lambda es: sorted((e for e in es if e.authored), key=lambda e: e.ts)),
    # rwhatsapp keeps every line as a row (system rows with author NA); its stored times are off by
    # up to 60 s, so timestamps compare to the minute.
    "JBGruber__rwhatsapp": Peer(_all, minute_precision=True),
    # langchain loads only authored text: media placeholders, deleted notices and the E2E notice go.
    "langchain-ai__langchain-community": Peer(_authored_messages),
    # whatsapp-chat-parser-rb returns every entry, system lines with author nil.
    "emmaakachukwu__whatsapp-chat-parser-rb": Peer(_all),
    # whats_json (skipSystem=false) returns every entry and reports author null for system lines;
    # its per-type counts are checked separately (test_whats_json_type_counts).
    "starkdmi__whats_json": Peer(_all),
}


def peer_of(entry: dict) -> Peer:
    repo = entry["file"].split("/", 1)[0]
    assert repo in PEERS, f"no counting convention stated for peer {repo!r} ({entry['derived_by']})"
    return PEERS[repo]


def _ts(value: datetime, minute: bool) -> datetime:
    return value.replace(second=0) if minute else value


@pytest.mark.parametrize("exp", expected_entries(), ids=lambda e: e["file"])
def test_expected(exp):
    r = parsed(exp["file"])
    peer = peer_of(exp)
    counted = peer.counted(r.entries)
    if exp["messages"] is not None:
        assert len(counted) == exp["messages"], r.summary()
    if exp["authors"] is not None:
        assert {e.author for e in counted if e.authored} == set(exp["authors"])
    if exp["first"] is not None:
        first, want = counted[0], exp["first"]
        if want["timestamp"] is not None:
            wanted = datetime.fromisoformat(want["timestamp"])
            assert _ts(first.ts, peer.minute_precision) == _ts(wanted, peer.minute_precision)
        if want["author"] is None:
            assert first.kind == "system"  # peers report no author for system lines; iOS may attribute one
        else:
            assert first.author == want["author"]
        assert peer.text(unmarked(first.text)) == peer.text(want["text"])


# whats_json notes list "Expected type counts: text N, location N, image N, ..., system N".
_TYPE_COUNT = re.compile(r"\b(text|image|video|audio|gif|sticker|file|location|system) (\d+)\b")
# Mapping to our kinds: text -> message, location -> location, every other whats_json type (its
# media types and its "system", which includes placeholders and deleted notices) -> the rest.
_OTHER_KINDS = {"system", "media", "deleted", "contact", "call"}


def _whats_json_with_type_counts() -> list[dict]:
    return [e for e in expected_entries() if "Expected type counts:" in e.get("notes", "")] or [{"file": MISSING}]


@pytest.mark.parametrize("exp", _whats_json_with_type_counts(), ids=lambda e: e["file"])
def test_whats_json_type_counts(exp):
    r = parsed(exp["file"])
    types = {t: int(n) for t, n in _TYPE_COUNT.findall(exp["notes"].split("Expected type counts:", 1)[1])}
    assert sum(types.values()) == exp["messages"], f"could not read the type counts from: {exp['notes']}"
    kinds = Counter(e.kind for e in r.entries)
    assert set(kinds) <= {"message", "location"} | _OTHER_KINDS
    assert kinds["message"] == types.pop("text")
    assert kinds["location"] == types.pop("location")
    assert sum(kinds[k] for k in _OTHER_KINDS) == sum(types.values())


# ---------------------------------------------------------------------------------------------
# Further assertions the peers' tests make (quoted in the EXPECTED.json notes)

CHAT_MINER = "joweich__chat-miner/test/whatsapp"
CHAT_MINER_FILES = [
    "test_[mmddyy]_24hrs.txt",
    "test_ddmmyy_24hrs.txt",
    "test_mmddyy_24hrs.txt",
    "test_mmddyyyy_12hrs.txt",
    "test_yyyymmdd_24hrs.txt",
]


@pytest.mark.parametrize("name", CHAT_MINER_FILES)
def test_chat_miner_target_json(name):
    r = parsed(f"{CHAT_MINER}/{name}")
    target = json.loads((FIXTURES / CHAT_MINER / "target.json").read_text(encoding="utf-8"))
    ours = [
        {"timestamp": e.ts.isoformat(), "author": e.author, "message": PEERS["joweich__chat-miner"].text(e.text)}
        for e in PEERS["joweich__chat-miner"].counted(r.entries)
    ]
    assert ours[::-1] == target  # target.json is newest first


@pytest.mark.parametrize("ext", ["txt", "zip"])
def test_chat_analytics_4A_11M_reads_12_9_20_day_first(ext):
    r = parsed(f"mlomb__chat-analytics/tests/samples/whatsapp/4A_11M.{ext}")
    authored = [e for e in r.entries if e.authored]
    assert len(authored) == 11  # the NA_MM file-name convention
    at = datetime(2020, 9, 12, 23, 55)
    assert any(e.author == "Alice" and e.text == "boiii" and e.ts == at for e in authored)
    assert any(e.author == "Trent" and e.text == "👩🏻\u200d⚖️" and e.ts == at for e in authored)
    assert sum(e.kind == "system" for e in r.entries) == 3


def test_chat_analytics_2A_5M_chronological_order():
    r = parsed("mlomb__chat-analytics/tests/samples/whatsapp/2A_5M.txt")
    got = [(e.author, e.text, e.ts.strftime("%H:%M")) for e in PEERS["mlomb__chat-analytics"].counted(r.entries)]
    assert got == [
        ("A", "Hi", "12:00"),
        ("B", "Whats up?", "12:01"),
        ("A", "All good", "12:02"),
        ("A", "This message should be reordered", "12:02"),
        ("B", "<media omitted>", "12:03"),
    ]
    assert r.entries[4].text == "This message should be reordered"  # stored in file order
    assert [e.kind for e in r.entries].count("media") == 1  # the peer's attachment "of type Other"


def test_emma_sample_mixed_android_and_ios():
    es = parsed("emmaakachukwu__whatsapp-chat-parser-rb/spec/fixtures/files/sample.txt").entries
    assert es[0].author == "John Doe"
    assert (es[2].author, es[2].ts) == ("Alice", datetime(2025, 12, 15, 10, 32, 3))
    assert es[4].author == "Charlie"
    assert (es[6].author, es[6].kind, es[6].text) == (None, "system", "Note System message on iOS.")


def test_whatstk_pokemon_rows():
    rows = PEERS["lucasrodes__whatstk"].counted(parsed("lucasrodes__whatstk/chats/whatsapp/pokemon.txt").entries)
    assert all(e.kind == "system" for e in rows if e.author == "Pokemon Chat")
    assert [(e.ts, e.author, e.text) for e in rows[1:4]] == [
        (datetime(2016, 8, 6, 13, 23), "Ash Ketchum", "Hey guys!"),
        (datetime(2016, 8, 6, 13, 25), "Brock", "Hey Ash, good to have a common group!"),
        (datetime(2016, 8, 6, 13, 30), "Misty", "Hey guys! Long time since heard anything from you"),
    ]


def test_pustur_multiline_with_blank_line():
    es = parsed("Pustur__whatsapp-chat-parser/samples/short-chat.txt").entries
    assert [e.author for e in es[:2]] == [None, None]
    assert es[4].text + "\n" == "How are you?\n\nIs everything alright?\n"  # Pustur keeps the final "\n"


@pytest.mark.parametrize("copy", ["integration_tests/examples", "examples"])
def test_langchain_mixed_styles_in_order(copy):
    r = parsed(f"langchain-ai__langchain-community/libs/community/tests/{copy}/whatsapp_chat.txt")
    got = [(e.author, e.text) for e in PEERS["langchain-ai__langchain-community"].counted(r.entries)]
    assert [a for a, _ in got] == [
        "James", "User name", "User 2", "User 1", "~ User name 2", "~ User 2", "User 1", "User 2",
    ]
    assert got[-2:] == [("User 1", "Hello"), ("User 2", "Goodbye")]
    assert {e.kind for e in r.entries} == {"message", "media", "deleted"}


def test_rwhatsapp_rows():
    es = parsed("JBGruber__rwhatsapp/inst/extdata/sample.txt").entries
    assert [e.author for e in es[:2]] == [None, None]
    assert sum(e.author is not None for e in es) == 7
    assert "It's fun doing text analysis with R\nisn't it?" in [e.text for e in es]
    assert "<Media omitted>" in [e.text for e in es]  # kept as text (our kind: media)


def test_whats_json_dmitry_s():
    es = parsed("starkdmi__whats_json/test/data/chats_unique/WhatsApp Chat - Dmitry S.txt").entries
    newest_first = es[::-1]
    assert newest_first[0].ts == datetime(2022, 3, 27, 21, 56, 46)
    m4 = newest_first[4]
    assert (m4.author, m4.ts, m4.kind, m4.text) == ("Dmitry S", datetime(2022, 3, 27, 21, 53, 30), "message", "Hello World")
    assert [e.text for e in es if e.kind == "message"].count("Hello World") == 2
    assert "😊" in [e.text for e in es if e.kind == "message"]
    # The counterpart is a phone number wrapped in LRE..PDF with NBSPs; we keep it as plain text.
    assert "+40 521 028 62 18" in {e.author for e in es}
    # Deleted notices and view-once media are not text.
    assert {unmarked(e.text) for e in es if e.kind == "deleted"} == {"You deleted this message.", "This message was deleted."}
    assert unmarked(next(e.text for e in es if e.ts == datetime(2022, 3, 27, 21, 51, 20))) == "image omitted"
    assert Counter(e.kind for e in es)["location"] == 2
