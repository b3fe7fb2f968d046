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
