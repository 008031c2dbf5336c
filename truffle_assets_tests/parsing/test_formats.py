"""Small inline exports for what the real fixtures do not cover."""

from __future__ import annotations

import codecs
from datetime import datetime

import pytest

from truffle_assets.parsing import ParseResult, parse_file, parse_text, read_export

LRM, RLM, NBSP, NNBSP = "\u200e", "\u200f", "\u00a0", "\u202f"


def parse(*lines: str) -> ParseResult:
    r = parse_text("\n".join(lines) + "\n")
    assert r.header_lines + r.continuation_lines + r.system_lines + len(r.quarantined) == r.lines_total
    return r


def only(r: ParseResult):
    assert len(r.entries) == 1, [e.to_json() for e in r.entries]
    return r.entries[0]


# --- kinds -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "line",
    [
        "12/05/2023, 10:00 - Alice: see you at 5 <This message was edited>",
        f"[12/05/2023, 10:00:00] Alice: see you at 5 {LRM}<This message was edited>",
    ],
)
def test_edited_message_keeps_raw_text(line):
    e = only(parse(line))
    assert (e.kind, e.edited, e.author) == ("message", True, "Alice")
    assert e.text == line.split("Alice: ", 1)[1]  # the marker stays in the raw text


def test_edited_marker_mid_text_is_not_edited():
    e = only(parse("12/05/2023, 10:00 - Alice: I wrote <This message was edited> by hand, ok?"))
    assert (e.kind, e.edited) == ("message", False)


@pytest.mark.parametrize("mark", ["", LRM])  # Android writes none, iOS an LRM before every poll line
def test_poll_is_one_entry(mark):
    r = parse(
        f"12/05/2023, 10:00 - Alice: {mark}POLL:",
        f"{mark}Where do we eat?",
        f"{mark}OPTION: Pizza (2 votes)",
        f"{mark}OPTION: Sushi (1 vote)",
        f"{mark}OPTION: 12/05/2023, 11:00 (0 votes)",
        "12/05/2023, 10:01 - Bob: pizza!",
    )
    poll, reply = r.entries
    assert (poll.kind, poll.author, poll.line_start, poll.line_end) == ("poll", "Alice", 1, 5)
    assert poll.text.splitlines()[2] == f"{mark}OPTION: Pizza (2 votes)"
    assert (reply.kind, r.continuation_lines) == ("message", 4)


def test_placeholders():
    r = parse(
        "12/05/2023, 10:00 - Alice: <Media omitted>",
        "12/05/2023, 10:01 - Alice: IMG-20230512-WA0001.jpg (file attached)",
        "12/05/2023, 10:02 - Alice: Bob.vcf (file attached)",
        "12/05/2023, 10:03 - Alice: This message was deleted",
        "12/05/2023, 10:04 - Alice: location: https://maps.google.com/?q=51.5,-0.12",
        "12/05/2023, 10:05 - Alice: Missed voice call",
        "12/05/2023, 10:06 - Alice: my site is example.com (new!)  and more words after",
    )
    assert [e.kind for e in r.entries] == ["media", "media", "contact", "deleted", "location", "call", "message"]


def test_long_message_is_never_a_placeholder():
    body = "<Media omitted>" + " and a very long story" * 50
    assert only(parse(f"12/05/2023, 10:00 - Alice: {body}")).kind == "message"


# --- encodings and line endings --------------------------------------------------------------

CHAT = "12/05/2023, 10:00 - Alice: héllo 👋\n12/05/2023, 10:01 - Bob: second\nline\n"


@pytest.mark.parametrize(
    ("bom", "codec"),
    [
        (codecs.BOM_UTF8, "utf-8"),
        (codecs.BOM_UTF16_LE, "utf-16-le"),
        (codecs.BOM_UTF16_BE, "utf-16-be"),
        (b"", "utf-8"),
    ],
    ids=["utf8-bom", "utf16-le-bom", "utf16-be-bom", "utf8"],
)
def test_encodings(tmp_path, bom, codec):
    path = tmp_path / "chat.txt"
    path.write_bytes(bom + CHAT.encode(codec))
    export = read_export(path)
    assert export.text == CHAT  # BOM removed, nothing else touched
    r = parse_file(path)
    assert [(e.author, e.text) for e in r.entries] == [("Alice", "héllo 👋"), ("Bob", "second\nline")]


def test_bom_inside_text_still_finds_the_first_header():
    e = parse_text("\ufeff" + CHAT).entries[0]
    assert (e.author, e.line_start) == ("Alice", 1)


def test_crlf(tmp_path):
    path = tmp_path / "chat.txt"
    path.write_bytes(CHAT.replace("\n", "\r\n").encode())
    r = parse_file(path)
    assert [e.text for e in r.entries] == ["héllo 👋", "second\nline"]
    assert (r.lines_total, r.continuation_lines) == (3, 1)


def test_unicode_line_separators_are_message_content():
    e = only(parse("12/05/2023, 10:00 - Alice: one\u2028two\u0085three"))
    assert e.text == "one\u2028two\u0085three"


# --- continuation lines that look like dates -------------------------------------------------


def test_date_like_continuation_lines_stay_body_text():
    r = parse(
        "01/02/2020, 10:00 - Alice: notes:",
        "31/02/2020 was not a day",
        "12/05/2020, 10:00 meeting",
        "31/02/2020, 10:00 - Bob: an impossible date is not a header",
        "",
        "2020-13-45, 10:00 - Bob: nor is this",
        "02/02/2020, 10:00 - Bob: real",
    )
    first, second = r.entries
    assert first.text.split("\n")[1:] == [
        "31/02/2020 was not a day",
        "12/05/2020, 10:00 meeting",
        "31/02/2020, 10:00 - Bob: an impossible date is not a header",
        "",
        "2020-13-45, 10:00 - Bob: nor is this",
    ]
    assert (first.line_end, second.author, second.ts) == (6, "Bob", datetime(2020, 2, 2, 10, 0))
    assert (r.header_lines, r.continuation_lines) == (2, 5)


# --- dates and times -------------------------------------------------------------------------


def _early_ambiguous(late: str) -> ParseResult:
    lines = [f"0{d}/0{d + 1}/2020, 10:0{d} - Alice: msg {d}" for d in range(1, 8)]
    return parse(*lines, "note: the only unambiguous date comes last", late)


def test_day_first_decided_by_a_late_value_over_12():
    r = _early_ambiguous("25/12/2020, 09:00 - Bob: Christmas")
    assert r.entries[0].ts == datetime(2020, 2, 1, 10, 1)  # 01/02 read day first
    assert r.entries[-1].ts == datetime(2020, 12, 25, 9, 0)


def test_month_first_decided_by_a_late_value_over_12():
    r = _early_ambiguous("12/25/2020, 09:00 - Bob: Christmas")
    assert r.entries[0].ts == datetime(2020, 1, 2, 10, 1)  # 01/02 read month first
    assert r.entries[-1].ts == datetime(2020, 12, 25, 9, 0)


@pytest.mark.parametrize(
    ("dates", "order"),
    [(["05/01", "03/02", "04/03"], "day first"), (["01/05", "02/03", "03/04"], "month first")],
)
def test_all_ambiguous_dates_follow_time_order(dates, order):
    # No value > 12: only one reading keeps time running forwards (Jan 5, Feb 3, Mar 4).
    r = parse(*(f"{d}/2020, 10:00 - A: {order}" for d in dates))
    assert [(e.ts.month, e.ts.day) for e in r.entries] == [(1, 5), (2, 3), (3, 4)]


@pytest.mark.parametrize(
    ("line", "ts"),
    [
        ("13.6.2018 klo 21.25.15 - Mika: moi", datetime(2018, 6, 13, 21, 25, 15)),
        ("13.6.2018 klo 21.25 - Mika: moi", datetime(2018, 6, 13, 21, 25)),
        (f"13/6/2018, 10:30{NNBSP}a.{NBSP}m. - Mika: moi", datetime(2018, 6, 13, 10, 30)),
        (f"13/6/2018, 10:30{NBSP}p.{NNBSP}m. - Mika: moi", datetime(2018, 6, 13, 22, 30)),
        (f"13/6/2018, 12:05{NNBSP}a. m. - Mika: moi", datetime(2018, 6, 13, 0, 5)),
        (f"13/6/2018, 12:05{NNBSP}p. m. - Mika: moi", datetime(2018, 6, 13, 12, 5)),
        (f"[13/06/2018, 9:05:07{NNBSP}PM] Mika: moi", datetime(2018, 6, 13, 21, 5, 7)),
        ("[21:05:07, 13/6/18] Mika: moi", datetime(2018, 6, 13, 21, 5, 7)),  # Vietnamese: time first
        ("[2018-06-13 21:05:07] Mika: moi", datetime(2018, 6, 13, 21, 5, 7)),
        ("[6/13/2561 BE, 21:05:07] Mika: moi", datetime(2018, 6, 13, 21, 5, 7)),  # Buddhist era
        (f"{LRM}[13/06/2018, 21:05:07] Mika: moi", datetime(2018, 6, 13, 21, 5, 7)),
    ],
)
def test_time_formats(line, ts):
    e = only(parse(line))
    assert (e.ts, e.author, e.text) == (ts, "Mika", "moi")


# --- names and scripts -----------------------------------------------------------------------


def test_hebrew_rtl():
    r = parse(
        "18.3.2022, 14:55 - ההודעות והשיחות מוצפנות מקצה לקצה. אף אחד מחוץ לצ'אט הזה לא יכול לקרוא אותן.",
        "18.3.2022, 14:56 - דני: שלום, מה שלומך?",
        "מה קורה?",
        "18.3.2022, 14:57 - רונית כהן: הכל טוב 🙂",
        "18.3.2022, 14:58 - רונית כהן: <מדיה לא נכללה>",
        "18.3.2022, 14:59 - דני: הודעה זו נמחקה",
    )
    assert [(e.author, e.kind) for e in r.entries] == [
        (None, "system"), ("דני", "message"), ("רונית כהן", "message"), ("רונית כהן", "media"), ("דני", "deleted"),
    ]
    assert r.entries[1].text == "שלום, מה שלומך?\nמה קורה?"


def test_hebrew_ios_notice_attributed_to_the_chat_is_system():
    e = only(parse(f"[18.3.2022, 14:56:01] דני: {RLM}ההודעות והשיחות מוצפנות מקצה לקצה. אף אחד מחוץ לצ'אט הזה לא יכול לקרוא אותן."))
    assert (e.author, e.kind) == ("דני", "system")


def test_persian_digits_and_arabic_comma():
    r = parse(
        "۱۸/۳/۲۰۲۲، ۱۴:۵۶ - علی: سلام، چطوری؟",
        "[۱۸/۳/۲۰۲۲، ۱۴:۵۷:۰۱] مریم: خوبم ۳ تا",
        "۱۸/۳/۲۰۲۲، ۱۴:۵۸ - علی: این پیام حذف شد",
    )
    assert [(e.ts, e.author, e.text, e.kind) for e in r.entries] == [
        (datetime(2022, 3, 18, 14, 56), "علی", "سلام، چطوری؟", "message"),
        (datetime(2022, 3, 18, 14, 57, 1), "مریم", "خوبم ۳ تا", "message"),  # digits in the body are kept
        (datetime(2022, 3, 18, 14, 58), "علی", "این پیام حذف شد", "deleted"),
    ]


def test_arabic_ios_header_with_rlm_and_pm_marker():
    e = only(parse(f"[{RLM}18{RLM}/3{RLM}/2022، 2:56:01{NBSP}م] أحمد: مرحبا"))
    assert (e.ts, e.author, e.text) == (datetime(2022, 3, 18, 14, 56, 1), "أحمد", "مرحبا")


@pytest.mark.parametrize(
    "author",
    ["🦄", "Ana 🌈✨", "👩🏻\u200d⚖️ Judge", "+1 (555) 123-4567", "+44 7700 900123", "+49 1512 3456789", "~ Maria"],
)
def test_author_names(author):
    e = only(parse(f"12/05/2023, 10:00 - {author}: hi: there"))
    assert (e.author, e.text, e.kind) == (author, "hi: there", "message")


def test_ios_phone_number_author_wrapped_in_marks():
    e = only(parse(f"[3/18/22, 14:56:01] \u202a+40{NBSP}521{NBSP}028{NBSP}62{NBSP}18\u202c: hello"))
    assert e.author == "+40 521 028 62 18"


def test_system_lines_with_colons_or_quotes_are_not_authored():
    r = parse(
        '12/05/2023, 10:00 - Alice changed the subject to "Trip: Rome"',
        "12/05/2023, 10:01 - Alice added +1 555 123",
    )
    assert [(e.author, e.kind) for e in r.entries] == [(None, "system"), (None, "system")]
    assert r.system_lines == 2


# --- quarantine ------------------------------------------------------------------------------


def test_text_before_the_first_header_is_quarantined_and_counted():
    r = parse("Chat history with Alice", "exported by some tool", "12/05/2023, 10:00 - Alice: hi", "more")
    assert [(n, reason) for n, reason, _ in r.quarantined] == [
        (1, "text before the first message header"),
        (2, "text before the first message header"),
    ]
    assert r.quarantined[0][2] == "Chat history with Alice"
    assert (r.lines_total, r.header_lines, r.continuation_lines, len(r.quarantined)) == (4, 1, 1, 2)
    assert r.counts["quarantined_lines"] == 2


def test_header_like_lines_before_the_first_header_are_quarantined():
    r = parse("12/05/2020, 10:00 meeting notes", "31/02/2020, 10:00 - Bob: impossible", "01/02/2020, 10:00 - Alice: hi")
    assert [n for n, _, _ in r.quarantined] == [1, 2]
    assert (only(r).author, only(r).line_start) == ("Alice", 3)


def test_empty_body_and_trailing_blank_lines():
    r = parse("[01/02/2020, 10:00:00] Alice:", "[01/02/2020, 10:01:00] Bob: last", "", "")
    assert [(e.author, e.text, e.line_start, e.line_end) for e in r.entries] == [
        ("Alice", "", 1, 1),
        ("Bob", "last\n\n", 2, 4),
    ]


def test_ios_group_events_attributed_to_group_are_system():
    """iOS writes group events with the group (or actor) as author and a leading U+200E."""
    text = (
        "[14/03/2021, 10:00:01] Mehta Parivaar: \u200eYou created group “Mehta Parivaar”\n"
        "[14/03/2021, 10:00:02] Mehta Parivaar: \u200eMummy added Papa\n"
        "[14/03/2021, 10:00:03] Mehta Parivaar: \u200eMummy changed the group photo\n"
        "[14/03/2021, 10:00:04] Papa: \u200eimage omitted\n"
    )
    kinds = [e.kind for e in parse_text(text).entries]
    assert kinds == ["system", "system", "system", "media"]
