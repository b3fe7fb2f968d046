"""A shell as cleanup.py reads it: IPython's namespaces, output cache and last
result, with the behaviour of its displayhook (no IPython needed)."""

from __future__ import annotations

import types
from typing import Any


class FakeDisplayHook:
    def __init__(self, shell: FakeShell) -> None:
        self.shell = shell
        self._ = self.__ = self.___ = ""
        self.prompt_count = 0

    def show(self, count: int, result: Any) -> None:
        """What IPython's displayhook does for an echoed result."""
        self.prompt_count = count
        self.___, self.__, self._ = self.__, self._, result
        pushed = {"_": self._, "__": self.__, "___": self.___, f"_{count}": result}
        self.shell.user_ns.update(pushed)
        self.shell.user_ns_hidden.update(pushed)
        self.shell.user_ns["_oh"][count] = result

    # This is IPython's flush, without its gc.collect().
    def flush(self) -> None:
        for n in range(1, self.prompt_count + 1):
            self.shell.user_ns_hidden.pop(f"_{n}", None)
            self.shell.user_ns.pop(f"_{n}", None)
        self.shell.user_ns["_oh"].clear()
        self._, self.__, self.___ = "", "", ""
        self.shell.user_ns.update({"_": "", "__": "", "___": ""})


class FakeResult:
    def __init__(self, info: Any) -> None:
        self.info = info
        self.execution_count: int | None = None
        self.result: Any = None
        self.error_before_exec: Any = None
        self.error_in_exec: Any = None


class FakeShell:
    def __init__(self) -> None:
        oh: dict[int, Any] = {}
        self.user_ns: dict[str, Any] = {"In": [], "Out": oh, "_oh": oh, "_ih": [], "_i": "", "get_ipython": len}
        self.user_ns_hidden: dict[str, Any] = dict(self.user_ns)
        self.user_global_ns = self.user_ns
        self.displayhook = FakeDisplayHook(self)
        self.history_manager = types.SimpleNamespace(output_hist=oh)
        self.last_execution_result = FakeResult(None)
        # As in IPython, this is the next cell's number.
        self.execution_count = 1


class Figures:
    def __init__(self) -> None:
        self.rss = 1000

    def __call__(self) -> dict[str, Any]:
        return {
            "host": {"rss_bytes": self.rss, "total_bytes": 1, "available_bytes": 1},
            "gpus": [
                {"index": 0, "torch": {"allocated_bytes": 5, "reserved_bytes": 8}, "nvml": {"used_bytes": 9}},
                {"index": 1, "torch": None, "nvml": None},
            ],
        }
