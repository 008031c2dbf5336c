#!/usr/bin/env bash
# Install (same as scripts/up.sh; a no-op when .venv is up to date), lint with ruff, check the Dagster
# definitions load, run the tests. `--fast` runs only the tests not marked `slow` (none that starts truffle,
# serve, PostgreSQL, Chromium or llama.cpp, trains a model or ingests per case: see the markers in
# pyproject.toml); every other argument goes to pytest. Without `--fast` it runs the whole suite,
# as CI does.
set -euo pipefail
cd "$(dirname "$0")/.."
fast=0
if [ "${1:-}" = --fast ]; then
  fast=1
  shift
fi
bash scripts/setup.sh
if [ "$fast" = 0 ]; then
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
fi
export DAGSTER_HOME="$(mktemp -d)"
cp dagster.yaml "$DAGSTER_HOME/"
.venv/bin/ruff check --quiet .
.venv/bin/dagster definitions validate -w workspace.yaml
# two workers by default (the CI machine's cores; TRUFFLE_TEST_WORKERS=0 runs in one process), each taking a
# whole test file at a time, so a module's fixtures (a built memory, a server) are made once
workers=(-n "${TRUFFLE_TEST_WORKERS:-2}" --dist loadfile)
if [ "$fast" = 1 ]; then
  .venv/bin/python -m pytest truffle_assets_tests "${workers[@]}" -m "not slow" "$@"
else
  .venv/bin/python -m pytest truffle_assets_tests "${workers[@]}" "$@"
fi
