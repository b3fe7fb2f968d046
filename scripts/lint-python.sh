#!/usr/bin/env bash
# Lints the Python tree: ruff's rules, ruff's formatting, and mypy on the kernel
# helper and the tests (settings in pyproject.toml). Prints one line per tool
# with its outcome, and the findings of any tool that has some; exits non-zero
# if any tool found something.
#
#   bash scripts/lint-python.sh
#
# mypy runs once per test folder that has a conftest.py of its own: the tests
# import their harness modules by bare name, as pytest puts them on sys.path,
# so two conftest.py files in one run would be two modules of the same name.
set -uo pipefail
cd "$(dirname "$0")/.."

failed=0
log=$(mktemp)
trap 'rm -f "$log"' EXIT

# run NAME COMMAND...: COMMAND's findings shown only when it fails.
run() {
  local name=$1
  shift
  if "$@" >"$log" 2>&1; then
    echo "$name: ok"
  else
    echo "$name: FAILED"
    sed 's/^/    /' "$log"
    failed=1
  fi
}

mypy_all() {
  python -m mypy python_helper/jupyterlab_vram_helper python_helper/kernel_bootstrap.py tests/unit &&
    python -m mypy tests/*.py tests/e2e &&
    python -m mypy tests/cuda
}

run "ruff check" python -m ruff check
run "ruff format --check" python -m ruff format --check
run "mypy (helper, tests)" mypy_all
exit "$failed"
