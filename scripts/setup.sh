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
# It prints each step, whether it ran, and its time. The long installs show
# their progress (on a terminal one line, redrawn; in a log a line every
# VRAM_PROGRESS_S seconds) and keep their whole output in build/logs/, which is
# printed where one fails.
#
# Environment:
#   VRAM_VENV   where the venv goes (default: .venv in the repository)
#   PYTHON      the Python that creates it (default: python3)
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib.sh

venv=${VRAM_VENV:-.venv}
python=${PYTHON:-python3}
logs=build/logs
started=$SECONDS

step "Python environment in $venv"
python_stamp="$venv/.vram-setup-python"
python_inputs=$(inputs_hash requirements-dev.txt)
if up_to_date "$python_stamp" "$python_inputs"; then
  say "up to date (requirements-dev.txt unchanged)"
else
  say "JupyterLab, PyTorch's CUDA build, TensorFlow and the test tools: about 3.4 GB to download, 7 GB"
  say "installed; about 4 min on the 2-vCPU development VM, every time (pip's cache keeps none of it there)"
  [ -x "$venv/bin/python" ] || "$python" -m venv "$venv"
  pip_install=("$venv/bin/python" -m pip install --disable-pip-version-check --progress-bar off)
  progress "$logs/pip-upgrade.log" "${pip_install[@]}" --upgrade pip
  # The progress line: what pip collects and downloads, then that it installs
  # (its last line, for the minutes that unpacking takes, is about setuptools).
  progress --status '^(Collecting|Downloading|Using cached|Installing|Building|Successfully installed)' \
    "$logs/pip-install.log" "${pip_install[@]}" -r requirements-dev.txt
  # pip's own warnings, which its log keeps among a line or two per package.
  sed -n 's/^\(WARNING\|DEPRECATION\): /   pip: /p' "$logs/pip-install.log"
  printf '%s\n' "$python_inputs" >"$python_stamp"
fi
export PATH="$PWD/$venv/bin:$PATH"

step "Node modules"
node_stamp=node_modules/.vram-setup-node
node_inputs=$(inputs_hash package.json package-lock.json)
if up_to_date "$node_stamp" "$node_inputs"; then
  say "up to date (package-lock.json unchanged)"
else
  say "npm ci: about 1,000 packages; the first time about 2 min here"
  progress --replay "$logs/npm-ci.log" npm ci --no-audit --no-fund
  printf '%s\n' "$node_inputs" >"$node_stamp"
fi

step "Build the labextension (production) and pip install . (it goes with the Python package)"
build_inputs=$(inputs_hash package.json package-lock.json tsconfig.json webpack.config.js pyproject.toml install.json \
  src style schema scripts/bundle-helper.mjs scripts/compact_python.py scripts/generate-default-snippets.mjs \
  python_helper/jupyterlab_vram python_helper/jupyterlab_vram_helper python_helper/kernel_bootstrap.py)
build_stamp="$venv/.vram-setup-build"
if up_to_date "$build_stamp" "$build_inputs" && [ -f python_helper/jupyterlab_vram/labextension/package.json ]; then
  say "up to date (no source changed since the last build)"
else
  say "the helper bundle, TypeScript, then webpack: about 1.5 min here"
  # --silent: without npm's "> jupyterlab-vram@0.1.0 build:…" banner around each
  # of the five scripts; what they print themselves, and any error, still shows.
  progress --show "$logs/build.log" npm run --silent build:prod
  # No build isolation: the venv already has the build tools, and the
  # labextension was built just above (the build hook skips what exists).
  progress "$logs/pip-install-extension.log" \
    python -m pip install --disable-pip-version-check --no-build-isolation --no-deps --force-reinstall .
  printf '%s\n' "$build_inputs" >"$build_stamp"
fi

step "Check that JupyterLab sees the extension"
# Checked, then said in one line. `jupyter labextension list` colours
# "enabled" and "OK" even into a file (jupyter_server's constants), so the
# whole list is printed, without those codes, only when the check fails.
extensions=$(jupyter labextension list 2>&1 | sed 's/\x1b\[[0-9;]*m//g')
if ! ours=$(grep -E "jupyterlab-vram .*enabled.*OK" <<<"$extensions"); then
  printf '%s\n' "$extensions"
  warn "JupyterLab does not list jupyterlab-vram as enabled and OK"
  exit 1
fi
say "$(sed 's/^ *//' <<<"$ours"), in $(head -n 1 <<<"$extensions")"
printf '\nSetup done in %s.\n' "$(human_time $((SECONDS - started)))"
