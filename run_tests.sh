#!/usr/bin/env bash
# One command: install everything into .venv and run every check: ruff, snakefmt, snakemake --lint and a dry run of
# the default config, the unit tests, the tiny end-to-end pipeline run, and the real-Slurm test
# (tests/cluster: it installs Debian's slurm-wlm and munge when run as root, and skips with a printed
# reason only if they cannot be installed). `.ci/run` calls exactly this script.
set -euo pipefail
cd "$(dirname "$0")"
requirements/install.sh  # the locked environment (requirements/ddppm.lock), reinstalled only when it changed
export PATH="$PWD/.venv/bin:$PATH"

echo "== ruff"
ruff check src tests workflow benchmarks
echo "== snakefmt --check (the Snakefiles and every rule file; settings in pyproject.toml)"
snakefmt --check Snakefile workflow/Snakefile workflow/rules
echo "== snakemake --lint (default config)"
snakemake --lint
echo "== snakemake dry run (default config)"
snakemake -n --quiet rules >/dev/null
echo "== pytest (on every core: pytest-xdist; tests/conftest.py keeps the tiny run's tests and Slurm on one worker)"
set +e
pytest -n "${DDPPM_TEST_WORKERS:-auto}" --dist loadgroup "$@"
rc=$?
set -e
if [ "$rc" -eq 5 ]; then
  echo "pytest collected no tests: that is a failure here" >&2
  exit 1
fi
exit "$rc"
