#!/usr/bin/env bash
# Fresh machine -> running product: install, write a sample export set if data/exports is empty,
# materialize every asset for every partition, then serve the chat and the Dagster UI on 127.0.0.1.
# The console shows progress and a summary; Dagster's events go to data/logs/truffle.log (--verbose
# shows them too).
set -euo pipefail
cd "$(dirname "$0")/.."
export PIP_DISABLE_PIP_VERSION_CHECK=1  # no "a new pip is available" notices between setup's few lines
bash scripts/setup.sh
export DAGSTER_HOME="${DAGSTER_HOME:-$PWD/.dagster_home}"
exec .venv/bin/truffle up "$@"
