"""Export limits (parsing/limits.py): size refused before reading, over-long messages truncated and
reported with exact line accounting, bounded memory, UTF-16 without a BOM told from binary."""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
import zipfile
from array import array
from pathlib import Path

import pytest

from truffle_assets.parsing import ExportError, parse_file, read_export
from truffle_assets.parsing.limits import MAX_EXPORT_BYTES, MAX_MESSAGE_CHARS, TRUNCATION_MARK
from truffle_assets.parsing.parser import parse_lines, parse_rows
from truffle_assets_tests.parsing.test_columnar import same

ROOT = Path(__file__).resolve().parents[2]
HEADER = "01/02/2020, 10:00 - Alice: "
AFTER = "01/02/2020, 10:01 - Bob: after\n"


def peak_mb_above_start(code: str, *args: str) -> dict:
    """Run `code` in a fresh interpreter after the parser's imports; its peak RSS above what it
    held before `code` ran (VmHWM vs VmRSS), in MB, and whatever `code` put in `out`."""
    child = (
        "import json, sys\n"
        f"sys.path.insert(0, {str(ROOT)!r})\n"
        "from truffle_assets.parsing import ExportError, parse_file\n"
        "from truffle_assets.ingest.exports import load_chat\n"
        "def status(k):\n"
        "    return next(int(l.split()[1]) for l in open('/proc/self/status') if l.startswith(k)) / 1024\n"
        "out = {}\nbase = status('VmRSS:')\n"
        f"{code}\n"
        "out['peak_mb'] = status('VmHWM:') - base\nprint(json.dumps(out))\n"
    )
    proc = subprocess.run([sys.executable, "-c", child, *args], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


# --- size, before reading ----------------------------------------------------------------------


def test_oversize_txt_is_refused_from_its_size_without_reading(tmp_path):
    path = tmp_path / "huge.txt"
    with path.open("wb") as f:
        f.write(HEADER.encode())
    os.truncate(path, MAX_EXPORT_BYTES + 1)  # sparse: no disk used, but reading it would cost 512 MB
    with pytest.raises(ExportError) as info:
        read_export(path)
    msg = str(info.value)
    assert str(path) in msg and f"{MAX_EXPORT_BYTES + 1:,} bytes" in msg and f"{MAX_EXPORT_BYTES:,}-byte" in msg
    out = peak_mb_above_start(
        "try:\n    parse_file(sys.argv[1])\nexcept ExportError as exc:\n    out['error'] = str(exc)", str(path))
    assert "export limit" in out["error"]
    assert out["peak_mb"] < 20, f"{out['peak_mb']:.0f} MB: the file was read"


def test_a_file_at_the_limit_is_not_refused_for_its_size(tmp_path):
    path = tmp_path / "edge.txt"
    path.write_text(HEADER + "hi\n")
    os.truncate(path, MAX_EXPORT_BYTES)  # NULs after the chat: refused as binary, naming line 2
    with pytest.raises(ExportError) as info:
        parse_file(path)
    assert "NUL" in str(info.value) and info.value.line == 2


def test_zip_member_declaring_oversize_is_refused_from_its_header(tmp_path):
    path = tmp_path / "export.zip"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("_chat.txt", HEADER + "hi\n")
    data = bytearray(path.read_bytes())
    cd = data.index(b"PK\x01\x02")  # central directory entry: uncompressed size at +24
    data[cd + 24: cd + 28] = (MAX_EXPORT_BYTES + 1).to_bytes(4, "little")
    path.write_bytes(bytes(data))
    with pytest.raises(ExportError) as info:
        read_export(path)
    msg = str(info.value)
    assert str(path) in msg and "'_chat.txt'" in msg and f"{MAX_EXPORT_BYTES + 1:,} bytes" in msg and "declares" in msg


# --- per-message limit ---------------------------------------------------------------------------

LONG = {
    "ascii-line": "lorem ipsum " * (2 * MAX_MESSAGE_CHARS // 12),  # 2 M chars: cut while streaming too
    "emoji-line": "😀ab" * (MAX_MESSAGE_CHARS // 2),  # 4-byte characters: the streaming cut backs off to one's start
    "just-over": "x" * (MAX_MESSAGE_CHARS + 1),
    "many-lines": "short line\n" * (MAX_MESSAGE_CHARS // 8) + "last",  # long by its continuation lines
}


@pytest.mark.parametrize("body", LONG.values(), ids=LONG.keys())
def test_over_long_message_is_truncated_and_reported(tmp_path, body):
    path = tmp_path / "long.txt"
    path.write_text(f"{HEADER}{body}\n{AFTER}", encoding="utf-8")
    n_body = body.count("\n") + 1
    r = parse_file(path)
    assert [e.author for e in r.entries] == ["Alice", "Bob"]
    first = r.entries[0]
    assert first.text == body[:MAX_MESSAGE_CHARS] + TRUNCATION_MARK and first.kind == "message"
    assert (first.line_start, first.line_end) == (1, n_body) and r.truncated == [(1, n_body)]
    # every line still accounted for: the cut text's lines stay its header and continuations
    assert (r.lines_total, r.header_lines, r.continuation_lines, r.quarantined) == (n_body + 1, 2, n_body - 1, [])
    assert r.counts["truncated_messages"] == 1 and f"lines 1-{n_body}" in r.summary()
    # the row parser truncates alike, and so does any block split (tiny blocks cross the message)
    export = read_export(path)
    reference = parse_rows(export.text, export.display_name)
    assert reference.truncated == r.truncated
    same(r, reference)
    small = parse_lines(export.line_blocks(block_bytes=1 << 12), export.display_name)
    same(small, reference)
    assert small.truncated == r.truncated


def test_message_at_the_limit_is_kept_whole(tmp_path):
    path = tmp_path / "edge.txt"
    body = "y" * MAX_MESSAGE_CHARS
    path.write_text(f"{HEADER}{body}\n{AFTER}")
    r = parse_file(path)
    assert r.entries[0].text == body and r.truncated == []


def test_nul_in_the_dropped_part_of_an_over_long_line_is_still_refused(tmp_path):
    path = tmp_path / "long.txt"
    path.write_bytes(f"{HEADER}hi\n{HEADER}".encode() + b"a" * (8 * MAX_MESSAGE_CHARS) + b"\x00tail\n" + AFTER.encode())
    with pytest.raises(ExportError) as info:
        parse_file(path)
    assert "NUL" in str(info.value) and info.value.line == 2 and str(path) in str(info.value)


TEN_MB = {"one-line": "lorem ipsum " * (10 * 2**20 // 12), "short-lines": "lorem ipsum\n" * (10 * 2**20 // 12) + "end"}


@pytest.mark.parametrize("body", TEN_MB.values(), ids=TEN_MB.keys())
def test_10mb_single_message_memory_is_bounded(tmp_path, body):
    path = tmp_path / "big.txt"
    path.write_text(f"{HEADER}{body}\n{AFTER}")
    out = peak_mb_above_start(
        "from pathlib import Path\nload = load_chat('c', [Path(sys.argv[1])])\n"
        "out['rows'] = load.rows.height\nout['truncated'] = load.truncated", str(path))
    assert out["rows"] == 2 and out["truncated"] == [f"{path}:1-{body.count(chr(10)) + 1}"]
    # a generous bound (export_limits_bench.py prints the figures): this was 0.3-3 GB
    assert out["peak_mb"] < 150, f"{out['peak_mb']:.0f} MB for a 10 MB message"


# --- UTF-16 without a BOM --------------------------------------------------------------------------

UTF16_CHAT = "01/02/2020, 10:00 - Alice: hi 😀 Ā ☀\n01/02/2020, 10:01 - Bob: 🙂🙂 ok\n" * 40  # emoji in the first 4 KB


@pytest.mark.parametrize("codec", ["utf-16-le", "utf-16-be"])
def test_utf16_without_bom_holding_emoji_parses(tmp_path, codec):
    path = tmp_path / "chat.txt"
    path.write_bytes(UTF16_CHAT.encode(codec))
    r = parse_file(path)
    assert r.encoding == codec and len(r.entries) == 80
    assert [e.text for e in r.entries[:2]] == ["hi 😀 Ā ☀", "🙂🙂 ok"]


BINARY = {
    "pcm": array("h", (int(3000 * (i % 50) / 50) - 1500 for i in range(20_000))).tobytes(),  # 16-bit samples
    "int32": array("i", range(5000)).tobytes(),
    "random-with-zeros": bytes(b if b > 128 else 0 for b in random.Random(3).randbytes(20_000)),
}


@pytest.mark.parametrize("data", BINARY.values(), ids=BINARY.keys())
def test_binary_with_nuls_is_still_refused(tmp_path, data):
    path = tmp_path / "data.txt"
    path.write_bytes(data)
    with pytest.raises(ExportError) as info:
        parse_file(path)
    assert str(path) in str(info.value) and info.value.line is not None
    assert "binary" in str(info.value)
