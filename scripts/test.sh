#!/usr/bin/env bash
# Install (same as scripts/up.sh), check the Dagster definitions load, run the whole test suite.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
export DAGSTER_HOME="$(mktemp -d)"
cp dagster.yaml "$DAGSTER_HOME/"
.venv/bin/dagster definitions validate -w workspace.yaml
.venv/bin/python -m pytest truffle_assets_tests "$@"
