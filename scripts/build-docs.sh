#!/usr/bin/env bash
# Builds the user guide (docs/, mkdocs.yml) into build/docs-site with the
# MkDocs version pinned in requirements-dev.txt, installed into the
# development venv (VRAM_VENV, default .venv; made if missing, and
# scripts/setup.sh fills it later as usual).
#
# The build is strict: a warning fails it, and mkdocs.yml makes a link to a
# page that does not exist, or to an anchor that its page does not have, a
# warning. Prints one line with the outcome (after MkDocs' warnings when it
# fails); the exit status says whether the site was built.
#
# Environment:
#   VRAM_VENV   the venv (default: .venv in the repository)
#   PYTHON      the Python that makes it when missing (default: python3)
set -uo pipefail
cd "$(dirname "$0")/.."

venv=${VRAM_VENV:-.venv}
python=${PYTHON:-python3}
site=build/docs-site
log=build/docs-site.log
mkdir -p build

fail() {
  printf 'Docs site: FAILED, %s\n' "$*"
  exit 1
}

pin=$(grep -Eo '^mkdocs==[^[:space:];#]+' requirements-dev.txt) || fail "requirements-dev.txt pins no mkdocs version"
version=${pin#mkdocs==}

[ -x "$venv/bin/python" ] || "$python" -m venv "$venv" || fail "could not make the venv $venv"
installed=$("$venv/bin/python" -c 'import importlib.metadata as m; print(m.version("mkdocs"))' 2>/dev/null)
if [ "$installed" != "$version" ]; then
  "$venv/bin/python" -m pip install --quiet --disable-pip-version-check "$pin" >"$log" 2>&1 ||
    { cat "$log"; fail "could not install $pin into $venv"; }
fi

if "$venv/bin/python" -m mkdocs build --strict --clean --site-dir "$site" >"$log" 2>&1; then
  pages=$(find "$site" -name index.html | wc -l)
  echo "Docs site: built into $site ($pages pages, MkDocs $version); no broken link or anchor"
else
  grep -E '^(WARNING|ERROR)' "$log" || cat "$log"
  fail "MkDocs $version: see the warnings above (the whole log: $log)"
fi
