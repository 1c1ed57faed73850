#!/usr/bin/env bash
# Update the lock: resolve pyproject.toml (with the test, slurm, federation and scale extras) and the build backend
# to the newest versions the registry serves, with the hash of every file, for Python 3.11 on any platform. Review the diff,
# rerun ./run_tests.sh and the default run (numbers may move with a numpy or scipy release), then commit.
# Usage: requirements/update.sh            (the one command; uses uv from a throwaway virtual environment)
set -euo pipefail
cd "$(dirname "$0")/.."
tool=$(mktemp -d)
trap 'rm -rf "$tool"' EXIT
python3 -m venv "$tool"
"$tool/bin/pip" install --quiet uv
"$tool/bin/uv" pip compile pyproject.toml requirements/build.in --extra test --extra slurm --extra federation --extra scale \
  --generate-hashes --universal --python-version 3.11 --no-header -o requirements/ddppm.lock
"$tool/bin/uv" pip compile requirements/peers.in --generate-hashes --universal --python-version 3.11 --no-header \
  -o requirements/peers.lock
# The rules' conda environment is the lock's twin (tests/pipeline/test_environment.py compares them).
if [ -x .venv/bin/python ]; then
  .venv/bin/python -m ddppm.pipeline.environment
else
  echo "no .venv yet: after requirements/install.sh, run .venv/bin/python -m ddppm.pipeline.environment" >&2
fi
echo "requirements/ddppm.lock and requirements/peers.lock updated: git diff --stat requirements/"
