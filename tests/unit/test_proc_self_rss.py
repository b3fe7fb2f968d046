"""The kernel's RSS and its high-water mark from Linux /proc, as per-cell accounting reads them."""

from __future__ import annotations

import json
import os

import pytest

from jupyterlab_vram_helper.readers.host import ProcSelfRss

MB = 1 << 20

@pytest.mark.skipif(not os.path.exists("/proc/self/status"), reason="Linux /proc only")
def test_proc_self_rss_reads_and_resets_the_peak() -> None:
    psutil = pytest.importorskip("psutil")
    probe = ProcSelfRss()
    try:
        assert abs(probe.rss_and_peak()[0] - psutil.Process().memory_info().rss) < 8 * MB
        block = bytearray(64 * MB)
        for i in range(0, len(block), 4096):
            block[i] = 1
        del block
        rss, peak = probe.rss_and_peak()
        assert peak - rss > 48 * MB
        assert probe.rss_and_peak(hold_gil=False)[1] == peak  # the background thread's read agrees
        if not probe.reset_peak():
            pytest.skip("this kernel refuses /proc/self/clear_refs")
        rss, peak = probe.rss_and_peak()
        assert peak - rss < 8 * MB
    finally:
        probe.close()


@pytest.mark.parametrize(
    "status, expected",
    [
        # the kernel's layout: VmHWM just before VmRSS, tab and blanks before the figure
        (b"Name:\tpython\nVmPeak:\t  900000 kB\nVmHWM:\t  524288 kB\nVmRSS:\t  262144 kB\nRssAnon:\t 1 kB\n",
         (256 * MB, 512 * MB)),
        (b"Name:\tpython\nVmRSS:\t 1024 kB\n", (MB, None)),  # no VmHWM: the RSS still counts
        (b"Name:\tpython\nVmHWM:\t 2048 kB\nVmRSS:\t many kB\n", (None, None)),  # garbled: nothing made up
        (b"Name:\tpython\n", (None, None)),
    ],
)
def test_proc_self_rss_parses_the_status_file(tmp_path, status: bytes, expected) -> None:
    (tmp_path / "status").write_bytes(status)
    probe = ProcSelfRss(proc_self=str(tmp_path))
    try:
        assert probe.rss_and_peak() == expected
        assert probe.rss_and_peak(hold_gil=False) == expected
    finally:
        probe.close()


def test_proc_self_rss_without_proc() -> None:
    probe = ProcSelfRss(proc_self="/nonexistent/self")
    assert not probe.available
    assert probe.rss_and_peak() == (None, None) and probe.reset_peak() is False
    assert probe.rss_and_peak(hold_gil=False) == (None, None)


@pytest.mark.skipif(not hasattr(os, "fork") or not os.path.exists("/proc/self/status"), reason="needs fork and /proc")
def test_proc_self_rss_in_a_forked_child_reads_the_child() -> None:
    import psutil

    probe = ProcSelfRss()
    parent_rss = probe.rss_and_peak()[0]
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: grow by 96 MB, report what the probe and psutil say
        try:
            block = bytearray(96 * MB)
            for i in range(0, len(block), 4096):
                block[i] = 1
            os.write(write_end, json.dumps([probe.rss_and_peak()[0], psutil.Process().memory_info().rss]).encode())
        finally:
            os._exit(0)
    os.close(write_end)
    child_probe, child_psutil = json.loads(os.read(read_end, 1000))
    os.close(read_end)
    os.waitpid(pid, 0)
    # the two processes really differ (fork shares pages lazily, the child grew 96 MB)...
    assert abs(child_psutil - parent_rss) > 32 * MB
    # ...and the probe, opened in the parent, read the child's own RSS
    assert abs(child_probe - child_psutil) < 8 * MB
    assert abs(probe.rss_and_peak()[0] - parent_rss) < 16 * MB  # and the parent's probe still reads the parent


PAGE_KIB = os.sysconf("SC_PAGE_SIZE") // 1024


class FakeGetrusage:
    """getrusage(RUSAGE_SELF) with a chosen ru_maxrss (KiB); counts its calls."""

    def __init__(self, max_kib: int):
        self.max_kib = max_kib
        self.calls = 0

    def __call__(self):
        self.calls += 1
        return type("Rusage", (), {"ru_maxrss": self.max_kib})()


def _proc_files(tmp_path, rss_pages: int, status: bytes):
    (tmp_path / "statm").write_bytes(f"90000 {rss_pages} 500 10 0 3000 0\n".encode())
    (tmp_path / "status").write_bytes(status)


def _status(rss_kib: int, high_water_kib: int) -> bytes:
    return f"Name:\tpython\nVmHWM:\t {high_water_kib} kB\nVmRSS:\t {rss_kib} kB\n".encode()


@pytest.mark.parametrize("hold_gil", [True, False])
def test_proc_self_rss_proves_the_peak_from_statm_and_getrusage_when_the_maximum_is_the_rss(tmp_path, hold_gil) -> None:
    rss_kib = 1000 * PAGE_KIB
    # status would say otherwise: it is not read when the cheap reads prove VmHWM
    _proc_files(tmp_path, 1000, b"Name:\tpython\nVmRSS:\t garbled kB\n")
    getrusage = FakeGetrusage(rss_kib)
    probe = ProcSelfRss(proc_self=str(tmp_path), getrusage=getrusage)
    try:
        assert probe.rss_and_peak(hold_gil=hold_gil) == (rss_kib * 1024, rss_kib * 1024)
        assert getrusage.calls == 1
    finally:
        probe.close()


def test_proc_self_rss_reads_status_when_the_maximum_is_above_the_rss(tmp_path) -> None:
    rss_kib = 1000 * PAGE_KIB
    _proc_files(tmp_path, 1000, _status(rss_kib, rss_kib + 4096))
    probe = ProcSelfRss(proc_self=str(tmp_path), getrusage=FakeGetrusage(rss_kib + 4096))
    try:
        # the peak above the RSS (the reason to reset it) comes from status, exact
        assert probe.rss_and_peak() == (rss_kib * 1024, (rss_kib + 4096) * 1024)
    finally:
        probe.close()


def test_proc_self_rss_skips_the_cheap_reads_while_an_exited_threads_maximum_is_above_the_rss(tmp_path) -> None:
    rss_kib = 1000 * PAGE_KIB
    # VmHWM is the RSS, yet getrusage's maximum is higher: a thread exited at that mark
    _proc_files(tmp_path, 1000, _status(rss_kib, rss_kib))
    getrusage = FakeGetrusage(rss_kib + 8192)
    probe = ProcSelfRss(proc_self=str(tmp_path), getrusage=getrusage)
    try:
        assert probe.rss_and_peak() == (rss_kib * 1024, rss_kib * 1024)
        assert getrusage.calls == 1
        for _ in range(3):  # the cheap reads cannot prove anything now: status alone
            assert probe.rss_and_peak() == (rss_kib * 1024, rss_kib * 1024)
        assert getrusage.calls == 1
        # the RSS grows past that mark: the cheap reads can prove VmHWM again
        grown_kib = rss_kib + 16384
        _proc_files(tmp_path, grown_kib // PAGE_KIB, _status(grown_kib, grown_kib))
        assert probe.rss_and_peak() == (grown_kib * 1024, grown_kib * 1024)  # status, which shows the growth
        assert probe.rss_and_peak() == (grown_kib * 1024, grown_kib * 1024)
        assert getrusage.calls == 2
    finally:
        probe.close()


def test_proc_self_rss_on_a_background_thread_never_concludes_a_thread_exited(tmp_path) -> None:
    # The hooks' thread may reset VmHWM between a background thread's two reads,
    # which would look like an exited thread's maximum: only the hooks' reads decide it.
    rss_kib = 1000 * PAGE_KIB
    _proc_files(tmp_path, 1000, _status(rss_kib, rss_kib))
    getrusage = FakeGetrusage(rss_kib + 8192)
    probe = ProcSelfRss(proc_self=str(tmp_path), getrusage=getrusage)
    try:
        for _ in range(3):
            assert probe.rss_and_peak(hold_gil=False) == (rss_kib * 1024, rss_kib * 1024)
        assert getrusage.calls == 3
    finally:
        probe.close()


@pytest.mark.skipif(not os.path.exists("/proc/self/status"), reason="Linux /proc only")
def test_proc_self_rss_cheap_reads_agree_with_status_in_this_process() -> None:
    getrusage_calls = []
    import resource

    def getrusage():
        getrusage_calls.append(1)
        return resource.getrusage(resource.RUSAGE_SELF)

    probe = ProcSelfRss(getrusage=getrusage)
    try:
        if not probe.reset_peak():
            pytest.skip("this kernel refuses /proc/self/clear_refs")
        rss, peak = probe.rss_and_peak()
        with open("/proc/self/status", "rb") as f:
            status = f.read()
        from jupyterlab_vram_helper.readers.host import _rss_and_high_water

        status_rss, status_peak = _rss_and_high_water(status)
        assert getrusage_calls  # the cheap reads ran
        assert abs(rss - status_rss) < 4 * MB and abs(peak - status_peak) < 4 * MB
        assert peak >= rss
    finally:
        probe.close()
