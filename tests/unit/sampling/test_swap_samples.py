"""Which swap figures cause a sample: the kernel's swapped bytes and the swap limit do, the
machine's swap and the whole cgroup's swap usage do not."""

from __future__ import annotations

from _swap_helpers import GIB, MIB

from jupyterlab_vram_helper.sampling.sample import significant_change


def _figures(
    swapped: int | None = 0,
    swap_free: int | None = 4 * GIB,
    swap_usage: int | None = 0,
    swap_limit: int | None = 2 * GIB,
) -> dict:
    return {
        "host": {
            "rss_bytes": GIB,
            "total_bytes": 16 * GIB,
            "available_bytes": 8 * GIB,
            "container": {
                "limit_bytes": 4 * GIB,
                "usage_bytes": GIB,
                "inactive_file_bytes": 0,
                "oom_kill_count": 0,
                "cgroup_version": 2,
                "swap_limit_bytes": swap_limit,
                "swap_usage_bytes": swap_usage,
            },
            "swapped_bytes": swapped,
            "swap_total_bytes": 8 * GIB,
            "swap_free_bytes": swap_free,
        },
        "torch": {"imported": False, "cuda_initialized": False},
        "gpus": [],
    }


def test_the_kernels_swapped_bytes_and_the_swap_limit_cause_a_sample_the_machines_swap_does_not() -> None:
    base = _figures()
    assert significant_change(base, _figures(swapped=100 * MIB), MIB)  # the kernel's own pages
    assert not significant_change(base, _figures(swapped=MIB // 2), MIB)  # within the threshold
    assert significant_change(base, _figures(swapped=None), MIB)  # known -> unknown
    assert significant_change(base, _figures(swap_limit=3 * GIB), MIB)  # like the memory limit
    assert not significant_change(base, _figures(swap_free=GIB), MIB)  # other processes move it
    assert not significant_change(base, _figures(swap_usage=GIB), MIB)  # the whole cgroup's, like its usage
