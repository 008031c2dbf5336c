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
