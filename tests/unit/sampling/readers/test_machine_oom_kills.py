"""The machine's OOM kill count: ``oom_kill`` of /proc/vmstat, read at the machine pace, and the sample a rise sends.

Fake /proc trees (the line present, absent, malformed; no vmstat at all), and this machine's real /proc/vmstat.
"""

from __future__ import annotations

import os
import types
from pathlib import Path

import pytest
from fakes import FakeComm

from jupyterlab_vram_helper.config import SamplerConfig
from jupyterlab_vram_helper.sampling.readers.cgroup import CgroupMemory
from jupyterlab_vram_helper.sampling.readers.host import HostReader
from jupyterlab_vram_helper.sampling.readers.nvml import NvmlReader
from jupyterlab_vram_helper.sampling.sample import SampleSource, significant_change
from jupyterlab_vram_helper.sampling.sampler import Sampler

MIB = 1 << 20
MEMINFO = "MemTotal:       16000000 kB\nMemFree:          100000 kB\nMemAvailable:    8000000 kB\n"


def _vmstat(oom_kill: str | None = "41") -> str:
    """A vmstat shaped like Linux 6.x's (oom_kill some 120 lines in); None: no such line (Linux < 4.13)."""
    head = "".join(f"nr_counter_{i} {i * 1000}\n" for i in range(120))
    tail = "".join(f"pgcounter_{i} {i}\n" for i in range(60))
    return head + (f"oom_kill {oom_kill}\n" if oom_kill is not None else "") + tail


def _proc(tmp_path: Path, vmstat: str | None = None) -> Path:
    proc = tmp_path / "proc"
    (proc / "7").mkdir(parents=True)
    (proc / "7" / "statm").write_text("1000 250 30 1 0 100 0\n")
    (proc / "meminfo").write_text(MEMINFO)
    if vmstat is not None:
        (proc / "vmstat").write_text(vmstat)
    return proc


def _reader(proc: Path, now: list) -> HostReader:
    cgroup = CgroupMemory(str(proc / "7"), str(proc / "no-cgroup-fs"))
    return HostReader(pid=7, proc_root=str(proc), use_psutil=False, clock=lambda: now[0], cgroup=cgroup)


# --- reading it ------------------------------------------------------------------------------


def test_the_machines_oom_kill_count_is_read_from_vmstat(tmp_path) -> None:
    r = _reader(_proc(tmp_path, _vmstat("41")), [0.0])
    figures = r.read()
    assert figures["oom_kill_count"] == 41
    assert figures["total_bytes"] == 16000000 * 1024  # beside the machine's other figures
    r.close()
    assert r.read()["oom_kill_count"] is None  # closed: unknown, never an exception


def test_it_is_read_at_the_machine_pace_from_a_file_kept_open(tmp_path, monkeypatch) -> None:
    proc = _proc(tmp_path, _vmstat("41"))
    now = [100.0]
    r = _reader(proc, now)
    assert r.read()["oom_kill_count"] == 41
    (proc / "vmstat").write_text(_vmstat("42"))  # written in place: the open descriptor sees it
    read_fds = []
    real_pread = os.pread

    def counting_pread(fd: int, size: int, offset: int) -> bytes:
        read_fds.append((fd, size))
        return real_pread(fd, size, offset)

    monkeypatch.setattr(os, "pread", counting_pread)
    now[0] += 0.9
    assert r.read()["oom_kill_count"] == 41  # within the second: as read before
    assert r._vmstat not in [fd for fd, _ in read_fds]
    now[0] += 0.1
    assert r.read()["oom_kill_count"] == 42
    assert (r._vmstat, HostReader.VMSTAT_READ_BYTES) in read_fds  # pread, at the machine pace


def test_the_descriptor_is_closed_with_the_reader(tmp_path) -> None:
    if not os.path.isdir("/proc/self/fd"):
        pytest.skip("no /proc/self/fd to count descriptors in")
    proc = _proc(tmp_path, _vmstat())
    before = len(os.listdir("/proc/self/fd"))
    r = _reader(proc, [0.0])
    assert r._vmstat is not None
    r.close()
    assert len(os.listdir("/proc/self/fd")) == before


def test_no_vmstat_is_unknown_and_the_rest_still_reads(tmp_path) -> None:
    figures = _reader(_proc(tmp_path, None), [0.0]).read()  # not Linux's /proc, or a sandbox without it
    assert figures["oom_kill_count"] is None
    assert figures["available_bytes"] == 8000000 * 1024


def test_a_vmstat_without_the_line_is_unknown_not_zero(tmp_path) -> None:
    # Linux before 4.13 counted no OOM kills: nothing says the killer did not act.
    assert _reader(_proc(tmp_path, _vmstat(None)), [0.0]).read()["oom_kill_count"] is None


def test_zero_is_a_count(tmp_path) -> None:
    assert _reader(_proc(tmp_path, _vmstat("0")), [0.0]).read()["oom_kill_count"] == 0


@pytest.mark.parametrize("value", ["-1", "abc", "", "1.5", "4_2", "+5", "0x10", "\\xff", "12 34"])
def test_a_malformed_count_is_unknown_never_an_exception(tmp_path, value) -> None:
    proc = _proc(tmp_path, _vmstat(value))
    path = proc / "vmstat"
    path.write_bytes(path.read_bytes().replace(b"\\xff", b"\xff"))  # the kernel's files are bytes
    figures = _reader(proc, [0.0]).read()
    assert figures["oom_kill_count"] is None
    assert figures["total_bytes"] == 16000000 * 1024  # the other figures are untouched


def test_a_last_line_without_a_newline_reads_and_one_cut_short_by_the_read_does_not(tmp_path) -> None:
    proc = _proc(tmp_path, "nr_free_pages 5\noom_kill 7")  # the file ends there: the figure is whole
    assert _reader(proc, [0.0]).read()["oom_kill_count"] == 7
    size = HostReader.VMSTAT_READ_BYTES
    # oom_kill 123 straddles the end of what one read takes: "oom_kill 12" is no figure to send.
    pad = "x" * (size - len("oom_kill 12") - 1) + "\n"
    (proc / "vmstat").write_text(pad + "oom_kill 123\nnr_other 1\n")
    assert _reader(proc, [0.0]).read()["oom_kill_count"] is None
    # Wholly past what one read takes: unknown too.
    (proc / "vmstat").write_text("y" * size + "\noom_kill 9\n")
    assert _reader(proc, [0.0]).read()["oom_kill_count"] is None


def test_a_key_that_only_starts_with_oom_kill_is_not_it(tmp_path) -> None:
    proc = _proc(tmp_path, "oom_kill_total 5\noom_kills 6\nnr_oom_kill 8\noom_kill 3\n")
    assert _reader(proc, [0.0]).read()["oom_kill_count"] == 3


def test_the_psutil_backend_has_no_count(tmp_path) -> None:
    pytest.importorskip("psutil")
    r = HostReader(proc_root=str(tmp_path / "no-proc-here"))
    assert r.backend == "psutil"
    figures = r.read()
    assert "oom_kill_count" in figures and figures["oom_kill_count"] is None


def test_this_machines_real_proc_vmstat() -> None:
    """The count the reader gives is what /proc/vmstat says (it only rises: between a reading before and after)."""
    if not os.path.exists("/proc/vmstat"):
        pytest.skip("no Linux /proc/vmstat")

    def count_in_file() -> int | None:
        with open("/proc/vmstat") as f:
            for line in f:
                key, _, value = line.partition(" ")
                if key == "oom_kill":
                    return int(value)
        return None

    before = count_in_file()
    reader = HostReader(use_psutil=False)
    try:
        count = reader.read()["oom_kill_count"]
    finally:
        reader.close()
    after = count_in_file()
    if before is None:  # a Linux before 4.13: no such line, and the reader says unknown
        assert count is None and after is None
    else:
        assert type(count) is int and count >= 0
        assert before <= count <= after  # type: ignore[operator]


# --- which changes of it cause a sample --------------------------------------------------------


def _figures(
    oom_kills: int | None = 41, available: int = 8000 * MIB, rss: int = 100 * MIB, with_count: bool = True
) -> dict:
    host = {
        "rss_bytes": rss,
        "total_bytes": 16000 * MIB,
        "available_bytes": available,
        "container": None,
        "swapped_bytes": 0,
        "swap_total_bytes": 0,
        "swap_free_bytes": 0,
    }
    if with_count:
        host["oom_kill_count"] = oom_kills
    return {
        "host": host,
        "torch": {"imported": False, "cuda_initialized": False},
        "tensorflow": {"imported": False, "gpus_initialized": False},
        "gpus": [],
        "hidden_gpus": None,
    }


def test_a_rise_of_the_count_is_worth_a_sample() -> None:
    assert significant_change(_figures(41), _figures(42), MIB)
    assert significant_change(_figures(41, available=100 * MIB), _figures(45, available=100 * MIB), MIB)


def test_nothing_else_about_the_count_costs_a_sample() -> None:
    base = _figures(41)
    assert not significant_change(base, _figures(41), MIB)
    assert not significant_change(base, _figures(40), MIB)  # never happens on one machine: not news
    assert not significant_change(base, _figures(None), MIB)  # a reading failed
    assert not significant_change(_figures(None), base, MIB)  # ... and came back
    assert not significant_change(_figures(with_count=False), base, MIB)  # the key came
    assert not significant_change(base, _figures(with_count=False), MIB)  # ... or went
    assert not significant_change(_figures(False), _figures(True), MIB)  # not counts at all
    # The kernel's own figures still count beside it.
    assert significant_change(base, _figures(41, rss=300 * MIB), MIB)


def test_the_rise_counts_in_figures_that_are_not_plain_dicts() -> None:
    before, now = _figures(41), _figures(42)
    proxy = types.MappingProxyType
    assert significant_change(proxy(before), proxy(now), MIB)
    assert not significant_change(proxy(before), proxy(_figures(41)), MIB)
    assert not significant_change(proxy(before), proxy(_figures(None)), MIB)


class _Clock:
    def __init__(self) -> None:
        self.t = 1000.0

    def __call__(self) -> float:
        return self.t


def test_a_sampler_sends_a_sample_when_the_count_rises_and_not_otherwise(tmp_path) -> None:
    """Another process's OOM kill while the kernel lives reaches the frontend within the machine pace, in a sample
    of its own: then the kernel's last sample carries it, and a later rise is not mistaken for it."""
    proc = _proc(tmp_path, _vmstat("41"))
    clock = _Clock()
    host = HostReader(
        pid=7,
        proc_root=str(proc),
        use_psutil=False,
        clock=clock,
        cgroup=CgroupMemory(str(proc / "7"), str(proc / "no-cgroup-fs")),
    )
    source = SampleSource(host=host, nvml=NvmlReader(load=lambda: None), clock=clock)
    comm = FakeComm()
    sampler = Sampler(source, _Outlet(comm), SamplerConfig(interval_s=0.1, heartbeat_s=60), clock=clock)
    sampler.emit([comm], "initial")
    for _ in range(30):  # three seconds of ticks, the count flat: nothing to send
        clock.t += 0.1
        sampler.tick()
    assert [m["reason"] for m in comm.sent] == ["initial"]
    (proc / "vmstat").write_text(_vmstat("42"))
    for _ in range(10):  # within the next second the reader sees it, and that tick sends
        clock.t += 0.1
        sampler.tick()
    assert [m["reason"] for m in comm.sent] == ["initial", "change"]
    assert comm.sent[-1]["host"]["oom_kill_count"] == 42
    (proc / "vmstat").write_text(_vmstat(None))  # unreadable now: no sample for that
    for _ in range(20):
        clock.t += 0.1
        sampler.tick()
    assert [m["reason"] for m in comm.sent] == ["initial", "change"]
    host.close()


class _Outlet:
    def __init__(self, comm: FakeComm) -> None:
        self.comm = comm

    def targets(self):
        return (self.comm,)

    def send(self, target, message) -> None:
        target.send(data=message)

    def report_error(self, message: str) -> None:
        raise AssertionError(message)
