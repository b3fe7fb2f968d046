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
venv=${VRAM_VENV:-.venv}
out=${1:-build/dist}
version=$(node -p 'require("./package.json").version')

rm -rf "$out" && mkdir -p "$out"
# No isolation: the venv has the build tools, and the labextension is built.
"$venv/bin/python" -m build --no-isolation --outdir "$out" . >"$out/build.log" 2>&1 || {
  cat "$out/build.log"
  exit 1
}
sdist=$(ls "$out"/*.tar.gz)
wheel=$(ls "$out"/*.whl)
echo "built $(basename "$sdist") and $(basename "$wheel")"
case "$wheel" in
  *"-$version-"*) ;;
  *) echo "the wheel's version is not package.json's $version"; exit 1 ;;
esac

grep=$(command -v grep)
ls=$(command -v ls)
fresh="$out/fresh-venv"
"$venv/bin/python" -m venv "$fresh"
fresh=$(cd "$fresh" && pwd)
(
  # Nothing but the fresh venv on PATH: no node, no npm.
  export PATH="$fresh/bin"
  if command -v node >/dev/null; then
    echo "node is still on PATH"; exit 1
  fi
  pip install --quiet --disable-pip-version-check "$wheel" "jupyterlab>=4.2,<5"
  extensions=$(jupyter labextension list 2>&1)
  printf '%s\n' "$extensions" | "$grep" jupyterlab-vram
  "$grep" -E "jupyterlab-vram v$version .*enabled.*OK" >/dev/null <<<"$extensions"
  static="$fresh/share/jupyter/labextensions/jupyterlab-vram/static"
  "$ls" "$static"/remoteEntry.*.js >/dev/null
  python -c "import jupyterlab_vram, sys; assert jupyterlab_vram.__version__ == sys.argv[1], jupyterlab_vram.__version__" "$version"
)
echo "the wheel installs and works in a fresh venv without Node.js (jupyterlab-vram $version)"
