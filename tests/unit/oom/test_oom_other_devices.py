"""Apple's MPS and JAX/XLA run out of memory too: a diagnosis from the message alone,
since the helper reads neither device."""

from __future__ import annotations

from typing import Any

from jupyterlab_vram_helper.oom.oom_message import parse_oom_message
from jupyterlab_vram_helper.oom.oom_watch import OomWatch

MPS = (
    "MPS backend out of memory (MPS allocated: 1.20 GB, other allocations: 2.00 MB, max allowed: 18.13 GB). "
    "Tried to allocate 256.00 MB on private pool. Use PYTORCH_MPS_HIGH_WATERMARK_RATIO=0.0 to disable upper limit "
    "for memory allocations (may cause system failure)."
)
XLA = "RESOURCE_EXHAUSTED: Out of memory while trying to allocate 17179869184 bytes."


def test_mps_and_xla_messages_are_read() -> None:
    mps = parse_oom_message("RuntimeError", MPS)
    assert mps is not None and mps["kind"] == "mps" and mps["framework"] == "torch"
    assert mps["requested_bytes"] == 256 << 20 and mps["allowed_bytes"] == round(18.13 * (1 << 30))
    xla = parse_oom_message("XlaRuntimeError", XLA)
    assert xla is not None and xla["kind"] == "xla" and xla["framework"] == "jax"
    assert xla["requested_bytes"] == 16 << 30
    assert parse_oom_message("XlaRuntimeError", "RESOURCE_EXHAUSTED: rate limit exceeded") is None


def test_their_diagnosis_reads_no_cuda_device() -> None:
    # The one NVIDIA GPU of the machine is not the device that ran out.
    figures: dict[str, Any] = {
        "host": {},
        "gpus": [
            {
                "index": 0,
                "torch": {"allocated_bytes": 1 << 30},
                "nvml": {"total_bytes": 80 << 30, "used_bytes": 1 << 30},
            }
        ],
    }
    watch = OomWatch(
        read_figures=lambda: figures,
        inspect=lambda: {"entries": [], "hidden": []},
        names_in_use=lambda t, m: frozenset(),
    )
    for type_name, message, kind in (("RuntimeError", MPS, "mps"), ("XlaRuntimeError", XLA, "xla")):
        d = watch.diagnose(type_name, message)
        assert d is not None and d["kind"] == kind
        assert d["total_bytes"] is None and d["device_index"] is None and d["causes"] == []
        assert d.get("expandable_segments") is None
