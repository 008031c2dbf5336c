import os
import shutil
import warnings
from pathlib import Path

import pytest

warnings.filterwarnings("ignore", category=Warning, module="dagster")
os.environ.setdefault("DAGSTER_TELEMETRY_DISABLED", "1")

FIXTURES = Path(os.environ.get("TRUFFLE_FIXTURES", Path(__file__).resolve().parents[2] / "shared/fixtures/whatsapp"))


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
    """The environment `truffle ingest` runs in for a newcomer with data root `root`: a fresh local
    SQLite instance holding the project's dagster.yaml, offline, no crash point set."""
    from truffle_assets import paths

    home = root / "dagster_home"
    home.mkdir(parents=True)
    shutil.copy(paths.PROJECT_ROOT / "dagster.yaml", home / "dagster.yaml")
    env = {**os.environ, "TRUFFLE_HOME": str(root), "DAGSTER_HOME": str(home), "HF_HUB_OFFLINE": "1"}
    for var in ("TRUFFLE_LLM_BASE_URL", "OPENROUTER_API_KEY", "TRUFFLE_CRASH_AT"):
        env.pop(var, None)
    return env


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
