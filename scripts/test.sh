#!/usr/bin/env bash
# Sets everything up from nothing and runs every test:
#   0. the lint: ruff and mypy on the Python tree (scripts/lint-python.sh);
#      Prettier, ESLint and the layering of src/ (npm run lint:check); the
#      wire types generated from the protocol's JSON Schema, which must be the
#      committed ones (npm run check:schema); and the user guide's site,
#      whose broken links and anchors fail it (scripts/build-docs.sh);
#   1. pytest: helper unit tests, end-to-end tests against a real ipykernel with
#      real (CPU) PyTorch, and the CUDA suite (skipped cleanly without a GPU);
#   2. the GPU kit (scripts/gpu-check.sh) as it would run on a GPU machine,
#      which this is not: that proves its offline install and its report;
#   3. packaging: the package built as users install it (scripts/check-wheel.sh);
#   4. jest: the frontend's models, parsing, formatting, views;
#   5. Galata: a real `jupyter lab` driven in Debian's Chromium; the one test
#      that needs the kernels under a cgroup memory limit, and the GPU load
#      tests on a stand-in NVML card, each in its own step;
#   6. smoke journeys (scripts/smoke-journeys.sh): the oldest supported
#      JupyterLab, the newest, Notebook 7 on each, and JupyterLab with a kernel
#      gateway, each in its own small venv with the wheel of step 3, in Chromium.
# All run even when one fails. The closing summary lists every step with its
# outcome, its tests' counts (from the runners' own reports) and its time, then
# the skipped tests once per reason, then what failed; the exit status says
# whether all passed.
#
# Adding a step is one line (see run_step below):
#   run_step "Python lint" --about "ruff; a few seconds" ruff check python_helper tests scripts
set -uo pipefail
cd "$(dirname "$0")/.."
source scripts/lib.sh

started=$SECONDS
venv=${VRAM_VENV:-.venv}
results="$PWD/build/test-results"
logs="$PWD/build/logs"
rm -rf "$results" && mkdir -p "$results" "$logs"
failed=()

# run_step NAME [--about TEXT] [--report FILE]... [--no-heading] COMMAND [ARG...]
#   Runs COMMAND (a program or a function of this script) as one step: a
#   heading, NAME and TEXT (what it does and about how long it takes), unless
#   the step prints its own; COMMAND's output; then its outcome and time. It
#   appends a line to $results/steps.tsv, from which scripts/summarize-tests.py
#   writes the summary: the step's counts come from its REPORT files, which its
#   runner writes (JUnit XML, jest JSON or Playwright JSON; a path in $results
#   or absolute; a glob may match several). A step without a report is listed
#   with its outcome and time. A failing step is added to $failed; the next
#   steps run all the same. Returns COMMAND's status.
run_step() {
  local name=$1 about="" heading=1 reports=()
  shift
  while [ $# -gt 0 ]; do
    case "$1" in
      --about) about=$2; shift 2 ;;
      --report) reports+=("$2"); shift 2 ;;
      --no-heading) heading=0; shift ;;
      *) break ;;
    esac
  done
  [ "$heading" = 0 ] || step "$name${about:+ — $about}"
  local start=$SECONDS status=0
  "$@" || status=$?
  local took=$((SECONDS - start))
  printf '%s\t%s\t%s\t%s\n' "$name" "$status" "$took" "${reports[*]}" >>"$results/steps.tsv"
  if [ "$status" = 0 ]; then
    printf '%s-- %s: ok in %s%s\n' "$_bold" "$name" "$(human_time "$took")" "$_reset"
  else
    failed+=("$name")
    printf '%s-- %s: FAILED (exit %s) after %s%s\n' "$_red" "$name" "$status" "$(human_time "$took")" "$_reset"
  fi
  return "$status"
}

summary() {
  step "Summary"
  local python=python3
  [ -x "$venv/bin/python" ] && python="$venv/bin/python"
  "$python" scripts/summarize-tests.py "$results" --elapsed $((SECONDS - started))
  if [ ${#failed[@]} -gt 0 ]; then
    printf '\n%sFAILED: %s%s\n' "$_red" "$(IFS=,; echo "${failed[*]}" | sed 's/,/, /g')" "$_reset"
    exit 1
  fi
  printf '\nAll test suites passed.\n'
}

run_step "Setup" --no-heading bash scripts/setup.sh || summary
export PATH="$PWD/$venv/bin:$PATH"

chromium=${CHROMIUM_PATH:-/usr/bin/chromium}
install_chromium() {
  local sudo_=""
  [ "$(id -u)" = 0 ] || sudo_="sudo"
  progress "$logs/apt-chromium.log" $sudo_ apt-get update -q &&
    progress "$logs/apt-chromium.log" env DEBIAN_FRONTEND=noninteractive $sudo_ apt-get install -y -q chromium
}
if [ ! -x "$chromium" ]; then
  run_step "Chromium" --about "Debian's, for the browser tests (apt-get, as root or through sudo); about 1 min" \
    install_chromium || summary
fi

run_step "Python lint" --about "ruff's rules and formatting, mypy; about 1 min here" \
  bash scripts/lint-python.sh

run_step "TypeScript lint" --about "Prettier, ESLint, and the layering of src/ (dependency-cruiser); about 1 min here" \
  npm run --silent lint:check

# The wire types generated from the protocol's JSON Schema must be the ones
# committed: a schema changed without `npm run build:schema` fails here.
run_step "Protocol types" --about "the generated wire types match protocol/protocol.schema.json; about 10 s" \
  npm run --silent check:schema

run_step "Docs site" --about "MkDocs, strict: a broken link or anchor fails it; about 10 s" \
  bash scripts/build-docs.sh

# -rfE: pytest's short summary names failures and errors only; the skipped
# tests are listed once per reason in the closing summary (26 near-identical
# "needs a CUDA GPU" lines otherwise).
# Two pytest-xdist workers (VRAM_PYTEST_WORKERS; 0 or 1 runs serially): the
# real-kernel tests spend most of their time waiting on a kernel (its start,
# its samples), so two at once finish sooner even on two busy cores; a third
# was not clearly faster and took more CPU (docs/performance.md). The tests
# that fill the GPU or read device-wide figures (marker gpu_exclusive) run
# afterwards, alone, as the GPU kit runs them; without a GPU they skip.
pytest_suites() {
  local workers=${VRAM_PYTEST_WORKERS:-2} parallel=() status=0
  if [ "$workers" -gt 1 ] && python -c "import xdist" 2>/dev/null; then
    parallel=(-n "$workers")
  fi
  python -m pytest tests -m "not gpu_exclusive" "${parallel[@]}" -rfE --junitxml="$results/pytest.xml" || status=$?
  python -m pytest tests/cuda -m gpu_exclusive -rfE --junitxml="$results/pytest-gpu-exclusive.xml" || status=$?
  return "$status"
}
run_step "pytest" --about "helper units, real-kernel end to end (two workers), CUDA suite; about 25 min on the 2-vCPU dev VM at a load average of 10" \
  --report "pytest*.xml" progress --live "$logs/pytest.log" pytest_suites

gpu_kit() {
  local pyver base_python
  pyver=$(python -c 'import sys; print("%d.%d" % sys.version_info[:2])')
  base_python=$(python -c 'import sys; print(getattr(sys, "_base_executable", sys.executable))')
  say "the kit's wheels for CPython $pyver, downloaded (as on a machine with network)"
  progress "$logs/gpu-wheels.log" bash scripts/gpu-wheels.sh build/gpu-wheels "$pyver" || return
  say "$(tail -n 1 "$logs/gpu-wheels.log")"
  say "the kit, run over $base_python: offline install, the CUDA suite, the benchmarks, the report"
  progress build/gpu-check.log env PYTHON="$base_python" \
    bash scripts/gpu-check.sh build/gpu-wheels build/gpu-report || return
  say "$(tail -n 1 build/gpu-check.log)"
  # A second, narrowed call (as on a GPU machine still warm after a fix): one
  # check file and one benchmark run, and the report says what was left out.
  say "a narrowed second call (VRAM_GPU_ONLY, VRAM_GPU_K), whose report must say so"
  progress build/gpu-check-partial.log env VRAM_GPU_ONLY="suite cell_hooks_overhead" VRAM_GPU_K="no_context" \
    PYTHON="$base_python" bash scripts/gpu-check.sh build/gpu-wheels build/gpu-report-partial || return
  local report=build/gpu-report-partial/report.md
  grep -q "^\*\*A partial run, not the whole kit" "$report" &&
    grep -q "^| test_no_context_cuda::" "$report" &&
    ! grep -q "^| test_oom_cuda::" "$report" || {
    warn "$report does not say what the narrowed call ran and left out:"
    cat "$report"
    return 1
  }
  say "$(tail -n 1 build/gpu-check-partial.log)"
}
run_step "GPU kit" --about "here without a GPU: every GPU check skips; about 1 min" \
  --report "$PWD/build/gpu-report/junit-*.xml" gpu_kit

run_step "Packaging" --about "sdist and wheel, the wheel in a fresh venv without Node.js; about 1.5 min" \
  bash scripts/check-wheel.sh build/dist

run_step "jest" --about "the frontend; about 3 min" --report jest.json \
  progress --live "$logs/jest.log" npx jest --ci --json --outputFile="$results/jest.json"

# ui-tests' node modules: installed again only when its package files change
# (like setup.sh's), and always on CI.
ui_tests_modules() {
  local stamp=ui-tests/node_modules/.vram-setup-node inputs
  inputs=$(inputs_hash ui-tests/package.json ui-tests/package-lock.json)
  if up_to_date "$stamp" "$inputs"; then
    return 0
  fi
  say "npm ci in ui-tests (Galata, Playwright; no browser download): about 1.5 min the first time"
  progress --replay "$logs/ui-tests-npm-ci.log" \
    bash -c 'cd ui-tests && PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 exec npm ci --no-audit --no-fund' &&
    printf '%s\n' "$inputs" >"$stamp"
}
# galata_run REPORT [ARG...]: Galata in ui-tests, its JSON report to $results/REPORT.
galata_run() {
  (cd ui-tests && PLAYWRIGHT_JSON_OUTPUT_NAME="$results/$1" npx playwright test --reporter=list,json "${@:2}")
}
server_log() {
  echo "== The test JupyterLab server's log (build/test-results/jupyter-server.log)"
  cat "$results/jupyter-server.log" 2>/dev/null
  return 1
}
galata() {
  ui_tests_modules || return
  say "the test JupyterLab starts first (about 20 s); then each test's line as it ends"
  progress --live "$logs/galata.log" galata_run playwright.json || server_log
}
run_step "Galata" --about "a real JupyterLab and kernel in Chromium, one test at a time; about 30 min on the 2-vCPU dev VM at a load average of 4-5, longer when it is busier" --report playwright.json galata

# The server (and so its kernels) runs in a new memory cgroup where this
# machine lets the tests make one; elsewhere the test skips, with its reason in
# the summary, and the server's log says why: its one line about the cgroup is
# printed (the rest of that log is every request).
galata_cgroup() {
  local status=0
  VRAM_UI_KERNEL_MEMORY_LIMIT=1536M progress --live "$logs/galata-cgroup.log" \
    galata_run playwright-cgroup.json tests/death-container.spec.ts || status=$?
  say "$(grep -h "jupyterlab-vram tests:" "$results/jupyter-server.log" 2>/dev/null | tail -n 1)"
  # The cgroups the servers made (empty now that they are gone).
  rmdir /sys/fs/cgroup/memory/vram-ui-kernels-* /sys/fs/cgroup/vram-ui-kernels-* 2>/dev/null
  [ "$status" = 0 ] || server_log
}
run_step "Galata (cgroup limit)" --about "a kernel killed by the OOM killer at a real cgroup memory limit; about 1 min" \
  --report playwright-cgroup.json galata_cgroup

# The kernels import the stand-in pynvml of tests/fake_nvml (one busy card), so
# the GPU load figures show on a machine without a GPU; every other test runs
# without it, in the step above.
galata_fake_gpu() {
  VRAM_UI_FAKE_NVML=1 progress --live "$logs/galata-fake-gpu.log" \
    galata_run playwright-fake-gpu.json tests/gpu-load.spec.ts || server_log
}
run_step "Galata (stand-in GPU)" --about "the GPU load on a stand-in NVML card: the card, the badge, the Cells tab, the hint; about 3 min" \
  --report playwright-fake-gpu.json galata_fake_gpu

# The wheel that the packaging step built and proved, not a second build.
wheel=$(ls build/dist/*.whl 2>/dev/null | head -n 1)
run_step "Smoke journeys" --about "JupyterLab 4.2 and 4.6, Notebook 7, a kernel gateway; about 5 min" \
  --report smoke-journeys.json env VRAM_WHEEL="$wheel" bash scripts/smoke-journeys.sh

summary
