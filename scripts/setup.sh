#!/usr/bin/env bash
# Sets up a development environment from nothing and installs the extension
# into it: a Python venv (JupyterLab, ipykernel, PyTorch, test tools), the node
# modules, a production build of the labextension, and `pip install .`.
#
# A step whose inputs have not changed since it last succeeded is skipped (a
# stamp beside its output, in the venv or node_modules, holds the hash of its
# inputs), so a second run takes seconds; a fresh clone, and CI (CI=true),
# always run every step.
#
# Environment:
#   VRAM_VENV   where the venv goes (default: .venv in the repository)
#   PYTHON      the Python that creates it (default: python3)
set -euo pipefail
cd "$(dirname "$0")/.."

venv=${VRAM_VENV:-.venv}
python=${PYTHON:-python3}

step() { printf '\n== %s\n' "$*"; }

# The hash of the named files and of every source file under the named
# folders (not what the build itself writes there: the labextension, the
# generated TypeScript, the version file that pip install writes).
inputs_hash() {
  find "$@" -type f ! -path '*/__pycache__/*' ! -path '*/.ipynb_checkpoints/*' ! -path '*/labextension/*' \
    ! -name '*.generated.ts' ! -name 'defaultSnippets.ts' ! -name '_version.py' -print0 2>/dev/null |
    sort -z | xargs -0 sha256sum | sha256sum | cut -d' ' -f1
}

# up_to_date STAMP HASH: the step that writes STAMP last succeeded with these inputs.
up_to_date() {
  [ -z "${CI:-}" ] && [ -f "$1" ] && [ "$(cat "$1")" = "$2" ]
}

step "Python environment in $venv"
[ -x "$venv/bin/python" ] || "$python" -m venv "$venv"
python_stamp="$venv/.vram-setup-python"
python_inputs=$(inputs_hash requirements-dev.txt)
if up_to_date "$python_stamp" "$python_inputs"; then
  echo "up to date (requirements-dev.txt unchanged)"
else
  "$venv/bin/python" -m pip install --quiet --disable-pip-version-check --upgrade pip
  "$venv/bin/python" -m pip install --quiet --disable-pip-version-check -r requirements-dev.txt
  printf '%s\n' "$python_inputs" >"$python_stamp"
fi
export PATH="$PWD/$venv/bin:$PATH"

step "Node modules"
node_stamp=node_modules/.vram-setup-node
node_inputs=$(inputs_hash package.json package-lock.json)
if up_to_date "$node_stamp" "$node_inputs"; then
  echo "up to date (package-lock.json unchanged)"
else
  npm ci --no-audit --no-fund
  printf '%s\n' "$node_inputs" >"$node_stamp"
fi

step "Build the labextension (production) and pip install . (it goes with the Python package)"
build_inputs=$(inputs_hash package.json package-lock.json tsconfig.json pyproject.toml install.json \
  src style schema scripts/bundle-helper.mjs scripts/compact_python.py scripts/generate-default-snippets.mjs \
  python_helper/jupyterlab_vram python_helper/jupyterlab_vram_helper python_helper/kernel_bootstrap.py)
build_stamp="$venv/.vram-setup-build"
if up_to_date "$build_stamp" "$build_inputs" && [ -f python_helper/jupyterlab_vram/labextension/package.json ]; then
  echo "up to date (no source changed since the last build)"
else
  npm run build:prod
  # No build isolation: the venv already has the build tools, and the
  # labextension was built just above (the build hook skips what exists).
  python -m pip install --quiet --disable-pip-version-check --no-build-isolation --no-deps --force-reinstall .
  printf '%s\n' "$build_inputs" >"$build_stamp"
fi

step "Check that JupyterLab sees the extension"
# Printed, then checked (no tee to /dev/stderr: that wrote NUL bytes into a
# log redirected to a file).
extensions=$(jupyter labextension list 2>&1)
printf '%s\n' "$extensions"
grep -E "jupyterlab-vram .*enabled.*OK" >/dev/null <<<"$extensions"
