"""JupyterLab server for the browser tests (Galata's standard test setup).

Galata's helper makes a throw-away root directory, disables the token and
turns on the test hooks that `@jupyterlab/galata` needs.

With VRAM_UI_KERNEL_MEMORY_LIMIT set (bytes, or with a K/M/G suffix), the
server moves itself into a new memory cgroup with that limit, where this
machine lets the tests make one (root, a writable cgroup mount); the kernels
it starts are born there and meet a container's limit and its out-of-memory
killer (which takes the largest process: the kernel that filled it), while
the browser does not. Where no cgroup can be made, the server's log says why
and nothing is limited (tests that need a limit skip).

With VRAM_UI_FAKE_NVML=1, the kernels import the stand-in ``pynvml`` of
tests/fake_nvml (one busy card): the GPU memory and load figures appear on a
machine without a GPU.
"""

import os
import sys
from pathlib import Path

from jupyterlab.galata import configure_jupyter_server

configure_jupyter_server(c)  # noqa: F821

# CI and these machines run as root; the server is on loopback and throw-away.
c.ServerApp.allow_root = True  # noqa: F821


def _bytes(text: str) -> int:
    units = {"K": 2**10, "M": 2**20, "G": 2**30}
    text = text.strip().upper()
    if text and text[-1] in units:
        return int(float(text[:-1]) * units[text[-1]])
    return int(text)


def _server_in_cgroup(limit: int) -> None:
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
    from cgroup_harness import move_into, real_memory_cgroup

    path, version, why = real_memory_cgroup(limit, name="vram-ui-kernels")
    if path is None:
        print(f"jupyterlab-vram tests: kernels run without a memory limit: {why}", file=sys.stderr)
        return
    move_into(path, os.getpid())
    print(f"jupyterlab-vram tests: the server and its kernels run in {path} (cgroup v{version}, limit {limit} bytes)", file=sys.stderr)


if os.environ.get("VRAM_UI_KERNEL_MEMORY_LIMIT"):
    _server_in_cgroup(_bytes(os.environ["VRAM_UI_KERNEL_MEMORY_LIMIT"]))


def _kernels_see_the_stand_in_card() -> None:
    """Give the kernels this server starts the stand-in pynvml of tests/fake_nvml: one busy card,
    so the browser tests see GPU load figures on a machine without a GPU."""
    fake = str(Path(__file__).resolve().parent.parent / "tests" / "fake_nvml")
    os.environ["PYTHONPATH"] = os.pathsep.join(p for p in (fake, os.environ.get("PYTHONPATH")) if p)


if os.environ.get("VRAM_UI_FAKE_NVML") == "1":
    _kernels_see_the_stand_in_card()
