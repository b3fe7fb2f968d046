#!/usr/bin/env bash
# Sets everything up from nothing and runs every test:
#   1. the Python lint (scripts/lint-python.sh: ruff and mypy), then pytest:
#      helper unit tests, end-to-end tests against a real ipykernel with real
#      (CPU) PyTorch, and the CUDA suite (skipped cleanly without a GPU);
#   2. jest: the frontend's models, parsing, formatting, views;
#   3. Galata: a real `jupyter lab` driven in Debian's Chromium;
#   4. smoke journeys (scripts/smoke-journeys.sh): the oldest supported
#      JupyterLab, the newest, Notebook 7 on each, and JupyterLab with a kernel
#      gateway, each in its own small venv with the built wheel, in Chromium.
# Between 1 and 2, the GPU kit (scripts/gpu-check.sh) runs as it would on a GPU
# machine, which this is not: that proves its offline install and its report;
# then the package is built as users install it (scripts/check-wheel.sh).
# All run even when one fails; the exit status says whether all passed.
set -uo pipefail
cd "$(dirname "$0")/.."

step() { printf '\n== %s\n' "$*"; }

bash scripts/setup.sh || exit 1
venv=${VRAM_VENV:-.venv}
export PATH="$PWD/$venv/bin:$PATH"

chromium=${CHROMIUM_PATH:-/usr/bin/chromium}
if [ ! -x "$chromium" ]; then
  step "Install Debian's Chromium for the browser tests"
  sudo_=""; [ "$(id -u)" = 0 ] || sudo_="sudo"
  $sudo_ apt-get update -qq && DEBIAN_FRONTEND=noninteractive $sudo_ apt-get install -y -qq chromium >/dev/null || exit 1
fi

failed=()
results="$PWD/build/test-results"
rm -rf "$results" && mkdir -p "$results"

step "Python lint: ruff's rules and formatting, mypy (scripts/lint-python.sh)"
bash scripts/lint-python.sh || failed+=(python-lint)

step "pytest (helper units, real-kernel end to end, CUDA suite)"
python -m pytest tests -ra --junitxml="$results/pytest.xml" || failed+=(pytest)

step "GPU kit, here without a GPU: offline install into a bare Python, every GPU check skipped, the report"
pyver=$(python -c 'import sys; print("%d.%d" % sys.version_info[:2])')
base_python=$(python -c 'import sys; print(getattr(sys, "_base_executable", sys.executable))')
(bash scripts/gpu-wheels.sh build/gpu-wheels "$pyver" &&
  PYTHON="$base_python" bash scripts/gpu-check.sh build/gpu-wheels build/gpu-report >build/gpu-check.log 2>&1 &&
  tail -3 build/gpu-check.log) || { cat build/gpu-check.log 2>/dev/null; failed+=(gpu-kit); }
# A second, narrowed call (as on a GPU machine still warm after a fix): one check
# file and one benchmark run, and the report says what was left out.
(VRAM_GPU_ONLY="suite cell_hooks_overhead" VRAM_GPU_K="no_context" PYTHON="$base_python" \
  bash scripts/gpu-check.sh build/gpu-wheels build/gpu-report-partial >build/gpu-check-partial.log 2>&1 &&
  grep -q "^\*\*A partial run, not the whole kit" build/gpu-report-partial/report.md &&
  grep -q "^| test_no_context_cuda::" build/gpu-report-partial/report.md &&
  ! grep -q "^| test_oom_cuda::" build/gpu-report-partial/report.md &&
  tail -1 build/gpu-check-partial.log) || { cat build/gpu-check-partial.log 2>/dev/null; failed+=(gpu-kit-partial); }

step "Packaging: sdist and wheel; the wheel in a fresh venv without Node.js"
bash scripts/check-wheel.sh build/dist || failed+=(packaging)

step "Docs site: build, broken links and anchors fail it"
bash scripts/build-docs.sh || failed+=(docs)

step "TypeScript lint: Prettier, ESLint, and the layering of src/ (dependency-cruiser)"
npm run --silent lint:check || failed+=(ts-lint)

step "jest (frontend)"
npx jest --ci --json --outputFile="$results/jest.json" || failed+=(jest)

step "Galata in Chromium (real JupyterLab, real kernel)"
(
  cd ui-tests &&
    PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 npm ci --no-audit --no-fund &&
    PLAYWRIGHT_JSON_OUTPUT_NAME="$results/playwright.json" npx playwright test --reporter=list,json
) || {
  failed+=(galata)
  echo "== The test JupyterLab server's log (build/test-results/jupyter-server.log)"
  cat "$results/jupyter-server.log" 2>/dev/null
}

step "Galata: a kernel killed by the out-of-memory killer at a real cgroup memory limit"
# The server (and so its kernels) runs in a new memory cgroup where this
# machine lets the tests make one; elsewhere the test skips and the server's
# log says why.
(
  cd ui-tests &&
    VRAM_UI_KERNEL_MEMORY_LIMIT=1536M PLAYWRIGHT_JSON_OUTPUT_NAME="$results/playwright-cgroup.json" \
      npx playwright test tests/death-container.spec.ts --reporter=list,json
) || {
  failed+=(galata-cgroup)
  echo "== The test JupyterLab server's log (build/test-results/jupyter-server.log)"
  cat "$results/jupyter-server.log" 2>/dev/null
}
grep -h "jupyterlab-vram tests:" "$results/jupyter-server.log" 2>/dev/null | tail -1
# The cgroups the servers made (empty now that they are gone).
rmdir /sys/fs/cgroup/memory/vram-ui-kernels-* /sys/fs/cgroup/vram-ui-kernels-* 2>/dev/null || true

step "Smoke journeys on other JupyterLab versions, Notebook 7, kernel gateway"
# Quiet on success; on failure it prints the journeys' output and every server's log.
bash scripts/smoke-journeys.sh || failed+=(smoke-journeys)

echo
python scripts/summarize-tests.py "$results"

if [ ${#failed[@]} -gt 0 ]; then
  printf '\nFAILED: %s\n' "${failed[*]}"
  exit 1
fi
printf '\nAll test suites passed.\n'
