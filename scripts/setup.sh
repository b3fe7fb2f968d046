#!/usr/bin/env bash
# Sets up a development environment from nothing and installs the extension
# into it: a Python venv (JupyterLab, ipykernel, PyTorch, test tools), the node
# modules, a production build of the labextension, and `pip install .`.
#
# Environment:
#   VRAM_VENV   where the venv goes (default: .venv in the repository)
#   PYTHON      the Python that creates it (default: python3)
set -euo pipefail
cd "$(dirname "$0")/.."

venv=${VRAM_VENV:-.venv}
python=${PYTHON:-python3}

step() { printf '\n== %s\n' "$*"; }

step "Python environment in $venv"
[ -x "$venv/bin/python" ] || "$python" -m venv "$venv"
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check --upgrade pip
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check -r requirements-dev.txt
export PATH="$PWD/$venv/bin:$PATH"

step "Node modules"
npm ci --no-audit --no-fund

step "Build the labextension (production)"
npm run build:prod

step "pip install . (the prebuilt labextension goes with the Python package)"
# No build isolation: the venv already has the build tools, and the
# labextension was built just above (the build hook skips what exists).
python -m pip install --quiet --disable-pip-version-check --no-build-isolation --no-deps --force-reinstall .

step "Check that JupyterLab sees the extension"
# Printed, then checked (no tee to /dev/stderr: that wrote NUL bytes into a
# log redirected to a file).
extensions=$(jupyter labextension list 2>&1)
printf '%s\n' "$extensions"
grep -E "jupyterlab-vram .*enabled.*OK" >/dev/null <<<"$extensions"
