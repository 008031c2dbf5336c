"""File helpers: atomic writes (a reader sees the old file or the new one, never half of either), the one
way JSON files are written (indented, UTF-8, timestamps in ISO 8601), hashes.

JSON-lines files (one record per line) and hashed canonical forms keep their compact layout; every JSON
file a person may open goes through `json_text` / `write_json_atomic`, and every `json.dumps` that meets
dates or datetimes passes `default=json_default`.
"""

import hashlib
import json
import os
import tempfile
from datetime import date, datetime, time
from pathlib import Path
from typing import Any


def atomic_write(path: str | Path, data: bytes) -> None:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def json_default(obj: Any) -> Any:
    """`json.dumps`' fallback: datetimes, dates and times as ISO 8601 (`2023-09-14T09:12:00`, never
    `str()`'s `2023-09-14 09:12:00`), anything else as its `str()`."""
    if isinstance(obj, (datetime, date, time)):
        return obj.isoformat()
    return str(obj)


def to_the_second(at: str) -> str:
    """An ISO 8601 timestamp shown to the second (the registry records microseconds); text that is not
    one is shown as it is."""
    try:
        return datetime.fromisoformat(at).isoformat(timespec="seconds")
    except (TypeError, ValueError):
        return str(at)


def json_text(obj: Any) -> str:
    """`obj` as a JSON file's text: 2-space indent, UTF-8 characters as they are, a final newline."""
    return json.dumps(obj, indent=2, ensure_ascii=False, default=json_default) + "\n"


def write_json_atomic(path: str | Path, obj: Any) -> None:
    atomic_write(path, json_text(obj).encode("utf-8"))


def sha256_file(path: str | Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()
