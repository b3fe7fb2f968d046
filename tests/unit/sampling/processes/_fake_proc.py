"""A fake /proc tree for the process tree's unit tests."""

from __future__ import annotations

from pathlib import Path

KB = 1024


class FakeProc:
    def __init__(self, root: Path):
        self.root = root
        root.mkdir(exist_ok=True)

    def add(
        self,
        pid: int,
        ppid: int,
        start_time: int = 1000,
        name: str = "python3",
        argv: tuple[str, ...] = ("python3",),
        rss_pages: int = 100,
        state: str = "S",
        threads: tuple[int, ...] = (),
        rollup_kb: tuple[int, int, int, int] | None = (400, 300, 200, 0),
        environ: dict[str, str] | None = None,
    ) -> None:
        """One process: stat, threads, cmdline, environ and smaps_rollup (Rss, Pss, Private, Swap in kB)."""
        d = self.root / str(pid)
        d.mkdir(exist_ok=True)
        fields = [state, str(ppid)] + ["0"] * 15 + ["1", "0", str(start_time), "1000000", str(rss_pages)] + ["0"] * 20
        (d / "stat").write_text(f"{pid} ({name}) " + " ".join(fields) + "\n")
        (d / "cmdline").write_bytes(b"\0".join(a.encode() for a in argv) + b"\0")
        (d / "environ").write_bytes(b"\0".join(f"{k}={v}".encode() for k, v in (environ or {}).items()))
        if rollup_kb is not None:
            rss, pss, private, swap = rollup_kb
            (d / "smaps_rollup").write_text(
                "00400000-7fff [rollup]\n"
                f"Rss: {rss} kB\nPss: {pss} kB\nShared_Clean: 0 kB\nPrivate_Clean: {private // 2} kB\n"
                f"Private_Dirty: {private - private // 2} kB\nSwap: {swap} kB\n"
            )
        for tid in (pid, *threads):
            (d / "task" / str(tid)).mkdir(parents=True, exist_ok=True)
            children = d / "task" / str(tid) / "children"
            if not children.exists():
                children.write_text("")

    def set_children(self, pid: int, children: list[int], tid: int | None = None) -> None:
        (self.root / str(pid) / "task" / str(tid or pid) / "children").write_text(" ".join(map(str, children)) + " ")

    def remove(self, pid: int) -> None:
        import shutil

        shutil.rmtree(self.root / str(pid))
