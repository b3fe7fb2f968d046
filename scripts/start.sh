#!/usr/bin/env bash
# Sets everything up (skipping what is up to date: a second start takes
# seconds), then starts JupyterLab with jupyterlab-vram.
#
#   bash scripts/start.sh [DIRECTORY] [jupyter lab options...]
#
# Without DIRECTORY it serves this repository and opens the demo notebook;
# with one it serves that directory. Options go to `jupyter lab`
# (e.g. --no-browser --port 9999).
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
serve=("--ServerApp.root_dir=$repo" "--LabApp.default_url=/lab/tree/demo/vram-demo.ipynb")
if [ $# -gt 0 ] && [ -d "$1" ]; then
  serve=("--ServerApp.root_dir=$(cd "$1" && pwd)")
  shift
fi
cd "$repo"
bash scripts/setup.sh
venv=${VRAM_VENV:-.venv}
# JupyterLab 4 ships its language-server features turned off, and .venv has
# no language server; jupyter_lsp's search for them still logs a 400-character
# line naming the 19 it did not find. Options given to this script come later
# and win: --LanguageServerManager.autodetect=True brings the search back.
extra=(--LanguageServerManager.autodetect=False)
# Jupyter refuses to start as root without this (containers and CI machines often are root).
[ "$(id -u)" = 0 ] && extra+=(--allow-root)
printf '\n== JupyterLab (its address follows; Control-C stops it)\n'
exec "$venv/bin/jupyter" lab "${serve[@]}" "${extra[@]}" "$@"
