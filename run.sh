#!/usr/bin/env bash
# One command: set everything up (a virtual environment with ddppm installed) and run the default
# reproduction of the paper's Fig. 2 and Fig. 3. No network access is needed beyond the package
# registry for the first install. Extra arguments go to snakemake, e.g. `./run.sh fig2` or
# `./run.sh --configfile tests/config/tiny.yaml`.
set -euo pipefail
cd "$(dirname "$0")"
PYTHON="${PYTHON:-python3}"
if [ ! -x .venv/bin/python ]; then
  "$PYTHON" -m venv .venv
fi
if ! .venv/bin/python -c "import ddppm, snakemake" 2>/dev/null; then
  .venv/bin/pip install --quiet --upgrade pip
  .venv/bin/pip install --quiet -e ".[test,slurm]"
fi
exec .venv/bin/snakemake --profile profiles/default "$@"
