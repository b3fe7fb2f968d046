"""stop_process against real child processes of the test: SIGTERM, SIGKILL, and every refusal."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Iterator
from typing import Any

import pytest

from jupyterlab_vram_helper.cleanup.stop_process import stop_process
from jupyterlab_vram_helper.protocol import RequestError, parse_request
from jupyterlab_vram_helper.sampling.processes.proc_files import read_cmdline, read_stat
from jupyterlab_vram_helper.sampling.processes.process_tree import ProcessTreeReader

IGNORES_TERM = (
    "import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); print('ready', flush=True); time.sleep(60)"
)


def _memory() -> Any:
    return {"totals": None, "available_bytes": None, "gpus": []}


@pytest.fixture
def children() -> Iterator[list[subprocess.Popen]]:
    started: list[subprocess.Popen] = []
    yield started
    for child in started:
        if child.poll() is None:
            child.kill()
        child.wait()


def _start(children: list[subprocess.Popen], *argv: str) -> tuple[subprocess.Popen, int]:
    child = subprocess.Popen(argv, stdout=subprocess.PIPE)
    children.append(child)
    # Right after its exec, a process has its new name and, for a moment, no arguments yet.
    deadline = time.monotonic() + 5
    while child.poll() is None and read_cmdline("/proc", child.pid) == [] and time.monotonic() < deadline:
        time.sleep(0.005)
    stat = read_stat("/proc", child.pid)
    assert stat is not None
    return child, stat.start_time


def test_a_child_ends_on_sigterm_and_stays_a_zombie_until_its_owner_waits(children) -> None:
    child, start_time = _start(children, "sleep", "60")
    result = stop_process(ProcessTreeReader(), _memory, child.pid, start_time, 5.0)
    assert (result["outcome"], result["refusal"], result["signals"]) == ("terminated", None, ["SIGTERM"])
    assert result["process"] is not None and result["process"]["command"] == "sleep 60"
    assert result["still_zombie"]  # the helper never reaps: Popen does
    assert child.wait(5) == -15


def test_a_child_that_ignores_sigterm_gets_sigkill(children) -> None:
    child, start_time = _start(children, sys.executable, "-c", IGNORES_TERM)
    assert child.stdout is not None and child.stdout.readline() == b"ready\n"
    result = stop_process(ProcessTreeReader(), _memory, child.pid, start_time, 0.3)
    assert (result["outcome"], result["signals"]) == ("killed", ["SIGTERM", "SIGKILL"])
    assert result["waited_s"] >= 0.3
    assert child.wait(5) == -9


def test_another_start_time_is_another_process_and_nothing_is_signalled(children) -> None:
    child, start_time = _start(children, "sleep", "60")
    result = stop_process(ProcessTreeReader(), _memory, child.pid, start_time + 1, 5.0)
    assert (result["outcome"], result["refusal"], result["signals"]) == ("refused", "reused", [])
    assert "nothing was signalled" in (result["reason"] or "")
    time.sleep(0.1)
    assert child.poll() is None


def test_an_ended_child_the_kernel_itself_and_other_processes_are_refused(children) -> None:
    child, start_time = _start(children, "sleep", "60")
    child.kill()
    child.wait(5)
    tree = ProcessTreeReader()
    assert stop_process(tree, _memory, child.pid, start_time, 5.0)["refusal"] == "gone"
    me = read_stat("/proc", os.getpid())
    assert me is not None
    assert stop_process(tree, _memory, os.getpid(), me.start_time, 5.0)["refusal"] == "kernel"
    init = read_stat("/proc", 1)
    assert init is not None
    assert stop_process(tree, _memory, 1, init.start_time, 5.0)["refusal"] == "not_descendant"


@pytest.mark.parametrize(
    "fields",
    [
        {},
        {"pid": 5},
        {"start_time": 5},
        {"pid": True, "start_time": 1},
        {"pid": 0, "start_time": 1},
        {"pid": 5, "start_time": -1},
        {"pid": 5, "start_time": 1, "timeout_s": 0},
        {"pid": 5, "start_time": 1, "timeout_s": "5"},
    ],
)
def test_a_malformed_stop_is_answered_with_malformed(fields: dict) -> None:
    with pytest.raises(RequestError) as caught:
        parse_request({"type": "stop_process", "request_id": "r", **fields})
    assert caught.value.code == "malformed" and caught.value.request_id == "r"


def test_a_stop_request_is_read_with_its_default_timeout() -> None:
    request = parse_request({"type": "stop_process", "request_id": "r", "pid": 5, "start_time": 9.0})
    assert request.args == {"pid": 5, "start_time": 9, "timeout_s": 5.0}
