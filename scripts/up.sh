#!/usr/bin/env bash
# Fresh machine -> running product: install, write a sample export set if data/exports is empty,
# materialize every asset for every partition, and serve the chat as soon as the first chat is in (the
# rest keeps building), then the Dagster UI on 127.0.0.1.
# The console shows progress and a summary; Dagster's events go to data/logs/truffle.log (--verbose
# shows them too).
set -euo pipefail
cd "$(dirname "$0")/.."
export PIP_DISABLE_PIP_VERSION_CHECK=1  # no "a new pip is available" notices between setup's few lines
SETUP_SHIPPED=later bash scripts/setup.sh  # `truffle up` rebuilds the shipped model beside the first chats' ingest
export DAGSTER_HOME="${DAGSTER_HOME:-$PWD/.dagster_home}"
exec .venv/bin/truffle up "$@"
