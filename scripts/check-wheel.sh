#!/usr/bin/env bash
# Builds the package as users install it and proves the wheel works without
# Node.js: `python -m build` makes an sdist and a wheel (the wheel from the
# sdist, which carries the prebuilt labextension); the wheel goes into a fresh
# venv whose PATH has no node; Jupyter there must list the extension enabled,
# with the version package.json gives.
#
#   bash scripts/check-wheel.sh [OUT_DIR]     (default build/dist; run after scripts/setup.sh)
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib.sh
venv=${VRAM_VENV:-.venv}
out=${1:-build/dist}
version=$(node -p 'require("./package.json").version')

rm -rf "$out" && mkdir -p "$out"
say "python -m build: the sdist, then the wheel from it (the labextension as built)"
# No isolation: the venv has the build tools, and the labextension is built.
progress "$out/build.log" "$venv/bin/python" -m build --no-isolation --outdir "$out" .
sdist=$(ls "$out"/*.tar.gz)
wheel=$(ls "$out"/*.whl)
say "built $(basename "$sdist") and $(basename "$wheel")"
case "$wheel" in
  *"-$version-"*) ;;
  *) warn "the wheel's version is not package.json's $version"; exit 1 ;;
esac

grep=$(command -v grep)
ls=$(command -v ls)
fresh="$out/fresh-venv"
"$venv/bin/python" -m venv "$fresh"
fresh=$(cd "$fresh" && pwd)
say "the wheel and JupyterLab into a fresh venv whose PATH has no node: about 1 min"
# Nothing but the fresh venv on PATH for pip (env sets it for pip alone, so
# that progress's own tools still run).
progress "$out/fresh-venv-pip.log" env PATH="$fresh/bin" \
  "$fresh/bin/python" -m pip install --disable-pip-version-check --progress-bar off "$wheel" "jupyterlab>=4.2,<5"
(
  # Nothing but the fresh venv on PATH: no node, no npm.
  export PATH="$fresh/bin"
  if command -v node >/dev/null; then
    echo "node is still on PATH"; exit 1
  fi
  # jupyter_server colours "enabled" and "OK" even into a file: without the codes.
  extensions=$(jupyter labextension list 2>&1)
  extensions=${extensions//$'\e'\[32m/}
  extensions=${extensions//$'\e'\[0m/}
  ours=$("$grep" jupyterlab-vram <<<"$extensions") || { printf '%s\n' "$extensions"; exit 1; }
  printf '   %s\n' "${ours#"${ours%%[! ]*}"}"
  "$grep" -E "jupyterlab-vram v$version .*enabled.*OK" >/dev/null <<<"$extensions"
  static="$fresh/share/jupyter/labextensions/jupyterlab-vram/static"
  "$ls" "$static"/remoteEntry.*.js >/dev/null
  python -c "import jupyterlab_vram, sys; assert jupyterlab_vram.__version__ == sys.argv[1], jupyterlab_vram.__version__" "$version"
)
say "the wheel installs and works in a fresh venv without Node.js (jupyterlab-vram $version)"
