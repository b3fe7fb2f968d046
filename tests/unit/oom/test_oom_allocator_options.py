"""expandable_segments exists from torch 2.1: a diagnosis says whether this kernel's torch knows it,
and whether its allocator has them on already (then turning them on is no remedy)."""

from __future__ import annotations

import sys
import types
from typing import Any

import pytest

from jupyterlab_vram_helper.oom.oom_message import old_torch_message
from jupyterlab_vram_helper.oom.oom_watch import OomWatch, allocator_settings_expandable

OLD = (
    "CUDA out of memory. Tried to allocate 2.00 GiB (GPU 0; 15.78 GiB total capacity; 12.25 GiB already allocated; "
    "1.07 GiB free; 13.73 GiB reserved in total by PyTorch) If reserved memory is >> allocated memory try setting "
    "max_split_size_mb to avoid fragmentation."
)
NEW = (
    "CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 15.77 GiB of which 1.00 GiB is "
    "free. Including non-PyTorch memory, this process has 14.70 GiB memory in use. Of the allocated memory 14.00 GiB "
    "is allocated by PyTorch, and 100.00 MiB is reserved by PyTorch but unallocated."
)


def _watch() -> OomWatch:
    figures: dict[str, Any] = {"host": {}, "gpus": []}
    return OomWatch(read_figures=lambda: figures, inspect=lambda: {}, names_in_use=lambda t, m: frozenset())


def _with_torch(monkeypatch: pytest.MonkeyPatch, version: Any) -> None:
    fake = types.ModuleType("torch")
    if version is not None:
        fake.__version__ = version  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "torch", fake)


def test_the_message_format_of_torch_2_0_and_before() -> None:
    assert old_torch_message(OLD)
    assert not old_torch_message(NEW)
    assert not old_torch_message("CUDA error: out of memory")
    assert not old_torch_message("x" * 100000)


@pytest.mark.parametrize(
    "version,message,known",
    [
        ("2.0.1+cu118", NEW, False),  # the loaded torch decides
        ("1.13.1", OLD, False),
        ("2.1.0a0+git1234", OLD, True),
        ("2.4.1", NEW, True),
        (None, OLD, False),  # no version to read: the old format says no
        (None, NEW, None),  # nor a format that tells: unknown
    ],
)
def test_expandable_segments_is_known_from_torch_2_1(
    monkeypatch: pytest.MonkeyPatch, version: Any, message: str, known: Any
) -> None:
    _with_torch(monkeypatch, version)
    d = _watch().diagnose("OutOfMemoryError", message)
    assert d is not None and d.get("expandable_segments") is known


def _with_cuda_torch(monkeypatch: pytest.MonkeyPatch, initialized: bool, settings: Any) -> list:
    """A torch whose CUDA is (or is not) initialised, with the allocator settings getter of
    recent PyTorch (``settings`` None: a torch without it). Returns the getter's calls."""
    calls: list = []
    fake = types.ModuleType("torch")
    fake.__version__ = "2.9.0"  # type: ignore[attr-defined]
    fake.cuda = types.SimpleNamespace(is_initialized=lambda: initialized)  # type: ignore[attr-defined]
    fake._C = types.SimpleNamespace()  # type: ignore[attr-defined]
    if settings is not None:

        def get_allocator_settings() -> Any:
            calls.append(1)
            return settings

        fake._C._accelerator_getAllocatorSettings = get_allocator_settings  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "torch", fake)
    return calls


@pytest.mark.parametrize(
    "settings,on",
    [
        ("", False),
        ("max_split_size_mb:128", False),
        ("expandable_segments:True", True),
        ("max_split_size_mb:128, expandable_segments : true", True),
        ("expandable_segments:True,expandable_segments:False", False),  # the last one counts
        ("expandable_segments:False", False),
        (None, None),  # a torch before the getter: unknown
    ],
)
def test_a_diagnosis_says_whether_the_allocator_has_expandable_segments_on(
    monkeypatch: pytest.MonkeyPatch, settings: Any, on: Any
) -> None:
    _with_cuda_torch(monkeypatch, True, settings)
    d = _watch().diagnose("OutOfMemoryError", NEW)
    assert d is not None and d.get("expandable_segments_on") is on


def test_before_cuda_starts_the_settings_are_not_asked_for(monkeypatch: pytest.MonkeyPatch) -> None:
    # Asked then, torch would parse the environment as it stands and fix the allocator's settings.
    calls = _with_cuda_torch(monkeypatch, False, "expandable_segments:True")
    d = _watch().diagnose("OutOfMemoryError", NEW)
    assert d is not None and d.get("expandable_segments_on") is None
    assert calls == []


def test_neither_is_said_of_tensorflow_or_host(monkeypatch: pytest.MonkeyPatch) -> None:
    calls = _with_cuda_torch(monkeypatch, True, "expandable_segments:True")
    tf = _watch().diagnose(
        "ResourceExhaustedError",
        "OOM when allocating tensor with shape[32,1024] and type float on /job:localhost/replica:0/task:0/device:GPU:0",
    )
    host = _watch().diagnose("MemoryError", "")
    for d in (tf, host):
        assert d is not None and d.get("expandable_segments") is None and d.get("expandable_segments_on") is None
    assert calls == []


def test_a_getter_that_gives_no_text_is_unknown() -> None:
    torch = types.SimpleNamespace(_C=types.SimpleNamespace(_accelerator_getAllocatorSettings=lambda: None))
    assert allocator_settings_expandable(torch) is None
