"""Cleanup's listings (inspect) against a fake IPython shell: their shape, holders largest first
with shared storage counted once (in an out-of-memory diagnosis too), raw bytes from 64 KiB on,
no strong reference kept, and listings that expire."""

from __future__ import annotations

import gc
import sys
import weakref

import pytest
from cleanup_harness import FakeShell
from fakes import known

from jupyterlab_vram_helper.cleanup import cleanup as cleanup_mod
from jupyterlab_vram_helper.cleanup.cleanup import Cleanup

real_torch = pytest.importorskip("torch")
np = pytest.importorskip("numpy")
pytestmark = pytest.mark.usefixtures("real_torch", "sys_last_restored")


def test_snapshot_shape(cleanup: Cleanup) -> None:
    assert cleanup.snapshot() == {
        "host": {"rss_bytes": 1000},
        "gpus": [
            {"index": 0, "allocated_bytes": 5, "reserved_bytes": 8, "nvml_used_bytes": 9},
            {"index": 1, "allocated_bytes": None, "reserved_bytes": None, "nvml_used_bytes": None},
        ],
    }


def test_inspect_lists_holders_largest_first_and_counts_shared_storage_once(cleanup: Cleanup, shell: FakeShell) -> None:
    a = real_torch.zeros(1000)
    shell.user_ns.update(
        {
            "a": a,
            "b": a,
            "v": a[:5],
            "small": real_torch.zeros(10),
            "n": 3,
            "sys": sys,
            "batch": [real_torch.zeros(100)],
            "ints": [1, 2, 3],
        }
    )
    shell.displayhook.show(4, a)
    result = cleanup.inspect()
    names = [e["name"] for e in result["entries"]]
    assert names[0] == "a" and set(names) == {"a", "b", "v", "small", "batch"}
    assert [e["total_bytes"] for e in result["entries"]] == sorted(
        (e["total_bytes"] for e in result["entries"]), reverse=True
    )
    by = {e["name"]: e for e in result["entries"]}
    assert by["a"]["total_bytes"] == 4000 and by["b"]["total_bytes"] == 0 and by["v"]["total_bytes"] == 0
    assert by["a"]["shared_with"] == ["b", "v"] and by["v"]["shared_with"] == ["a", "b"]
    # A name listed with 0 still says what it keeps alive, and under which name that is counted.
    assert by["b"]["shared_bytes"] == 4000 and by["b"]["counted_under"] == ["a"]
    assert by["b"]["shared_bytes_by_device"] == {"cpu": 4000} and by["a"]["shared_bytes_by_device"] == {}
    assert by["v"]["shared_bytes"] == 4000 and by["v"]["counted_under"] == ["a"]
    assert by["a"]["shared_bytes"] == 0 and by["a"]["counted_under"] == []
    assert by["small"]["shared_bytes"] == 0 and by["small"]["shared_with"] == []
    assert set(by["a"]["output_cache_refs"]) == {"Out[4]", "_4", "_"}
    assert by["batch"]["summary"] == "list of 1 tensor" and by["batch"]["kind"] == "container"
    assert by["a"]["summary"] == "float32[1000] cpu" and by["a"]["type_name"] == "torch.Tensor"
    [cache] = [h for h in result["hidden"] if h["holder"] == "output_cache"]
    assert cache["total_bytes"] == 4000 and "also held by named variables" in cache["summary"]
    assert cache["named_bytes_by_device"] == {"cpu": 4000}  # all of it is a's too
    assert result["truncated"] is False
    assert cleanup.inspect(max_entries=2)["truncated"] is True


@pytest.mark.parametrize("inspect_with", ["held_references", "plain_inspect"])
def test_an_oom_diagnosis_counts_memory_held_by_a_name_and_hidden_holders_once(
    cleanup: Cleanup, shell: FakeShell, inspect_with: str
) -> None:
    from jupyterlab_vram_helper.oom.oom_watch import OomWatch

    size = 100 * 1024 * 1024
    data = bytearray(size)
    shell.user_ns["x"] = data
    shell.displayhook.show(3, data)  # Out[3], _3, _
    shell.last_execution_result.result = data  # and the last cell's result
    inspect = (
        cleanup.held_references if inspect_with == "held_references" else (lambda: cleanup.inspect(keep_listing=False))
    )
    figures = {
        "host": {"rss_bytes": 2 * size, "total_bytes": 8 << 30, "available_bytes": 50 << 20, "container": None},
        "gpus": [],
    }
    watch = OomWatch(read_figures=lambda: figures, inspect=inspect)
    diagnosis = watch.diagnose("MemoryError", "Unable to allocate 120. MiB for an array with shape (15728640,)")
    del data
    assert diagnosis is not None
    holders = {h["holder"]: h["bytes"] for h in diagnosis["stale_holders"]}
    assert holders["name"] >= size and holders["output_cache"] >= size  # each holder's own figure
    assert size <= known(diagnosis["stale_bytes"]) < size + 4096  # together: one buffer, not two or three


def test_inspect_lists_raw_bytes_from_64_kib_on_counting_a_buffer_once(cleanup: Cleanup, shell: FakeShell) -> None:
    import array

    raw = bytearray(3 * 2**20)
    samples = array.array("d", bytes(2**20))  # 131,072 doubles
    shell.user_ns.update(
        {
            "raw": raw,
            "view": memoryview(raw),
            "samples": samples,
            "blob": b"\x00" * 2**20,
            "header": b"\x00" * 1000,
            "chunks": [bytes(100_000), bytes(100_000)],
        }
    )
    by = {e["name"]: e for e in cleanup.inspect()["entries"]}
    assert set(by) == {"raw", "view", "samples", "blob", "chunks"}  # a 1,000-byte header is not worth a row
    assert by["raw"]["kind"] == "bytes" and by["raw"]["summary"] == "bytearray[3,145,728]"
    assert by["raw"]["total_bytes"] == sys.getsizeof(raw) >= 3 * 2**20
    assert by["view"]["total_bytes"] == 0 and by["view"]["shared_with"] == ["raw"]  # the view's memory is raw's
    assert by["view"]["shared_bytes"] == by["raw"]["total_bytes"] and by["view"]["counted_under"] == ["raw"]
    assert by["samples"]["total_bytes"] == 2**20 and by["samples"]["summary"] == "array[131,072]"
    assert by["chunks"]["summary"] == "list of 2 bytes objects" and by["chunks"]["total_bytes"] >= 200_000


def test_listings_keep_no_strong_reference(cleanup: Cleanup, shell: FakeShell) -> None:
    shell.user_ns["t"] = real_torch.zeros(10)
    shell.user_ns["box"] = [real_torch.zeros(10)]
    w = weakref.ref(shell.user_ns["t"])
    wb = weakref.ref(shell.user_ns["box"][0])
    cleanup.inspect()
    del shell.user_ns["t"], shell.user_ns["box"]
    gc.collect()
    assert w() is None and wb() is None


def test_listings_expire(cleanup: Cleanup) -> None:
    first = cleanup.inspect()["listing_id"]
    for _ in range(cleanup_mod.KEPT_LISTINGS):
        cleanup.inspect()
    assert not cleanup.has_listing(first)


def test_an_unkept_inspect_pushes_no_listing_out(cleanup: Cleanup) -> None:
    first = cleanup.inspect()["listing_id"]
    for _ in range(cleanup_mod.KEPT_LISTINGS):
        unkept = cleanup.inspect(keep_listing=False)["listing_id"]  # as the OOM diagnosis asks
    assert cleanup.has_listing(first) and not cleanup.has_listing(unkept)
