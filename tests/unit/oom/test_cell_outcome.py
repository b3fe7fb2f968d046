"""What became of a cell (ok, error, interrupted) and whether an error was an out-of-memory one."""

from __future__ import annotations

import asyncio
import types

import pytest

from jupyterlab_vram_helper.oom.cell_outcome import (
    cell_outcome,
    is_out_of_memory,
    oom_message_readable,
    out_of_memory_text,
)
from jupyterlab_vram_helper.oom.oom_message import OomMessageFacts, parse_oom_message


def _named(name: str, base: type = RuntimeError) -> type:
    return type(name, (base,), {})


OOM_ERRORS = [
    # torch: torch.OutOfMemoryError (= torch.cuda.OutOfMemoryError), from CUDACachingAllocator.cpp
    _named("OutOfMemoryError")(
        "CUDA out of memory. Tried to allocate 20.00 MiB. GPU 0 has a total capacity of 79.11 GiB of which "
        "1.06 MiB is free. Including non-PyTorch memory, this process has 79.10 GiB memory in use."
    ),
    _named("OutOfMemoryError")("whatever the text"),  # by type name alone
    RuntimeError("CUDA out of memory. Tried to allocate 2.00 GiB (GPU 0; 7.93 GiB total capacity)"),  # torch < 1.13
    RuntimeError("CUDA error: out of memory\nCUDA kernel errors might be asynchronously reported"),
    RuntimeError("CUDA error: CUBLAS_STATUS_ALLOC_FAILED when calling `cublasCreate(handle)`"),
    RuntimeError("cuDNN error: CUDNN_STATUS_ALLOC_FAILED"),
    RuntimeError("cuDNN error: CUDNN_STATUS_INTERNAL_ERROR_DEVICE_ALLOCATION_FAILED"),  # cuDNN 9
    RuntimeError("DefaultCPUAllocator: not enough memory: you tried to allocate 4611686018427387904 bytes."),
    RuntimeError("CUSOLVER_STATUS_ALLOC_FAILED"),
    RuntimeError("cuFFT error: CUFFT_ALLOC_FAILED"),
    RuntimeError("CUDA ran out of memory outside PyTorch's allocator. If this workload uses many dynamic shapes"),
    RuntimeError("DefaultCPUAllocator: can't allocate memory: you tried to allocate 4611686018427387904 bytes."),
    RuntimeError("MPS backend out of memory (MPS allocated: 1.2 GB, other allocations: 2 MB, max allowed: 18 GB)."),
    # TensorFlow: tf.errors.ResourceExhaustedError (a subclass of OpError)
    _named("ResourceExhaustedError", _named("OpError", Exception))(
        "OOM when allocating tensor with shape[32,1024,64,64] and type float on "
        "/job:localhost/replica:0/task:0/device:GPU:0 by allocator GPU_0_bfc"
    ),
    # JAX / XLA
    _named("XlaRuntimeError")("RESOURCE_EXHAUSTED: Out of memory while trying to allocate 17179869184 bytes."),
    MemoryError(),
    _named("_ArrayMemoryError", MemoryError)("Unable to allocate 7.45 GiB for an array with shape (1000000000,)"),
]


@pytest.mark.parametrize("exc", OOM_ERRORS, ids=[f"{type(e).__name__}-{i}" for i, e in enumerate(OOM_ERRORS)])
def test_out_of_memory_is_recognised(exc: BaseException) -> None:
    assert is_out_of_memory(exc)
    status, error = cell_outcome(types.SimpleNamespace(error_in_exec=exc, error_before_exec=None))
    assert status == "error" and error is not None
    assert error["type"] == type(exc).__name__ and error["out_of_memory"] is True


def test_out_of_memory_raised_from_inside_another_error() -> None:
    try:
        try:
            raise _named("OutOfMemoryError")("CUDA out of memory.")
        except RuntimeError as inner:
            raise ValueError("training step 12 failed") from inner
    except ValueError as outer:
        assert is_out_of_memory(outer)


TORCH_2_MESSAGE = (
    "CUDA out of memory. Tried to allocate 2.00 GiB. GPU 1 has a total capacity of 79.15 GiB of which 1.06 GiB "
    "is free. Including non-PyTorch memory, this process has 78.08 GiB memory in use. Of the allocated memory "
    "70.50 GiB is allocated by PyTorch, and 7.02 GiB is reserved by PyTorch but unallocated."
)


def _diagnosed(exc: BaseException) -> OomMessageFacts | None:
    text = out_of_memory_text(exc, readable=oom_message_readable)
    assert text is not None
    return parse_oom_message(*text)


def test_a_message_after_a_long_traceback_keeps_its_figures() -> None:
    """nn.DataParallel re-raises a replica's error with its whole traceback before the message."""
    frames = "".join(
        f'  File "/opt/model/layer_{i}.py", line {i}, in forward\n    return self.inner(x)\n' for i in range(80)
    )
    wrapped = _named("OutOfMemoryError")(
        "Caught OutOfMemoryError in replica 1 on device 1.\nOriginal Traceback (most recent call last):\n"
        + frames
        + "torch.OutOfMemoryError: "
        + TORCH_2_MESSAGE
    )
    assert len(str(wrapped)) > 6000
    facts = _diagnosed(wrapped)
    assert facts is not None and facts["device_index"] == 1 and facts["requested_bytes"] == 2 << 30


def test_a_wrapper_that_says_out_of_memory_does_not_hide_the_message_under_it() -> None:
    try:
        try:
            raise _named("OutOfMemoryError")(TORCH_2_MESSAGE)
        except RuntimeError as inner:
            raise RuntimeError("Batch 12 failed: GPU out of memory, lower --batch-size") from inner
    except RuntimeError as outer:
        facts = _diagnosed(outer)
        assert facts is not None and facts["requested_bytes"] == 2 << 30
        # Without a reader, the first match still counts: the cell is an out-of-memory one.
        assert out_of_memory_text(outer) == ("RuntimeError", "Batch 12 failed: GPU out of memory, lower --batch-size")


def _fall_back_with_a_bug() -> None:
    """The common fall-back to a smaller batch, whose own path fails of something else."""
    try:
        raise _named("OutOfMemoryError")(TORCH_2_MESSAGE)
    except RuntimeError:
        sizes = [64, 32, 16]
        sizes[10]


def test_an_error_raised_while_handling_an_out_of_memory_one_is_that_other_error() -> None:
    with pytest.raises(IndexError) as caught:
        _fall_back_with_a_bug()
    assert caught.value.__context__ is not None  # Python chained the handled OOM
    assert not is_out_of_memory(caught.value)
    assert out_of_memory_text(caught.value, readable=oom_message_readable) is None
    status, error = cell_outcome(types.SimpleNamespace(error_in_exec=caught.value, error_before_exec=None))
    assert status == "error" and error is not None and error["out_of_memory"] is False


def test_a_wrapper_raised_during_the_out_of_memory_error_still_counts() -> None:
    # Saying so itself: the figures come from the error it was raised during.
    try:
        try:
            raise _named("OutOfMemoryError")(TORCH_2_MESSAGE)
        except RuntimeError:
            raise RuntimeError("Batch 12 failed: GPU out of memory, lower --batch-size")  # noqa: B904 (the implicit context is the case)
    except RuntimeError as outer:
        facts = _diagnosed(outer)
        assert facts is not None and facts["requested_bytes"] == 2 << 30
    # Repeating the message of an OOM known by its class alone.
    try:
        try:
            raise _named("OutOfMemoryError")("allocator gave up on replica 3")
        except RuntimeError as inner:
            raise RuntimeError(f"step 7 failed: {inner}")  # noqa: B904 (the implicit context is the case)
    except RuntimeError as outer:
        assert out_of_memory_text(outer) == ("OutOfMemoryError", "allocator gave up on replica 3")


def test_an_error_raised_in_place_of_the_out_of_memory_one_stands_for_it_unless_hidden() -> None:
    # `except OutOfMemoryError: raise RuntimeError("... try a smaller batch")`:
    # the memory error, with its figures, is what the cell failed of.
    try:
        try:
            raise _named("OutOfMemoryError")(TORCH_2_MESSAGE)
        except RuntimeError:
            raise RuntimeError("Training step 12 failed; try a smaller batch")  # noqa: B904 (the implicit context is the case)
    except RuntimeError as outer:
        assert is_out_of_memory(outer)
        facts = _diagnosed(outer)
        assert facts is not None and facts["requested_bytes"] == 2 << 30
    # `raise ... from None`: its raiser says the memory error is not the story.
    try:
        try:
            raise _named("OutOfMemoryError")(TORCH_2_MESSAGE)
        except RuntimeError:
            raise ValueError("no checkpoint for step 12") from None
    except ValueError as outer:
        assert not is_out_of_memory(outer)


def test_an_out_of_memory_error_inside_an_exception_group() -> None:
    group = (
        getattr(__builtins__, "ExceptionGroup", None)
        if not isinstance(__builtins__, dict)
        else __builtins__.get("ExceptionGroup")
    )
    if group is None:
        pytest.skip("exception groups came with Python 3.11")
    exc = group("unhandled errors in a TaskGroup (1 sub-exception)", [_named("OutOfMemoryError")(TORCH_2_MESSAGE)])
    assert is_out_of_memory(exc)
    facts = _diagnosed(exc)
    assert facts is not None and facts["device_index"] == 1


@pytest.mark.parametrize(
    "exc",
    [
        ValueError("boom"),
        RuntimeError("CUDA error: device-side assert triggered"),
        RuntimeError("cuDNN error: CUDNN_STATUS_INTERNAL_ERROR"),
        RuntimeError("RESOURCE_EXHAUSTED: rate limit exceeded"),
        _named("Unprintable", Exception)(),
    ],
)
def test_other_errors_are_not_out_of_memory(exc: BaseException) -> None:
    assert not is_out_of_memory(exc)


def test_outcomes() -> None:
    assert cell_outcome(types.SimpleNamespace(error_in_exec=None, error_before_exec=None)) == ("ok", None)
    assert cell_outcome(None) == ("interrupted", None)
    status, error = cell_outcome(types.SimpleNamespace(error_in_exec=KeyboardInterrupt(), error_before_exec=None))
    assert status == "interrupted" and error == {
        "type": "KeyboardInterrupt",
        "message_head": "",
        "out_of_memory": False,
    }
    # An awaiting cell interrupted under ipykernel 7: its task is cancelled.
    status, error = cell_outcome(types.SimpleNamespace(error_in_exec=asyncio.CancelledError(), error_before_exec=None))
    assert status == "interrupted" and error is not None and error["type"] == "CancelledError"
    status, error = cell_outcome(types.SimpleNamespace(error_in_exec=None, error_before_exec=SyntaxError("bad")))
    assert status == "error" and error is not None and error["type"] == "SyntaxError"
