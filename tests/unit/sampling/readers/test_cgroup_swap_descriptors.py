"""The cgroup swap files' descriptors: opened only where they are read, never twice (cgroup v1:
without swap accounting, on the memory-limited cgroup, on another one)."""

from __future__ import annotations

import os

import pytest
from _swap_helpers import GIB, MIB, V1_CGROUP, V1_UNLIMITED, _cgroup, _swap, _v1_dir
from fakes import known

from jupyterlab_vram_helper.sampling.readers.cgroup import CgroupMemory


def _open_descriptors() -> int:
    return len(os.listdir("/proc/self/fd"))


def _reads_of_one_reading(c: CgroupMemory, monkeypatch) -> list:
    read_fds: list = []
    real_pread = os.pread

    def counting_pread(fd: int, size: int, offset: int) -> bytes:
        read_fds.append(fd)
        return real_pread(fd, size, offset)

    monkeypatch.setattr(os, "pread", counting_pread)
    try:
        assert c.read() is not None
    finally:
        monkeypatch.setattr(os, "pread", real_pread)
    return read_fds


def test_v1_without_swap_accounting_opens_and_reads_no_swap_files(tmp_path, monkeypatch) -> None:
    if not os.path.isdir("/proc/self/fd"):
        pytest.skip("no /proc/self/fd to count descriptors in")
    root = tmp_path / "cg"
    _v1_dir(root, "/docker/abc", f"{3 * GIB}\n", GIB, swappiness="60\n")  # swapaccount=0: no memsw files
    before = _open_descriptors()
    c = _cgroup(tmp_path, V1_CGROUP, root)
    try:
        assert _open_descriptors() - before == 5  # limit, usage, oom_control, stat, swappiness
        reads = _reads_of_one_reading(c, monkeypatch)
        assert sorted(reads) == sorted(known(fd) for fd in [c._limit, c._usage, c._events, c._stat, c._swappiness])
    finally:
        c.close()
    assert _open_descriptors() == before


def test_v1_swap_of_the_memory_limited_cgroup_reuses_its_limit_and_usage(tmp_path, monkeypatch) -> None:
    """Docker's layout: memsw on the memory-limited cgroup. Its limit and usage files are open already: read once."""
    if not os.path.isdir("/proc/self/fd"):
        pytest.skip("no /proc/self/fd to count descriptors in")
    root = tmp_path / "cg"
    _v1_dir(root, "/docker/abc", f"{3 * GIB}\n", GIB, f"{5 * GIB}\n", f"{GIB + MIB}\n", swappiness="60\n")
    before = _open_descriptors()
    c = _cgroup(tmp_path, V1_CGROUP, root)
    try:
        assert c.swap_path == c.path
        assert _open_descriptors() - before == 7  # the five, memsw limit and memsw usage
        reads = _reads_of_one_reading(c, monkeypatch)
        expected = [c._limit, c._usage, c._events, c._stat, c._swap_limit, c._swap_usage, c._swappiness]
        # Each once: the memory limit and usage serve both figures.
        assert sorted(reads) == sorted(known(fd) for fd in expected)
        assert _swap(c) == (2 * GIB, MIB)
    finally:
        c.close()
    assert _open_descriptors() == before


def test_v1_swap_of_another_cgroup_opens_its_memory_usage_only(tmp_path, monkeypatch) -> None:
    if not os.path.isdir("/proc/self/fd"):
        pytest.skip("no /proc/self/fd to count descriptors in")
    root = tmp_path / "cg"
    _v1_dir(root, "/docker", f"{8 * GIB}\n", 2 * GIB, f"{8 * GIB}\n", f"{2 * GIB}\n")
    _v1_dir(root, "/docker/abc", f"{3 * GIB}\n", GIB, V1_UNLIMITED, f"{GIB}\n", swappiness="60\n")
    before = _open_descriptors()
    c = _cgroup(tmp_path, V1_CGROUP, root)
    try:
        assert c.swap_path != c.path
        assert _open_descriptors() - before == 8  # and /docker's memory usage, not its memory limit
        reads = _reads_of_one_reading(c, monkeypatch)
        expected = [
            c._limit,
            c._usage,
            c._events,
            c._stat,
            c._swap_limit,
            c._swap_usage,
            c._swap_memory_usage,
            c._swappiness,
        ]
        assert sorted(reads) == sorted(known(fd) for fd in expected)
    finally:
        c.close()
    assert _open_descriptors() == before
