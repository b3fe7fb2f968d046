#!/usr/bin/env bash
# Smoke journeys where notebooks run besides the development JupyterLab: the
# oldest supported JupyterLab, the newest, Notebook 7 on each, and JupyterLab
# talking to a real kernel gateway whose environment lacks jupyterlab-vram.
#
# Each JupyterLab gets a small venv (no PyTorch) with the pinned versions of
# ui-tests/compat/versions.env, ipykernel and the wheel built from this
# checkout, installed as users install it (no Node.js). The servers start in
# parallel on free ports; ui-tests/compat/journey.spec.ts drives each one in
# Debian's Chromium. A venv is rebuilt only when versions.env changes (a stamp
# in it), always on CI (CI=true); the wheel is reinstalled on every run.
#
#   bash scripts/smoke-journeys.sh      (after scripts/setup.sh)
#
# It says each stage, with its progress, and each journey as it ends; where one
# fails, it prints every server's log.
#
# Environment: VRAM_VENV (the development venv, default .venv), PYTHON (the
# Python of the venvs, default python3), CHROMIUM_PATH, VRAM_WHEEL (a wheel of
# this checkout already built, as scripts/test.sh passes the one its packaging
# step proved; without it the wheel is built here).
set -uo pipefail
cd "$(dirname "$0")/.."
source scripts/lib.sh
repo=$PWD
venv=${VRAM_VENV:-.venv}
python=${PYTHON:-python3}
work="$repo/build/compat"
logs="$work/logs"
versions=ui-tests/compat/versions.env
# shellcheck source=../ui-tests/compat/versions.env
source "$versions"

# Stopped newest first, one at a time: a JupyterLab shuts its kernels down
# when it stops, through the kernel gateway for the remote one, so the gateway
# must outlive it (stopped first, that JupyterLab waited forever).
pids=()
stop_servers() {
  local i pid
  for ((i = ${#pids[@]} - 1; i >= 0; i--)); do
    pid=${pids[i]}
    kill "$pid" 2>/dev/null || continue
    for _ in $(seq 60); do
      kill -0 "$pid" 2>/dev/null || break
      sleep 0.5
    done
    kill -9 "$pid" 2>/dev/null
    wait "$pid" 2>/dev/null
  done
  pids=()
}
trap stop_servers EXIT

fail() {
  warn "smoke journeys: $*"
  local log
  for log in "$logs"/*.log; do
    [ -f "$log" ] || continue
    echo "== $log"
    cat "$log"
  done
  exit 1
}

rm -rf "$logs" "$work/roots" "$work/jupyter" && mkdir -p "$logs" "$work/roots" "$work/jupyter/config" "$work/jupyter/data"

if [ -n "${VRAM_WHEEL:-}" ] && [ -f "$VRAM_WHEEL" ]; then
  wheel=$(realpath "$VRAM_WHEEL")
  say "the wheel: $wheel"
else
  # The wheel, from the labextension scripts/setup.sh built.
  say "the wheel, from the labextension setup.sh built"
  rm -rf "$work/dist"
  progress "$logs/wheel-build.log" "$venv/bin/python" -m build --wheel --no-isolation --outdir "$work/dist" . ||
    fail "the wheel did not build"
  wheel=$(ls "$work"/dist/*.whl)
fi

pins_hash=$(sha256sum "$versions" | cut -d' ' -f1)
# make_venv NAME PACKAGE...: a venv under build/compat, up to date with versions.env.
make_venv() {
  local name=$1 dir="$work/venv-$1"
  shift
  if [ -z "${CI:-}" ] && [ -f "$dir/.vram-compat" ] && [ "$(cat "$dir/.vram-compat")" = "$pins_hash" ]; then
    return 0
  fi
  rm -rf "$dir"
  # pip's output in the venv's own log, and, each line headed by the venv's
  # name, on stdout: progress shows the latest of the three.
  "$python" -m venv "$dir" &&
    "$dir/bin/python" -m pip install --disable-pip-version-check --progress-bar off "$@" 2>&1 |
    tee "$logs/venv-$name.log" | sed -u "s/^/venv-$name: /" &&
    printf '%s\n' "$pins_hash" >"$dir/.vram-compat"
}
# The three at once: mostly downloads and unpacking, not CPU. Each says when it is ready.
make_venvs() {
  local status=0
  make_venv oldest "jupyterlab==$OLDEST_JUPYTERLAB" "notebook==$OLDEST_NOTEBOOK" "ipykernel==$IPYKERNEL" &&
    echo "venv-oldest ready" &
  local oldest_pid=$!
  make_venv newest "jupyterlab==$NEWEST_JUPYTERLAB" "notebook==$NEWEST_NOTEBOOK" "ipykernel==$IPYKERNEL" &&
    echo "venv-newest ready" &
  local newest_pid=$!
  # No jupyterlab-vram here: the helper must reach the kernel through the frontend's bootstrap.
  make_venv gateway "jupyter_kernel_gateway==$KERNEL_GATEWAY" "ipykernel==$IPYKERNEL" &&
    echo "venv-gateway ready" &
  local gateway_pid=$!
  wait "$oldest_pid" || { echo "the venv with JupyterLab $OLDEST_JUPYTERLAB did not install"; status=1; }
  wait "$newest_pid" || { echo "the venv with JupyterLab $NEWEST_JUPYTERLAB did not install"; status=1; }
  wait "$gateway_pid" || { echo "the kernel gateway's venv did not install"; status=1; }
  return "$status"
}
say "three small venvs (JupyterLab $OLDEST_JUPYTERLAB, $NEWEST_JUPYTERLAB, the kernel gateway $KERNEL_GATEWAY):" \
  "about 3 min the first time, seconds when versions.env is unchanged"
progress "$logs/venvs.log" make_venvs || fail "$(tail -n 1 "$logs/venvs.log")"
for name in oldest newest; do
  "$work/venv-$name/bin/python" -m pip install --quiet --disable-pip-version-check --no-deps --force-reinstall \
    "$wheel" >"$logs/wheel-install-$name.log" 2>&1 || fail "the wheel did not install into venv-$name"
done
if "$work/venv-gateway/bin/python" -c 'import jupyterlab_vram_helper' 2>/dev/null; then
  fail "the kernel gateway's venv has jupyterlab_vram_helper: the journey would not prove the bootstrap"
fi

free_port() {
  "$python" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# Nothing of the user's Jupyter configuration, settings, workspaces or
# user-installed extensions reaches the servers.
export JUPYTER_CONFIG_DIR="$work/jupyter/config"
export JUPYTER_DATA_DIR="$work/jupyter/data"
export JUPYTER_RUNTIME_DIR="$work/jupyter/runtime"
export JUPYTER_PLATFORM_DIRS=1

# start_lab NAME VENV [ARG...]: `jupyter lab` of VENV on a free port, its root a fresh folder.
start_lab() {
  local name=$1 lab_venv=$2 port
  shift 2
  port=$(free_port)
  mkdir -p "$work/roots/$name" "$work/settings/$name"
  "$work/venv-$lab_venv/bin/jupyter" lab --no-browser --port="$port" --ServerApp.port_retries=0 \
    --ServerApp.ip=127.0.0.1 --ServerApp.allow_root=True --IdentityProvider.token= \
    --ServerApp.root_dir="$work/roots/$name" \
    --LabApp.expose_app_in_browser=True --JupyterNotebookApp.expose_app_in_browser=True \
    --LabApp.user_settings_dir="$work/settings/$name/lab" --LabApp.workspaces_dir="$work/settings/$name/workspaces" \
    --JupyterNotebookApp.user_settings_dir="$work/settings/$name/notebook" \
    --JupyterNotebookApp.workspaces_dir="$work/settings/$name/workspaces" \
    "$@" >"$logs/server-$name.log" 2>&1 &
  pids+=($!)
  eval "port_$name=$port"
}

# wait_for URL LOG: until URL answers (3 minutes at most: the VM may be busy).
wait_for() {
  local i
  for i in $(seq 360); do
    curl -fsS -o /dev/null "$1" 2>/dev/null && return 0
    sleep 0.5
  done
  fail "$1 did not answer in 3 minutes (its log: $2)"
}

say "the servers: the kernel gateway, then three JupyterLabs; about 30 s"
rm -rf "$work/settings"
start_servers=$SECONDS
gateway_port=$(free_port)
mkdir -p "$work/roots/gateway"
(cd "$work/roots/gateway" &&
  exec "$work/venv-gateway/bin/jupyter" kernelgateway --KernelGatewayApp.ip=127.0.0.1 \
    --KernelGatewayApp.port="$gateway_port" --KernelGatewayApp.port_retries=0 \
    --JupyterWebsocketPersonality.list_kernels=True >"$logs/server-gateway.log" 2>&1) &
pids+=($!)
start_lab oldest oldest
start_lab newest newest
wait_for "http://127.0.0.1:$gateway_port/api/kernelspecs" "$logs/server-gateway.log"
start_lab remote newest --gateway-url="http://127.0.0.1:$gateway_port"
# shellcheck disable=SC2154
for name in oldest newest remote; do
  eval "port=\$port_$name"
  wait_for "http://127.0.0.1:$port/api/status" "$logs/server-$name.log"
done
say "all four answer, after $(human_time $((SECONDS - start_servers)))"

if [ ! -x ui-tests/node_modules/.bin/playwright ]; then
  say "npm ci in ui-tests (Playwright; no browser download)"
  ui_npm_ci() { (cd ui-tests && PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 npm ci --no-audit --no-fund); }
  progress "$logs/npm-ci.log" ui_npm_ci || fail "npm ci in ui-tests failed"
fi
export VRAM_COMPAT_TARGETS
VRAM_COMPAT_TARGETS=$(
  "$python" - "$work" "$port_oldest" "$port_newest" "$port_remote" "$OLDEST_JUPYTERLAB" "$OLDEST_NOTEBOOK" \
    "$NEWEST_JUPYTERLAB" "$NEWEST_NOTEBOOK" <<'EOF'
import json, sys
work, p_old, p_new, p_remote, lab_old, nb_old, lab_new, nb_new = sys.argv[1:]
def target(name, ui, port, server, kernel_venv, version):
    return {"name": name, "ui": ui, "baseURL": f"http://127.0.0.1:{port}", "root": f"{work}/roots/{server}",
            "kernelPython": f"{work}/venv-{kernel_venv}/bin/python", "version": version}
print(json.dumps([
    target(f"jupyterlab-{lab_old}", "lab", p_old, "oldest", "oldest", lab_old),
    target(f"notebook-{nb_old}", "notebook", p_old, "oldest", "oldest", nb_old),
    target(f"jupyterlab-{lab_new}", "lab", p_new, "newest", "newest", lab_new),
    target(f"notebook-{nb_new}", "notebook", p_new, "newest", "newest", nb_new),
    target(f"jupyterlab-{lab_new}-kernel-gateway", "lab", p_remote, "remote", "gateway", lab_new),
]))
EOF
)
say "the journeys in Chromium, two at a time: about 2 min"
journeys() {
  (cd ui-tests && PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 npx playwright test --config compat/playwright.config.js)
}
progress --show "$logs/playwright.log" journeys || {
  stop_servers
  fail "a journey failed (the servers' logs follow; traces in ui-tests/test-results/compat)"
}
