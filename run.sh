#!/usr/bin/env bash
# One command: set everything up (a virtual environment with ddppm installed) and run the default
# reproduction of the paper's Fig. 2 and Fig. 3. No network access is needed beyond the package
# registry for the first install. Extra arguments go to snakemake, e.g. `./run.sh fig2` or
# `./run.sh --configfile tests/config/tiny.yaml`.
set -euo pipefail
cd "$(dirname "$0")"
requirements/install.sh  # the locked environment (requirements/ddppm.lock), reinstalled only when it changed
exec .venv/bin/snakemake --profile profiles/default "$@"
