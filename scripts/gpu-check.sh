#!/usr/bin/env bash
# Runs every GPU check in one command, on a Linux machine with an NVIDIA GPU and
# a CUDA build of PyTorch whose Python has no Jupyter packages and no network:
#
#   bash scripts/gpu-check.sh WHEELS_DIR REPORT_DIR
#
# WHEELS_DIR comes from scripts/gpu-wheels.sh (run on a machine with network).
# Steps: a throwaway venv that sees the machine's own packages (torch, NVML)
# gets the missing ones from WHEELS_DIR offline; then the CUDA suite (device-wide
# checks one at a time, the rest in parallel), the GPU benchmarks, and one
# report, REPORT_DIR/report.md and report.json (GPU, driver, torch and CUDA
# versions, every check with its figures). Without a GPU everything still runs
# and every GPU check is skipped with its reason, which the report says.
# Exit status: 0 when nothing failed (skips included), 1 otherwise. The report
# is written whatever happens: a step that fails to set up, or that runs out of
# time, is named in it, beside every check that did run.
#
# Time: GPU machines are lent by the call (10 minutes at most), and a call cut
# short brings nothing back. So every step's limit is its own or what is left
# before an overall deadline (keeping time for the report), whichever is less;
# a stopped step is interrupted first (SIGINT: pytest still writes its JUnit
# XML), killed 15 s later; and each test has a limit of its own, which names it.
#
# Environment:
#   PYTHON                the Python with torch (default: python3)
#   VRAM_GPU_VENV         where the venv goes (default: a new temporary folder)
#   VRAM_GPU_SAMPLING_S   the no-context check's sampling time (default 60)
#   VRAM_GPU_DEADLINE_S   the kit's time before the report, which takes <= 50 s more (default 530)
#   VRAM_GPU_ONLY         run only these steps (space-separated; default: all): exclusive (the
#                         device-wide checks), suite (the rest of the CUDA suite), and the
#                         benchmarks by name: sampler_overhead cell_hooks_overhead inspect_cost
#                         allocation_recording_cost. For a second call on a machine still warm,
#                         after a fix: the whole kit takes most of a session's device time.
#   VRAM_GPU_K            with the suite steps: only the checks pytest's -k selects
# A run narrowed by either says so at the top of its report, with what it left out.
set -uo pipefail
cd "$(dirname "$0")/.."

wheels=$(realpath "${1:?usage: gpu-check.sh WHEELS_DIR REPORT_DIR}")
out=$(realpath -m "${2:?usage: gpu-check.sh WHEELS_DIR REPORT_DIR}")
python=${PYTHON:-python3}
mkdir -p "$out"
# A folder used before: the report reads every junit-*.xml and bench-*.json in it,
# so what an earlier run left there would pass for this run's.
rm -f "$out"/junit-*.xml "$out"/bench-*.json "$out"/bench-*.log "$out"/pytest-*.log "$out"/pip.log \
  "$out"/nvidia-smi.txt "$out"/report.md "$out"/report.json
started=$(date +%s)
deadline=$((started + ${VRAM_GPU_DEADLINE_S:-530}))
REPORT_RESERVE_S=30  # the last steps end this much before the deadline (their kill grace is 15 s)
step() { printf '\n== [%4ss] %s\n' "$(($(date +%s) - started))" "$*"; }
failed=()
cuda="not probed"
venv=
ALL_STEPS="exclusive suite sampler_overhead cell_hooks_overhead inspect_cost allocation_recording_cost"
only=${VRAM_GPU_ONLY:-$ALL_STEPS}
not_run=()  # steps VRAM_GPU_ONLY leaves out, for the report
for name in $ALL_STEPS; do
  [[ " $only " == *" $name "* ]] || not_run+=("$name")
done
selected() { [[ " $only " == *" $1 "* ]]; }

# within SECONDS NAME COMMAND...: COMMAND under min(SECONDS, time left); a step
# with no time left is not started. Returns COMMAND's status (124: stopped).
within() {
  local own=$1 name=$2; shift 2
  local left=$((deadline - $(date +%s) - REPORT_RESERVE_S))
  if [ "$left" -lt 10 ]; then
    echo "$name not started: the kit's deadline (${VRAM_GPU_DEADLINE_S:-530} s) is near"
    return 124
  fi
  timeout -s INT -k 15 "$(( own < left ? own : left ))" "$@"
}

finish() {  # the report, from whatever ran; then the exit status
  step "Report"
  # Standard library only: the base Python runs it even where the venv failed.
  timeout -k 5 50 "$python" scripts/gpu_report.py "$out" \
    --elapsed "$(($(date +%s) - started))" --failed "${failed[*]:-}" \
    --not-run "${not_run[*]:-}" --pytest-k "${VRAM_GPU_K:-}" || failed+=(report)
  [ -n "${VRAM_GPU_VENV:-}" ] || [ -z "$venv" ] || rm -rf "$venv"
  if [ ${#failed[@]} -gt 0 ]; then
    printf '\nGPU check FAILED: %s (report: %s/report.md)\n' "${failed[*]}" "$out"
    exit 1
  fi
  local partial=""
  [ ${#not_run[@]} -eq 0 ] && [ -z "${VRAM_GPU_K:-}" ] || partial=" (a partial run: VRAM_GPU_ONLY, VRAM_GPU_K)"
  if [ "$cuda" != yes ]; then
    printf '\nNo CUDA GPU here: the kit ran and every GPU check was skipped, in %ss%s (report: %s/report.md)\n' \
      "$(($(date +%s) - started))" "$partial" "$out"
  else
    printf '\nGPU check passed in %ss%s (report: %s/report.md)\n' "$(($(date +%s) - started))" "$partial" "$out"
  fi
  exit 0
}

for name in $only; do
  if [[ " $ALL_STEPS " != *" $name "* ]]; then
    echo "VRAM_GPU_ONLY names '$name', which is no step of the kit: its steps are $ALL_STEPS"
    failed+=("unknown-step:$name")
  fi
done
[ ${#failed[@]} -eq 0 ] || finish

step "Offline venv over $("$python" -c 'import sys; print(sys.executable)')"
venv=${VRAM_GPU_VENV:-$(mktemp -d /tmp/jupyterlab-vram-gpu.XXXXXX)}
"$python" -m venv --without-pip "$venv" || { failed+=(venv); finish; }
# The venv sees the base Python's packages (the CUDA torch above all) through a
# .pth file; `venv --system-site-packages` would not when that Python is itself a venv.
site=$("$venv/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
"$python" -c 'import sys; print("\n".join(p for p in sys.path if p.endswith(("site-packages", "dist-packages"))))' \
  > "$site/jupyterlab_vram_base.pth"
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check --no-index --find-links "$wheels" \
  -r scripts/gpu-requirements.txt 2>&1 | tee "$out/pip.log" || { echo "offline install failed: see $out/pip.log"; failed+=(install); finish; }
py="$venv/bin/python"
if ! command -v node >/dev/null; then
  export VRAM_BOOTSTRAP_FILE="$wheels/bootstrap.py"
  [ -f "$VRAM_BOOTSTRAP_FILE" ] || { echo "no node and no $VRAM_BOOTSTRAP_FILE: run scripts/gpu-wheels.sh"; failed+=(bootstrap); finish; }
fi
export PYTHONUNBUFFERED=1
cuda=$(timeout 120 "$py" -c 'import torch; print("yes" if torch.cuda.is_available() else "torch " + torch.__version__ + " sees no CUDA device")' 2>&1 | tail -1)
if [ "$cuda" = yes ]; then
  # The kit sees a GPU: a test whose own probe says otherwise fails instead of skipping.
  export VRAM_REQUIRE_CUDA=1
else
  printf '\nNo CUDA GPU here (%s): every GPU check will be skipped, with its reason in the report.\n' "$cuda"
fi
command -v nvidia-smi >/dev/null && nvidia-smi > "$out/nvidia-smi.txt" 2>&1

# -v: the log names each check as it ends; a check past --timeout fails with its stacks.
pytest_args=(-p no:cacheprovider -o junit_family=xunit1 -v -rA --timeout=150)
# Half the cores, up to 8 workers: each test starts a kernel that imports torch
# (seconds of CPU), and the kit must finish within 8 minutes on one GPU machine.
parallel=()
workers=$(( $(nproc) / 2 )); [ "$workers" -gt 8 ] && workers=8; [ "$workers" -lt 2 ] && workers=2
"$py" -c "import xdist" 2>/dev/null && parallel=(-n "$workers")
[ -z "${VRAM_GPU_K:-}" ] || pytest_args+=(-k "$VRAM_GPU_K")

# suite_status STATUS STEP: pytest's status 5 (no test collected) is no failure
# where VRAM_GPU_K selects checks of the other half only.
suite_ran=0
suite_status() {
  if [ "$1" = 5 ] && [ -n "${VRAM_GPU_K:-}" ]; then return; fi
  suite_ran=1
  [ "$1" = 0 ] || failed+=("$2")
}
if selected exclusive; then
  step "CUDA suite: device-wide checks, one at a time"
  within 300 cuda-exclusive "$py" -m pytest tests/cuda -m gpu_exclusive "${pytest_args[@]}" \
    --junitxml="$out/junit-exclusive.xml" 2>&1 | tee "$out/pytest-exclusive.log"
  suite_status "${PIPESTATUS[0]}" cuda-exclusive
fi

if selected suite; then
  step "CUDA suite: the rest, ${parallel[*]:-serially}"
  within 300 cuda "$py" -m pytest tests/cuda -m "not gpu_exclusive" "${pytest_args[@]}" "${parallel[@]}" \
    --junitxml="$out/junit-parallel.xml" 2>&1 | tee "$out/pytest-parallel.log"
  suite_status "${PIPESTATUS[0]}" cuda
fi
if [ -n "${VRAM_GPU_K:-}" ] && [ "$suite_ran" = 0 ] && { selected exclusive || selected suite; }; then
  echo "VRAM_GPU_K='$VRAM_GPU_K' selects no check of the CUDA suite"
  failed+=(no-check-selected)
fi

bench() {  # name, args...
  local name=$1; shift
  selected "$name" || return 0
  step "Benchmark $name"
  if [ "$cuda" != yes ]; then echo "skipped: no CUDA GPU" | tee "$out/bench-$name.log"; return; fi
  # The kit saw CUDA: any other status, 3 ("no CUDA here") included, is a failure.
  within 200 "bench-$name" "$py" "benchmarks/$name.py" --device cuda --json "$out/bench-$name.json" "$@" 2>&1 \
    | tee "$out/bench-$name.log"
  [ "${PIPESTATUS[0]}" = 0 ] || failed+=("bench-$name")
}
bench sampler_overhead --seconds 60 --tries 3
bench cell_hooks_overhead --cells 1000 --warmup 50
bench inspect_cost --tries 5
bench allocation_recording_cost --live 100000 --tries 3

finish
