#!/usr/bin/env bash
# Prepares, on a machine with network and node, everything scripts/gpu-check.sh
# needs on a GPU machine that has neither: the wheels of scripts/gpu-requirements.txt
# for the GPU machine's Python and platform, and the helper's bootstrap code
# (what the frontend executes in a kernel, made by scripts/bundle-helper.mjs).
#
#   bash scripts/gpu-wheels.sh [DIR] [PYTHON_VERSION]      (defaults: .whl 3.12)
#
# Environment:
#   VRAM_WHEEL_PLATFORMS  space-separated pip platform tags (default: the
#                         manylinux x86-64 tags, newest first)
set -euo pipefail
cd "$(dirname "$0")/.."

dir=${1:-.whl}
version=${2:-3.12}
platforms=${VRAM_WHEEL_PLATFORMS:-manylinux_2_28_x86_64 manylinux_2_27_x86_64 manylinux_2_26_x86_64 manylinux_2_17_x86_64 manylinux2014_x86_64 manylinux_2_12_x86_64 manylinux2010_x86_64 manylinux_2_5_x86_64 manylinux1_x86_64}

mkdir -p "$dir"
platform_args=()
for p in $platforms; do platform_args+=(--platform "$p"); done
python3 -m pip download --quiet --disable-pip-version-check --only-binary=:all: \
  --python-version "$version" --implementation cp --abi "cp${version/./}" "${platform_args[@]}" --platform any \
  -d "$dir" -r scripts/gpu-requirements.txt
node scripts/bundle-helper.mjs --stdout > "$dir/bootstrap.py"
echo "$(ls "$dir"/*.whl | wc -l) wheels and bootstrap.py in $dir ($(du -sh "$dir" | cut -f1)) for CPython $version"
