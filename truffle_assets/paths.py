"""Where Truffle keeps things: the project's own files, and one data root for everything runs write.

The data root is `$TRUFFLE_HOME` when set, else the repository's `data/`. Every default path —
exports, the DuckDB store, caches, the LanceDB index, published files, the runtime store,
training datasets, the model registry — derives from it, as do training runs (`<repo>/models/`,
or `$TRUFFLE_HOME/models` when the variable is set). The Dagster resources and the CLI flags can
still point any single path elsewhere.

Models installed once serve every data root: the assembled base GGUF and the shipped fine-tune
rebuilt at setup live in `shared_models_dir()` (`$TRUFFLE_SHARED_MODELS`, else the checkout's
`models/`), never copied into a second root.

Functions, not constants: the variable is read when a path is asked for, so a process that sets it
before loading the definitions (or a test) gets the paths it asked for.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

HOME_ENV = "TRUFFLE_HOME"
SHARED_MODELS_ENV = "TRUFFLE_SHARED_MODELS"

PROJECT_ROOT = Path(__file__).resolve().parents[1]  # the checkout: prompts, dagster.yaml, workspace.yaml
PROMPTS_DIR = PROJECT_ROOT / "prompts"
SHIPPED_DIR = PROJECT_ROOT / "models" / "shipped"  # adapters committed with the code, in the checkout: git tracks it


def _home() -> Path | None:
    home = os.environ.get(HOME_ENV)
    return Path(home).expanduser().resolve() if home else None


def data_root() -> Path:
    return _home() or PROJECT_ROOT / "data"


def models_dir() -> Path:
    """This data root's training runs: big files kept beside, not inside, the data."""
    return (_home() or PROJECT_ROOT) / "models"


def shared_models_dir() -> Path:
    """What every data root serves from: the base GGUF, the dequantized base and the installed shipped
    fine-tune (`runs/<run_id>/`). Without `$TRUFFLE_HOME` it is also the default root's `models_dir()`."""
    shared = os.environ.get(SHARED_MODELS_ENV)
    return Path(shared).expanduser().resolve() if shared else PROJECT_ROOT / "models"


def _under_data(*parts: str) -> Callable[[], Path]:
    def path() -> Path:
        return data_root().joinpath(*parts)
    return path


exports_dir = _under_data("exports")          # where users drop WhatsApp exports
store_path = _under_data("memory.duckdb")     # the canonical DuckDB store
cache_dir = _under_data("cache")              # parse/author caches, the LLM response cache
index_dir = _under_data("index")              # LanceDB tables
published_dir = _under_data("published")      # latest.json, profile.json, facts.json: what the runtime reads
runtime_dir = _under_data("runtime")          # the chat runtime's turns, content and feedback
training_dir = _under_data("training")        # SFT/DPO datasets
forget_dir = _under_data("forget")            # tombstones: what the user took back (never in the cache)
registry_dir = _under_data("models", "registry")  # the promoted model and the audit log


def dagster_home() -> Path:
    """The instance `truffle ingest/up` use when `$DAGSTER_HOME` is unset."""
    home = _home()
    return home / "dagster_home" if home else PROJECT_ROOT / ".dagster_home"
