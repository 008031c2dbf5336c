"""Where Truffle keeps things: the project's own files, and one data root for everything runs write.

The data root is `$TRUFFLE_HOME` when set, else the repository's `data/`. Every default path —
exports, the DuckDB store, caches, the LanceDB index, published files, the runtime store,
training datasets, the model registry — derives from it, as do training runs and assembled base
models (`<repo>/models/`, or `$TRUFFLE_HOME/models` when the variable is set). The Dagster
resources and the CLI flags can still point any single path elsewhere.

Functions, not constants: the variable is read when a path is asked for, so a process that sets it
before loading the definitions (or a test) gets the paths it asked for.
"""

from __future__ import annotations

import os
from pathlib import Path

HOME_ENV = "TRUFFLE_HOME"

PROJECT_ROOT = Path(__file__).resolve().parents[1]  # the checkout: prompts, dagster.yaml, workspace.yaml
PROMPTS_DIR = PROJECT_ROOT / "prompts"


def data_root() -> Path:
    home = os.environ.get(HOME_ENV)
    return Path(home).expanduser().resolve() if home else PROJECT_ROOT / "data"


def models_dir() -> Path:
    """Training runs and the assembled base models: big files kept beside, not inside, the data."""
    home = os.environ.get(HOME_ENV)
    return Path(home).expanduser().resolve() / "models" if home else PROJECT_ROOT / "models"


def exports_dir() -> Path:
    return data_root() / "exports"


def store_path() -> Path:
    return data_root() / "memory.duckdb"


def cache_dir() -> Path:
    return data_root() / "cache"


def index_dir() -> Path:
    return data_root() / "index"


def published_dir() -> Path:
    return data_root() / "published"


def runtime_dir() -> Path:
    return data_root() / "runtime"


def training_dir() -> Path:
    return data_root() / "training"


def registry_dir() -> Path:
    return data_root() / "models" / "registry"


def dagster_home() -> Path:
    """The instance `truffle ingest/up` use when `$DAGSTER_HOME` is unset."""
    home = os.environ.get(HOME_ENV)
    return Path(home).expanduser().resolve() / "dagster_home" if home else PROJECT_ROOT / ".dagster_home"
