"""A real kernel that allocates until it is killed: what did the helper report last?

Two ways to die, as the frontend's death explanation meets them:

- Under a real cgroup memory limit, where this machine lets the test make one
  (root, a writable cgroup mount): the kernel is moved into a fresh cgroup
  before the helper starts, allocates until the kernel's OOM killer takes it,
  and its samples show the limit, usage near it and RSS climbing. The kernel
  started again in that cgroup reports the cgroup's ``oom_kill`` count one
  higher than the dead kernel's last sample: the evidence the frontend uses.
  The machine's count (``oom_kill`` of /proc/vmstat, what the frontend uses
  without a container) rose with it: Linux counts every kill there too.
- Anywhere: the test kills the kernel with SIGKILL once its samples show
  about 1 GiB of RSS, as the out-of-memory killer would; the last samples
  before the death show that RSS.
"""

from __future__ import annotations

import os
import signal
import time
from typing import Any

import pytest
from cgroup_harness import machine_oom_kill_count, move_into, oom_kill_count, real_memory_cgroup, remove_cgroup
from jupyter_client.provisioning import LocalProvisioner
from kernel_harness import Kernel, attach_helper

pytestmark = pytest.mark.kernel

MIB = 1 << 20
FAST = {"interval_s": 0.1, "heartbeat_s": 1.0}

# Touch every page (bytes of 1s, not calloc'd zeros) and pause so samples see the climb.
ALLOCATE_FOREVER = "import time\nhog = []\nwhile True:\n    hog.append(b'\\x01' * (16 << 20))\n    time.sleep(0.02)\n"


def _process(kernel: Kernel) -> Any:
    """The kernel's process (a ``subprocess.Popen``): the tests start local kernels."""
    provisioner = kernel.km.provisioner
    assert isinstance(provisioner, LocalProvisioner)
    return provisioner.process


def _kernel_pid(kernel: Kernel) -> int:
    return int(_process(kernel).pid)


def _wait_dead(kernel: Kernel, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while kernel.km.is_alive():
        if time.monotonic() > deadline:
            raise TimeoutError("the kernel did not die")
        kernel.pump(0.1)
    kernel.pump(0.3)  # whatever was still on its way


def _samples(kernel: Kernel, comm_id: str) -> list[dict[str, Any]]:
    return [m["content"]["data"] for m in kernel.samples(comm_id)]


def _stop(kernel: Kernel) -> None:
    try:
        kernel.shutdown()
    except Exception:
        pass


def test_sigkill_at_high_rss_leaves_the_climb_in_the_last_samples(bootstrap: str) -> None:
    kernel = Kernel()
    try:
        comm_id = attach_helper(kernel, bootstrap, FAST)
        pid = _kernel_pid(kernel)
        kernel.submit("import time\nx = bytearray(b'\\x01') * (1 << 30)\ntime.sleep(60)", cell_id="the-big-cell")
        seen = kernel.wait_for(
            comm_id,
            lambda d: d.get("type") == "sample" and (d["host"]["rss_bytes"] or 0) > 900 * MIB,
            timeout=60,
        )
        assert seen["host"]["rss_bytes"] > 900 * MIB
        os.kill(pid, signal.SIGKILL)  # what the out-of-memory killer sends
        _wait_dead(kernel, 30)
        assert _process(kernel).wait(timeout=10) == -signal.SIGKILL
        last = _samples(kernel, comm_id)[-1]
        assert last["host"]["rss_bytes"] > 900 * MIB  # the figures up to the end
        assert last["seq"] >= seen["seq"]
    finally:
        _stop(kernel)


def test_a_kernel_killed_at_its_cgroup_limit_reports_the_limit_and_the_kill(bootstrap: str) -> None:
    limit = 400 * MIB
    path, version, why = real_memory_cgroup(limit)
    if path is None:
        pytest.skip(f"no real cgroup memory limit on this machine: {why}")
    kernel = Kernel()
    restarted = None
    try:
        move_into(path, _kernel_pid(kernel))  # before the helper starts: it finds its cgroup once
        comm_id = attach_helper(kernel, bootstrap, FAST)
        first = _samples(kernel, comm_id)[0]
        container = first["host"]["container"]
        assert container is not None, first["host"]
        assert container["limit_bytes"] == limit and container["cgroup_version"] == version
        before = container["oom_kill_count"]
        # The helper's count is the cgroup's own (None only where this Linux keeps none, < 4.13):
        # the checks of it below are never left out because the helper read nothing.
        counted = oom_kill_count(path, version)
        assert before == counted, (before, counted)
        machine_counts = machine_oom_kill_count() is not None
        assert (first["host"]["oom_kill_count"] is not None) == machine_counts, first["host"]
        kernel.submit(ALLOCATE_FOREVER, cell_id="the-hog")
        _wait_dead(kernel, 120)
        status = _process(kernel).wait(timeout=10)
        assert status == -signal.SIGKILL, status
        samples = _samples(kernel, comm_id)
        last = samples[-1]["host"]
        # The last figures: the kernel held most of the limit, the cgroup was at it.
        assert last["container"]["limit_bytes"] == limit
        assert last["rss_bytes"] > limit * 0.6, [s["host"]["rss_bytes"] for s in samples[-5:]]
        assert last["container"]["usage_bytes"] > limit * 0.8
        assert max(s["host"]["rss_bytes"] or 0 for s in samples) == max(
            s["host"]["rss_bytes"] or 0 for s in samples[-3:]
        )  # still climbing at the end
        killed = oom_kill_count(path, version)
        if counted is not None:
            assert killed == counted + 1
        # The kernel started again in the same cgroup (as in a container) says so.
        restarted = Kernel()
        move_into(path, _kernel_pid(restarted))
        comm2 = attach_helper(restarted, bootstrap, FAST)
        first_after = _samples(restarted, comm2)[0]["host"]
        evidence = first_after["container"]
        assert evidence["limit_bytes"] == limit
        assert evidence["oom_kill_count"] == killed  # the frontend's "killed it (oom_kill)": before + 1
        # The machine's count (Linux >= 4.13): at least this kill more (other processes' may add to it).
        if machine_counts:
            assert last["oom_kill_count"] is not None, last
            assert first_after["oom_kill_count"] >= last["oom_kill_count"] + 1, (last, first_after)
        assert first_after["total_bytes"] == last["total_bytes"]  # what the frontend checks: the same machine
    finally:
        _stop(kernel)
        if restarted is not None:
            _stop(restarted)
        remove_cgroup(path)
