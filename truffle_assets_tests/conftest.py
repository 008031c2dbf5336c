import io
import os
import shutil
import signal
import subprocess
import warnings
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

import pytest

warnings.filterwarnings("ignore", category=Warning, module="dagster")
os.environ.setdefault("DAGSTER_TELEMETRY_DISABLED", "1")
# A background job of a non-interactive shell (how CI starts the suite) begins with SIGINT ignored, and
# every in-process Dagster run then leaves SIGTERM ignored as well (it maps SIGTERM to SIGINT's handler):
# the `tail` processes its compute-log capture starts later would inherit that and each take 30 s to stop.
if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)

FIXTURES = Path(os.environ.get("TRUFFLE_FIXTURES", Path(__file__).resolve().parents[2] / "shared/fixtures/whatsapp"))


# What a test starts, by the fixture that starts it: a test using one (directly or through another
# fixture) gets the marker, so a new test is marked without anyone remembering to.
FIXTURE_MARKERS = {
    "browser": "browser",  # runtime_api: headless Chromium
    "pg_env": "postgres",  # defs/test_postgres_instance: a database on scripts/postgres.sh's server
    "tiny_gguf_path": "llama",  # the tiny GGUF, served or loaded by llama.cpp
    "tiny_gguf": "llama",
    "gguf": "llama",
    "ggufs": "llama",
    "served": "subprocess",  # runtime_api: `truffle serve` in a process of its own
}
KIND_MARKERS = ("subprocess", "postgres", "browser", "llama", "training")  # each one also means `slow`


def pytest_collection_modifyitems(config, items):
    for item in items:
        for fixture in FIXTURE_MARKERS.keys() & set(item.fixturenames):
            item.add_marker(FIXTURE_MARKERS[fixture])
        if any(item.get_closest_marker(kind) for kind in KIND_MARKERS):
            item.add_marker("slow")


def write_export(folder: Path, name: str, lines: list[str], newline: str = "\n") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text(newline.join(lines) + newline, encoding="utf-8")
    return path


# two chats: Priya's spans two stretches of months (two runs), Rahul's one
TWO_CHATS = {
    "WhatsApp Chat with Priya.txt": [
        "12/01/2024, 09:00 - Priya: Good morning! Are you coming to the meetup on Saturday?",
        "12/01/2024, 09:02 - Arjun: Morning! Yes, I live in Pune now so it is a short ride",
        "13/01/2024, 18:30 - Arjun: Slides are done, sending them tonight",
        "02/02/2024, 21:15 - Priya: See you on Saturday at 10",
        "02/02/2024, 21:16 - Arjun: See you there, my birthday is on 21 April by the way",
        "20/04/2024, 19:00 - Priya: Happy early birthday!",
        "20/04/2024, 19:05 - Arjun: Thank you! I love playing cricket on weekends",
    ],
    "WhatsApp Chat with Rahul.txt": [
        "[02/03/2024, 10:00:00] Rahul: hey, cricket on Sunday?",
        "[02/03/2024, 10:00:05] Arjun: yes! count me in, I work at Infosys so only after 6",
        "[03/03/2024, 08:10:00] Rahul: ground booked for 7am",
        "[03/03/2024, 08:12:30] Arjun: perfect, I will bring the bat",
    ],
}


def newcomer_env(root: Path) -> dict:
    """The environment `truffle ingest` runs in for a newcomer with data root `root`: a local SQLite
    instance (fresh unless the root holds one) with the project's dagster.yaml, offline, no crash
    point set."""
    from truffle_assets import paths

    home = root / "dagster_home"
    home.mkdir(parents=True, exist_ok=True)  # a copied data root brings its instance along
    shutil.copy(paths.PROJECT_ROOT / "dagster.yaml", home / "dagster.yaml")
    env = {**os.environ, "TRUFFLE_HOME": str(root), "DAGSTER_HOME": str(home), "HF_HUB_OFFLINE": "1"}
    for var in ("TRUFFLE_LLM_BASE_URL", "OPENROUTER_API_KEY", "TRUFFLE_CRASH_AT"):
        env.pop(var, None)
    return env


def run_truffle(env: dict, *argv: str) -> subprocess.CompletedProcess:
    """`truffle <argv>` run by the CLI's own `main` in this process, under `env` (as `newcomer_env`
    gives it), its output captured: the command's code path without a new interpreter's start-up.
    For what is about processes (a kill, a signal, a hang), start the real `truffle` instead."""
    from truffle_assets import cli

    out, err = io.StringIO(), io.StringIO()
    sigterm = signal.getsignal(signal.SIGTERM)  # `main` installs its own handler
    with pytest.MonkeyPatch.context() as mp, redirect_stdout(out), redirect_stderr(err):
        for var in set(os.environ) - set(env):
            mp.delenv(var)
        for var, value in env.items():
            mp.setenv(var, value)
        try:
            code = cli.main(list(argv))
        except SystemExit as exc:  # argparse refusing the arguments
            code = exc.code if isinstance(exc.code, int) else 2
        finally:
            signal.signal(signal.SIGTERM, sigterm)
    return subprocess.CompletedProcess(["truffle", *argv], code, out.getvalue(), err.getvalue())


@pytest.fixture
def workdir(tmp_path: Path) -> Path:
    """exports/, a DuckDB path and a cache dir, isolated per test."""
    (tmp_path / "exports").mkdir()
    return tmp_path


@pytest.fixture
def alice_export(workdir: Path) -> Path:
    return write_export(workdir / "exports", "WhatsApp Chat with Alice.txt", [
        "01/03/2023, 09:00 - Messages and calls are end-to-end encrypted. No one outside of this chat, not even WhatsApp, can read or listen to them. Tap to learn more.",
        "01/03/2023, 09:01 - Alice: Good morning!",
        "01/03/2023, 09:02 - Arjun: Morning :) running late",
        "the bus broke down",
        "02/03/2023, 18:30 - Alice: <Media omitted>",
        "04/03/2023, 21:15 - Arjun: see you on 13/03",
        "04/03/2023, 21:16 - Alice: This message was deleted",
    ])


@pytest.fixture
def bob_export(workdir: Path) -> Path:
    return write_export(workdir / "exports", "WhatsApp Chat with Bob.txt", [
        "[13/03/2023, 10:00:00] Bob: hey",
        "[13/03/2023, 10:00:05] Arjun: hi Bob",
    ])


def copy_fixture(rel: str, dest: Path) -> Path:
    dest.mkdir(parents=True, exist_ok=True)
    return Path(shutil.copy(FIXTURES / rel, dest))
