#!/usr/bin/env bash
# Install the locked environment into .venv: every package at the version and hash of requirements/ddppm.lock,
# then ddppm itself (editable, no dependency resolution). Reinstalls only when the lock or pyproject.toml changed
# (a stamp in .venv). Called by run.sh and run_tests.sh; no network beyond the package registry. Then the peers'
# environment, .venv-peers, the same way.
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
# Every job is a fresh Python process. Where PYTHONDONTWRITEBYTECODE is set (some sandboxes and CI images set it)
# the editable package would be compiled anew in each one (about 0.4 s of a job's start); compile it once here. An
# edited module is recompiled in memory only, so nothing stale is ever run.
.venv/bin/python -m compileall -q src/ddppm >/dev/null

# The peers users run (diffprivlib, OpenDP), as installed, in an environment of their own: diffprivlib 0.6.6
# needs an older scikit-learn than the project (docs/peers.md). Same rule: every file hashed, reinstalled only
# when requirements/peers.lock changed.
[ -x .venv-peers/bin/python ] || "$PYTHON" -m venv .venv-peers
stamp=.venv-peers/.peers-lock.sha256
want=$(sha256sum < requirements/peers.lock | cut -c1-64)
if [ "$(cat "$stamp" 2>/dev/null || true)" != "$want" ] || ! .venv-peers/bin/python -c "import diffprivlib, opendp" 2>/dev/null; then
  echo "installing the peers' locked environment (requirements/peers.lock) into .venv-peers"
  .venv-peers/bin/python -m pip install --quiet --require-hashes --no-deps -r requirements/peers.lock
  echo "$want" > "$stamp"
fi
