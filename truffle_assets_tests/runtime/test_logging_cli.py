"""`truffle logging` as a person runs it: status only shows, on/off/set change, refusals exit 2."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

TRUFFLE = str(Path(sys.executable).with_name("truffle"))


def truffle(home: Path, *args: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k not in ("TRUFFLE_LOG", "TRUFFLE_RETENTION_DAYS")}
    return subprocess.run([TRUFFLE, "logging", *args], capture_output=True, text=True, timeout=120,
                          env=env | {"TRUFFLE_HOME": str(home)})


@pytest.mark.subprocess
def test_status_shows_every_setting_and_never_writes(tmp_path):
    settings = tmp_path / "runtime" / "settings.json"
    proc = truffle(tmp_path, "status")
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0] == "Not keeping transcripts or ratings."
    assert [ln.split()[0] for ln in lines[1:5]] == ["transcripts", "their", "ratings", "retention"]
    assert "90 days" in lines[4] and "nothing saved yet" in lines[5]
    for args, typed in ((("--days", "5"), "--days 5"), (("--no-content",), "--no-content"),
                        (("--no-ratings",), "--no-ratings")):
        for form in (("status", *args), args):  # `truffle logging --days 5` is a status too
            proc = truffle(tmp_path, *form)
            assert proc.returncode == 2 and proc.stdout == ""
            assert proc.stderr.startswith(f"error: {typed}: `truffle logging status` only shows the settings")
            assert f"truffle logging set {typed}" in proc.stderr
    assert not settings.exists()

    proc = truffle(tmp_path, "status", "--json")
    got = json.loads(proc.stdout)
    assert (got["transcripts"], got["content"], got["feedback"], got["retention_days"]) == (False, False, False, 90)
    assert got["saved"] is False and set(got["sources"].values()) == {"default"}
    assert not settings.exists()


@pytest.mark.subprocess
def test_on_off_and_set_change_only_what_they_name(tmp_path):
    settings = tmp_path / "runtime" / "settings.json"
    proc = truffle(tmp_path, "on", "--no-content", "--days", "30")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("Keeping transcripts (without their text) and ratings for 30 days.\n")
    assert json.loads(settings.read_text()) == {"transcripts": True, "content": False, "feedback": True,
                                                "retention_days": 30}
    assert truffle(tmp_path, "set", "--days", "7", "--no-ratings").returncode == 0
    got = json.loads(truffle(tmp_path, "--json").stdout)
    assert (got["transcripts"], got["content"], got["feedback"], got["retention_days"]) == (True, False, False, 7)
    assert got["sources"]["retention_days"] == "saved" and got["settings_file"] == str(settings)
    proc = truffle(tmp_path, "off")
    assert proc.returncode == 0 and "stays until it is 7 days old" in proc.stdout
    assert json.loads(settings.read_text())["transcripts"] is False


@pytest.mark.subprocess
def test_refused_values_and_options_say_why_in_words(tmp_path):
    settings = tmp_path / "runtime" / "settings.json"
    for args, err in ((("set", "--days", "0"), "error: retention days must be at least 1, got 0\n"),
                      (("on", "--days", "4000"), "error: retention days must be at most 3650, got 4000\n")):
        proc = truffle(tmp_path, *args)
        assert (proc.returncode, proc.stderr) == (2, err)
    proc = truffle(tmp_path, "set")
    assert proc.returncode == 2 and "needs something to set" in proc.stderr
    proc = truffle(tmp_path, "off", "--no-ratings")
    assert proc.returncode == 2 and "--no-ratings does not apply to `truffle logging off`" in proc.stderr
    proc = truffle(tmp_path, "on", "--no-transcripts")
    assert proc.returncode == 2 and "--no-transcripts does not apply to `truffle logging on`" in proc.stderr
    assert not settings.exists()
    settings.parent.mkdir(parents=True)
    settings.write_text('{"retention_days": 0}')
    proc = truffle(tmp_path, "status")
    assert proc.returncode == 2
    assert proc.stderr == f"error: {settings}: retention days must be at least 1, got 0\n"
    assert "Traceback" not in proc.stderr
