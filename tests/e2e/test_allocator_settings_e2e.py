"""What a real torch's allocator settings getter gives, as the out-of-memory diagnosis reads it
(oom_watch.py: ``allocator_settings_expandable``) to leave out "turn expandable segments
on" where they are on already.

The getter needs no GPU: it gives the settings the allocator parsed from the environment,
or was given since, as they are on a machine with one.
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

HELPER = Path(__file__).resolve().parents[2] / "python_helper"

PROBE = r"""
import json, sys
sys.path.insert(0, HELPER)
import torch
from jupyterlab_vram_helper.oom.oom_watch import allocator_settings_expandable
seen = {"version": torch.__version__, "has_getter": hasattr(torch._C, "_accelerator_getAllocatorSettings")}
seen["from_environment"] = allocator_settings_expandable(torch)
if seen["has_getter"]:
    torch._C._accelerator_setAllocatorSettings("expandable_segments:False")
    seen["set_since"] = allocator_settings_expandable(torch)
seen["cuda_initialized"] = torch.cuda.is_initialized()
print(json.dumps(seen))
"""


def _probe(conf: str) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTORCH_CUDA_ALLOC_CONF", "PYTORCH_ALLOC_CONF"))}
    if conf:
        env["PYTORCH_CUDA_ALLOC_CONF"] = conf
    env["CUDA_VISIBLE_DEVICES"] = ""
    run = subprocess.run(
        [sys.executable, "-c", f"HELPER = {str(HELPER)!r}\n" + PROBE],
        capture_output=True,
        text=True,
        timeout=240,
        env=env,
    )
    assert run.returncode == 0, run.stderr[-3000:]
    return json.loads(run.stdout.strip().splitlines()[-1])


@pytest.mark.skipif(importlib.util.find_spec("torch") is None, reason="torch is not installed")
def test_a_real_torch_says_which_allocator_settings_it_parsed() -> None:
    on = _probe("max_split_size_mb:128,expandable_segments:True")
    if not on["has_getter"]:
        pytest.skip(f"torch {on['version']} has no _accelerator_getAllocatorSettings: the diagnosis says unknown")
    assert on["from_environment"] is True and on["set_since"] is False
    assert on["cuda_initialized"] is False  # the getter and the setter start no CUDA
    assert _probe("")["from_environment"] is False
