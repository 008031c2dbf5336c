"""Reading export files safely: .txt or .zip, any of the encodings WhatsApp writes.

Nothing is extracted to disk and nothing is read whole. The size limit (limits.py) is checked from
the file's size or the zip member's header before any text is read; the text then streams to the
parser in blocks of whole lines, so memory follows the block size, not the file. A line longer than
a message may be is cut while streaming (the rest of it is only validated), so one huge line costs
no more than a block. Path-traversal names and decompression bombs are refused before they can do harm.
"""

from __future__ import annotations

import codecs
import zipfile
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path, PurePosixPath

import polars as pl

from truffle_assets.files import sha256_file
from truffle_assets.parsing.limits import MAX_EXPORT_BYTES, MAX_MESSAGE_CHARS, MAX_ZIP_RATIO

# Text handed to the parser at a time. The parser's columns cost a few hundred bytes a line, so
# blocks of short lines are cut by count too.
BLOCK_BYTES = 4 << 20
BLOCK_LINES = 1 << 16
_READ = 1 << 20
# A line is cut after this many bytes while streaming: at least LINE_KEEP characters survive, and the
# parser cuts at exactly LINE_KEEP, so streaming cuts never change a result.
LINE_KEEP = MAX_MESSAGE_CHARS + 4096  # characters; a header and its author take far less than 4096
_LINE_KEEP_BYTES = 4 * LINE_KEEP


class ExportError(ValueError):
    """An export that cannot be read; the message names the file and, where known, the line."""

    def __init__(self, path: str | Path, reason: str, line: int | None = None):
        where = f"{path}:{line}" if line is not None else str(path)
        super().__init__(f"{where}: {reason}")
        self.path = str(path)
        self.line = line
        self.reason = reason

    def as_dict(self) -> dict:
        """Where and why, as the ingest report and the UI list it."""
        return {"file": self.path, "line": self.line, "reason": self.reason}


@dataclass(frozen=True)
class ExportText:
    """One export's chat text, found, sized and sniffed but not read: `line_blocks()` streams it."""

    path: str  # the file on disk
    member: str | None  # the zip member holding the chat, if any
    encoding: str
    file_sha256: str  # hash of the file on disk (the zip itself for zips)

    @property
    def display_name(self) -> str:
        return f"{self.path}!{self.member}" if self.member else self.path

    def line_blocks(self, block_bytes: int = BLOCK_BYTES) -> Iterator[pl.Series]:
        """The chat's lines as string series of about `block_bytes` each: split on LF only, a CR
        before an LF dropped, a final newline ending the last line. Bad bytes raise ExportError
        naming the line."""
        chunks = self._raw(block_bytes)  # a small file is one read, one block: no copy
        if self.encoding.startswith("utf-16"):
            chunks = _utf16_to_utf8(chunks, self.encoding, self.display_name)
        elif self.encoding == "utf-8-sig":
            chunks = _skip_bom(chunks, codecs.BOM_UTF8)
        return _blocks(chunks, self.display_name, block_bytes)

    @cached_property
    def text(self) -> str:
        """The whole text (BOM dropped, CRLF kept), read again on first use: for tests and the row
        parser; the parser streams `line_blocks()`."""
        return decode_bytes(b"".join(self._raw()), self.display_name)[0]

    def _raw(self, size: int = _READ) -> Iterator[bytes]:
        if self.member is not None:
            yield from _inflate(Path(self.path), size)
            return
        with open(self.path, "rb") as f:
            seen = 0
            while chunk := f.read(size):
                seen += len(chunk)
                if seen > MAX_EXPORT_BYTES:  # it grew since it was sized
                    raise ExportError(self.path, _over(seen, "file"))
                yield chunk


def read_export(path: str | Path) -> ExportText:
    """Find, size and sniff an export; refuse it before reading if it is over MAX_EXPORT_BYTES."""
    path = Path(path)
    if not path.is_file():
        raise ExportError(path, "a directory, not an export file" if path.is_dir() else "no such file")
    if zipfile.is_zipfile(path):  # reads the end of the file only
        info = _zip_chat(path)
        member = info.filename
        head = _zip_head(path)
    else:
        size = path.stat().st_size
        if size > MAX_EXPORT_BYTES:
            raise ExportError(path, _over(size, "file") + "; not read")
        with open(path, "rb") as f:
            head = f.read(4096)
        if head.startswith(_ZIP_MAGIC) or path.suffix.lower() == ".zip":
            raise ExportError(path, "corrupt zip: no readable central directory (truncated or damaged?)")
        member = None
    return ExportText(str(path), member, _sniff(head), sha256_file(path))


def _over(size: int, what: str) -> str:
    return f"{what} is {size:,} bytes, over the {MAX_EXPORT_BYTES:,}-byte export limit (limits.MAX_EXPORT_BYTES)"


def _zip_chat(path: Path) -> zipfile.ZipInfo:
    try:
        zf = zipfile.ZipFile(path)
    except (zipfile.BadZipFile, OSError) as exc:
        raise ExportError(path, f"corrupt zip: {exc}") from exc
    with zf:
        return _chat_member(path, zf.infolist())


def _chat_member(path: Path, infos: list[zipfile.ZipInfo]) -> zipfile.ZipInfo:
    for info in infos:
        p = PurePosixPath(info.filename.replace("\\", "/"))
        if p.is_absolute() or ".." in p.parts or (p.parts and ":" in p.parts[0]):
            raise ExportError(path, f"unsafe member path {info.filename!r} (path traversal)")
    txts = [i for i in infos if i.filename.lower().endswith(".txt") and not i.is_dir() and not _is_mac_metadata(i)]
    if not txts:
        raise ExportError(path, "zip holds no .txt chat export")
    # iOS names it _chat.txt; Android "WhatsApp Chat with X.txt"; prefer those.
    txts.sort(key=lambda i: (PurePosixPath(i.filename).name != "_chat.txt", "WhatsApp" not in i.filename, i.filename))
    info = txts[0]
    if info.file_size > MAX_EXPORT_BYTES:
        raise ExportError(path, _over(info.file_size, f"member {info.filename!r}") + " (as its header declares); not read")
    return info


def _is_mac_metadata(info: zipfile.ZipInfo) -> bool:
    """macOS Archive Utility adds `__MACOSX/._name` AppleDouble files: binary, never the chat."""
    p = PurePosixPath(info.filename)
    return p.parts[0] == "__MACOSX" or p.name.startswith("._")


def _inflate(path: Path, size: int = _READ) -> Iterator[bytes]:
    """The chat member's bytes as they inflate, counted: sizes in the header can lie."""
    try:
        with zipfile.ZipFile(path) as zf:
            info = _chat_member(path, zf.infolist())
            bomb = max(info.compress_size, 1) * MAX_ZIP_RATIO + (1 << 16)
            out = 0
            with zf.open(info) as f:
                while chunk := f.read(size):
                    out += len(chunk)
                    if out > bomb:
                        raise ExportError(path, f"member {info.filename!r} inflates beyond {bomb:,} bytes "
                                                f"(compression ratio > {MAX_ZIP_RATIO}): refusing a zip bomb")
                    if out > MAX_EXPORT_BYTES:
                        raise ExportError(path, _over(out, f"member {info.filename!r}") + " once inflated")
                    yield chunk
    # damaged data (bad CRC, broken deflate stream, truncation), encryption, exotic compression
    except (zipfile.BadZipFile, zlib.error, EOFError, RuntimeError, NotImplementedError, OSError) as exc:
        raise ExportError(path, f"corrupt or unreadable zip member: {exc}") from exc


_ZIP_MAGIC = (b"PK\x03\x04", b"PK\x05\x06")  # local file header; empty archive

_BOMS = (
    (codecs.BOM_UTF8, "utf-8-sig"),
    (codecs.BOM_UTF16_LE, "utf-16"),
    (codecs.BOM_UTF16_BE, "utf-16"),
)
def _sniff(head: bytes) -> str:
    """The encoding from a BOM, or UTF-16 without one.

    A UTF-8 chat never holds a NUL byte, and UTF-16 chat text always does (headers are ASCII
    digits): so only a sample with NULs may be UTF-16, and it is if it decodes strictly (emoji are
    surrogate pairs, fine; a lone surrogate is not) to text without NUL characters and with hardly
    any control characters. Anything else reads as UTF-8, which refuses binary naming the line.
    """
    for bom, enc in _BOMS:
        if head.startswith(bom):
            return enc
    if b"\x00" not in head:
        return "utf-8"
    units = len(head) // 2
    even, odd = head[0::2].count(0), head[1::2].count(0)  # zero low / high bytes of LE code units
    codec = "utf-16-le" if odd > even else "utf-16-be"
    if max(even, odd) * 16 < units:  # a few stray NULs, not the zero half of ASCII code units
        return "utf-8"
    try:
        text = codecs.getincrementaldecoder(codec)().decode(head)  # a pair cut at the end waits
    except UnicodeDecodeError:
        return "utf-8"
    controls = sum(c < " " and c not in "\t\n\r" for c in text)
    return codec if controls * 100 <= len(text) and "\x00" not in text else "utf-8"


def _zip_head(path: Path) -> bytes:
    chunks = _inflate(path, 4096)
    try:
        return next(chunks, b"")
    finally:
        chunks.close()


def _skip_bom(chunks: Iterator[bytes], bom: bytes) -> Iterator[bytes]:
    first = True
    for chunk in chunks:
        yield chunk.removeprefix(bom) if first else chunk
        first = False


def _utf16_to_utf8(chunks: Iterator[bytes], encoding: str, name: str) -> Iterator[bytes]:
    """UTF-16 chunks as UTF-8 ones; "utf-16" (with a BOM) takes its byte order from the BOM."""
    codec, decoder, line = encoding, None, 1
    for chunk in chunks:
        if decoder is None:
            if encoding == "utf-16":
                codec = "utf-16-le" if chunk.startswith(codecs.BOM_UTF16_LE) else "utf-16-be"
                chunk = chunk[2:]
            decoder = codecs.getincrementaldecoder(codec)()
        try:
            text = decoder.decode(chunk)
        except UnicodeDecodeError as exc:  # its object is the decoder's pending bytes and this chunk
            seen = exc.object[: exc.start].decode(codec, errors="replace").count("\n")
            raise ExportError(name, f"not valid {encoding} text (byte 0x{exc.object[exc.start]:02x}); binary file?",
                              line + seen) from None
        nul = text.find("\x00")
        if nul >= 0:
            raise ExportError(name, _NUL, line + text.count("\n", 0, nul))
        line += text.count("\n")
        yield text.encode()
    if decoder is not None:
        try:
            decoder.decode(b"", final=True)
        except UnicodeDecodeError:
            raise ExportError(name, f"not valid {encoding} text (ends mid-character); binary file?", line) from None


_NUL = "contains NUL characters: binary file, not a chat export"


def _blocks(chunks: Iterator[bytes], name: str, block_bytes: int) -> Iterator[pl.Series]:
    """UTF-8 chunks as series of whole lines. A line still unfinished after _LINE_KEEP_BYTES keeps
    only those (at a character boundary); the rest of it is validated and dropped."""
    line = 1  # the number of the first line not yet handed out
    parts: list[bytes] = []
    size = 0
    dropping = None  # a UTF-8 decoder while the rest of an over-long line goes by
    for chunk in chunks:
        if dropping is not None:
            nl = chunk.find(b"\n")
            _check_dropped(dropping, chunk[: nl if nl >= 0 else len(chunk)], nl >= 0, name, line)
            if nl < 0:
                continue
            dropping, chunk = None, chunk[nl:]
        parts.append(chunk)
        size += len(chunk)
        if size < block_bytes:
            continue
        data = b"".join(parts)
        end = data.rfind(b"\n") + 1
        if end:
            yield from _slices(_lines(data[:end], line, name))
            line += data.count(b"\n", 0, end)
            data = data[end:]
        if len(data) > _LINE_KEEP_BYTES:
            keep = _LINE_KEEP_BYTES
            while keep and data[keep] & 0xC0 == 0x80:  # a UTF-8 continuation byte: back to the character start
                keep -= 1
            dropping = codecs.getincrementaldecoder("utf-8")()
            _check_dropped(dropping, data[keep:], False, name, line)
            data = data[:keep]
        parts, size = [data], len(data)
    if dropping is not None:
        _check_dropped(dropping, b"", True, name, line)
    data = b"".join(parts)
    if data:
        yield from _slices(_lines(data, line, name, last=True))


def _check_dropped(decoder, data: bytes, final: bool, name: str, line: int) -> None:
    try:
        decoder.decode(data, final)
    except UnicodeDecodeError:
        raise ExportError(name, "not valid utf-8 text; binary file?", line) from None
    if b"\x00" in data:
        raise ExportError(name, _NUL, line)


def _slices(lines: pl.Series) -> Iterator[pl.Series]:
    for start in range(0, len(lines), BLOCK_LINES):
        yield lines.slice(start, BLOCK_LINES)


def _lines(block: bytes, first: int, name: str, last: bool = False) -> pl.Series:
    """One block of whole lines (the last may lack its newline) as a string series, checked."""
    if b"\r" in block:
        block = block.replace(b"\r\n", b"\n")
        if last:
            block = block.removesuffix(b"\r")
    try:
        text = pl.Series([block], dtype=pl.Binary).cast(pl.String)
    except pl.exceptions.PolarsError:
        try:
            block.decode()
        except UnicodeDecodeError as exc:
            raise ExportError(name, f"not valid utf-8 text (byte 0x{block[exc.start]:02x}); binary file?",
                              first + block.count(b"\n", 0, exc.start)) from None
        raise
    nul = block.find(b"\x00")
    if nul >= 0:
        raise ExportError(name, _NUL, first + block.count(b"\n", 0, nul))
    if not block:
        return pl.Series([], dtype=pl.String)
    lines = text.str.split("\n").explode()
    return lines.head(len(lines) - 1) if block.endswith(b"\n") else lines


def decode_bytes(data: bytes, name: str | Path = "<bytes>") -> tuple[str, str]:
    """Decode a whole export's bytes; raise ExportError naming the first offending line."""
    if len(data) > MAX_EXPORT_BYTES:
        raise ExportError(name, _over(len(data), "text"))
    encoding = _sniff(data[:4096])
    try:
        text = data.decode(encoding)
    except UnicodeDecodeError as exc:
        line = _line_of_byte(data, exc.start, encoding)
        raise ExportError(name, f"not valid {encoding} text (byte 0x{data[exc.start]:02x}); binary file?", line) from exc
    nul = text.find("\x00")
    if nul >= 0:
        raise ExportError(name, _NUL, text.count("\n", 0, nul) + 1)
    return text, encoding


def _line_of_byte(data: bytes, offset: int, encoding: str) -> int:
    if encoding.startswith("utf-16"):
        return data[:offset].decode(encoding, errors="replace").count("\n") + 1
    return data.count(b"\n", 0, offset) + 1
