"""The host reader: psutil without /proc, the /proc fallback, machine figures at most once a
second, unreadable figures as null, and this machine's /proc against psutil."""

import pytest
from fakes import known

from jupyterlab_vram_helper.sampling.readers.host import HostReader


def test_host_psutil_without_proc(tmp_path) -> None:
    pytest.importorskip("psutil")
    r = HostReader(proc_root=str(tmp_path / "no-proc-here"))
    assert r.backend == "psutil"
    figures = r.read()
    assert known(figures["rss_bytes"]) > 1 << 20
    assert 0 < known(figures["available_bytes"]) <= known(figures["total_bytes"])


def test_host_proc_fallback(tmp_path) -> None:
    (tmp_path / "123").mkdir()
    (tmp_path / "123" / "statm").write_text("1000 250 30 1 0 100 0\n")
    (tmp_path / "meminfo").write_text("MemTotal:       16000 kB\nMemFree:  100 kB\nMemAvailable:    8000 kB\n")
    r = HostReader(pid=123, proc_root=str(tmp_path), use_psutil=False)
    assert r.backend == "proc"
    import os

    assert r.read() == {
        "rss_bytes": 250 * os.sysconf("SC_PAGE_SIZE"),
        "total_bytes": 16000 * 1024,
        "available_bytes": 8000 * 1024,
        "container": None,
        # a meminfo without swap lines and no status file: unknown, not 0; no vmstat either
        "swapped_bytes": None,
        "swap_total_bytes": None,
        "swap_free_bytes": None,
        "oom_kill_count": None,
    }


def test_host_machine_figures_are_read_at_most_once_a_second(tmp_path) -> None:
    (tmp_path / "5").mkdir()
    (tmp_path / "5" / "statm").write_text("1000 250 30 1 0 100 0\n")
    meminfo = tmp_path / "meminfo"
    meminfo.write_text("MemTotal:       16000 kB\nMemFree:  100 kB\nMemAvailable:    8000 kB\n")
    now = [10.0]
    r = HostReader(pid=5, proc_root=str(tmp_path), use_psutil=False, clock=lambda: now[0])
    assert r.read()["available_bytes"] == 8000 * 1024
    meminfo.write_text("MemTotal:       16000 kB\nMemFree:  100 kB\nMemAvailable:    6000 kB\n")
    (tmp_path / "5" / "statm").write_text("1000 260 30 1 0 100 0\n")
    now[0] += 0.9
    figures = r.read()
    assert figures["available_bytes"] == 8000 * 1024  # within the second: as read before
    assert figures["rss_bytes"] == 260 * __import__("os").sysconf("SC_PAGE_SIZE")  # the kernel's own: every time
    now[0] += 0.1
    assert r.read()["available_bytes"] == 6000 * 1024


def test_host_unreadable_is_null(tmp_path) -> None:
    r = HostReader(pid=1, proc_root=str(tmp_path), use_psutil=False)
    assert r.read() == {
        "rss_bytes": None,
        "total_bytes": None,
        "available_bytes": None,
        "container": None,
        "swapped_bytes": None,
        "swap_total_bytes": None,
        "swap_free_bytes": None,
        "oom_kill_count": None,
    }


def test_real_proc_matches_psutil() -> None:
    psutil = pytest.importorskip("psutil")
    if not __import__("os").path.exists("/proc/self/statm"):
        pytest.skip("no /proc")
    reader = HostReader()
    assert reader.backend == "proc"  # /proc wins where it exists: far cheaper per tick
    proc = reader.read()
    assert abs(proc["rss_bytes"] - psutil.Process().memory_info().rss) < 32 << 20
    assert proc["total_bytes"] == psutil.virtual_memory().total
    assert abs(proc["available_bytes"] - psutil.virtual_memory().available) < 256 << 20
    reader.close()
    assert reader.read() == {
        "rss_bytes": None,
        "total_bytes": None,
        "available_bytes": None,
        "container": None,
        "swapped_bytes": None,
        "swap_total_bytes": None,
        "swap_free_bytes": None,
        "oom_kill_count": None,
    }
