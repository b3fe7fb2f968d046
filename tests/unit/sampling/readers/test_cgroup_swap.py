"""The container's swap limit and usage, from fake cgroup trees: cgroup v2 (memory.swap.*) and
cgroup v1 (memsw counts memory and swap together), the tightest limit on the path, unknown where
the files are absent or malformed."""

from __future__ import annotations

import pytest
from _swap_helpers import GIB, MIB, V1_CGROUP, V1_UNLIMITED, _cgroup, _swap, _v1_dir, _v2_dir

# --- the container's swap: cgroup v2 --------------------------------------------------------


def test_v2_swap_limit_and_usage_of_the_kernels_cgroup(tmp_path) -> None:
    root = tmp_path / "cg"
    _v2_dir(root, "/k", str(4 * GIB), 3 * GIB, swap_max=f"{2 * GIB}\n", swap_current=f"{512 * MIB}\n")
    c = _cgroup(tmp_path, "0::/k\n", root)
    assert _swap(c) == (2 * GIB, 512 * MIB)
    assert c.swap_path == str(root / "k")


def test_v2_swap_max_is_no_limit_and_zero_is_no_swap(tmp_path) -> None:
    root = tmp_path / "cg"
    d = _v2_dir(root, "/k", str(4 * GIB), 3 * GIB, swap_max="max\n", swap_current="4096\n")
    c = _cgroup(tmp_path, "0::/k\n", root)
    assert _swap(c) == (None, 4096)  # no limit, usage known
    (d / "memory.swap.max").write_text("0\n")
    assert _swap(c) == (0, 4096)  # read anew at each reading: a container that may not swap at all


def test_v2_without_swap_files_the_swap_is_unknown(tmp_path) -> None:
    root = tmp_path / "cg"
    _v2_dir(root, "/k", str(4 * GIB), 3 * GIB)  # a kernel without swap accounting
    assert _swap(_cgroup(tmp_path, "0::/k\n", root)) == (None, None)


@pytest.mark.parametrize(
    "swap_max, swap_current",
    [
        ("lots\n", "12 MB\n"),
        ("-1\n", "-4096\n"),
        ("", ""),
        ("\xff\n", "1.5\n"),
        ("max max\n", "nan\n"),
    ],
)
def test_v2_malformed_swap_files_are_unknown(tmp_path, swap_max, swap_current) -> None:
    root = tmp_path / "cg"
    _v2_dir(root, "/k", str(4 * GIB), 3 * GIB, swap_max=swap_max, swap_current=swap_current)
    c = _cgroup(tmp_path, "0::/k\n", root)
    assert _swap(c) == (None, None)
    assert c.read()["limit_bytes"] == 4 * GIB  # type: ignore[index]  # the memory figures still read


def test_v2_the_tightest_swap_limit_may_sit_above_the_tightest_memory_limit(tmp_path) -> None:
    """A slice's MemorySwapMax= above a scope's MemoryMax=: swapping ends at the slice's, so its figures are read."""
    root = tmp_path / "cg"
    _v2_dir(root, "/", "max", 50 * GIB)
    _v2_dir(root, "/jupyter.slice", "max", 10 * GIB, swap_max=f"{GIB}\n", swap_current=f"{900 * MIB}\n")
    _v2_dir(root, "/jupyter.slice/kernel.scope", str(4 * GIB), 3 * GIB, swap_max="max\n", swap_current=f"{100 * MIB}\n")
    c = _cgroup(tmp_path, "0::/jupyter.slice/kernel.scope\n", root)
    figures = c.read()
    assert figures is not None
    assert figures["limit_bytes"] == 4 * GIB and c.path == str(root / "jupyter.slice/kernel.scope")
    assert (figures["swap_limit_bytes"], figures["swap_usage_bytes"]) == (GIB, 900 * MIB)
    assert c.swap_path == str(root / "jupyter.slice")


def test_v2_the_smallest_swap_limit_on_the_path_wins(tmp_path) -> None:
    root = tmp_path / "cg"
    _v2_dir(root, "/a", "max", 0, swap_max=f"{8 * GIB}\n", swap_current="1\n")
    _v2_dir(root, "/a/b", "max", 0, swap_max="0\n", swap_current="0\n")
    _v2_dir(root, "/a/b/c", str(4 * GIB), 0, swap_max=f"{2 * GIB}\n", swap_current="2\n")
    c = _cgroup(tmp_path, "0::/a/b/c\n", root)
    assert c.path == str(root / "a/b/c")
    assert _swap(c) == (0, 0)  # b allows no swap: none of the kernel's pages can go there
    assert c.swap_path == str(root / "a/b")


def test_v2_without_any_swap_limit_the_usage_is_the_memory_limited_cgroups(tmp_path) -> None:
    root = tmp_path / "cg"
    _v2_dir(root, "/a", "max", 0, swap_max="max\n", swap_current=f"{3 * GIB}\n")
    _v2_dir(root, "/a/b", str(4 * GIB), 0, swap_max="max\n", swap_current=f"{GIB}\n")
    c = _cgroup(tmp_path, "0::/a/b\n", root)
    assert _swap(c) == (None, GIB)
    assert c.swap_path == c.path == str(root / "a/b")


# --- the container's swap: cgroup v1 (memsw counts memory and swap together) ----------------


def test_v1_swap_is_memsw_less_memory(tmp_path) -> None:
    # docker run --memory 3g --memory-swap 5g: 2 GiB may go to swap
    root = tmp_path / "cg"
    _v1_dir(root, "/", V1_UNLIMITED, 9 * GIB, V1_UNLIMITED, f"{10 * GIB}\n")
    _v1_dir(root, "/docker/abc", f"{3 * GIB}\n", GIB, f"{5 * GIB}\n", f"{GIB + 300 * MIB}\n")
    c = _cgroup(tmp_path, V1_CGROUP, root)
    assert _swap(c) == (2 * GIB, 300 * MIB)
    assert c.read()["cgroup_version"] == 1  # type: ignore[index]


def test_v1_memsw_equal_to_the_memory_limit_is_no_swap(tmp_path) -> None:
    root = tmp_path / "cg"
    _v1_dir(root, "/docker/abc", f"{3 * GIB}\n", GIB, f"{3 * GIB}\n", f"{GIB}\n")
    assert _swap(_cgroup(tmp_path, V1_CGROUP, root)) == (0, 0)


def test_v1_unlimited_memsw_is_no_swap_limit_with_the_usage_known(tmp_path) -> None:
    root = tmp_path / "cg"
    _v1_dir(root, "/docker/abc", f"{3 * GIB}\n", GIB, V1_UNLIMITED, f"{GIB + 4096}\n")
    assert _swap(_cgroup(tmp_path, V1_CGROUP, root)) == (None, 4096)


def test_v1_without_memsw_files_the_swap_is_unknown(tmp_path) -> None:
    root = tmp_path / "cg"
    _v1_dir(root, "/docker/abc", f"{3 * GIB}\n", GIB)  # booted with swapaccount=0
    assert _swap(_cgroup(tmp_path, V1_CGROUP, root)) == (None, None)


@pytest.mark.parametrize("memsw_limit, memsw_usage", [("lots\n", "x\n"), ("-1\n", ""), ("", "1.5\n")])
def test_v1_malformed_memsw_is_unknown(tmp_path, memsw_limit, memsw_usage) -> None:
    root = tmp_path / "cg"
    _v1_dir(root, "/docker/abc", f"{3 * GIB}\n", GIB, memsw_limit, memsw_usage)
    c = _cgroup(tmp_path, V1_CGROUP, root)
    assert _swap(c) == (None, None)
    assert c.read()["limit_bytes"] == 3 * GIB  # type: ignore[index]


def test_v1_a_memsw_usage_below_the_memory_usage_is_no_negative_swap(tmp_path) -> None:
    # The two counters are read one after the other: memory may have grown in between.
    root = tmp_path / "cg"
    _v1_dir(root, "/docker/abc", f"{3 * GIB}\n", GIB + 8192, f"{4 * GIB}\n", f"{GIB}\n")
    assert _swap(_cgroup(tmp_path, V1_CGROUP, root)) == (GIB, 0)


def test_v1_the_tightest_swap_limit_may_sit_on_another_ancestor(tmp_path) -> None:
    """memsw caps memory and swap of /docker's whole subtree; abc's 3 GiB memory limit pushes pages out.

    abc holds at most 3 GiB in memory, and /docker at most 8 GiB in memory and swap: 5 GiB may go to swap
    (not /docker's own memsw less its own memory limit, 0)."""
    root = tmp_path / "cg"
    _v1_dir(root, "/docker", f"{8 * GIB}\n", 2 * GIB, f"{8 * GIB}\n", f"{2 * GIB + 64 * MIB}\n")
    _v1_dir(root, "/docker/abc", f"{3 * GIB}\n", GIB, V1_UNLIMITED, f"{GIB + MIB}\n")
    c = _cgroup(tmp_path, V1_CGROUP, root)
    figures = c.read()
    assert figures is not None
    assert figures["limit_bytes"] == 3 * GIB and c.path == str(root / "memory/docker/abc")
    # /docker's memsw limit less abc's memory limit; /docker's memsw usage less its memory usage
    assert (figures["swap_limit_bytes"], figures["swap_usage_bytes"]) == (5 * GIB, 64 * MIB)
    assert c.swap_path == str(root / "memory/docker")


def test_v1_memsw_on_a_child_below_the_memory_limited_cgroup(tmp_path) -> None:
    """The memory limit on /docker, memsw on the kernel's own cgroup below it: 5 GiB memsw less 3 GiB memory."""
    root = tmp_path / "cg"
    _v1_dir(root, "/docker", f"{3 * GIB}\n", 2 * GIB, V1_UNLIMITED, f"{3 * GIB}\n")
    _v1_dir(root, "/docker/abc", V1_UNLIMITED, GIB, f"{5 * GIB}\n", f"{GIB + 300 * MIB}\n")
    c = _cgroup(tmp_path, V1_CGROUP, root)
    figures = c.read()
    assert figures is not None
    assert figures["limit_bytes"] == 3 * GIB and c.path == str(root / "memory/docker")
    # abc's memsw limit less /docker's memory limit; abc's memsw usage less its memory usage
    assert (figures["swap_limit_bytes"], figures["swap_usage_bytes"]) == (2 * GIB, 300 * MIB)
    assert c.swap_path == str(root / "memory/docker/abc")


def test_v1_the_swap_cgroup_is_the_one_with_the_smallest_memsw_limit(tmp_path) -> None:
    """/docker: 8 GiB memory, 9 GiB memsw (1 GiB apart); abc: 3 GiB memory, 6 GiB memsw (3 GiB apart).
    abc's pages: at most 3 GiB in memory, at most 6 GiB in both: 3 GiB of swap, /docker's 9 GiB allows more."""
    root = tmp_path / "cg"
    _v1_dir(root, "/docker", f"{8 * GIB}\n", 2 * GIB, f"{9 * GIB}\n", f"{2 * GIB}\n")
    _v1_dir(root, "/docker/abc", f"{3 * GIB}\n", GIB, f"{6 * GIB}\n", f"{GIB + MIB}\n")
    c = _cgroup(tmp_path, V1_CGROUP, root)
    assert _swap(c) == (3 * GIB, MIB)
    assert c.swap_path == c.path == str(root / "memory/docker/abc")


def test_v1_a_memsw_limit_on_a_parent_below_the_memory_limit_is_no_swap(tmp_path) -> None:
    """A 2 GiB memsw on /docker above abc's 3 GiB memory limit: memory fills that memsw first, nothing to swap."""
    root = tmp_path / "cg"
    _v1_dir(root, "/docker", V1_UNLIMITED, GIB, f"{2 * GIB}\n", f"{GIB}\n")
    _v1_dir(root, "/docker/abc", f"{3 * GIB}\n", GIB, V1_UNLIMITED, f"{GIB}\n")
    assert _swap(_cgroup(tmp_path, V1_CGROUP, root)) == (0, 0)


def test_v1_the_swap_limit_follows_a_changed_memory_limit(tmp_path) -> None:
    """The subtracted memory limit is the one read for limit_bytes, at the same reading."""
    root = tmp_path / "cg"
    _v1_dir(root, "/docker", f"{8 * GIB}\n", 2 * GIB, f"{8 * GIB}\n", f"{2 * GIB}\n")
    abc = _v1_dir(root, "/docker/abc", f"{3 * GIB}\n", GIB, V1_UNLIMITED, f"{GIB}\n")
    c = _cgroup(tmp_path, V1_CGROUP, root)
    assert _swap(c)[0] == 5 * GIB
    (abc / "memory.limit_in_bytes").write_text(f"{6 * GIB}\n")  # docker update --memory 6g
    figures = c.read()
    assert figures is not None and (figures["limit_bytes"], figures["swap_limit_bytes"]) == (6 * GIB, 2 * GIB)
