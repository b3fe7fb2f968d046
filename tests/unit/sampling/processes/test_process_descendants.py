"""Finding the kernel's descendants in a fake /proc: children files, the stat scan, re-parented processes."""

from __future__ import annotations

from pathlib import Path

import pytest
from _fake_proc import FakeProc

from jupyterlab_vram_helper.sampling.processes import proc_files
from jupyterlab_vram_helper.sampling.processes.descendants import Descendants

KERNEL = 100


@pytest.fixture
def proc(tmp_path: Path) -> FakeProc:
    fake = FakeProc(tmp_path / "proc")
    fake.add(KERNEL, 1, threads=(105,))
    fake.add(101, KERNEL, start_time=2000)
    fake.add(102, KERNEL, start_time=2001)
    fake.add(103, 101, start_time=2002)
    fake.add(200, 1, start_time=3000, name="unrelated")
    fake.set_children(KERNEL, [102])
    fake.set_children(KERNEL, [101], tid=105)  # forked by another thread of the kernel
    fake.set_children(101, [103])
    return fake


def _tree(found) -> list[tuple[int, int, bool]]:
    return [(d.stat.pid, d.depth, d.reparented) for d in found]


@pytest.mark.parametrize("children_files", [True, False])
def test_every_descendant_is_found_parents_first(proc: FakeProc, children_files: bool) -> None:
    finder = Descendants(KERNEL, str(proc.root), use_children_files=children_files)
    assert finder.method == ("task_children" if children_files else "stat_scan")
    assert _tree(finder.find()) == [(101, 1, False), (103, 2, False), (102, 1, False)]


def test_the_method_is_chosen_by_whether_the_children_files_exist(proc: FakeProc) -> None:
    assert Descendants(KERNEL, str(proc.root)).method == "task_children"
    for tid in (KERNEL, 105):
        (proc.root / str(KERNEL) / "task" / str(tid) / "children").unlink()
    assert Descendants(KERNEL, str(proc.root)).method == "stat_scan"


@pytest.mark.parametrize("children_files", [True, False])
def test_a_reparented_process_is_followed_while_it_lives(proc: FakeProc, children_files: bool) -> None:
    finder = Descendants(KERNEL, str(proc.root), use_children_files=children_files)
    finder.find()
    # 101 ends; 103 (a daemon now) is re-parented to init and starts a child of its own.
    proc.remove(101)
    proc.add(103, 1, start_time=2002)
    proc.add(104, 103, start_time=2003)
    proc.set_children(103, [104])
    assert _tree(finder.find()) == [(102, 1, False), (103, 1, True), (104, 2, True)]
    assert finder.is_followed(103, 2002)


def test_a_reused_pid_is_not_followed(proc: FakeProc) -> None:
    finder = Descendants(KERNEL, str(proc.root))
    finder.find()
    proc.remove(101)
    proc.add(103, 1, start_time=9999)  # 103 ended; another process got its pid
    assert _tree(finder.find()) == [(102, 1, False)]
    assert not finder.is_followed(103, 2002) and not finder.is_followed(103, 9999)


def test_zombies_and_a_child_whose_pid_went_elsewhere_are_left_out(proc: FakeProc) -> None:
    proc.add(102, KERNEL, start_time=2001, state="Z")
    proc.add(101, 1, start_time=2000)  # listed as the kernel's child, but its parent is another now
    assert _tree(Descendants(KERNEL, str(proc.root)).find()) == []


def test_the_children_walk_reads_nothing_of_other_processes(proc: FakeProc, monkeypatch: pytest.MonkeyPatch) -> None:
    read: list[str] = []
    original = proc_files.read_bytes

    def spy(path: str, limit: int = 4096) -> bytes | None:
        read.append(path)
        return original(path, limit)

    monkeypatch.setattr(proc_files, "read_bytes", spy)
    Descendants(KERNEL, str(proc.root)).find()
    assert read and not [p for p in read if "/200/" in p]


def test_stat_lines_with_odd_names_parse() -> None:
    stat = proc_files.parse_stat(b"42 (a (b) c) R 7 " + b"0 " * 15 + b"1 0 555 9 3 " + b"0 " * 10)
    assert stat is not None
    assert (stat.pid, stat.name, stat.state, stat.ppid, stat.start_time) == (42, "a (b) c", "R", 7, 555)
    assert stat.rss_bytes == 3 * proc_files.PAGE_BYTES
    assert proc_files.parse_stat(b"garbage") is None
