"""The demo notebook, executed headless on the GPU cell by cell with the
helper attached as JupyterLab attaches it; each cell's record goes into the
report, and the figures match what the cells allocate."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from gpu_helpers import MiB, open_helper
from kernel_harness import CellSession, Kernel

pytestmark = [pytest.mark.cuda, pytest.mark.kernel]

DEMO = Path(__file__).resolve().parents[2] / "demo" / "vram-demo.ipynb"


def _code_cells() -> list[str]:
    notebook = json.loads(DEMO.read_text(encoding="utf-8"))
    return ["".join(c["source"]) for c in notebook["cells"] if c["cell_type"] == "code"]


def test_the_demo_notebook_on_the_gpu(kernel: Kernel, bootstrap: str, figures: Callable[..., Any]) -> None:
    cells = CellSession(kernel, open_helper(kernel, bootstrap, interval_s=1.0))
    rows = []
    for number, code in enumerate(_code_cells(), start=1):
        made = cells.run(code, timeout=300, record_timeout=60)
        assert made["reply"]["status"] == "ok", (code, made["reply"])
        record = made["record"]
        gpu = next((g for g in record["gpus"] if g["index"] == 0), None)
        rows.append(
            {
                "cell": number,
                "first_line": code.splitlines()[0][:60],
                "duration_s": record.get("duration_s"),
                "allocated_delta_bytes": None
                if gpu is None
                else gpu["allocated_after_bytes"] - gpu["allocated_before_bytes"],
                "allocated_peak_bytes": None if gpu is None else gpu["allocated_peak_bytes"],
                "reserved_after_bytes": None if gpu is None else gpu["reserved_after_bytes"],
                "peak_exact": record["peak_exact"],
            }
        )
    figures(demo_cells=rows)
    assert kernel.eval("device") == "cuda"
    by_cell = {r["cell"]: r for r in rows}
    assert by_cell[2]["allocated_delta_bytes"] == 256 * MiB  # x: 64 Mi float32
    assert by_cell[3]["allocated_delta_bytes"] == 10 * 64 * MiB  # ten 64 MiB chunks, one per second
    assert by_cell[4]["allocated_delta_bytes"] == -(256 + 640) * MiB  # del x, chunks
    assert by_cell[4]["reserved_after_bytes"] == 0  # empty_cache gave the cache back
    assert all(r["peak_exact"] for r in rows)
    outputs = kernel.output_messages()
    assert [m for m in outputs if m["msg_type"] == "error"] == []
    assert [m for m in outputs if m["msg_type"] == "stream" and m["content"]["name"] == "stderr"] == []
