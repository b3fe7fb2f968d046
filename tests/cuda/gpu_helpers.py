"""What the GPU suite's checks share: opening the helper, NVML and nvidia-smi
read from the test process (which never initialises CUDA), and another
process that holds GPU memory."""

from __future__ import annotations

import shutil
import subprocess
import sys
from typing import Any

from kernel_harness import Kernel, attach_helper

MiB = 1 << 20
GiB = 1 << 30


def open_helper(kernel: Kernel, bootstrap: str, interval_s: float = 0.1) -> str:
    return attach_helper(kernel, bootstrap, {"interval_s": interval_s, "heartbeat_s": interval_s}, timeout=60)


def reply_of(kernel: Kernel, comm_id: str, data: dict[str, Any], timeout: float = 120) -> dict[str, Any]:
    answer = kernel.request(comm_id, data, timeout=timeout)
    assert answer["type"] == "reply", answer
    return answer["result"]


# --- NVML and nvidia-smi, read from the test process (which never initialises CUDA) ---------------


class Nvml:
    def __init__(self) -> None:
        import pynvml

        self.nvml = pynvml
        pynvml.nvmlInit()

    def close(self) -> None:
        self.nvml.nvmlShutdown()

    def process_bytes(self, pid: int, index: int = 0) -> int | None:
        """NVML's own per-process figure for ``pid`` on device ``index``; None if not listed."""
        handle = self.nvml.nvmlDeviceGetHandleByIndex(index)
        found = [p.usedGpuMemory for p in self.nvml.nvmlDeviceGetComputeRunningProcesses(handle) if p.pid == pid]
        return sum(found) if found else None

    def pids(self) -> set:
        pids = set()
        for i in range(self.nvml.nvmlDeviceGetCount()):
            handle = self.nvml.nvmlDeviceGetHandleByIndex(i)
            pids |= {p.pid for p in self.nvml.nvmlDeviceGetComputeRunningProcesses(handle)}
        return pids


def nvidia_smi_memory(index: int = 0) -> dict[str, int] | None:
    """Used, free and total MiB as ``nvidia-smi`` prints them, or None without nvidia-smi."""
    if shutil.which("nvidia-smi") is None:
        return None
    out = subprocess.run(
        [
            "nvidia-smi",
            f"--id={index}",
            "--query-gpu=memory.used,memory.free,memory.total",
            "--format=csv,noheader,nounits",
        ],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    ).stdout.strip()
    used, free, total = (int(v) for v in out.split(","))
    return {"used_mib": used, "free_mib": free, "total_mib": total}


HOLD_MEMORY = """\
import sys, time, torch
held = torch.empty(int(sys.argv[1]), dtype=torch.uint8, device="cuda:0")
torch.cuda.synchronize()
print("ready", flush=True)
sys.stdin.read()  # until the test closes our stdin
"""


class MemoryHolder:
    """Another process that holds ``size`` bytes on GPU 0 until closed."""

    def __init__(self, size: int) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-c", HOLD_MEMORY, str(size)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        line = self.process.stdout.readline() if self.process.stdout else ""
        if line.strip() != "ready":
            self.close()
            raise RuntimeError(f"the memory holder did not start (said {line!r})")

    @property
    def pid(self) -> int:
        return self.process.pid

    def close(self) -> None:
        if self.process.stdin:
            self.process.stdin.close()
        try:
            self.process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.process.kill()
