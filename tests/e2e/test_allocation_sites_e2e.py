"""Recording allocations and live memory by notebook line, end to end: a real ipykernel,
real NumPy and CPU torch, the helper bootstrapped as the frontend does."""

from __future__ import annotations

import itertools
import time
from typing import Any

import pytest
from kernel_harness import Kernel, attach_helper

pytestmark = pytest.mark.kernel

QUIET = {"interval_s": 30.0, "heartbeat_s": 60.0}
_ids = itertools.count()


def request(kernel: Kernel, comm_id: str, data: dict[str, Any], timeout: float = 60) -> dict[str, Any]:
    answer = kernel.request(comm_id, dict(data, request_id=f"a{next(_ids)}"), timeout=timeout)
    return answer


def reply(kernel: Kernel, comm_id: str, data: dict[str, Any], timeout: float = 60) -> dict[str, Any]:
    answer = request(kernel, comm_id, data, timeout)
    assert answer["type"] == "reply", answer
    assert answer["request_type"] == data["type"]
    return answer["result"]


def run(kernel: Kernel, code: str, cell_id: str) -> int:
    result = kernel.execute(code, timeout=120, cell_id=cell_id)
    assert result["status"] == "ok", result
    return result["execution_count"]


def host_sites(listing: dict[str, Any]) -> list[dict[str, Any]]:
    devices = [d for d in listing["devices"] if d["device"] == "host"]
    assert len(devices) == 1, listing["devices"]
    return devices[0]["sites"]


def test_arrays_are_charged_to_their_cell_and_line(kernel: Kernel, bootstrap: str) -> None:
    comm_id = attach_helper(kernel, bootstrap, QUIET)
    run(kernel, "import numpy as np\nimport tracemalloc\n", cell_id="cell-import")
    state = reply(kernel, comm_id, {"type": "record_allocations", "enabled": True})
    assert state["enabled"] is True
    assert state["host"]["state"] == "recording" and state["host"]["frames"] == 16
    assert state["host"]["overhead_bytes"] > 0
    # torch is not imported: the GPU part waits, it never imports torch
    assert state["gpu"]["state"] == "waiting" and "torch is not imported" in state["gpu"]["reason"]
    pushed = kernel.comm_data(comm_id, "allocation_recording")
    assert pushed and pushed[-1]["recording"] == state

    count = run(
        kernel,
        "def make(n):\n"
        "    return np.ones(n, dtype=np.float64)\n"
        "big = np.zeros(4_000_000, dtype=np.float64)\n"  # line 3: 32 MB
        "small = [np.ones(250_000) for _ in range(8)]\n"  # line 4: 8 x 2 MB
        "via_function = make(1_000_000)\n",  # line 5 -> charged to line 2 (inside make)
        cell_id="cell-alloc",
    )
    start = len(kernel.output_messages())
    listing = reply(kernel, comm_id, {"type": "allocation_sites", "max_sites": 50})
    assert kernel.output_messages()[start:] == []
    sites = host_sites(listing)
    by_line = {s["cell"]["line"]: s for s in sites if s["cell"] is not None and s["cell"]["cell_id"] == "cell-alloc"}
    assert set(by_line) >= {2, 3, 4}, sites[:5]
    line3 = by_line[3]
    assert line3["cell"]["execution_count"] == count
    assert abs(line3["bytes"] - 32_000_000) <= 0.05 * 32_000_000
    assert line3["code"] == "big = np.zeros(4_000_000, dtype=np.float64)"
    assert abs(by_line[4]["bytes"] - 16_000_000) <= 0.05 * 16_000_000
    assert by_line[4]["count"] >= 8
    assert abs(by_line[2]["bytes"] - 8_000_000) <= 0.05 * 8_000_000
    # largest first
    assert sites[0] is line3 or sites[0]["bytes"] >= line3["bytes"]
    assert [s["bytes"] for s in sites] == sorted((s["bytes"] for s in sites), reverse=True)
    # per cell: what this cell allocated and still holds
    cells = {c["cell_id"]: c for c in listing["cells"]}
    alive = cells["cell-alloc"]["alive_bytes"]["host"]
    assert abs(alive - 56_000_000) <= 0.05 * 56_000_000

    # Freed memory leaves the listing.
    run(kernel, "del big\n", cell_id="cell-del")
    sites = host_sites(reply(kernel, comm_id, {"type": "allocation_sites"}))
    assert not [s for s in sites if s["cell"] and s["cell"]["cell_id"] == "cell-alloc" and s["cell"]["line"] == 3]

    # Off: tracemalloc stopped, the hook gone, the namespace as it was.
    names_before = kernel.eval("sorted(k for k in globals() if not k.startswith('_'))")
    state = reply(kernel, comm_id, {"type": "record_allocations", "enabled": False})
    assert state["enabled"] is False and state["host"]["state"] == "off" and state["gpu"]["state"] == "off"
    assert kernel.eval("tracemalloc.is_tracing()") is False
    for event in ("pre_run_cell", "post_run_cell"):
        assert (
            kernel.eval(
                f"[getattr(c, '__qualname__', '') for c in get_ipython().events.callbacks['{event}']"
                " if 'AllocationSites' in getattr(c, '__qualname__', '')]"
            )
            == []
        )
    assert kernel.eval("sorted(k for k in globals() if not k.startswith('_'))") == names_before
    listing = reply(kernel, comm_id, {"type": "allocation_sites"})
    assert listing["devices"] == [] and listing["cells"] == []


def test_a_library_allocation_is_charged_to_the_notebook_line_with_the_library_frame(
    kernel: Kernel, bootstrap: str
) -> None:
    comm_id = attach_helper(kernel, bootstrap, QUIET)
    run(kernel, "import json\n", cell_id="c1")
    reply(kernel, comm_id, {"type": "record_allocations", "enabled": True, "host_frames": 32})
    # the json module allocates the list and strings: the notebook line is charged
    run(kernel, "x = 1\ndata = json.loads('[' + ','.join(['\"' + 'y' * 1000 + '\"'] * 5000) + ']')\n", cell_id="c2")
    sites = host_sites(reply(kernel, comm_id, {"type": "allocation_sites"}))
    line2 = [s for s in sites if s["cell"] and s["cell"]["cell_id"] == "c2" and s["cell"]["line"] == 2]
    assert line2 and line2[0]["bytes"] >= 5_000_000
    assert line2[0]["library_frame"] is not None and line2[0]["library_frame"]["filename"].endswith(".py")
    reply(kernel, comm_id, {"type": "record_allocations", "enabled": False})


def _cell_sites(listing: dict[str, Any], cell_id: str) -> dict[int, dict[str, Any]]:
    return {
        s["cell"]["line"]: s
        for s in host_sites(listing)
        if s["cell"] is not None and s["cell"]["cell_id"] == cell_id and s["bytes"] >= 1_000_000
    }


def test_a_timed_cell_charges_each_line_of_its_body(kernel: Kernel, bootstrap: str) -> None:
    # %%time runs its body as code of its own ('<timed exec>'), called from the
    # cell's first line: the body's lines are the cell's lines after the magic.
    comm_id = attach_helper(kernel, bootstrap, QUIET)
    run(kernel, "import numpy as np\n", cell_id="c0")
    reply(kernel, comm_id, {"type": "record_allocations", "enabled": True})
    count = run(kernel, "%%time\nx = 1\ntimed = np.zeros(3_000_000)\nalso = np.ones(1_000_000)\n", cell_id="c-timed")
    run(kernel, "y = 2\n%time line_timed = np.zeros(2_000_000)\n", cell_id="c-line-timed")
    listing = reply(kernel, comm_id, {"type": "allocation_sites", "max_sites": 50})
    timed = _cell_sites(listing, "c-timed")
    assert sorted(timed) == [3, 4], timed
    assert abs(timed[3]["bytes"] - 24_000_000) <= 0.05 * 24_000_000
    assert timed[3]["cell"]["execution_count"] == count
    assert timed[3]["code"] == "timed = np.zeros(3_000_000)"
    assert timed[4]["code"] == "also = np.ones(1_000_000)"
    line_timed = _cell_sites(listing, "c-line-timed")
    assert sorted(line_timed) == [2], line_timed
    assert abs(line_timed[2]["bytes"] - 16_000_000) <= 0.05 * 16_000_000
    reply(kernel, comm_id, {"type": "record_allocations", "enabled": False})


def test_code_a_cell_runs_through_run_cell_is_charged_to_that_cell(kernel: Kernel, bootstrap: str) -> None:
    # %%capture and get_ipython().run_cell compile the code they run as a
    # cell of its own, registered under the shell's count as it is then:
    # the next cell's. Its memory belongs to the cell that ran it.
    comm_id = attach_helper(kernel, bootstrap, QUIET)
    run(kernel, "import numpy as np\n", cell_id="c0")
    reply(kernel, comm_id, {"type": "record_allocations", "enabled": True})
    capture_count = run(kernel, "%%capture\ncap = np.zeros(2_000_000)\n", cell_id="c-capture")
    nested_count = run(kernel, "x = 1\nget_ipython().run_cell('nested = np.zeros(1_500_000)')\n", cell_id="c-nested")
    run(kernel, "z = 1\n", cell_id="c-next")
    # A cell later run with the same source as a nested one is charged to itself.
    same_count = run(kernel, "nested2 = np.zeros(1_250_000)\n", cell_id="c-warm")
    run(kernel, "get_ipython().run_cell('nested2 = np.zeros(1_250_000)')\n", cell_id="c-runs-same")
    again_count = run(kernel, "nested2 = np.zeros(1_250_000)\n", cell_id="c-same-source")
    listing = reply(kernel, comm_id, {"type": "allocation_sites", "max_sites": 50})
    assert _cell_sites(listing, "c-next") == {}
    capture = _cell_sites(listing, "c-capture")
    assert [s["cell"]["execution_count"] for s in capture.values()] == [capture_count], capture
    assert abs(sum(s["bytes"] for s in capture.values()) - 16_000_000) <= 0.05 * 16_000_000
    nested = _cell_sites(listing, "c-nested")
    assert [s["cell"]["execution_count"] for s in nested.values()] == [nested_count], nested
    assert abs(sum(s["bytes"] for s in nested.values()) - 12_000_000) <= 0.05 * 12_000_000
    same = _cell_sites(listing, "c-same-source")
    assert [s["cell"]["execution_count"] for s in same.values()] == [again_count], same
    assert abs(sum(s["bytes"] for s in same.values()) - 10_000_000) <= 0.05 * 10_000_000
    assert same_count < again_count
    reply(kernel, comm_id, {"type": "record_allocations", "enabled": False})


def test_lines_are_the_cells_as_the_user_sees_them(kernel: Kernel, bootstrap: str) -> None:
    # IPython drops a cell's leading blank lines before compiling it, and
    # compiles a cell magic's body alone: line 1 of that code is not line 1
    # of the cell in the notebook, where "Go to line" puts the cursor.
    comm_id = attach_helper(kernel, bootstrap, QUIET)
    run(kernel, "import numpy as np\n", cell_id="c0")
    reply(kernel, comm_id, {"type": "record_allocations", "enabled": True})
    run(kernel, "\n  \nblank = np.zeros(2_000_000)\n", cell_id="c-blank")
    # As JupyterLab sends a cell: without a newline at its end.
    run(kernel, "%%capture\nx = 1\ncaptured = np.zeros(1_500_000)", cell_id="c-capture")
    run(kernel, "\n%%capture\n\ncaptured2 = np.zeros(1_250_000)\n", cell_id="c-capture-blank")
    # The magic's line deleted: the same text as that body, now a cell of its own.
    run(kernel, "%%capture\nx = 1\nreused = np.zeros(1_100_000)\n", cell_id="c-was-captured")
    run(kernel, "x = 1\nreused = np.zeros(1_100_000)\n", cell_id="c-was-captured")
    listing = reply(kernel, comm_id, {"type": "allocation_sites", "max_sites": 50})
    blank = _cell_sites(listing, "c-blank")
    assert sorted(blank) == [3] and blank[3]["code"] == "blank = np.zeros(2_000_000)", blank
    captured = _cell_sites(listing, "c-capture")
    assert sorted(captured) == [3] and captured[3]["code"] == "captured = np.zeros(1_500_000)", captured
    captured2 = _cell_sites(listing, "c-capture-blank")
    assert sorted(captured2) == [4] and captured2[4]["code"] == "captured2 = np.zeros(1_250_000)", captured2
    reused = _cell_sites(listing, "c-was-captured")
    assert sorted(reused) == [2] and reused[2]["code"] == "reused = np.zeros(1_100_000)", reused
    reply(kernel, comm_id, {"type": "record_allocations", "enabled": False})


def test_tracemalloc_started_by_the_user_is_never_stopped(kernel: Kernel, bootstrap: str) -> None:
    comm_id = attach_helper(kernel, bootstrap, QUIET)
    run(kernel, "import tracemalloc\ntracemalloc.start(5)\n", cell_id="c1")
    state = reply(kernel, comm_id, {"type": "record_allocations", "enabled": True})
    assert state["host"]["state"] == "shared" and state["host"]["frames"] == 5
    reply(kernel, comm_id, {"type": "record_allocations", "enabled": False})
    assert kernel.eval("tracemalloc.is_tracing()") is True


def test_a_tracemalloc_the_user_stops_in_a_cell_starts_again_at_the_next(kernel: Kernel, bootstrap: str) -> None:
    comm_id = attach_helper(kernel, bootstrap, QUIET)
    run(kernel, "import tracemalloc\ntracemalloc.start(5)\n", cell_id="c1")
    first = reply(kernel, comm_id, {"type": "record_allocations", "enabled": True, "host_frames": 12})
    assert first["host"]["state"] == "shared" and first["host"]["frames"] == 5
    run(kernel, "tracemalloc.stop()\n", cell_id="c-stop")  # their profiling is done
    pushed = len(kernel.comm_data(comm_id, "allocation_recording"))
    start = len(kernel.output_messages())
    run(kernel, "after = bytearray(30_000_000)\n", cell_id="c-after")
    assert kernel.output_messages()[start:] == []
    assert kernel.eval("(tracemalloc.is_tracing(), tracemalloc.get_traceback_limit())") == (True, 12)
    states = kernel.comm_data(comm_id, "allocation_recording")[pushed:]
    assert states, "the restart was not broadcast"
    host = states[-1]["recording"]["host"]
    assert host["state"] == "recording" and host["frames"] == 12
    assert host["restart_reason"] == "stopped_elsewhere" and host["restarted_at"] == host["started"]
    listing = reply(kernel, comm_id, {"type": "allocation_sites"})
    lines = [s for s in host_sites(listing) if s["cell"] and s["cell"]["cell_id"] == "c-after"]
    assert lines and lines[0]["bytes"] >= 30_000_000  # the cell after the stop is attributed
    # Ours now: turning recording off stops it.
    reply(kernel, comm_id, {"type": "record_allocations", "enabled": False})
    assert kernel.eval("tracemalloc.is_tracing()") is False


def test_a_new_host_depth_while_recording_restarts_tracemalloc(kernel: Kernel, bootstrap: str) -> None:
    comm_id = attach_helper(kernel, bootstrap, QUIET)
    run(kernel, "import tracemalloc\n", cell_id="c1")
    first = reply(kernel, comm_id, {"type": "record_allocations", "enabled": True, "host_frames": 4})
    assert first["host"]["frames"] == 4 and first["host"]["restarted_at"] is None
    run(kernel, "before = bytearray(20_000_000)\n", cell_id="c-before")
    start = len(kernel.output_messages())
    state = reply(kernel, comm_id, {"type": "record_allocations", "enabled": True, "host_frames": 32})
    assert kernel.output_messages()[start:] == []
    host = state["host"]
    assert host["state"] == "recording" and host["frames"] == 32
    assert host["restarted_at"] is not None and host["restarted_at"] == host["started"] > first["host"]["started"]
    assert host["restart_reason"] == "frames" and first["host"]["restart_reason"] is None
    assert kernel.eval("tracemalloc.get_traceback_limit()") == 32
    # the GPU part is untouched (torch is not imported: it still waits)
    assert state["gpu"] == first["gpu"]
    pushed = kernel.comm_data(comm_id, "allocation_recording")
    assert pushed[-1]["recording"] == state
    run(kernel, "after = bytearray(30_000_000)\n", cell_id="c-after")
    listing = reply(kernel, comm_id, {"type": "allocation_sites"})
    cells = {s["cell"]["cell_id"] for s in host_sites(listing) if s["cell"] and s["bytes"] >= 1_000_000}
    # what was allocated before the restart has no trace any more; what came after has
    assert "c-after" in cells and "c-before" not in cells
    assert listing["recording"]["host"]["restarted_at"] == host["restarted_at"]
    reply(kernel, comm_id, {"type": "record_allocations", "enabled": False})


def test_malformed_requests_get_clear_errors(kernel: Kernel, bootstrap: str) -> None:
    comm_id = attach_helper(kernel, bootstrap, QUIET)
    start = len(kernel.output_messages())
    cases: list[tuple[dict[str, Any], str]] = [
        ({"type": "record_allocations"}, "field 'enabled'"),
        ({"type": "record_allocations", "enabled": 1}, "true or false"),
        ({"type": "record_allocations", "enabled": True, "host_frames": 0}, "host_frames"),
        ({"type": "record_allocations", "enabled": True, "gpu_max_entries": True}, "gpu_max_entries"),
        ({"type": "allocation_sites", "max_sites": "all"}, "max_sites"),
    ]
    for data, words in cases:
        answer = request(kernel, comm_id, data)
        assert answer["type"] == "error" and answer["code"] == "malformed", answer
        assert words in answer["message"]
    assert kernel.eval("__import__('tracemalloc').is_tracing()") is False
    snapshot = reply(kernel, comm_id, {"type": "allocation_snapshot"})
    assert snapshot["data_base64"] is None and "not being recorded" in snapshot["reason"]
    assert kernel.output_messages()[start:] == []


def test_torch_without_cuda_never_initialises_it(kernel: Kernel, bootstrap: str) -> None:
    pytest.importorskip("torch")
    comm_id = attach_helper(kernel, bootstrap, QUIET)
    run(kernel, "import torch\n", cell_id="c1")
    state = reply(kernel, comm_id, {"type": "record_allocations", "enabled": True})
    assert state["gpu"]["state"] == "waiting" and "CUDA is not initialised" in state["gpu"]["reason"]
    run(kernel, "t = torch.ones(1000)\n", cell_id="c2")
    listing = reply(kernel, comm_id, {"type": "allocation_sites"})
    assert [d["device"] for d in listing["devices"]] == ["host"]
    assert kernel.eval("torch.cuda.is_initialized()") is False
    reply(kernel, comm_id, {"type": "record_allocations", "enabled": False})


def _oom_record(kernel: Kernel, comm_id: str, code: str, cell_id: str) -> dict[str, Any]:
    start = len(kernel.comm_data(comm_id))
    reply_ = kernel.execute(code, timeout=120, cell_id=cell_id)
    assert reply_["status"] == "error"
    message = kernel.wait_for(
        comm_id,
        lambda d: d.get("type") == "cells" and any(r["cell_id"] == cell_id for r in d["records"]),
        timeout=30,
        start=start,
    )
    record = [r for r in message["records"] if r["cell_id"] == cell_id][-1]
    assert record["oom"] is not None, record
    return record["oom"]


def test_a_host_out_of_memory_lists_the_lines_holding_memory(kernel: Kernel, bootstrap: str) -> None:
    comm_id = attach_helper(kernel, bootstrap, QUIET)
    run(kernel, "import numpy as np\n", cell_id="c1")
    # Off: the diagnosis says nothing was recorded, so the UI can offer it.
    oom = _oom_record(kernel, comm_id, "raise MemoryError('Unable to allocate 8.00 EiB')\n", cell_id="c2")
    assert oom["allocation_sites"] == {"recording": False, "sites": []}

    reply(kernel, comm_id, {"type": "record_allocations", "enabled": True})
    run(kernel, "x = 1\nkept = np.ones(3_000_000)\n", cell_id="c3")  # 24 MB on line 2
    oom = _oom_record(kernel, comm_id, "raise MemoryError('Unable to allocate 8.00 EiB for an array')\n", cell_id="c4")
    sites = oom["allocation_sites"]
    assert sites["recording"] is True and 1 <= len(sites["sites"]) <= 5
    top = sites["sites"][0]
    assert top["cell"]["cell_id"] == "c3" and top["cell"]["line"] == 2
    assert abs(top["bytes"] - 24_000_000) <= 0.05 * 24_000_000
    reply(kernel, comm_id, {"type": "record_allocations", "enabled": False})


def test_a_numpy_array_that_failed_to_allocate_holds_nothing(kernel: Kernel, bootstrap: str) -> None:
    """NumPy reports a buffer it failed to get to tracemalloc all the same: neither the
    diagnosis nor the listing may charge those bytes to the line that failed."""
    comm_id = attach_helper(kernel, bootstrap, QUIET)
    run(kernel, "import numpy as np\n", cell_id="c1")
    reply(kernel, comm_id, {"type": "record_allocations", "enabled": True})
    run(kernel, "x = 1\nkept = np.ones(3_000_000)\n", cell_id="c2")  # 24 MB on line 2
    # 2**60 bytes: more than a process can map, refused whatever the overcommit policy.
    oom = _oom_record(kernel, comm_id, "y = 2\nhuge = np.empty(2**60, dtype=np.uint8)\n", cell_id="c3")
    top = oom["allocation_sites"]["sites"][0]
    assert (top["cell"]["cell_id"], top["cell"]["line"]) == ("c2", 2)
    assert all(site["bytes"] < 1 << 30 for site in oom["allocation_sites"]["sites"])
    listing = reply(kernel, comm_id, {"type": "allocation_sites"})
    host = [d for d in listing["devices"] if d["device"] == "host"][0]
    assert 24_000_000 <= host["total_bytes"] < 1 << 30
    assert not [s for s in host["sites"] if s["cell"] and s["cell"]["cell_id"] == "c3"]
    reply(kernel, comm_id, {"type": "record_allocations", "enabled": False})


def _cell_alive_after(kernel: Kernel, comm_id: str, code: str, cell_id: str) -> dict[str, Any]:
    """Run ``code`` as cell ``cell_id``; the entry of that cell in the next ``cell_alive`` message."""
    start = len(kernel.comm_data(comm_id))
    count = run(kernel, code, cell_id=cell_id)

    def this_run(c: dict[str, Any]) -> bool:
        return c["cell_id"] == cell_id and bool(c["runs"]) and c["runs"][-1]["execution_count"] == count

    # A message computed after this run (one for an earlier cell may come late: they are throttled).
    message = kernel.wait_for(
        comm_id,
        lambda d: d.get("type") == "cell_alive" and any(this_run(c) for c in d["cells"]),
        timeout=30,
        start=start,
    )
    return [c for c in message["cells"] if this_run(c)][0]


def test_a_cell_whose_live_memory_grows_at_each_run_is_flagged(kernel: Kernel, bootstrap: str) -> None:
    comm_id = attach_helper(kernel, bootstrap, QUIET)
    run(kernel, "import numpy as np\nfeatures = []\n", cell_id="setup")
    reply(kernel, comm_id, {"type": "record_allocations", "enabled": True})
    leak = "features.append(np.ones(500_000))  # 4 MB more at every run\n"
    steady = "batch = np.ones(500_000)  # rebound: the previous run's array is freed\n"
    for run_number in range(1, 4):
        grown = _cell_alive_after(kernel, comm_id, leak, cell_id="leaky")
        kept = _cell_alive_after(kernel, comm_id, steady, cell_id="steady")
        assert abs(grown["alive_bytes"]["host"] - run_number * 4_000_000) <= 0.05 * run_number * 4_000_000
        assert abs(kept["alive_bytes"]["host"] - 4_000_000) <= 0.05 * 4_000_000
        assert grown["growing"] is (run_number >= 3), grown
        assert kept["growing"] is False
    assert [r["total_bytes"] // 1_000_000 for r in grown["runs"]] == [4, 8, 12]
    listing = reply(kernel, comm_id, {"type": "allocation_sites"})
    flags = {c["cell_id"]: c["growing"] for c in listing["cells"]}
    assert flags["leaky"] is True and flags["steady"] is False
    reply(kernel, comm_id, {"type": "record_allocations", "enabled": False})


def test_a_leak_in_a_function_another_cell_defined_is_the_running_cells(kernel: Kernel, bootstrap: str) -> None:
    # The usual layout: the training step defined in one cell, called by a
    # loop cell run again and again. The line that allocates is the function's;
    # the bytes, and the growth, are the runs of the cell that calls it.
    comm_id = attach_helper(kernel, bootstrap, QUIET)
    run(kernel, "import numpy as np\nhistory = []\n", cell_id="setup")
    reply(kernel, comm_id, {"type": "record_allocations", "enabled": True})
    run(kernel, "def step():\n    x = np.ones(500_000)\n    history.append(x)\n    return x.sum()\n", cell_id="define")
    for run_number in range(1, 4):
        loop = _cell_alive_after(kernel, comm_id, "loss = step()\n", cell_id="loop")
        assert abs(loop["alive_bytes"]["host"] - run_number * 4_000_000) <= 0.05 * run_number * 4_000_000, loop
        assert loop["growing"] is (run_number >= 3), loop
    listing = reply(kernel, comm_id, {"type": "allocation_sites"})
    cells = {c["cell_id"]: c for c in listing["cells"]}
    assert cells["loop"]["growing"] is True, cells
    assert cells.get("define", {"total_bytes": 0})["total_bytes"] < 100_000, cells  # the function object, no more
    # The line holding the memory is still the function's.
    assert sorted(_cell_sites(listing, "define")) == [2]
    reply(kernel, comm_id, {"type": "record_allocations", "enabled": False})


def test_a_percent_run_line_shows_the_scripts_line_beneath_it(kernel: Kernel, bootstrap: str, tmp_path) -> None:
    # %run charges the script's allocations to its line in the cell; beneath
    # it, the script's own line, not IPython's machinery; the line as written.
    script = tmp_path / "load_data.py"
    script.write_text("import numpy as np\n\nloaded = np.zeros(2_000_000)\n")
    comm_id = attach_helper(kernel, bootstrap, QUIET)
    run(kernel, "import numpy as np\n", cell_id="c0")
    reply(kernel, comm_id, {"type": "record_allocations", "enabled": True})
    run(kernel, f"x = 1\n%run {script}\n", cell_id="c-run")
    listing = reply(kernel, comm_id, {"type": "allocation_sites", "max_sites": 50})
    sites = _cell_sites(listing, "c-run")
    assert sorted(sites) == [2], sites
    assert sites[2]["code"] == f"%run {script}"
    beneath = sites[2]["library_frame"]
    assert beneath is not None and beneath["filename"].endswith("load_data.py") and beneath["line"] == 3, beneath
    reply(kernel, comm_id, {"type": "record_allocations", "enabled": False})


def test_two_cells_with_the_same_code_are_both_named(kernel: Kernel, bootstrap: str) -> None:
    # ipykernel compiles a cell under a hash of its source: two cells with the
    # same code share one file, and their allocations cannot be told apart.
    comm_id = attach_helper(kernel, bootstrap, QUIET)
    run(kernel, "import numpy as np\nstore = []\n", cell_id="c0")
    reply(kernel, comm_id, {"type": "record_allocations", "enabled": True})
    code = "store.append(np.ones(1_500_000))\n"
    run(kernel, code, cell_id="pasted-a")
    latest = run(kernel, code, cell_id="pasted-b")
    run(kernel, "other = np.ones(1_250_000)\n", cell_id="alone")
    listing = reply(kernel, comm_id, {"type": "allocation_sites", "max_sites": 50})
    [shared] = [s for s in host_sites(listing) if s["cell"] and s["code"] == code.strip()]
    assert shared["cell"]["same_code_cells"] == ["pasted-a", "pasted-b"], shared
    assert shared["cell"]["execution_count"] == latest
    assert abs(shared["bytes"] - 24_000_000) <= 0.05 * 24_000_000
    [alone] = [
        s for s in host_sites(listing) if s["cell"] and s["cell"]["cell_id"] == "alone" and s["bytes"] > 1_000_000
    ]
    assert "same_code_cells" not in alone["cell"]
    reply(kernel, comm_id, {"type": "record_allocations", "enabled": False})


def test_code_run_through_run_cell_beside_a_subshell_cell_is_its_own_cells(kernel: Kernel, bootstrap: str) -> None:
    # A kernel subshell (ipykernel 7) runs its cell on a thread of its own
    # while the notebook's cell runs: what the notebook's cell runs through
    # run_cell is the notebook cell's, not the subshell's (started later).
    kernel.kc.control_channel.send(kernel.kc.session.msg("create_subshell_request", {}))
    answer = kernel.kc.get_control_msg(timeout=10)
    if answer["content"].get("status") != "ok":
        pytest.skip(f"this ipykernel has no subshells: {answer['content']}")
    comm_id = attach_helper(kernel, bootstrap, QUIET)
    run(kernel, "import numpy as np\nimport time\n", cell_id="c0")
    reply(kernel, comm_id, {"type": "record_allocations", "enabled": True})
    main = kernel.submit(
        "time.sleep(1.5)\nget_ipython().run_cell('nested_here = np.zeros(1_500_000)')\n", cell_id="notebook-cell"
    )
    time.sleep(0.5)
    content = {
        "code": "time.sleep(3)\n",
        "silent": False,
        "store_history": True,
        "user_expressions": {},
        "allow_stdin": False,
        "stop_on_error": True,
    }
    message = kernel.kc.session.msg("execute_request", content, metadata={"cellId": "subshell-cell"})
    message["header"]["subshell_id"] = answer["content"]["subshell_id"]
    kernel.kc.shell_channel.send(message)
    kernel.wait_reply(main, timeout=30)
    time.sleep(3)
    listing = reply(kernel, comm_id, {"type": "allocation_sites", "max_sites": 50})
    [nested] = [s for s in host_sites(listing) if s["code"] == "nested_here = np.zeros(1_500_000)"]
    assert nested["cell"]["cell_id"] == "notebook-cell", nested
    reply(kernel, comm_id, {"type": "record_allocations", "enabled": False})
