"""Swappiness 0, no swap at the limit: the kernel's own cgroup's under cgroup v1, the machine's
(vm.swappiness) under v2, read at each reading; a malformed one leaves the swap limit alone."""

from __future__ import annotations

from pathlib import Path

import pytest
from _swap_helpers import GIB, MIB, V1_CGROUP, V1_UNLIMITED, _cgroup, _proc, _swap, _v1_dir, _v2_dir

from jupyterlab_vram_helper.sampling.readers import host as host_module
from jupyterlab_vram_helper.sampling.readers.cgroup import CgroupMemory
from jupyterlab_vram_helper.sampling.readers.host import HostReader


def test_v1_swappiness_0_of_the_kernels_cgroup_is_no_swap_and_is_read_at_each_reading(tmp_path) -> None:
    """docker run --memory 3g --memory-swap 5g --memory-swappiness 0: killed at 3 GiB with swap free."""
    root = tmp_path / "cg"
    abc = _v1_dir(root, "/docker/abc", f"{3 * GIB}\n", GIB, f"{5 * GIB}\n", f"{GIB + 300 * MIB}\n", swappiness="0\n")
    c = _cgroup(tmp_path, V1_CGROUP, root)
    assert _swap(c) == (0, 300 * MIB)  # the usage is what is in swap (put there before, or by the machine's reclaim)
    (abc / "memory.swappiness").write_text("60\n")  # an admin changes it at run time
    assert _swap(c) == (2 * GIB, 300 * MIB)


def test_v1_the_swappiness_is_the_kernels_own_cgroups_not_the_memory_limited_parents(tmp_path) -> None:
    """Reclaim at /docker's limit scans abc's pages with abc's swappiness (mm/vmscan.c, lruvec_memcg)."""
    root = tmp_path / "cg"
    _v1_dir(root, "/docker", f"{3 * GIB}\n", GIB, f"{5 * GIB}\n", f"{GIB}\n", swappiness="60\n")
    abc = _v1_dir(root, "/docker/abc", V1_UNLIMITED, GIB, V1_UNLIMITED, f"{GIB}\n", swappiness="0\n")
    c = _cgroup(tmp_path, V1_CGROUP, root)
    assert _swap(c) == (0, 0)
    (abc / "memory.swappiness").write_text("60\n")
    assert _swap(c) == (2 * GIB, 0)


@pytest.mark.parametrize("swappiness", ["", "lots\n", "-1\n"])
def test_a_malformed_swappiness_leaves_the_swap_limit_alone(tmp_path, swappiness) -> None:
    root = tmp_path / "cg"
    _v1_dir(root, "/docker/abc", f"{3 * GIB}\n", GIB, f"{5 * GIB}\n", f"{GIB}\n", swappiness=swappiness)
    assert _swap(_cgroup(tmp_path, V1_CGROUP, root)) == (2 * GIB, 0)


def test_v1_swappiness_0_without_swap_accounting_is_still_no_swap(tmp_path) -> None:
    root = tmp_path / "cg"
    _v1_dir(root, "/docker/abc", f"{3 * GIB}\n", GIB, swappiness="0\n")  # swapaccount=0: no memsw files
    assert _swap(_cgroup(tmp_path, V1_CGROUP, root)) == (0, None)


def _vm_swappiness(tmp_path: Path, value: str) -> Path:
    """``value`` as the machine's /proc/sys/vm/swappiness of the fake proc root that _cgroup uses."""
    path = tmp_path / "proc" / "sys" / "vm" / "swappiness"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(value)
    return path


@pytest.mark.parametrize("swap_max", [f"{2 * GIB}\n", "max\n"])
def test_v2_the_machines_swappiness_0_is_no_swap_and_is_read_at_each_reading(tmp_path, swap_max) -> None:
    root = tmp_path / "cg"
    _v2_dir(root, "/k", str(4 * GIB), 3 * GIB, swap_max=swap_max, swap_current=f"{512 * MIB}\n")
    swappiness = _vm_swappiness(tmp_path, "0\n")
    c = _cgroup(tmp_path, "0::/k\n", root)
    assert _swap(c) == (0, 512 * MIB)
    swappiness.write_text("60\n")  # sysctl vm.swappiness=60
    assert _swap(c) == (2 * GIB if swap_max != "max\n" else None, 512 * MIB)


def test_v2_a_cgroups_own_swappiness_file_is_not_read(tmp_path) -> None:
    """v2 has no per-cgroup swappiness: a memory.swappiness there (there is none in Linux) means nothing."""
    root = tmp_path / "cg"
    d = _v2_dir(root, "/k", str(4 * GIB), 3 * GIB, swap_max=f"{2 * GIB}\n", swap_current="0\n")
    (d / "memory.swappiness").write_text("0\n")
    _vm_swappiness(tmp_path, "60\n")
    assert _swap(_cgroup(tmp_path, "0::/k\n", root)) == (2 * GIB, 0)


def test_the_host_reader_reads_the_machines_swappiness_under_its_proc_root(tmp_path, monkeypatch) -> None:
    root = tmp_path / "cg"
    _v2_dir(root, "/k", str(4 * GIB), GIB, swap_max=f"{GIB}\n", swap_current=f"{MIB}\n")
    proc = _proc(tmp_path, cgroup="0::/k\n")
    (proc / "sys" / "vm").mkdir(parents=True)
    (proc / "sys" / "vm" / "swappiness").write_text("0\n")
    real_cgroup_memory = CgroupMemory  # the reader's own, with the fake cgroup mount
    monkeypatch.setattr(
        host_module, "CgroupMemory", lambda *args, **kwargs: real_cgroup_memory(args[0], str(root), **kwargs)
    )
    r = HostReader(pid=7, proc_root=str(proc), use_psutil=False)
    container = r.read()["container"]
    assert container is not None and (container["swap_limit_bytes"], container["swap_usage_bytes"]) == (0, MIB)
    r.close()
