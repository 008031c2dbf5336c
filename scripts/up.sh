#!/usr/bin/env bash
# Fresh machine -> running product: install, write a sample export set if data/exports is empty,
# materialize every asset for every partition, then serve the Dagster UI on 127.0.0.1.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
export DAGSTER_HOME="${DAGSTER_HOME:-$PWD/.dagster_home}"
exec .venv/bin/truffle up "$@"
