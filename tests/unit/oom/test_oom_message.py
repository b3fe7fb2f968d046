"""parse_oom_message against real messages (tests/fixtures/oom_messages.json) and against junk."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest

from jupyterlab_vram_helper.oom.oom_message import (
    IMPLAUSIBLE_BYTES,
    MAX_PROCESSES,
    parse_oom_message,
)

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "oom_messages.json"
ENTRIES: list[dict[str, Any]] = json.loads(FIXTURES.read_text(encoding="utf-8"))
FIELDS = {
    "kind",
    "library",
    "framework",
    "device_index",
    "requested_bytes",
    "total_bytes",
    "free_bytes",
    "allocated_bytes",
    "reserved_bytes",
    "reserved_unallocated_bytes",
    "process_in_use_bytes",
    "other_processes",
    "allowed_bytes",
    "killed_worker_pids",
    "worker_signal",
}
MIB = 1 << 20
GIB = 1 << 30


def test_the_fixture_file_is_what_it_claims() -> None:
    assert len(ENTRIES) >= 15
    kinds = {e["expect"]["kind"] for e in ENTRIES}
    assert kinds == {"cuda", "cuda_library", "tensorflow", "host"}
    for entry in ENTRIES:
        assert set(entry) == {"source", "type_name", "message", "expect"}
        assert entry["source"].strip()
        assert set(entry["expect"]) <= FIELDS


@pytest.mark.parametrize("entry", ENTRIES, ids=[f"{i:02d}-{e['type_name']}" for i, e in enumerate(ENTRIES)])
def test_real_message_parses_to_its_figures(entry: dict[str, Any]) -> None:
    facts = parse_oom_message(entry["type_name"], entry["message"])
    assert facts is not None, entry["source"]
    assert set(facts) == FIELDS
    for key, expected in entry["expect"].items():
        assert facts[key] == expected, (key, entry["source"])  # type: ignore[literal-required]


def test_printed_sizes_are_1024_multiples_to_the_printed_precision() -> None:
    facts = parse_oom_message(
        "OutOfMemoryError",
        "CUDA out of memory. Tried to allocate 20.00 MiB (GPU 0; 15.78 GiB total capacity; 14.56 GiB already "
        "allocated; 3.44 MiB free; 14.73 GiB reserved in total by PyTorch)",
    )
    assert facts is not None
    assert facts["requested_bytes"] == 20 * MIB
    assert facts["free_bytes"] == round(3.44 * MIB)
    assert facts["total_bytes"] == round(15.78 * GIB)
    assert facts["reserved_unallocated_bytes"] == round(14.73 * GIB) - round(14.56 * GIB)
    for text, expected in [
        ("512.00 KiB", 512 << 10),
        ("0 bytes", 0),
        ("1024.00 MiB", GIB),
        ("1.25 TiB", round(1.25 * (1 << 40))),
    ]:
        facts = parse_oom_message("OutOfMemoryError", f"CUDA out of memory. Tried to allocate {text}. GPU")
        assert facts is not None and facts["requested_bytes"] == expected, text


def test_the_2_1_typo_and_the_fixed_spelling_read_alike() -> None:
    tail = (
        " of 79.15 GiB of which 19.62 MiB is free. Of the allocated memory 78.41 GiB is allocated by PyTorch,"
        " and 209.88 MiB is reserved by PyTorch but unallocated."
    )
    typo = parse_oom_message(
        "OutOfMemoryError", "CUDA out of memory. Tried to allocate 1.00 GiB. GPU 0 has a total capacty" + tail
    )
    fixed = parse_oom_message(
        "OutOfMemoryError", "CUDA out of memory. Tried to allocate 1.00 GiB. GPU 0 has a total capacity" + tail
    )
    assert typo == fixed
    assert fixed is not None and fixed["total_bytes"] == round(79.15 * GIB)


def test_nvml_not_available_is_no_figure() -> None:
    facts = parse_oom_message(
        "OutOfMemoryError",
        "CUDA out of memory. Tried to allocate 2.13 GiB. GPU 0 has a total capacity of 8.00 GiB of which 6.10 GiB is "
        "free. Process 9132 has 17179869184.00 GiB memory in use. Including non-PyTorch memory, this process has "
        "17179869184.00 GiB memory in use. 2.63 GiB allowed; Of the allocated memory 954.00 MiB is allocated by "
        "PyTorch, and 0 bytes is reserved by PyTorch but unallocated.",
    )
    assert facts is not None
    assert facts["other_processes"] == [{"pid": 9132, "used_bytes": None}]
    assert facts["process_in_use_bytes"] is None
    assert facts["allowed_bytes"] == round(2.63 * GIB)
    assert facts["reserved_unallocated_bytes"] == 0


def test_tensorflow_on_the_cpu_is_host_memory() -> None:
    facts = parse_oom_message(
        "ResourceExhaustedError",
        "OOM when allocating tensor with shape[1000,1000,100] and type double on "
        "/job:localhost/replica:0/task:0/device:CPU:0 by allocator cpu",
    )
    assert facts is not None
    assert facts["kind"] == "host" and facts["device_index"] is None
    assert facts["requested_bytes"] == 1000 * 1000 * 100 * 8


def test_unknown_dtypes_leave_the_request_unknown_or_printed() -> None:
    tf = parse_oom_message(
        "ResourceExhaustedError",
        "OOM when allocating tensor with shape[10] and type resource on /job:localhost/replica:0/task:0/device:GPU:2 "
        "by allocator GPU_2_bfc",
    )
    assert tf is not None and tf["requested_bytes"] is None and tf["device_index"] == 2
    np_ = parse_oom_message(
        "_ArrayMemoryError", "Unable to allocate 7.45 GiB for an array with shape (1000000000,) and data type float64"
    )
    assert np_ is not None and np_["requested_bytes"] == 8_000_000_000
    odd = parse_oom_message(
        "_ArrayMemoryError", "Unable to allocate 7.45 GiB for an array with shape (1000000000,) and data type mystery"
    )
    assert odd is not None and odd["requested_bytes"] == round(7.45 * GIB)
    text = parse_oom_message(
        "_ArrayMemoryError", "Unable to allocate 3.73 GiB for an array with shape (100000000,) and data type <U10"
    )
    assert text is not None and text["requested_bytes"] == 100_000_000 * 40


@pytest.mark.parametrize(
    "type_name,message",
    [
        ("RuntimeError", "CUDA error: device-side assert triggered"),
        ("RuntimeError", "cuDNN error: CUDNN_STATUS_EXECUTION_FAILED"),
        ("RuntimeError", "cuDNN error: CUDNN_STATUS_NOT_INITIALIZED"),
        (
            "RuntimeError",
            "CUDA error: CUBLAS_STATUS_EXECUTION_FAILED when calling `cublasSgemm( handle, opa, opb, m, n, k, &alpha, "
            "a, lda, b, ldb, &beta, c, ldc)`",
        ),
        ("RuntimeError", "cuFFT error: CUFFT_INTERNAL_ERROR"),
        (
            "RuntimeError",
            "Expected all tensors to be on the same device, but found at least two devices, cuda:0 and cpu!",
        ),
        ("RuntimeError", "mat1 and mat2 shapes cannot be multiplied (4x3 and 4x3)"),
        ("ValueError", "Unable to allocate the requested worker"),
        ("KeyError", "'memory'"),
        ("ZeroDivisionError", "division by zero"),
        ("InvalidArgumentError", "Incompatible shapes: [2,3] vs. [3,2] [Op:AddV2]"),
        ("RuntimeError", "Allocation on device 0 of the layer weights is complete"),
        ("", ""),
        ("NameError", "name 'oom' is not defined"),
    ],
)
def test_other_errors_are_not_out_of_memory(type_name: str, message: str) -> None:
    assert parse_oom_message(type_name, message) is None


def test_memory_error_subclasses_by_name_are_host() -> None:
    for type_name in ("MemoryError", "builtins.MemoryError", "_ArrayMemoryError"):
        facts = parse_oom_message(type_name, "std::bad_alloc")
        assert facts is not None and facts["kind"] == "host" and facts["requested_bytes"] is None


@pytest.mark.timeout(10)
@pytest.mark.parametrize(
    "message",
    [
        "x" * (1 << 20),
        "9" * (1 << 20),
        " " * (1 << 20),
        "CUDA out of memory. " + "Tried to allocate " * 60000,
        "CUDA out of memory. Tried to allocate " + "9" * (1 << 20) + " GiB",
        "CUDA out of memory. " + "Process 1 has 1.00 GiB memory in use. " * 30000,
        "OOM when allocating tensor with shape[" + "1," * 400000 + "] and type float",
        "Unable to allocate 1.00 GiB for an array with shape (" + "9, " * 300000 + ") and data type float64",
        "CUDA out of memory. Tried to allocate 1e999 GiB (GPU 99999999999; NaN total capacity)",
        "CUDA out of memory. Tried to allocate 99999999999999999999999.99 GiB. GPU 0",
        "Allocation on device 0 would exceed allowed memory. (out of memory)\nRequested" + " " * 500000 + ": 1.00 GiB",
        "ＣＵＤＡ out of memory. Tried to allocate ２０.００ MiB — 显存不足 🚀 \udcff \x00",
        "CUDA out of memory. Tried to allocate 20.00 MiB (GPU 0; \u2028 total capacity; \u0000",
        "\n".join(["OOM when allocating tensor of shape [] and type float"] * 20000),
    ],
)
def test_junk_and_huge_messages_return_quickly_and_never_raise(message: str) -> None:
    started = time.perf_counter()
    for type_name in ("OutOfMemoryError", "RuntimeError", "MemoryError", "ResourceExhaustedError"):
        facts = parse_oom_message(type_name, message)
        if facts is not None:
            assert set(facts) == FIELDS
            assert len(facts["other_processes"]) <= MAX_PROCESSES
            for key in ("requested_bytes", "total_bytes", "free_bytes", "allocated_bytes", "reserved_bytes"):
                value = facts[key]  # type: ignore[literal-required]
                assert value is None or 0 <= value < IMPLAUSIBLE_BYTES
    assert time.perf_counter() - started < 2.0


def test_non_string_arguments_never_raise() -> None:
    assert parse_oom_message(None, None) is None  # type: ignore[arg-type]
    assert parse_oom_message(MemoryError, 42) is None  # type: ignore[arg-type]
    facts = parse_oom_message("MemoryError", None)  # type: ignore[arg-type]
    assert facts is not None and facts["kind"] == "host"


def test_scalar_tensor_shape_is_one_element() -> None:
    facts = parse_oom_message(
        "ResourceExhaustedError",
        "OOM when allocating tensor with shape[] and type int64 on /job:localhost/replica:0/task:0/device:GPU:0 by "
        "allocator GPU_0_bfc",
    )
    assert facts is not None and facts["requested_bytes"] == 8


@pytest.mark.parametrize(
    "message, kind, library",
    [
        # cuDNN 9 (PyTorch >= 2.3) names an allocation failure so
        ("cuDNN error: CUDNN_STATUS_INTERNAL_ERROR_DEVICE_ALLOCATION_FAILED", "cuda_library", "cuDNN"),
        ("cuDNN error: CUDNN_STATUS_INTERNAL_ERROR_HOST_ALLOCATION_FAILED", "host", None),
        # the cuDNN frontend inside PyTorch's scaled-dot-product attention
        (
            "cuDNN Frontend error: [cudnn_frontend] Error: err 2 != CUDA_SUCCESS. "
            "CUDA ran out of memory outside PyTorch's allocator.",
            "cuda",
            None,
        ),
    ],
)
def test_library_allocation_failures_without_figures(message: str, kind: str, library: Any) -> None:
    facts = parse_oom_message("RuntimeError", message)
    assert facts is not None and facts["kind"] == kind and facts["library"] == library


def test_the_cpu_allocators_not_enough_memory_wording() -> None:
    facts = parse_oom_message(
        "RuntimeError",
        "[enforce fail at alloc_cpu.cpp:114] data. DefaultCPUAllocator: not enough memory: "
        "you tried to allocate 1099511627776 bytes.",
    )
    assert facts is not None and facts["kind"] == "host" and facts["requested_bytes"] == 1 << 40


@pytest.mark.parametrize(
    "type_name, message, framework",
    [
        (
            "_ArrayMemoryError",
            "Unable to allocate 8.00 GiB for an array with shape (1073741824,) and data type float64",
            "numpy",
        ),
        (
            "RuntimeError",
            "DefaultCPUAllocator: can't allocate memory: you tried to allocate 4294967296 bytes.",
            "torch",
        ),
        (
            "OutOfMemoryError",
            "CUDA out of memory. Tried to allocate 2.00 GiB (GPU 0; 7.93 GiB total capacity)",
            "torch",
        ),
        (
            "ResourceExhaustedError",
            "OOM when allocating tensor with shape[10000,10000] and type float on "
            "/job:localhost/replica:0/task:0/device:CPU:0 by allocator cpu",
            "tensorflow",
        ),
        ("MemoryError", "", None),
        ("RuntimeError", "CUDA error: CUBLAS_STATUS_ALLOC_FAILED when calling `cublasCreate(handle)`", None),
    ],
)
def test_whose_allocation_failed(type_name: str, message: str, framework: Any) -> None:
    """The remedies differ: mixed precision does not shrink a NumPy array."""
    facts = parse_oom_message(type_name, message)
    assert facts is not None and facts["framework"] == framework
