"""Ground rules of the GPU suite.

- Every test is skipped, with the reason, where CUDA is unavailable. The probe
  runs in a subprocess so that the test process never initialises CUDA. Where
  the kit found CUDA (``VRAM_REQUIRE_CUDA=1``), a failed probe fails the test.
- Each check records the figures it compared (pytest's ``record_property``),
  so that the JUnit XML that scripts/gpu-check.sh asks for carries them into
  the report (scripts/gpu_report.py).
- Tests marked ``gpu_exclusive`` read device-wide figures (NVML's used memory,
  nvidia-smi) or fill the card: the kit runs them one at a time, before the
  rest runs in parallel.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from functools import cache
from typing import Any

import pytest
from gpu_helpers import Nvml
from kernel_harness import Kernel


@cache
def _cuda_probe() -> str:
    code = "import torch, sys; sys.stdout.write('yes' if torch.cuda.is_available() else 'no')"
    try:
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    except Exception as exc:  # pragma: no cover - depends on the machine
        return f"probe failed: {exc}"
    if out.returncode != 0:
        return f"torch not importable: {out.stderr.strip().splitlines()[-1:] or out.returncode}"
    return out.stdout.strip()


@pytest.fixture(autouse=True)
def needs_cuda() -> None:
    """Every test of the suite: skipped without CUDA (failed, where the kit found it)."""
    require_cuda()


@pytest.fixture(scope="module")
def module_needs_cuda() -> None:
    """The same, for a module's shared fixtures, which pytest sets up before any test's own."""
    require_cuda()


def require_cuda() -> None:
    """Skip where CUDA is unavailable; fail instead where the GPU kit found it."""
    result = _cuda_probe()
    if result != "yes":
        reason = f"needs a CUDA GPU and a CUDA build of torch (torch.cuda.is_available() -> {result})"
        if os.environ.get("VRAM_REQUIRE_CUDA") == "1":
            # The GPU kit saw CUDA: a probe that does not is a failure, never a quiet skip.
            pytest.fail(f"the GPU kit found CUDA, this test's probe did not: {reason}")
        pytest.skip(reason)


@pytest.fixture
def figures(record_property: Callable[[str, Any], None]) -> Callable[..., None]:
    """``figures(name=value, ...)``: figures this check compared, for the report (as JSON)."""

    def record(**values: Any) -> None:
        for name, value in values.items():
            record_property(name, json.dumps(value))

    return record


@pytest.fixture
def kernel_with_env() -> Iterator[Callable[[dict[str, str]], Kernel]]:
    """Fresh kernels with extra environment variables; all shut down after the test."""
    started = []

    def start(env: dict[str, str]) -> Kernel:
        k = Kernel(env=env)
        started.append(k)
        return k

    yield start
    for k in started:
        k.shutdown()


@pytest.fixture
def nvml() -> Iterator[Nvml]:
    pytest.importorskip("pynvml")
    reader = Nvml()
    try:
        yield reader
    finally:
        reader.close()
