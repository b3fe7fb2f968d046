#!/usr/bin/env bash
# Sets everything up, then starts JupyterLab with jupyterlab-vram and the demo
# notebook. Extra arguments go to `jupyter lab` (e.g. --no-browser --port 9999).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
venv=${VRAM_VENV:-.venv}
extra=()
# Jupyter refuses to start as root without this (containers and CI machines often are root).
[ "$(id -u)" = 0 ] && extra+=(--allow-root)
exec "$venv/bin/jupyter" lab demo/vram-demo.ipynb "${extra[@]}" "$@"
