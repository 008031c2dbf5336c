"""The one way JSON files are written: indented, UTF-8 as it is, timestamps in ISO 8601."""

import json
from datetime import date, datetime, time, UTC
from pathlib import Path

from truffle_assets.files import json_default, json_text, write_json_atomic


def test_json_default_writes_dates_and_datetimes_in_iso_8601():
    assert json_default(datetime(2023, 9, 14, 9, 12)) == "2023-09-14T09:12:00"
    assert json_default(datetime(2023, 9, 14, 9, 12, tzinfo=UTC)) == "2023-09-14T09:12:00+00:00"
    assert json_default(date(2022, 2, 9)) == "2022-02-09"
    assert json_default(time(21, 30)) == "21:30:00"
    assert json_default(Path("/x/y")) == "/x/y"  # anything else: its str()


def test_json_text_is_indented_utf8_with_a_final_newline():
    text = json_text({"name": "Meera ☕", "at": datetime(2023, 9, 14, 9, 12), "ids": [1]})
    assert text == '{\n  "name": "Meera ☕",\n  "at": "2023-09-14T09:12:00",\n  "ids": [\n    1\n  ]\n}\n'


def test_write_json_atomic_writes_json_text(tmp_path):
    path = tmp_path / "a" / "b.json"
    write_json_atomic(path, {"when": date(2024, 1, 2)})
    assert path.read_text(encoding="utf-8") == json_text({"when": "2024-01-02"})
    assert json.loads(path.read_text()) == {"when": "2024-01-02"}
    assert [p.name for p in path.parent.iterdir()] == ["b.json"]  # no temp file left behind
