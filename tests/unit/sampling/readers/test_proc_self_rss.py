"""The kernel's RSS and its high-water mark from Linux /proc, as per-cell accounting reads them."""

from __future__ import annotations

import os

import pytest
from fakes import in_forked_child, known

from jupyterlab_vram_helper.sampling.readers.kernel_rss import ProcSelfRss

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
        assert known(peak) - known(rss) > 48 * MB
        assert probe.rss_and_peak(hold_gil=False)[1] == peak  # the background thread's read agrees
        if not probe.reset_peak():
            pytest.skip("this kernel refuses /proc/self/clear_refs")
        rss, peak = probe.rss_and_peak()
        assert known(peak) - known(rss) < 8 * MB
    finally:
        probe.close()


@pytest.mark.parametrize(
    "status, expected",
    [
        # the kernel's layout: VmHWM just before VmRSS, tab and blanks before the figure
        (
            b"Name:\tpython\nVmPeak:\t  900000 kB\nVmHWM:\t  524288 kB\nVmRSS:\t  262144 kB\nRssAnon:\t 1 kB\n",
            (256 * MB, 512 * MB),
        ),
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
    parent_rss = known(probe.rss_and_peak()[0])

    def in_child():  # grow by 96 MB, report what the probe and psutil say
        block = bytearray(96 * MB)
        for i in range(0, len(block), 4096):
            block[i] = 1
        return [probe.rss_and_peak()[0], psutil.Process().memory_info().rss]

    child_probe, child_psutil = in_forked_child(in_child)
    # the two processes really differ (fork shares pages lazily, the child grew 96 MB)...
    assert abs(child_psutil - parent_rss) > 32 * MB
    # ...and the probe, opened in the parent, read the child's own RSS
    assert abs(child_probe - child_psutil) < 8 * MB
    assert abs(known(probe.rss_and_peak()[0]) - parent_rss) < 16 * MB  # and the parent's probe still reads the parent


PAGE_KIB = os.sysconf("SC_PAGE_SIZE") // 1024
GARBLED_STATUS = b"Name:\tpython\nVmRSS:\t garbled kB\n"


class FakeGetrusage:
    """getrusage with a chosen ru_maxrss (KiB); counts its calls, and can run something when called."""

    def __init__(self, max_kib: int, on_call=None):
        self.max_kib = max_kib
        self.calls = 0
        self.on_call = on_call

    def __call__(self):
        self.calls += 1
        if self.on_call is not None:
            self.on_call()
        return type("Rusage", (), {"ru_maxrss": self.max_kib})()


def _statm(tmp_path, rss_pages: int) -> None:
    (tmp_path / "statm").write_bytes(f"90000 {rss_pages} 500 10 0 3000 0\n".encode())


def _status(tmp_path, rss_kib: int, high_water_kib: int) -> None:
    (tmp_path / "status").write_bytes(f"Name:\tpython\nVmHWM:\t {high_water_kib} kB\nVmRSS:\t {rss_kib} kB\n".encode())


def _probe(tmp_path, rss_pages: int, getrusage: FakeGetrusage) -> ProcSelfRss:
    """A probe over fake files that agree (RSS = VmHWM = rss_pages), opened, with getrusage's count back at 0."""
    _statm(tmp_path, rss_pages)
    _status(tmp_path, rss_pages * PAGE_KIB, rss_pages * PAGE_KIB)
    probe = ProcSelfRss(proc_self=str(tmp_path), getrusage=getrusage)
    getrusage.calls = 0
    return probe


@pytest.mark.parametrize("hold_gil", [True, False])
def test_proc_self_rss_proves_the_peak_from_statm_and_getrusage_when_the_maximum_is_the_rss(tmp_path, hold_gil) -> None:
    rss_kib = 1000 * PAGE_KIB
    getrusage = FakeGetrusage(rss_kib)
    probe = _probe(tmp_path, 1000, getrusage)
    try:
        (tmp_path / "status").write_bytes(GARBLED_STATUS)  # read, it would give (None, None)
        assert probe.rss_and_peak(hold_gil=hold_gil) == (rss_kib * 1024, rss_kib * 1024)
        assert probe.rss_and_peak(hold_gil=hold_gil) == (rss_kib * 1024, rss_kib * 1024)
        assert getrusage.calls == 2
    finally:
        probe.close()


def test_proc_self_rss_reads_the_rss_before_the_maximum(tmp_path) -> None:
    # The RSS falls right after getrusage: read in that order, the maximum
    # proves nothing about the lower RSS (a rise and fall could sit between).
    rss_kib = 1000 * PAGE_KIB
    getrusage = FakeGetrusage(rss_kib)
    probe = _probe(tmp_path, 1000, getrusage)
    getrusage.on_call = lambda: _statm(tmp_path, 900)
    try:
        (tmp_path / "status").write_bytes(GARBLED_STATUS)
        assert probe.rss_and_peak() == (rss_kib * 1024, rss_kib * 1024)
    finally:
        probe.close()


def test_proc_self_rss_reads_status_while_the_peak_is_above_the_rss_and_the_cheap_reads_again_after(tmp_path) -> None:
    rss_kib = 1000 * PAGE_KIB
    getrusage = FakeGetrusage(rss_kib + 4096)
    probe = _probe(tmp_path, 1000, getrusage)
    try:
        _status(tmp_path, rss_kib, rss_kib + 4096)  # a cell freed 4 MiB: VmHWM above the RSS
        # the peak above the RSS (the reason to reset it) comes from status, exact
        assert probe.rss_and_peak() == (rss_kib * 1024, (rss_kib + 4096) * 1024)
        assert getrusage.calls == 1
        # until a reading finds VmHWM at the RSS, the next ones read status alone
        assert probe.rss_and_peak() == (rss_kib * 1024, (rss_kib + 4096) * 1024)
        _status(tmp_path, rss_kib, rss_kib)  # reset
        getrusage.max_kib = rss_kib
        assert probe.rss_and_peak() == (rss_kib * 1024, rss_kib * 1024)
        assert getrusage.calls == 1
        (tmp_path / "status").write_bytes(GARBLED_STATUS)
        assert probe.rss_and_peak() == (rss_kib * 1024, rss_kib * 1024)  # the cheap reads again
        assert getrusage.calls == 2
    finally:
        probe.close()


@pytest.mark.parametrize("hold_gil", [True, False])
def test_proc_self_rss_reads_status_while_a_mark_kept_apart_is_above_the_rss(tmp_path, hold_gil) -> None:
    rss_kib = 1000 * PAGE_KIB
    # VmHWM is the RSS, yet getrusage's maximum is higher: a thread exited at
    # that mark, or the process's launcher had it before exec
    getrusage = FakeGetrusage(rss_kib + 8192)
    probe = _probe(tmp_path, 1000, getrusage)
    try:
        assert probe.rss_and_peak(hold_gil=hold_gil) == (rss_kib * 1024, rss_kib * 1024)
        assert getrusage.calls == 1
        for _ in range(3):  # the cheap reads cannot prove anything now: status alone
            assert probe.rss_and_peak(hold_gil=hold_gil) == (rss_kib * 1024, rss_kib * 1024)
        assert getrusage.calls == 1
        # the RSS grows past that mark: the cheap reads can prove VmHWM again
        grown_kib = rss_kib + 16384
        _statm(tmp_path, grown_kib // PAGE_KIB)
        _status(tmp_path, grown_kib, grown_kib)
        getrusage.max_kib = grown_kib
        assert probe.rss_and_peak(hold_gil=hold_gil) == (grown_kib * 1024, grown_kib * 1024)  # status shows the growth
        (tmp_path / "status").write_bytes(GARBLED_STATUS)
        assert probe.rss_and_peak(hold_gil=hold_gil) == (grown_kib * 1024, grown_kib * 1024)
        assert getrusage.calls == 2
    finally:
        probe.close()


@pytest.mark.parametrize("maximum_kib", [0, 100])
def test_proc_self_rss_keeps_the_cheap_reads_off_where_getrusage_reports_less_than_vmhwm(tmp_path, maximum_kib) -> None:
    # A layer that emulates Linux and reports no (or a tiny) maximum would
    # otherwise prove every peak equal to the RSS.
    getrusage = FakeGetrusage(maximum_kib)
    probe = _probe(tmp_path, 1000, getrusage)
    try:
        _status(tmp_path, 1000 * PAGE_KIB, 1500 * PAGE_KIB)
        assert probe.rss_and_peak() == (1000 * PAGE_KIB * 1024, 1500 * PAGE_KIB * 1024)
        assert getrusage.calls == 0
    finally:
        probe.close()


@pytest.mark.skipif(not hasattr(os, "fork") or not os.path.exists("/proc/self/status"), reason="needs fork and /proc")
def test_proc_self_rss_cheap_reads_agree_with_status_in_a_real_process() -> None:
    # In a forked child: its mark kept apart starts at zero (a thread of this
    # test process may have exited at a higher mark), so after a reset the
    # cheap reads can answer, and must agree with the status file.
    from jupyterlab_vram_helper.sampling.readers.kernel_rss import _rss_and_high_water

    probe = ProcSelfRss()

    def in_child():
        status_reads = []
        read_status = probe._read_status
        probe._read_status = lambda: status_reads.append(1) or read_status()
        if not probe.reset_peak():
            return {"skip": "this kernel refuses /proc/self/clear_refs"}
        probe.rss_and_peak()  # learns the child's state (status read where the proof fails)
        status_reads.clear()
        rss, peak = probe.rss_and_peak()
        with open("/proc/self/status", "rb") as f:
            status_rss, status_peak = _rss_and_high_water(f.read())
        return {
            "cheap": not status_reads,
            "rss": rss,
            "peak": peak,
            "status_rss": status_rss,
            "status_peak": status_peak,
        }

    result = in_forked_child(in_child)
    probe.close()
    if "skip" in result:
        pytest.skip(result["skip"])
    assert result["cheap"], result  # the cheap reads answered
    assert result["peak"] == result["rss"]
    assert abs(result["rss"] - result["status_rss"]) < 4 * MB
    assert abs(result["peak"] - result["status_peak"]) < 4 * MB


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
def test_proc_self_rss_in_a_forked_child_forgets_the_parents_mark(tmp_path) -> None:
    rss_kib = 1000 * PAGE_KIB
    getrusage = FakeGetrusage(rss_kib + 8192)
    probe = _probe(tmp_path, 1000, getrusage)
    probe.rss_and_peak()  # the parent learns a mark above its RSS: status alone from now on
    getrusage.max_kib = rss_kib

    def in_child():
        (tmp_path / "status").write_bytes(GARBLED_STATUS)
        return probe.rss_and_peak()

    child = in_forked_child(in_child)
    probe.close()
    # the child reopened its files and tried the cheap reads again: they answered (status is garbled there)
    assert child == [rss_kib * 1024, rss_kib * 1024]
