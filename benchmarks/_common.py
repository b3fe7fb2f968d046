"""What the benchmarks share: the ``--device`` and ``--json`` options, the CUDA
probe, the cell that puts a kernel's CUDA into use, and the JSON they write
(scripts/gpu-check.sh collects it into the GPU report)."""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path
from typing import Any, Dict, List, Optional

# Exit status of a benchmark asked for CUDA on a machine without it (the GPU kit reads it as a skip).
NO_CUDA = 3

# Run in every measured kernel in cuda mode, the baseline's too: torch imported,
# a CUDA context, and a live allocation, so the helper's NVML and allocator
# reads have real state behind them.
CUDA_IN_USE = (
    "import torch\n"
    "_bench_cuda_state = torch.empty(64 * 2**20, dtype=torch.uint8, device='cuda:0')\n"
    "torch.cuda.synchronize()\n"
)


def add_common_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--device", choices=("cpu", "cuda"), default="cpu",
                        help="cpu: as on a machine without a GPU; cuda: every kernel uses CUDA (default cpu)")
    parser.add_argument("--json", type=Path, default=None, metavar="PATH", help="also write the figures as JSON here")


def require_device(device: str) -> None:
    """Exit with NO_CUDA, saying why, when cuda is asked for and absent.

    Probed in a subprocess: the benchmark's own process never initialises CUDA.
    """
    if device != "cuda":
        return
    code = "import torch, sys; sys.stdout.write('yes' if torch.cuda.is_available() else 'no')"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    if out.returncode != 0 or out.stdout.strip() != "yes":
        why = out.stderr.strip().splitlines()[-1] if out.returncode else "torch.cuda.is_available() is False"
        print(f"--device cuda: no CUDA GPU here ({why}); nothing measured.")
        sys.exit(NO_CUDA)


def target(name: str, value: float, limit: float, unit: str) -> Dict[str, Any]:
    return {"name": name, "value": round(value, 3), "limit": limit, "unit": unit, "met": value <= limit}


def write_json(path: Optional[Path], benchmark: str, device: str, params: Dict[str, Any],
               figures: Dict[str, Any], targets: List[Dict[str, Any]]) -> None:
    if path is None:
        return
    data = {"benchmark": benchmark, "device": device, "params": params, "figures": figures, "targets": targets}
    path.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
