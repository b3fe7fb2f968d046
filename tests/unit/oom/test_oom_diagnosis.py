"""diagnose(): merging the message's figures with the state read afterwards, and naming the causes."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from fakes import known

from jupyterlab_vram_helper.oom.oom_diagnosis import (
    MAX_LISTED_PROCESSES,
    OomState,
    diagnose,
)
from jupyterlab_vram_helper.oom.oom_message import OomMessageFacts, parse_oom_message
from jupyterlab_vram_helper.protocol_types import OomDiagnosis

MIB = 1 << 20
GIB = 1 << 30
FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "oom_messages.json"
DIAGNOSIS_KEYS = {
    "kind",
    "library",
    "framework",
    "device_index",
    "requested_bytes",
    "total_bytes",
    "free_bytes",
    "allocated_bytes",
    "reserved_unallocated_bytes",
    "process_in_use_bytes",
    "other_processes_bytes",
    "other_processes",
    "capacity_bytes",
    "allowed_bytes",
    "num_alloc_retries",
    "stale_bytes",
    "stale_holders",
    "in_use_holders",
    "causes",
}


def state(**figures: Any) -> OomState:
    base: dict[str, Any] = {
        "device_index": None,
        "total_bytes": None,
        "free_bytes": None,
        "allocated_bytes": None,
        "reserved_bytes": None,
        "num_alloc_retries": None,
        "process_in_use_bytes": None,
        "other_processes": None,
        "stale_bytes": None,
        "stale_holders": [],
    }
    base.update(figures)
    return base  # type: ignore[return-value]


def facts(type_name: str, message: str) -> OomMessageFacts:
    parsed = parse_oom_message(type_name, message)
    assert parsed is not None
    return parsed


def fixture(source_part: str) -> OomMessageFacts:
    for entry in json.loads(FIXTURES.read_text(encoding="utf-8")):
        if source_part in entry["source"]:
            return facts(entry["type_name"], entry["message"])
    raise KeyError(source_part)


def causes(diagnosis: OomDiagnosis) -> list[str]:
    return [c["cause"] for c in diagnosis["causes"]]


def gain(diagnosis: OomDiagnosis, cause: str) -> int | None:
    return next(c["gain_bytes"] for c in diagnosis["causes"] if c["cause"] == cause)


def torch24(
    requested: str, total: str, free: str, allocated: str, unallocated: str, this: str | None = None, others: str = ""
) -> OomMessageFacts:
    this_line = f"Including non-PyTorch memory, this process has {this} memory in use. " if this else ""
    return facts(
        "OutOfMemoryError",
        f"CUDA out of memory. Tried to allocate {requested}. GPU 0 has a total capacity of {total} of which {free} "
        f"is free. {others}{this_line}Of the allocated memory {allocated} is allocated by PyTorch, and {unallocated} "
        "is reserved by PyTorch but unallocated. If reserved but unallocated memory is large try setting "
        "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid fragmentation.  See documentation for Memory "
        "Management  (https://pytorch.org/docs/stable/notes/cuda.html#environment-variables)",
    )


# --- one test per cause -----------------------------------------------------------------


def test_too_big_for_the_card() -> None:
    # torch.zeros(25 * 2**30, device="cuda") on an H100 with a fresh kernel.
    d = diagnose(torch24("100.00 GiB", "79.19 GiB", "78.60 GiB", "0 bytes", "0 bytes", this="500.00 MiB"), state())
    assert causes(d) == ["too_big"]
    assert d["causes"][0]["gain_bytes"] is None
    # ROCm, a real message: 16 GiB asked of a 15.24 GiB device that is all but empty.
    assert causes(diagnose(fixture("ROCm/TheRock/issues/1054"), state())) == ["too_big"]


def test_too_big_counts_what_other_processes_hold_and_the_memory_fraction() -> None:
    # Fits an empty 24 GiB card, not one where another kernel holds 20 GiB.
    others = "Process 777 has 20.00 GiB memory in use. "
    d = diagnose(
        torch24("6.00 GiB", "23.65 GiB", "2.90 GiB", "0 bytes", "0 bytes", this="300.00 MiB", others=others), state()
    )
    assert causes(d)[0] == "too_big"
    # What it was compared with: the card less the other kernel and this one's context.
    assert d["capacity_bytes"] == pytest.approx(23.65 * GIB - 20 * GIB - 300 * MIB, abs=MIB)
    assert d["allowed_bytes"] is None
    # torch 1.x with set_per_process_memory_fraction(0.1): 37.25 GiB asked, 2.37 GiB allowed.
    capped = diagnose(fixture("id 33269755434"), state())
    assert causes(capped)[0] == "too_big"
    assert capped["allowed_bytes"] == capped["capacity_bytes"]
    assert capped["allowed_bytes"] == pytest.approx(2.37 * GIB, abs=MIB)


def test_fragmentation() -> None:
    # Real torch 2.1 message: 1.70 GiB asked, 0 bytes free, 2.30 GiB reserved but unallocated.
    d = diagnose(fixture("carolchenyx/MGFN./issues/35"), state(stale_bytes=0))
    assert causes(d) == ["fragmentation"]
    assert gain(d, "fragmentation") == round(2.30 * GIB)
    assert d["reserved_unallocated_bytes"] == round(2.30 * GIB)


def test_stale_bytes_never_exceed_the_allocated_figure_shown_beside_them() -> None:
    # Seen on an H100: the message printed 78.00 GiB allocated (rounded); the
    # names, read after the failure, held 4 bytes more than that.
    d = diagnose(
        torch24("1024.00 MiB", "79.18 GiB", "586.19 MiB", "78.00 GiB", "0 bytes"),
        state(stale_bytes=78 * GIB + 4, allocated_bytes=78 * GIB + 512),
    )
    assert d["allocated_bytes"] == 78 * GIB
    assert d["stale_bytes"] == 78 * GIB
    assert causes(d) == ["stale_references"] and gain(d, "stale_references") == 78 * GIB


def test_stale_references() -> None:
    # 4 GiB asked of a full 24 GiB card; names from earlier cells hold 6 GiB.
    holders = [
        {"holder": "name", "label": "activations", "bytes": 4 * GIB},
        {"holder": "output_cache", "label": "Out[12]", "bytes": 1536 * MIB},
        {"holder": "last_traceback", "label": "the traceback of cell 9", "bytes": 512 * MIB},
    ]
    d = diagnose(
        torch24("4.00 GiB", "23.65 GiB", "310.00 MiB", "22.60 GiB", "120.00 MiB", this="23.30 GiB"),
        state(stale_bytes=6 * GIB, stale_holders=holders, num_alloc_retries=3),
    )
    assert causes(d) == ["stale_references"]
    assert gain(d, "stale_references") == 6 * GIB
    assert d["stale_holders"] == holders
    assert d["num_alloc_retries"] == 3


def test_other_processes() -> None:
    # Two other kernels hold 1.88 GiB of an 11.66 GiB card; 1.50 GiB is asked.
    others = "Process 3893521 has 618.00 MiB memory in use. Process 1493972 has 1.28 GiB memory in use. "
    d = diagnose(
        torch24("1.50 GiB", "11.66 GiB", "9.81 MiB", "9.30 GiB", "163.19 MiB", this="9.74 GiB", others=others),
        state(stale_bytes=0),
    )
    assert causes(d) == ["other_processes"]
    assert d["other_processes_bytes"] == round(618 * MIB) + round(1.28 * GIB)
    assert gain(d, "other_processes") == d["other_processes_bytes"]
    assert [p["pid"] for p in d["other_processes"]] == [1493972, 3893521]  # largest first


# --- ranking ------------------------------------------------------------------------------


def test_several_causes_rank_by_what_they_free() -> None:
    # 1.5 GiB asked, 1 GiB cached (not enough on its own): either the names or
    # the neighbour would make room; the neighbour frees more.
    others = "Process 4001 has 3.00 GiB memory in use. "
    d = diagnose(
        torch24("1.50 GiB", "23.65 GiB", "600.00 MiB", "17.90 GiB", "1.00 GiB", this="19.20 GiB", others=others),
        state(stale_bytes=2 * GIB),
    )
    assert causes(d) == ["other_processes", "stale_references"]
    assert [c["gain_bytes"] for c in d["causes"]] == [3 * GIB, 2 * GIB]


def test_a_cache_that_held_the_request_is_the_cause_whatever_frees_more() -> None:
    # 500 MiB asked while 1 GiB sat in PyTorch's cache: the memory was there, in
    # pieces. Deleting names or stopping a neighbour would free more, but that is
    # not why this allocation failed.
    others = "Process 4001 has 3.00 GiB memory in use. "
    d = diagnose(
        torch24("500.00 MiB", "23.65 GiB", "20.00 MiB", "17.90 GiB", "1.00 GiB", this="19.20 GiB", others=others),
        state(stale_bytes=2 * GIB),
    )
    assert causes(d) == ["fragmentation", "other_processes", "stale_references"]
    assert [c["gain_bytes"] for c in d["causes"]] == [1 * GIB, 3 * GIB, 2 * GIB]


def test_equal_gains_rank_the_cheapest_fix_first() -> None:
    others = "Process 4001 has 1.00 GiB memory in use. "
    d = diagnose(
        torch24("500.00 MiB", "23.65 GiB", "20.00 MiB", "20.90 GiB", "1.00 GiB", this="22.20 GiB", others=others),
        state(stale_bytes=1 * GIB),
    )
    assert causes(d) == ["fragmentation", "stale_references", "other_processes"]


def test_too_big_comes_first_whatever_else_is_true() -> None:
    # 13 GiB asked; 4 GiB of the 16 GiB card is another process's: too big while it runs, fine if it stops.
    others = "Process 9 has 4.00 GiB memory in use. "
    d = diagnose(
        torch24("13.00 GiB", "16.00 GiB", "10.00 GiB", "1.50 GiB", "0 bytes", this="1.80 GiB", others=others), state()
    )
    assert causes(d) == ["too_big", "other_processes"]
    assert d["causes"][0]["gain_bytes"] is None


def test_causes_that_only_together_free_enough_are_all_named() -> None:
    # 2 GiB asked: 300 MiB free, 400 MiB cached, 600 MiB stale, 900 MiB another kernel's. None alone suffices.
    others = "Process 4001 has 900.00 MiB memory in use. "
    d = diagnose(
        torch24("2.00 GiB", "23.65 GiB", "300.00 MiB", "21.00 GiB", "400.00 MiB", this="21.80 GiB", others=others),
        state(stale_bytes=600 * MIB),
    )
    assert causes(d) == ["other_processes", "stale_references", "fragmentation"]
    # Together still short: nothing is named.
    d = diagnose(
        torch24("4.00 GiB", "23.65 GiB", "300.00 MiB", "21.00 GiB", "400.00 MiB", this="21.80 GiB", others=others),
        state(stale_bytes=600 * MIB),
    )
    assert causes(d) == []


# --- merging ------------------------------------------------------------------------------


def test_the_message_wins_over_the_state() -> None:
    message = fixture("rshaojimmy/MADDoG/issues/11")  # torch 1.x: 14.76 GiB total, 19.75 MiB free
    d = diagnose(
        message,
        state(
            device_index=3, total_bytes=16 * GIB, free_bytes=8 * GIB, allocated_bytes=1 * GIB, reserved_bytes=2 * GIB
        ),
    )
    assert d["device_index"] == 0
    assert d["total_bytes"] == round(14.76 * GIB)
    assert d["free_bytes"] == round(19.75 * MIB)
    assert d["allocated_bytes"] == round(8.77 * GIB)
    assert d["reserved_unallocated_bytes"] == round(13.71 * GIB) - round(8.77 * GIB)
    assert d["requested_bytes"] == round(2.87 * GIB)


def test_the_state_fills_what_the_message_lacks() -> None:
    # TensorFlow says only the shape; NVML says who else is on the card.
    message = fixture("kamalkraj/BERT-NER-TF/issues/20")
    d = diagnose(
        message,
        state(
            device_index=0,
            total_bytes=16 * GIB,
            free_bytes=100 * MIB,
            allocated_bytes=2 * GIB,
            reserved_bytes=6 * GIB,
            process_in_use_bytes=10 * GIB,
            other_processes=[{"pid": 31, "used_bytes": 5 * GIB}],
        ),
    )
    assert d["kind"] == "tensorflow"
    assert d["requested_bytes"] == 128 * 768 * 4
    assert (d["total_bytes"], d["free_bytes"], d["process_in_use_bytes"]) == (16 * GIB, 100 * MIB, 10 * GIB)
    assert d["other_processes"] == [{"pid": 31, "used_bytes": 5 * GIB}]
    # TensorFlow's pool is not PyTorch's cache: no fragmentation from torch's figures.
    assert causes(d) == ["other_processes"]


def test_a_message_with_nvml_figures_and_no_other_process_means_none() -> None:
    d = diagnose(
        torch24("22.00 MiB", "23.65 GiB", "11.06 MiB", "22.90 GiB", "194.87 MiB", this="23.60 GiB"),
        state(other_processes=[{"pid": 5, "used_bytes": 9 * GIB}]),  # read later: not at the instant of failure
    )
    assert d["other_processes"] == [] and d["other_processes_bytes"] == 0
    assert causes(d) == ["fragmentation"]


def test_this_process_under_another_pid_is_not_another_process() -> None:
    # Real torch 2.1 message from a container: "Process 20398 has 14.52 GiB" is the kernel itself.
    d = diagnose(fixture("FoundationVision/GenerateU/issues/10"), state())
    assert d["other_processes"] == [] and d["other_processes_bytes"] == 0
    assert d["process_in_use_bytes"] == round(14.52 * GIB)
    assert "too_big" not in causes(d) and "other_processes" not in causes(d)


def test_the_state_list_is_cut_to_the_largest() -> None:
    listed = [{"pid": 100 + i, "used_bytes": (i + 1) * GIB} for i in range(20)]
    d = diagnose(
        fixture("pytorch/pytorch/issues/18766"),
        state(total_bytes=400 * GIB, other_processes=listed, process_in_use_bytes=GIB),
    )
    assert len(d["other_processes"]) == MAX_LISTED_PROCESSES
    assert d["other_processes"][0] == {"pid": 119, "used_bytes": 20 * GIB}
    assert d["other_processes_bytes"] == sum(range(1, 21)) * GIB  # the total counts every process


def test_unreadable_process_figures_are_unknown_not_zero() -> None:
    message = facts(
        "OutOfMemoryError",
        "CUDA out of memory. Tried to allocate 2.13 GiB. GPU 0 has a total capacity of 8.00 GiB of which 6.10 GiB is "
        "free. Process 9132 has 17179869184.00 GiB memory in use. Including non-PyTorch memory, this process has "
        "17179869184.00 GiB memory in use. 2.63 GiB allowed; Of the allocated memory 954.00 MiB is allocated by "
        "PyTorch, and 0 bytes is reserved by PyTorch but unallocated.",
    )
    d = diagnose(message, state())
    assert d["other_processes"] == [{"pid": 9132, "used_bytes": None}]
    assert d["other_processes_bytes"] is None
    # 954 MiB held + 2.13 GiB asked > 2.63 GiB allowed, though the card has 6.10 GiB free: the fraction
    # limit refuses it, and no cause of the four fits.
    assert causes(d) == []


def test_memory_fraction_with_fragmentation() -> None:
    # Real current-torch message: 3.98 GiB asked, 17.51 GiB allowed, 13.76 GiB reserved of which 7.02 unallocated.
    d = diagnose(fixture("id 65769374529"), state())
    assert causes(d) == ["fragmentation"]
    assert d["process_in_use_bytes"] is None  # NVML's "not available", not 16 EiB


# --- host -----------------------------------------------------------------------------------


def test_host_numpy_with_rss_and_available() -> None:
    message = facts(
        "_ArrayMemoryError", "Unable to allocate 7.45 GiB for an array with shape (1000000000,) and data type float64"
    )
    d = diagnose(
        message,
        state(
            total_bytes=16 * GIB,
            free_bytes=3 * GIB,
            process_in_use_bytes=8 * GIB,
            stale_bytes=6 * GIB,
            stale_holders=[{"holder": "name", "label": "df", "bytes": 6 * GIB}],
        ),
    )
    assert d["kind"] == "host"
    assert d["requested_bytes"] == 8_000_000_000
    assert d["other_processes_bytes"] == 5 * GIB  # 16 - 3 available - 8 this kernel (RSS)
    assert d["reserved_unallocated_bytes"] is None
    assert causes(d) == ["stale_references", "other_processes"]
    assert gain(d, "stale_references") == 6 * GIB


def test_host_too_big_for_the_machine() -> None:
    d = diagnose(
        fixture("pytorch/pytorch/pull/20618"),
        state(total_bytes=64 * GIB, free_bytes=40 * GIB, process_in_use_bytes=2 * GIB),
    )
    assert causes(d) == ["too_big"]


def test_bare_memory_error_with_host_figures() -> None:
    # No request size: other processes are named only when they hold a sizeable share.
    d = diagnose(
        facts("MemoryError", ""),
        state(total_bytes=32 * GIB, free_bytes=GIB, process_in_use_bytes=8 * GIB, stale_bytes=5 * GIB),
    )
    assert d["other_processes_bytes"] == 23 * GIB
    assert causes(d) == ["other_processes", "stale_references"]


# --- no request size -------------------------------------------------------------------------


def test_cublas_with_unknown_request() -> None:
    message = fixture("QwenLM/Qwen3/issues/873")
    d = diagnose(
        message,
        state(
            device_index=0,
            total_bytes=80 * GIB,
            free_bytes=0,
            allocated_bytes=60 * GIB,
            reserved_bytes=70 * GIB,
            process_in_use_bytes=71 * GIB,
            other_processes=[{"pid": 7, "used_bytes": 6 * GIB}],
            stale_bytes=GIB,
        ),
    )
    assert (d["kind"], d["library"], d["requested_bytes"]) == ("cuda_library", "cuBLAS", None)
    assert d["reserved_unallocated_bytes"] == 10 * GIB
    assert causes(d) == ["fragmentation", "other_processes", "stale_references"]
    # A small cache and a small neighbour are not named.
    small = diagnose(
        message,
        state(
            total_bytes=80 * GIB,
            free_bytes=0,
            allocated_bytes=60 * GIB,
            reserved_bytes=60 * GIB + 100 * MIB,
            process_in_use_bytes=61 * GIB,
            other_processes=[{"pid": 7, "used_bytes": 2 * GIB}],
        ),
    )
    assert causes(small) == []


def test_empty_state_says_nothing() -> None:
    for message in (
        fixture("QwenLM/Qwen3/issues/873"),
        fixture("pytorch/pytorch/issues/18766"),
        facts("MemoryError", ""),
    ):
        d = diagnose(message, state())
        assert d["causes"] == []
        assert set(d) == DIAGNOSIS_KEYS
        assert d["other_processes"] == [] and d["stale_holders"] == []
    d = diagnose(None, state())
    assert d["causes"] == [] and d["kind"] == "cuda" and set(d) == DIAGNOSIS_KEYS


def test_every_fixture_diagnoses_with_an_empty_and_a_full_state() -> None:
    full = state(
        device_index=0,
        total_bytes=24 * GIB,
        free_bytes=GIB,
        allocated_bytes=10 * GIB,
        reserved_bytes=12 * GIB,
        num_alloc_retries=1,
        process_in_use_bytes=13 * GIB,
        other_processes=[{"pid": 2, "used_bytes": GIB}],
        stale_bytes=3 * GIB,
        stale_holders=[{"holder": "name", "label": "x", "bytes": 3 * GIB}],
    )
    for entry in json.loads(FIXTURES.read_text(encoding="utf-8")):
        message = facts(entry["type_name"], entry["message"])
        for s in (state(), full):
            d = diagnose(message, s)
            assert set(d) == DIAGNOSIS_KEYS
            json.dumps(d)  # the frontend gets it as JSON
            names = causes(d)
            assert len(names) == len(set(names))
            assert "too_big" not in names[1:]
            assert all(
                c["gain_bytes"] is None if c["cause"] == "too_big" else known(c["gain_bytes"]) > 0 for c in d["causes"]
            )
            if d["kind"] in ("host", "tensorflow"):
                assert "fragmentation" not in names


# --- host, in a container -------------------------------------------------------------------


def test_host_limit_is_the_containers_when_one_is_set() -> None:
    from jupyterlab_vram_helper.oom.oom_watch import host_limit

    machine = {"rss_bytes": 3 * GIB, "total_bytes": 256 * GIB, "available_bytes": 200 * GIB}
    assert host_limit({**machine, "container": None}) == (256 * GIB, 200 * GIB)
    container = {"limit_bytes": 4 * GIB, "usage_bytes": 3 * GIB + GIB // 2, "oom_kill_count": 0, "cgroup_version": 2}
    assert host_limit({**machine, "container": container}) == (4 * GIB, GIB // 2)
    # Usage past the limit (page cache being reclaimed): nothing left, never negative.
    assert host_limit({**machine, "container": {**container, "usage_bytes": 5 * GIB}}) == (4 * GIB, 0)
    # A limit above what the node has left: the node's figure is the smaller.
    assert host_limit({**machine, "available_bytes": GIB // 4, "container": container}) == (4 * GIB, GIB // 4)


def test_host_limit_counts_the_working_set_as_the_panel_does() -> None:
    from jupyterlab_vram_helper.oom.oom_watch import host_limit

    machine = {"rss_bytes": GIB, "total_bytes": 256 * GIB, "available_bytes": 200 * GIB}
    # 3.5 GiB charged, 2 GiB of it the file cache a dataset read left: 2 GiB left, not 0.5.
    cached = {
        "limit_bytes": 4 * GIB,
        "usage_bytes": 3 * GIB + GIB // 2,
        "inactive_file_bytes": 2 * GIB,
        "oom_kill_count": 0,
        "cgroup_version": 2,
    }
    assert host_limit({**machine, "container": cached}) == (4 * GIB, 2 * GIB + GIB // 2)
    # Never less in use than the kernel's own RSS.
    assert host_limit({**machine, "rss_bytes": 3 * GIB, "container": cached}) == (4 * GIB, GIB)
    # Without the usage, what is left is unknown: not the node's 200 GiB.
    assert host_limit({**machine, "container": {**cached, "usage_bytes": None}}) == (4 * GIB, None)


def test_host_diagnosis_in_a_container_is_against_its_limit() -> None:
    from jupyterlab_vram_helper.oom.oom_watch import _host_state

    figures = {
        "host": {
            "rss_bytes": 3 * GIB,
            "total_bytes": 256 * GIB,
            "available_bytes": 200 * GIB,
            "container": {
                "limit_bytes": 4 * GIB,
                "usage_bytes": 3 * GIB + GIB // 2,
                "oom_kill_count": 0,
                "cgroup_version": 2,
            },
        }
    }
    message = facts(
        "_ArrayMemoryError", "Unable to allocate 7.45 GiB for an array with shape (1000000000,) and data type float64"
    )
    d = diagnose(message, _host_state(figures))
    assert (d["total_bytes"], d["free_bytes"]) == (4 * GIB, GIB // 2)
    assert causes(d) == ["too_big"]  # 7.45 GiB cannot fit in a 4 GiB container, whatever the node has
