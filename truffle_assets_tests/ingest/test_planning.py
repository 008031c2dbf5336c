"""The run planner as a pure function: real export files, stored digests as plain dicts."""

from datetime import date
from pathlib import Path

import pytest

from truffle_assets.ingest.exports import load_chat, scan_exports
from truffle_assets.files import sha256_file
from truffle_assets.ingest.months import contiguous_months, month_start, months_of, next_month
from truffle_assets.parsing import ExportError
from truffle_assets.ingest.planning import plan_ingest
from truffle_assets_tests.conftest import write_export

WINDOW = (date(2014, 1, 1), date(2099, 12, 31))
NOTHING_STORED = {}.get
MARCH = date(2023, 3, 1)


def d(n: int) -> date:
    return date(2023, 3, n)


def m(year: int, month: int) -> date:
    return date(year, month, 1)


def spans(plan) -> dict[str, list[tuple[date, date]]]:
    return {c.chat: [(r.first, r.last) for r in c.ranges] for c in plan.chats}


def stored_as_now(path: Path, chat: str):
    """What the store holds once `path` has been ingested: its day digests."""
    digests = load_chat(chat, [path]).day_digests()
    return lambda c: digests if c == chat else {}


@pytest.fixture
def carol_export(workdir: Path) -> Path:
    """Messages in Dec 2022, Jan, Feb and Apr 2023: March is silent."""
    return write_export(workdir / "exports", "WhatsApp Chat with Carol.txt", [
        "30/12/2022, 10:00 - Carol: see you next year",
        "02/01/2023, 10:00 - Arjun: happy new year",
        "14/02/2023, 10:00 - Carol: roses",
        "20/02/2023, 10:00 - Arjun: thanks",
        "09/04/2023, 10:00 - Carol: easter?",
    ])


def test_month_arithmetic():
    assert month_start(date(2023, 12, 31)) == m(2023, 12) and next_month(m(2023, 12)) == m(2024, 1)
    assert months_of([d(4), d(1), date(2023, 5, 9)]) == [MARCH, m(2023, 5)]
    assert contiguous_months([m(2023, 4), m(2022, 12), m(2023, 1), m(2023, 6)]) == [
        (m(2022, 12), m(2023, 1)), (m(2023, 4), m(2023, 4)), (m(2023, 6), m(2023, 6))]


def test_new_chat_gets_its_months_with_messages(workdir, alice_export):
    plan = plan_ingest(scan_exports(workdir / "exports"), NOTHING_STORED, WINDOW, registered=set())
    assert spans(plan) == {"alice": [(MARCH, MARCH)]}
    assert plan.chats[0].days_in_export == 3 and plan.chats[0].ranges[0].changed_days == 3
    assert plan.unreadable == []


def test_silent_months_are_never_planned(workdir, carol_export):
    plan = plan_ingest(scan_exports(workdir / "exports"), NOTHING_STORED, WINDOW, registered=set())
    # one range per stretch of consecutive months with messages, across the year boundary
    assert spans(plan) == {"carol": [(m(2022, 12), m(2023, 2)), (m(2023, 4), m(2023, 4))]}
    assert [r.changed_days for r in plan.chats[0].ranges] == [4, 1]


def test_unregistered_chat_is_new_even_when_stored(workdir, alice_export):
    plan = plan_ingest(scan_exports(workdir / "exports"), stored_as_now(alice_export, "alice"), WINDOW, registered=set())
    assert spans(plan) == {"alice": [(MARCH, MARCH)]}


def test_without_a_registry_the_store_says_what_is_new(workdir, alice_export):
    exports = scan_exports(workdir / "exports")
    assert spans(plan_ingest(exports, NOTHING_STORED, WINDOW)) == {"alice": [(MARCH, MARCH)]}
    assert spans(plan_ingest(exports, stored_as_now(alice_export, "alice"), WINDOW)) == {"alice": []}


def test_changed_days_plan_only_their_months_with_digests_that_follow_content(workdir, alice_export):
    stored = stored_as_now(alice_export, "alice")
    text = alice_export.read_text()
    alice_export.write_text(text.replace("<Media omitted>", "lovely photo") + "06/05/2023, 08:00 - Alice: new day\n")
    exports = scan_exports(workdir / "exports")
    plan = plan_ingest(exports, stored, WINDOW, registered={"alice"})
    assert spans(plan) == {"alice": [(MARCH, MARCH), (m(2023, 5), m(2023, 5))]}  # April is silent
    assert [r.changed_days for r in plan.chats[0].ranges] == [1, 1]
    assert plan.files == {}  # no `seen`: nothing hashed
    # the same change planned twice carries the same digests; a different one does not
    assert plan_ingest(exports, stored, WINDOW, registered={"alice"}).chats[0].ranges == plan.chats[0].ranges
    alice_export.write_text(text.replace("<Media omitted>", "blurry photo"))
    other = plan_ingest(scan_exports(workdir / "exports"), stored, WINDOW, registered={"alice"})
    assert spans(other) == {"alice": [(MARCH, MARCH)]}
    assert other.chats[0].ranges[0].digest != plan.chats[0].ranges[0].digest


def test_a_day_gone_from_the_export_is_a_change(workdir, alice_export):
    stored = stored_as_now(alice_export, "alice")
    alice_export.write_text("\n".join(line for line in alice_export.read_text().splitlines() if "/03/2023, 21:1" not in line) + "\n")
    plan = plan_ingest(scan_exports(workdir / "exports"), stored, WINDOW, registered={"alice"})
    assert spans(plan) == {"alice": [(MARCH, MARCH)]} and plan.chats[0].ranges[0].changed_days == 1


def test_registered_chat_with_unchanged_files_is_not_parsed(workdir, alice_export):
    exports = scan_exports(workdir / "exports")
    alice_export.write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00binary")  # parsing it would fail
    seen = {"alice": {str(alice_export): sha256_file(alice_export)}}
    plan = plan_ingest(exports, NOTHING_STORED, WINDOW, registered={"alice"}, seen=seen)
    assert plan.chats == [] and plan.unreadable == [] and plan.files == seen


def test_seen_files_are_recorded_per_chat_for_the_next_cursor(workdir, alice_export, bob_export):
    seen = {"gone": {"gone.txt": "x"}, "old-flat-cursor.txt": "y"}
    plan = plan_ingest(scan_exports(workdir / "exports"), NOTHING_STORED, WINDOW, registered=set(), seen=seen)
    # chats no longer exported and a cursor from before chats were recorded are dropped
    assert plan.files == {"alice": {str(alice_export): sha256_file(alice_export)},
                          "bob": {str(bob_export): sha256_file(bob_export)}}


def test_a_chat_that_lost_a_file_is_read_again(workdir, alice_export):
    """A re-export's old file deleted, or a file given its own chat (`chat_ids`): the chat's other
    files are unchanged, yet the days only the lost file held must be planned."""
    old = write_export(workdir / "exports" / "WhatsApp Chat - Alice", "_chat.txt", [
        "02/02/2023, 10:00 - Alice: from an older export",
    ])
    stored = load_chat("alice", [alice_export, old]).day_digests()
    seen = {"alice": {str(p): sha256_file(p) for p in (alice_export, old)}}
    old.unlink()
    plan = plan_ingest(scan_exports(workdir / "exports"), lambda c: stored, WINDOW, registered={"alice"}, seen=seen)
    assert spans(plan) == {"alice": [(m(2023, 2), m(2023, 2))]} and plan.chats[0].ranges[0].changed_days == 1
    assert plan.files == {"alice": {str(alice_export): sha256_file(alice_export)}}


def test_full_replans_every_chat_from_scratch(workdir, alice_export):
    exports = scan_exports(workdir / "exports")
    stored = stored_as_now(alice_export, "alice")
    assert spans(plan_ingest(exports, stored, WINDOW, full=True)) == {"alice": [(MARCH, MARCH)]}
    assert spans(plan_ingest(exports, stored, WINDOW, registered={"alice"}, full=True)) == {"alice": [(MARCH, MARCH)]}


def test_only_limits_the_plan_to_chosen_chats(workdir, alice_export, bob_export):
    exports = scan_exports(workdir / "exports")
    assert spans(plan_ingest(exports, NOTHING_STORED, WINDOW, only=["bob"])) == {"bob": [(MARCH, MARCH)]}
    assert set(spans(plan_ingest(exports, NOTHING_STORED, WINDOW, only=None))) == {"alice", "bob"}


def test_days_without_a_partition_are_reported_not_planned(workdir, alice_export):
    plan = plan_ingest(scan_exports(workdir / "exports"), NOTHING_STORED, (d(2), d(3)))
    assert spans(plan) == {"alice": [(MARCH, MARCH)]} and plan.chats[0].outside == [d(1), d(4)]
    assert plan.chats[0].ranges[0].changed_days == 1


def test_unreadable_export_is_reported_and_other_chats_planned(workdir, alice_export):
    (workdir / "exports" / "WhatsApp Chat with Junk.txt").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00binary")
    plan = plan_ingest(scan_exports(workdir / "exports"), NOTHING_STORED, WINDOW, registered=set(), seen={})
    assert spans(plan) == {"alice": [(MARCH, MARCH)]}
    assert [type(e) for e in plan.unreadable] == [ExportError] and "Junk" in str(plan.unreadable[0])
    assert plan.files == {"alice": {str(alice_export): sha256_file(alice_export)}}  # the broken file is retried next tick


def test_the_chats_the_user_writes_to_most_come_first(workdir, alice_export, bob_export, carol_export):
    """Alice: 2 of the user's messages, Bob 1, Carol 2 of 5: ordered by the user's own messages (then by
    chat), not alphabetically and not by the chat's size; without a user, every message counts."""
    exports = scan_exports(workdir / "exports")
    plan = plan_ingest(exports, NOTHING_STORED, WINDOW, registered=set(), user="Bob")
    assert [(c.chat, c.written) for c in plan.chats] == [("alice", 0), ("bob", 1), ("carol", 0)]
    assert [c.chat for c in plan.most_written_first().chats] == ["bob", "alice", "carol"]
    plan = plan_ingest(exports, NOTHING_STORED, WINDOW, registered=set(), user="Arjun")
    assert [(c.chat, c.written) for c in plan.most_written_first().chats] == [("alice", 2), ("carol", 2), ("bob", 1)]
    plan = plan_ingest(exports, NOTHING_STORED, WINDOW, registered=set())
    assert [(c.chat, c.written) for c in plan.most_written_first().chats] == [("alice", 5), ("carol", 5), ("bob", 2)]
