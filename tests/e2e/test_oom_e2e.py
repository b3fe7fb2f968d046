"""The out-of-memory assistant end to end: a real ipykernel, real NumPy and CPU torch.

Real allocation failures (an absurd NumPy array, an absurd torch CPU tensor)
and a raised ``torch.OutOfMemoryError`` carrying torch's own message must give
the failed cell's record a diagnosis; the helper keeps no reference to the
exception.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from kernel_harness import CellSession, forget_last_error, live_helper_kernel

pytestmark = pytest.mark.kernel

ABSURD = 2**50  # 1 PiB: no machine here has it, so the allocation really fails
FAST = {"interval_s": 0.2, "heartbeat_s": 1.0}

# torch >= 2.1's message, as c10/cuda/CUDACachingAllocator.cpp builds it.
TORCH_MESSAGE = (
    "CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 79.15 GiB of which "
    "1.50 GiB is free. Including non-PyTorch memory, this process has 77.64 GiB memory in use. "
    "Of the allocated memory 70.00 GiB is allocated by PyTorch, and 6.00 GiB is reserved by PyTorch but "
    "unallocated. If reserved but unallocated memory is large try setting "
    "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid fragmentation."
)


@pytest.fixture(scope="module")
def session(bootstrap: str) -> Iterator[CellSession]:
    with live_helper_kernel(bootstrap, FAST) as (kernel, comm_id):
        s = CellSession(kernel, comm_id)
        s.run("import gc, sys, weakref, numpy as np, torch")
        yield s


def test_a_numpy_memory_error_is_diagnosed_as_too_big_for_the_machine(session: CellSession) -> None:
    reply, record = session.run(f"np.empty({ABSURD}, dtype=np.uint8)").values()
    assert reply["status"] == "error" and reply["ename"] in ("MemoryError", "_ArrayMemoryError")
    assert record["status"] == "error" and record["error"]["out_of_memory"] is True
    oom = record["oom"]
    assert oom["kind"] == "host" and oom["device_index"] is None
    assert abs(oom["requested_bytes"] - ABSURD) / ABSURD < 0.01  # "Unable to allocate 1.00 PiB"
    assert oom["total_bytes"] > 0 and 0 < oom["free_bytes"] <= oom["total_bytes"]
    assert oom["process_in_use_bytes"] > 0  # the kernel's RSS
    assert [c["cause"] for c in oom["causes"]][:1] == ["too_big"]
    assert session.k.output_messages()[-1]["msg_type"] == "error"  # IPython's traceback, not ours
    assert all("jupyterlab_vram" not in "".join(m["content"].get("traceback", [])) for m in session.k.output_messages())


def test_a_torch_cpu_allocation_failure_is_diagnosed(session: CellSession) -> None:
    record = session.run(f"torch.empty({ABSURD}, dtype=torch.uint8)")["record"]
    assert record["error"]["out_of_memory"] is True, record["error"]
    oom = record["oom"]
    assert oom["kind"] == "host" and oom["requested_bytes"] == ABSURD  # "you tried to allocate N bytes"
    assert oom["causes"][0]["cause"] == "too_big"


def test_stale_references_are_named_with_their_bytes(session: CellSession) -> None:
    session.run("kept = np.ones(50_000_000)")  # 400 MB held by a name from an earlier cell
    oom = session.run(f"np.empty({ABSURD // 4}, dtype=np.float32)")["record"]["oom"]
    names = {h["label"]: h["bytes"] for h in oom["stale_holders"] if h["holder"] == "name"}
    assert names.get("kept") == 400_000_000
    assert oom["stale_bytes"] >= 400_000_000
    session.run("del kept; gc.collect()")


def test_the_diagnosis_leaves_a_locals_dict_the_user_saved(session: CellSession) -> None:
    """The diagnosis reads the failed function's locals (the last error's frames):
    the dict ``locals()`` gave the user is that frame's own on Python <= 3.12."""
    session.run(
        "saved = []\n"
        "def step():\n"
        "    x = np.ones(1000)\n"
        "    saved.append(locals())\n"
        f"    np.empty({ABSURD}, dtype=np.uint8)\n"
    )
    record = session.run("step()")["record"]
    assert record["error"]["out_of_memory"] is True and record["oom"] is not None
    assert session.k.eval("list(saved[0])") == ["x"]  # was [] after the diagnosis
    forget_last_error(session)
    session.run("del saved, step")


def test_a_raised_torch_out_of_memory_error_is_read_from_its_message(session: CellSession) -> None:
    record = session.run(f"raise torch.OutOfMemoryError({TORCH_MESSAGE!r})")["record"]
    assert record["error"]["type"] == "OutOfMemoryError"
    oom = record["oom"]
    GiB = 1 << 30
    assert oom["kind"] == "cuda" and oom["device_index"] == 0
    assert oom["requested_bytes"] == 2 * GiB
    assert oom["reserved_unallocated_bytes"] == 6 * GiB
    assert abs(oom["free_bytes"] - 1.5 * GiB) < 0.01 * GiB
    assert oom["causes"][0]["cause"] == "fragmentation"  # 6 GiB cached but unallocated >= 2 GiB asked


def test_the_helper_keeps_no_reference_to_the_out_of_memory_error(session: CellSession) -> None:
    session.run(
        "class Exhausted(MemoryError):\n"
        "    pass\n"
        "def fails():\n"
        "    err = Exhausted('Unable to allocate 8.00 GiB for an array with shape (1073741824,) and data type "
        "float64')\n"
        "    globals()['w_error'] = weakref.ref(err)\n"
        "    raise err\n"
        "fails()"
    )
    assert session.records()[-1]["oom"] is not None  # it was diagnosed
    assert session.k.eval("w_error() is not None") is True  # IPython keeps it, for %debug
    forget_last_error(session)
    assert session.k.eval("(gc.collect(), w_error() is None)[1]") is True


def test_an_ordinary_error_has_no_diagnosis(session: CellSession) -> None:
    record = session.run("1 / 0")["record"]
    assert record["error"]["out_of_memory"] is False and record["oom"] is None
