"""Reading export files safely: .txt or .zip, any of the encodings WhatsApp writes.

Nothing is ever extracted to disk: zip members are read into memory with hard limits, so
path-traversal names and decompression bombs are refused before they can do harm.
"""

from __future__ import annotations

import codecs
import zipfile
import zlib
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path, PurePosixPath

import polars as pl

from truffle_assets.files import sha256_file

MAX_TEXT_BYTES = 512 * 1024 * 1024  # a decoded chat larger than this is not a chat
MAX_ZIP_RATIO = 100  # WhatsApp text compresses ~5-10x; 100x+ is a bomb


class ExportError(ValueError):
    """An export that cannot be read; the message names the file and, where known, the line."""

    def __init__(self, path: str | Path, reason: str, line: int | None = None):
        where = f"{path}:{line}" if line is not None else str(path)
        super().__init__(f"{where}: {reason}")
        self.path = str(path)
        self.line = line
        self.reason = reason


@dataclass(frozen=True)
class ExportText:
    """The decoded chat text of one export, with where it came from."""

    path: str  # the file on disk
    member: str | None  # the zip member holding the chat, if any
    encoding: str
    file_sha256: str  # hash of the file on disk (the zip itself for zips)
    column: pl.Series = field(repr=False, compare=False)  # the text with LF line ends, as a one-string series
    data: bytes = field(repr=False)  # the chat's bytes as read

    @property
    def display_name(self) -> str:
        return f"{self.path}!{self.member}" if self.member else self.path

    @cached_property
    def text(self) -> str:
        """The text as a Python string, decoded on first use: the parser reads `column`."""
        return self.data.decode(self.encoding)


def read_export(path: str | Path) -> ExportText:
    path = Path(path)
    if not path.is_file():
        raise ExportError(path, "no such file")
    digest = sha256_file(path)
    if zipfile.is_zipfile(path):
        member, data = _read_zip_chat(path)
    else:
        member, data = None, path.read_bytes()
        if data.startswith(_ZIP_MAGIC) or path.suffix.lower() == ".zip":
            raise ExportError(path, "corrupt zip: no readable central directory (truncated or damaged?)")
    shown = f"{path}!{member}" if member else path
    column, encoding = decode_column(data, shown)
    return ExportText(str(path), member, encoding, digest, column, data)


def _read_zip_chat(path: Path) -> tuple[str, bytes]:
    try:
        zf = zipfile.ZipFile(path)
    except (zipfile.BadZipFile, OSError) as exc:
        raise ExportError(path, f"corrupt zip: {exc}") from exc
    with zf:
        info = _chat_member(path, zf.infolist())
        try:
            return info.filename, _inflate(path, zf, info)
        # damaged data (bad CRC, broken deflate stream, truncation), encryption, exotic compression
        except (zipfile.BadZipFile, zlib.error, EOFError, RuntimeError, NotImplementedError) as exc:
            raise ExportError(path, f"corrupt or unreadable zip member {info.filename!r}: {exc}") from exc


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
    if info.file_size > MAX_TEXT_BYTES:
        raise ExportError(path, f"member {info.filename!r} declares {info.file_size} bytes (limit {MAX_TEXT_BYTES})")
    return info


def _is_mac_metadata(info: zipfile.ZipInfo) -> bool:
    """macOS Archive Utility adds `__MACOSX/._name` AppleDouble files: binary, never the chat."""
    p = PurePosixPath(info.filename)
    return p.parts[0] == "__MACOSX" or p.name.startswith("._")


def _inflate(path: Path, zf: zipfile.ZipFile, info: zipfile.ZipInfo) -> bytes:
    out = bytearray()
    limit = min(MAX_TEXT_BYTES, max(info.compress_size, 1) * MAX_ZIP_RATIO + (1 << 16))
    with zf.open(info) as f:  # sizes in the header can lie: count what really comes out
        while chunk := f.read(1 << 20):
            out += chunk
            if len(out) > limit:
                raise ExportError(
                    path,
                    f"member {info.filename!r} inflates beyond {limit} bytes "
                    f"(compression ratio > {MAX_ZIP_RATIO}): refusing a zip bomb",
                )
    return bytes(out)


_ZIP_MAGIC = (b"PK\x03\x04", b"PK\x05\x06")  # local file header; empty archive

_BOMS = (
    (codecs.BOM_UTF8, "utf-8-sig"),
    (codecs.BOM_UTF16_LE, "utf-16"),
    (codecs.BOM_UTF16_BE, "utf-16"),
)


def decode_column(data: bytes, name: str | Path = "<bytes>") -> tuple[pl.Series, str]:
    """decode_bytes(), with CRLF turned into LF as the parser reads lines, into a one-string polars
    series. UTF-8, the common case, never becomes a Python string: polars checks and takes the bytes
    as they are; on any doubt decode_bytes() decides, naming the offending line."""
    encoding = _sniff(data)
    if encoding == "utf-8" or encoding == "utf-8-sig":
        body = data[len(codecs.BOM_UTF8):] if encoding == "utf-8-sig" else data
        if len(data) <= MAX_TEXT_BYTES and b"\x00" not in body:
            if b"\r" in body:
                body = body.replace(b"\r\n", b"\n").removesuffix(b"\r")
            try:
                return pl.Series([body], dtype=pl.Binary).cast(pl.String), encoding
            except pl.exceptions.PolarsError:
                pass  # not UTF-8: decode_bytes() raises, naming the line
    text, encoding = decode_bytes(data, name)
    if "\r" in text:
        text = text.replace("\r\n", "\n").removesuffix("\r")
    return pl.Series([text], dtype=pl.String), encoding


def _sniff(data: bytes) -> str:
    """The encoding from a BOM, or UTF-16 without one (ASCII-heavy text has a NUL in every other byte)."""
    for bom, enc in _BOMS:
        if data.startswith(bom):
            return enc
    sample = data[:4096]
    if len(sample) >= 4:
        even_nuls = sample[0::2].count(0)
        odd_nuls = sample[1::2].count(0)
        if odd_nuls > len(sample) // 4 and even_nuls == 0:
            return "utf-16-le"
        if even_nuls > len(sample) // 4 and odd_nuls == 0:
            return "utf-16-be"
    return "utf-8"


def decode_bytes(data: bytes, name: str | Path = "<bytes>") -> tuple[str, str]:
    """Decode export bytes; raise ExportError naming the first offending line."""
    if len(data) > MAX_TEXT_BYTES:
        raise ExportError(name, f"{len(data)} bytes exceeds the {MAX_TEXT_BYTES}-byte limit")
    encoding = _sniff(data)
    try:
        text = data.decode(encoding)
    except UnicodeDecodeError as exc:
        line = _line_of_byte(data, exc.start, encoding)
        raise ExportError(name, f"not valid {encoding} text (byte 0x{data[exc.start]:02x}); binary file?", line) from exc
    nul = text.find("\x00")
    if nul >= 0:
        raise ExportError(name, "contains NUL characters: binary file, not a chat export", text.count("\n", 0, nul) + 1)
    return text, encoding


def _line_of_byte(data: bytes, offset: int, encoding: str) -> int:
    if encoding.startswith("utf-16"):
        return data[:offset].decode(encoding, errors="replace").count("\n") + 1
    return data.count(b"\n", 0, offset) + 1
