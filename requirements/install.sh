#!/usr/bin/env bash
# Install the locked environment into .venv: every package at the version and hash of requirements/ddppm.lock,
# then ddppm itself (editable, no dependency resolution). Reinstalls only when the lock or pyproject.toml changed
# (a stamp in .venv). Called by run.sh and run_tests.sh; no network beyond the package registry.
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON="${PYTHON:-python3}"
[ -x .venv/bin/python ] || "$PYTHON" -m venv .venv
stamp=.venv/.ddppm-lock.sha256
want=$(cat requirements/ddppm.lock pyproject.toml | sha256sum | cut -c1-64)
if [ "$(cat "$stamp" 2>/dev/null || true)" != "$want" ] || ! .venv/bin/python -c "import ddppm, snakemake" 2>/dev/null; then
  echo "installing the locked environment (requirements/ddppm.lock) into .venv"
  .venv/bin/python -m pip install --quiet --require-hashes --no-deps -r requirements/ddppm.lock
  .venv/bin/python -m pip install --quiet --no-deps --no-build-isolation -e .
  echo "$want" > "$stamp"
fi
