"""`truffle ingest` on the console: a few progress lines and a summary, the JSON report behind
`--json`, Dagster's events in the data root's log file (and on the console with `--verbose`), and
a failure that stays loud. The real console script, in a subprocess, its output not a terminal."""

import json
import os
import subprocess
from pathlib import Path

import pytest

TRUFFLE = str(Path(__file__).resolve().parents[1] / ".venv" / "bin" / "truffle")

pytestmark = pytest.mark.subprocess


def truffle(workdir: Path, *args: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k not in ("DAGSTER_HOME", "TRUFFLE_CRASH_AT")}
    return subprocess.run([TRUFFLE, *args], capture_output=True, text=True, timeout=300,
                          env={**env, "HF_HUB_OFFLINE": "1", "TRUFFLE_HOME": str(workdir)})


def ingest(workdir: Path, *args: str) -> subprocess.CompletedProcess:
    return truffle(workdir, "ingest", "--instance", "ephemeral", *args)


def test_a_first_ingest_prints_a_few_lines_and_logs_the_events(workdir, alice_export, bob_export):
    proc = ingest(workdir)
    assert proc.returncode == 0, proc.stderr[-2000:]
    lines = (proc.stdout + proc.stderr).splitlines()
    assert len(lines) <= 40, "\n".join(lines)
    assert "\x1b" not in proc.stdout + proc.stderr  # no cursor or colour codes into a pipe
    assert "STEP_START" not in proc.stdout + proc.stderr and "Loading weights" not in proc.stderr
    log = workdir / "logs" / "truffle.log"
    assert proc.stdout.splitlines() == [
        "Ingested 2 chats: 8 messages over 2 months in " + proc.stdout.split(" months in ")[1].split(" (")[0]
        + " (you: Arjun).",
        f"Memory: {workdir / 'memory.duckdb'} and the published profile beside it",
        f"Log: {log}",
    ]
    assert "  alice: 6 messages, 1 month" in proc.stderr and "  bob: 2 messages, 1 month" in proc.stderr
    events = log.read_text()
    assert events.count("RUN_SUCCESS") == 3 and 'STEP_START - Started execution of step "memory_index"' in events
    # nothing changed: the second ingest says so in one line, and the log grows
    again = ingest(workdir)
    assert again.returncode == 0 and again.stdout.startswith("Nothing new to ingest; 2 up to date in ")
    # recall loads the embedder, forget runs Dagster: neither prints a loading bar or an event line
    recall = truffle(workdir, "recall", "bus broke down")
    assert recall.returncode == 0 and "Loading weights" not in recall.stderr and "bus broke down" in recall.stdout
    forget = truffle(workdir, "forget", "--chat", "bob", "--instance", "ephemeral")
    assert forget.returncode == 0, forget.stderr[-2000:]
    assert " - dagster - " not in forget.stdout + forget.stderr and "STEP_START" not in forget.stderr
    assert 'Started execution of run for "forget_memory"' in log.read_text()


def test_json_is_the_report_alone_and_verbose_shows_dagster_events(workdir, alice_export, bob_export):
    proc = ingest(workdir, "--json", "--messages-only")
    assert proc.returncode == 0, proc.stderr[-2000:]
    report = json.loads(proc.stdout)  # stdout holds the JSON and nothing else
    assert report["status"] == "ok" and report["log_file"] == str(workdir / "logs" / "truffle.log")
    assert [r["rows"] for r in report["chats"]["alice"]["runs"]] == [6]
    verbose = ingest(workdir, "--verbose", "--messages-only", "--full")
    assert verbose.returncode == 0, verbose.stderr[-2000:]
    assert 'STEP_START - Started execution of step "messages"' in verbose.stderr
    assert verbose.stdout.startswith("Ingested 2 chats")


def test_a_failed_run_is_loud_names_the_log_and_exits_1(workdir, alice_export, bob_export):
    (workdir / "index").write_text("")  # the LanceDB folder is a file: every memory_index step fails
    proc = ingest(workdir)
    assert proc.returncode == 1
    assert "alice 2023-03: FAILED in memory_index" in proc.stderr
    assert "truffle ingest: FAILED" in proc.stderr
    assert "failed: alice 2023-03: memory_index: FileExistsError" in proc.stderr
    log = workdir / "logs" / "truffle.log"
    assert f"every event of the failed runs: {log}" in proc.stderr
    assert "STEP_FAILURE" in log.read_text() and "Traceback" not in proc.stderr
    assert proc.stdout.startswith("Nothing ingested; 2 chats FAILED")
    # --json: the same failure in the report, the loud lines on stderr
    again = ingest(workdir, "--json")
    assert again.returncode == 1 and "truffle ingest: FAILED" in again.stderr
    assert json.loads(again.stdout)["chats"]["bob"]["runs"][0]["errors"][0].startswith("memory_index: FileExistsError")


def test_up_without_the_ui_prints_a_few_lines_and_json_on_request(tmp_path):
    """`truffle up --no-ui` on a fresh data root: the sample set, the progress lines and the summary;
    with --json the report alone on stdout and the human lines on stderr."""
    env = {k: v for k, v in os.environ.items() if k != "TRUFFLE_CRASH_AT"}
    env |= {"TRUFFLE_HOME": str(tmp_path), "DAGSTER_HOME": str(tmp_path / "dagster_home"), "HF_HUB_OFFLINE": "1"}
    proc = subprocess.run([TRUFFLE, "up", "--no-ui", "--json", "--sample-chats", "1", "--sample-tokens", "1500"],
                          capture_output=True, text=True, timeout=600, env=env)
    assert proc.returncode == 0, proc.stderr[-2000:]
    report = json.loads(proc.stdout)
    assert report["status"] == "ok" and len(report["chats"]) == 1
    lines = proc.stderr.splitlines()
    assert len(lines) <= 40 and "\x1b" not in proc.stderr, proc.stderr
    assert lines[0] == f"{tmp_path / 'exports'} is empty: writing the sample export set into it"
    assert "RUN_START" in (tmp_path / "logs" / "truffle.log").read_text()
