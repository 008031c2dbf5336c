#!/usr/bin/env bash
# Install (same as scripts/up.sh), check the Dagster definitions load, run the whole test suite.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
# the web-page test drives a real headless Chromium: Debian's package (no browser download at run time)
if ! command -v chromium >/dev/null && command -v apt-get >/dev/null && [ "$(id -u)" = 0 ]; then
  { apt-get install -y -q chromium || { apt-get update -q && apt-get install -y -q chromium; }; } >/dev/null \
    || echo "warning: could not install chromium; the browser test will skip" >&2
fi
# the PostgreSQL-backed instance test: our script installs Debian's postgresql (as root) and starts the
# server on 127.0.0.1; stopped again at exit unless it was already running
pg_was_running=0
bash scripts/postgres.sh status 2>/dev/null && pg_was_running=1
trap '[ "$pg_was_running" = 1 ] || bash scripts/postgres.sh stop 2>/dev/null || true' EXIT
bash scripts/postgres.sh >/dev/null || echo "warning: scripts/postgres.sh failed; the PostgreSQL instance test will fail" >&2
export DAGSTER_HOME="$(mktemp -d)"
cp dagster.yaml "$DAGSTER_HOME/"
.venv/bin/dagster definitions validate -w workspace.yaml
.venv/bin/python -m pytest truffle_assets_tests "$@"
