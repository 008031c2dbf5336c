"""Hostile and broken inputs: each must end in a clear ExportError or a fast, correct parse."""

from __future__ import annotations

import random
import time
import tracemalloc
import zipfile

import pytest

from truffle_assets.parsing import ExportError, parse_file, parse_text, read_export
from truffle_assets.parsing.limits import MAX_MESSAGE_CHARS, TRUNCATION_MARK

HEADER = "01/02/2020, 10:00 - Alice: "
CHAT = f"{HEADER}hi\n01/02/2020, 10:01 - Bob: hello\n"
TEN_MB = 10 * 1024 * 1024


def make_zip(path, members: dict[str, bytes | str]) -> None:
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, data in members.items():
            zf.writestr(zipfile.ZipInfo(name), data)  # a ZipInfo keeps the name verbatim, "../" included


def export_error(path) -> ExportError:
    with pytest.raises(ExportError) as info:
        parse_file(path)
    assert str(path) in str(info.value)  # every error names the file
    return info.value


# --- plain files -----------------------------------------------------------------------------


@pytest.mark.parametrize("data", [b"", b"\n\n", b"   \r\n\t\n"], ids=["empty", "newlines", "whitespace"])
def test_empty_file(tmp_path, data):
    path = tmp_path / "empty.txt"
    path.write_bytes(data)
    assert "empty" in str(export_error(path))


def test_missing_file(tmp_path):
    assert "no such file" in str(export_error(tmp_path / "nope.txt"))


@pytest.mark.parametrize(
    ("data", "line"),
    [
        (random.Random(0).randbytes(64 * 1024), 1),
        (b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x01\x00" + bytes(range(256)) * 8, 1),
        (CHAT.encode() + b"\x89PNG\r\n\x1a\n\x00\x00", 3),  # garbage after two good lines
        (CHAT.encode() + b"ok\x00\x00\x00\x00 binary", 3),  # valid UTF-8, but NULs
    ],
    ids=["random", "png", "png-after-chat", "nul"],
)
def test_binary_file_names_file_and_line(tmp_path, data, line):
    path = tmp_path / "photo.txt"
    path.write_bytes(data)
    err = export_error(path)
    assert err.line == line
    assert f"{path}:{line}:" in str(err)


@pytest.mark.parametrize("bom", [True, False])
@pytest.mark.parametrize("codec", ["utf-16-le", "utf-16-be"])
def test_utf16_parses(tmp_path, codec, bom):
    path = tmp_path / "chat.txt"
    data = CHAT.encode(codec)
    path.write_bytes(("\ufeff".encode(codec) if bom else b"") + data)
    r = parse_file(path)
    assert [(e.author, e.text) for e in r.entries] == [("Alice", "hi"), ("Bob", "hello")]


def test_text_with_no_header_names_line_1(tmp_path):
    path = tmp_path / "notes.txt"
    path.write_text("just some notes\n12/05/2023 is a date\n")
    err = export_error(path)
    assert err.line == 1 and "no WhatsApp message header" in str(err)


# --- huge lines: no regex may backtrack over them --------------------------------------------

PATHOLOGICAL = {
    "letters": "a" * TEN_MB,
    "spaces": " " * TEN_MB + "x",
    "trailing-spaces": "x" + " " * TEN_MB,
    "angle-colons": "<ab: c" * (TEN_MB // 6),
    "dots": "a." * (TEN_MB // 2),
    "digits": "1" * TEN_MB,
    "headers": "[1/1/2020, 10:00:00] " * (TEN_MB // 21),
    "colon-spaces": ": " * (TEN_MB // 2),
    "marks": "\u200e1/1/2020" * (TEN_MB // 9),
}


@pytest.mark.parametrize("body", PATHOLOGICAL.values(), ids=PATHOLOGICAL.keys())
def test_10mb_message_body_is_fast(body):
    start = time.perf_counter()
    r = parse_text(f"{HEADER}{body}\n01/02/2020, 10:01 - Bob: after\n")
    elapsed = time.perf_counter() - start
    assert [e.author for e in r.entries] == ["Alice", "Bob"]
    # over limits.MAX_MESSAGE_CHARS: kept up to it, marked, reported (test_limits.py)
    assert r.entries[0].text == body[:MAX_MESSAGE_CHARS] + TRUNCATION_MARK and r.entries[0].kind == "message"
    assert r.truncated == [(1, 1)]
    assert elapsed < 2.0, f"{elapsed:.2f}s for a 10 MB line"


NO_HEADER = {k: v for k, v in PATHOLOGICAL.items() if k != "headers"}  # "[date, time] ..." is a system line


@pytest.mark.parametrize("body", NO_HEADER.values(), ids=NO_HEADER.keys())
def test_10mb_line_without_header_fails_fast(body):
    start = time.perf_counter()
    with pytest.raises(ExportError) as info:
        parse_text(body, source="big.txt")
    assert time.perf_counter() - start < 2.0
    assert info.value.line == 1 and str(info.value).startswith("big.txt:1:")


def test_10mb_file_of_one_line(tmp_path):
    path = tmp_path / "big.txt"
    path.write_text("x" * TEN_MB)
    start = time.perf_counter()
    err = export_error(path)
    assert err.line == 1 and time.perf_counter() - start < 3.0


def test_many_header_like_lines_are_fast():
    # 100k lines that start like a header but have no author: every one is a continuation.
    text = HEADER + "start\n" + "12/05/2020, 10:00 meeting\n" * 100_000
    start = time.perf_counter()
    r = parse_text(text)
    assert time.perf_counter() - start < 3.0
    assert (len(r.entries), r.continuation_lines) == (1, 100_000)


# --- zips ------------------------------------------------------------------------------------


def test_zip_reads_the_chat_member(tmp_path):
    path = tmp_path / "export.zip"
    make_zip(path, {"IMG-0001.jpg": b"\xff\xd8\xff", "__MACOSX/._chat.txt": b"\x00\x05\x16\x07", "_chat.txt": CHAT})
    export = read_export(path)
    assert (export.member, export.display_name) == ("_chat.txt", f"{path}!_chat.txt")
    assert len(parse_file(path).entries) == 2


@pytest.mark.parametrize("name", ["../../evil.txt", "/etc/evil.txt", "chat/../../evil.txt", "C:\\evil.txt", "..\\evil.txt"])
def test_zip_path_traversal(tmp_path, name):
    path = tmp_path / "evil.zip"
    make_zip(path, {"_chat.txt": CHAT, name: "pwned"})
    err = export_error(path)
    assert "traversal" in str(err)
    assert not (tmp_path.parent / "evil.txt").exists()


def test_zip_bomb(tmp_path):
    path = tmp_path / "bomb.zip"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf, zf.open("_chat.txt", "w") as f:
        f.write(HEADER.encode())
        block = b"a" * (1 << 20)
        for _ in range(200):  # 200 MB that deflate to ~200 KB
            f.write(block)
    assert path.stat().st_size < 2 * 1024 * 1024
    tracemalloc.start()
    try:
        err = export_error(path)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert "zip bomb" in str(err)
    assert peak < 64 * 1024 * 1024, f"peak {peak >> 20} MB: the bomb was inflated"


def test_truncated_zip(tmp_path):
    good = tmp_path / "good.zip"
    make_zip(good, {"_chat.txt": CHAT * 100})
    path = tmp_path / "truncated.zip"
    path.write_bytes(good.read_bytes()[: good.stat().st_size // 2])
    assert "corrupt zip" in str(export_error(path))


def test_zip_with_damaged_data(tmp_path):
    path = tmp_path / "damaged.zip"
    make_zip(path, {"_chat.txt": random.Random(1).randbytes(4096).hex()})
    data = bytearray(path.read_bytes())
    start = 30 + len("_chat.txt")  # the deflate stream follows the local header
    data[start : start + 64] = bytes(64)
    path.write_bytes(bytes(data))
    assert "corrupt" in str(export_error(path))


def test_zip_suffix_but_not_a_zip(tmp_path):
    path = tmp_path / "chat.zip"
    path.write_bytes(b"PK\x03\x04" + random.Random(2).randbytes(200))
    assert "corrupt zip" in str(export_error(path))


def test_zip_without_txt(tmp_path):
    path = tmp_path / "photos.zip"
    make_zip(path, {"IMG-0001.jpg": b"\xff\xd8\xff", "notes/": b""})
    assert "no .txt" in str(export_error(path))


def test_empty_chat_in_zip(tmp_path):
    path = tmp_path / "empty.zip"
    make_zip(path, {"_chat.txt": ""})
    err = export_error(path)
    assert "empty" in str(err) and "_chat.txt" in str(err)
