"""Drive a real ipykernel the way the JupyterLab frontend does.

Shared by the end-to-end tests, the CUDA tests and benchmarks/. It bootstraps
the helper with the exact code the frontend executes (`node
scripts/bundle-helper.mjs --stdout`), opens the `jupyterlab-vram` comm with a
`comm_open` on the shell channel, and collects every IOPub message so tests can
check both what the helper sent and what it must not have sent (output).
"""

from __future__ import annotations

import ast
import contextlib
import os
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from queue import Empty
from typing import Any

REPO_ROOT = Path(__file__).resolve().parent.parent
TARGET = "jupyterlab-vram"
OUTPUT_TYPES = ("stream", "error", "display_data", "execute_result", "update_display_data")
# The user expression the frontend runs the bootstrap as (BOOTSTRAP_EXPRESSION in
# src/kernel/helperBootstrapLazy.ts, which says why it is not the cell's source).
BOOTSTRAP_EXPRESSION = "jupyterlab_vram_bootstrap"


def bootstrap_code() -> str:
    """The frontend's HELPER_BOOTSTRAP_CODE, generated from the working tree.

    Where node is absent (a bare GPU machine), ``VRAM_BOOTSTRAP_FILE`` names the
    same code written beforehand by ``node scripts/bundle-helper.mjs --stdout``.
    """
    prebuilt = os.environ.get("VRAM_BOOTSTRAP_FILE")
    if prebuilt:
        return Path(prebuilt).read_text(encoding="utf-8")
    return subprocess.run(
        ["node", "scripts/bundle-helper.mjs", "--stdout"],
        cwd=REPO_ROOT,
        check=True,
        capture_output=True,
        text=True,
        timeout=60,
    ).stdout


def _parse_date(value: Any) -> float:
    # jupyter_client gives datetime objects (or ISO strings on some versions)
    if hasattr(value, "timestamp"):
        return value.timestamp()
    from datetime import datetime

    return datetime.fromisoformat(str(value).replace("Z", "+00:00")).timestamp()


class Kernel:
    def __init__(self, python: str | None = None, env: dict[str, str] | None = None):

        # VRAM_TEST_KERNEL_PYTHON: run the kernels under another interpreter
        # (another IPython release, another Python) than the tests themselves.
        python = python or os.environ.get("VRAM_TEST_KERNEL_PYTHON") or sys.executable

        kernel_env = dict(os.environ)
        kernel_env.update(env or {})
        self._start(python, kernel_env)
        self.iopub: list[dict[str, Any]] = []  # every message, in arrival order
        self.arrival: dict[str, float] = {}  # msg_id -> local time.time() on receipt

    def _start(self, python: str, kernel_env: dict[str, str], tries: int = 3) -> None:
        """Start the kernel and wait for its first reply, on new ports after a lost race for them.

        jupyter_client picks free ports and the kernel binds them a moment later, so a kernel
        started at the same time elsewhere (another pytest worker's, or a Dask scheduler a test
        started) can take one first: the kernel then dies at once with "Address already in use",
        before any code of ours runs in it. Each try has a manager of its own, with new ports.
        """
        from jupyter_client.kernelspec import KernelSpec
        from jupyter_client.manager import KernelManager

        for attempt in range(tries):
            self.km = KernelManager()
            # The interpreter under test, not whatever "python3" kernelspec exists.
            self.km._kernel_spec = KernelSpec(
                argv=[python, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
                display_name="jupyterlab-vram test",
                language="python",
            )
            self.km.start_kernel(env=kernel_env)
            self.kc = self.km.client()
            self.kc.start_channels()
            try:
                self.kc.wait_for_ready(timeout=60)
                return
            except RuntimeError as exc:
                if "died before replying" not in str(exc) or attempt == tries - 1:
                    raise
                self.shutdown()

    # -- low level ------------------------------------------------------------

    def pump(self, timeout: float = 0.1) -> int:
        """Move waiting IOPub messages into self.iopub; returns how many."""
        count = 0
        deadline = time.monotonic() + timeout
        while True:
            remaining = max(0.0, deadline - time.monotonic())
            try:
                msg = self.kc.get_iopub_msg(timeout=remaining)
            except Empty:
                return count
            self.arrival[msg["header"]["msg_id"]] = time.time()
            self.iopub.append(msg)
            count += 1

    def shutdown(self) -> None:
        try:
            self.kc.stop_channels()
        finally:
            self.km.shutdown_kernel(now=True)

    # -- execution ------------------------------------------------------------

    def execute(
        self,
        code: str,
        silent: bool = False,
        store_history: bool = True,
        user_expressions: dict[str, str] | None = None,
        timeout: float = 60,
        cell_id: str | None = None,
    ) -> dict[str, Any]:
        """Run code and wait for its reply and its idle status; returns the reply content.

        ``cell_id`` is sent as JupyterLab does (``metadata.cellId``); ipykernel
        hands it to IPython as ``info.cell_id``.
        """
        msg_id = self.submit(code, silent, store_history, user_expressions, cell_id)
        return self.wait_reply(msg_id, timeout, what=code[:60])

    def submit(
        self,
        code: str,
        silent: bool = False,
        store_history: bool = True,
        user_expressions: dict[str, str] | None = None,
        cell_id: str | None = None,
    ) -> str:
        """Send an execute_request without waiting; returns its msg_id."""
        content = {
            "code": code,
            "silent": silent,
            "store_history": store_history,
            "user_expressions": user_expressions or {},
            "allow_stdin": False,
            "stop_on_error": True,
        }
        metadata = {"cellId": cell_id} if cell_id is not None else {}
        msg = self.kc.session.msg("execute_request", content, metadata=metadata)
        self.kc.shell_channel.send(msg)
        return msg["header"]["msg_id"]

    def wait_reply(self, msg_id: str, timeout: float = 60, what: str = "") -> dict[str, Any]:
        """Wait for the execute_reply and the idle status of ``msg_id``; returns the reply content."""
        deadline = time.monotonic() + timeout
        reply = None
        while reply is None:
            if time.monotonic() > deadline:
                raise TimeoutError(f"no execute_reply for {what or msg_id!r}")
            try:
                msg = self.kc.get_shell_msg(timeout=0.05)
                if msg["parent_header"].get("msg_id") == msg_id:
                    reply = msg
            except Empty:
                pass
            self.pump(0.0)
        while not self._idle_seen(msg_id):
            if time.monotonic() > deadline:
                raise TimeoutError("no idle status")
            self.pump(0.1)
        reply["content"]["_msg_id"] = msg_id
        return reply["content"]

    def _idle_seen(self, msg_id: str) -> bool:
        return any(
            m["msg_type"] == "status"
            and m["parent_header"].get("msg_id") == msg_id
            and m["content"]["execution_state"] == "idle"
            for m in self.iopub
        )

    def status_times(self, msg_id: str) -> tuple[float, float]:
        """Kernel-side (busy, idle) header times of one request."""
        busy = idle = None
        for m in self.iopub:
            if m["msg_type"] == "status" and m["parent_header"].get("msg_id") == msg_id:
                state = m["content"]["execution_state"]
                if state == "busy":
                    busy = _parse_date(m["header"]["date"])
                elif state == "idle":
                    idle = _parse_date(m["header"]["date"])
        assert busy is not None and idle is not None
        return busy, idle

    def eval(self, expression: str) -> Any:
        """Evaluate an expression silently (no history, no Out) via user_expressions."""
        content = self.execute("", silent=True, store_history=False, user_expressions={"x": expression})
        result = content["user_expressions"]["x"]
        if result["status"] != "ok":
            raise RuntimeError(f"{expression}: {result.get('ename')}: {result.get('evalue')}")
        return ast.literal_eval(result["data"]["text/plain"])

    def bootstrap(self, code: str | None = None) -> dict[str, Any]:
        """Deliver the helper as the frontend does: the bootstrap as the user expression of an
        empty silent cell. Asserts that it ran; returns the reply."""
        reply = self.execute(
            "",
            silent=True,
            store_history=False,
            user_expressions={BOOTSTRAP_EXPRESSION: code if code is not None else bootstrap_code()},
        )
        assert reply["status"] == "ok", reply
        assert reply["user_expressions"][BOOTSTRAP_EXPRESSION]["status"] == "ok", reply["user_expressions"]
        return reply

    # -- comm -------------------------------------------------------------------

    def open_comm(self, data: Any = None, target: str = TARGET) -> str:
        comm_id = uuid.uuid4().hex
        if data is None:
            data = {"type": "open", "protocol": 1}
        msg = self.kc.session.msg("comm_open", {"comm_id": comm_id, "target_name": target, "data": data})
        self.kc.shell_channel.send(msg)
        return comm_id

    def send_comm(self, comm_id: str, data: Any) -> None:
        msg = self.kc.session.msg("comm_msg", {"comm_id": comm_id, "data": data})
        self.kc.shell_channel.send(msg)

    def close_comm(self, comm_id: str) -> None:
        msg = self.kc.session.msg("comm_close", {"comm_id": comm_id, "data": {}})
        self.kc.shell_channel.send(msg)

    def comm_messages(self, comm_id: str) -> list[dict[str, Any]]:
        return [m for m in self.iopub if m["msg_type"] == "comm_msg" and m["content"]["comm_id"] == comm_id]

    def comm_data(self, comm_id: str, type_: str | None = None) -> list[dict[str, Any]]:
        data = [m["content"]["data"] for m in self.comm_messages(comm_id)]
        return [d for d in data if type_ is None or d.get("type") == type_]

    def wait_for(
        self, comm_id: str, predicate: Callable[[dict[str, Any]], bool], timeout: float = 15, start: int = 0
    ) -> dict[str, Any]:
        """The first comm data (from index ``start``) matching predicate."""
        deadline = time.monotonic() + timeout
        while True:
            for data in self.comm_data(comm_id)[start:]:
                if predicate(data):
                    return data
            if time.monotonic() > deadline:
                raise TimeoutError(f"no matching comm message; got {self.comm_data(comm_id)[start:][-5:]}")
            self.pump(0.1)

    def request(self, comm_id: str, data: dict[str, Any], timeout: float = 15) -> dict[str, Any]:
        """Send a request and return its reply or error."""
        start = len(self.comm_data(comm_id))
        self.send_comm(comm_id, data)
        rid = data.get("request_id") if isinstance(data, dict) else None
        return self.wait_for(
            comm_id,
            lambda d: d.get("type") in ("reply", "error") and d.get("request_id") == rid,
            timeout,
            start,
        )

    def output_messages(self) -> list[dict[str, Any]]:
        return [m for m in self.iopub if m["msg_type"] in OUTPUT_TYPES]

    def samples(self, comm_id: str) -> Iterator[dict[str, Any]]:
        for m in self.comm_messages(comm_id):
            if m["content"]["data"].get("type") == "sample":
                yield m


def open_helper_comm(
    kernel: Kernel, config: dict[str, Any] | None = None, timeout: float = 15, replaces: list[str] | None = None
) -> str:
    """Open a comm to the bootstrapped helper as the frontend does (with ``config`` and
    ``replaces`` in the open, if given); returns its id once the helper's `initial` sample has arrived."""
    data: dict[str, Any] = {"type": "open", "protocol": 1}
    if config is not None:
        data["config"] = config
    if replaces is not None:
        data["replaces"] = replaces
    comm_id = kernel.open_comm(data)
    kernel.wait_for(comm_id, lambda d: d.get("reason") == "initial", timeout)
    return comm_id


def attach_helper(kernel: Kernel, bootstrap: str, config: dict[str, Any] | None = None, timeout: float = 15) -> str:
    """Bootstrap the helper into ``kernel`` and open one comm (:func:`open_helper_comm`); returns its id."""
    kernel.bootstrap(bootstrap)
    return open_helper_comm(kernel, config, timeout)


@contextlib.contextmanager
def live_helper_kernel(
    bootstrap: str, config: dict[str, Any], env: dict[str, str] | None = None
) -> Iterator[tuple[Kernel, str]]:
    """A fresh kernel (``env`` added to its environment) with the helper bootstrapped and one
    comm open; shut down on exit."""
    kernel = Kernel(env=env)
    try:
        yield kernel, attach_helper(kernel, bootstrap, config)
    finally:
        kernel.shutdown()


def snapshot_sample(kernel: Kernel, comm_id: str, request_id: str, timeout: float = 15) -> dict[str, Any]:
    """Ask for a ``snapshot`` and return the sample it produced."""
    before = len(kernel.comm_data(comm_id))
    seq = kernel.request(comm_id, {"type": "snapshot", "request_id": request_id}, timeout)["result"]["seq"]
    return next(d for d in kernel.comm_data(comm_id)[before:] if d.get("seq") == seq)


class CellSession:
    """Runs cells in a live helper kernel and waits for each cell's record."""

    def __init__(self, kernel: Kernel, comm_id: str):
        self.k = kernel
        self.comm_id = comm_id

    def records(self, comm_id: str | None = None) -> list[dict[str, Any]]:
        return [r for d in self.k.comm_data(comm_id or self.comm_id, "cells") for r in d["records"]]

    def run(self, code: str, record_timeout: float = 10, **kw: Any) -> dict[str, Any]:
        """Execute a cell (``kw``: for Kernel.execute) and return (reply, its record) once the record arrived."""
        before = len(self.records())
        reply = self.k.execute(code, **kw)
        record = self.next_record(before, record_timeout)
        return {"reply": reply, "record": record}

    def next_record(self, before: int, timeout: float = 10) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        while len(self.records()) <= before:
            if time.monotonic() > deadline:
                raise TimeoutError("no cell record")
            self.k.pump(0.05)
        return self.records()[before]

    def settle(self, seconds: float = 0.5) -> None:
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            self.k.pump(0.05)


def run_silently(session: CellSession, code: str) -> None:
    # Silent: no hooks fire, so whatever the helper kept from the last cell stays.
    reply = session.k.execute(code, silent=True, store_history=False)
    assert reply["status"] == "ok", reply


def forget_last_error(session: CellSession) -> None:
    """Drop IPython's references to the last error (kept for %debug), silently.

    Needs ``sys`` imported in the kernel. The last ExecutionResult needs no
    clearing: the silent executions replaced it.
    """
    run_silently(
        session,
        "sys.last_value = sys.last_traceback = sys.last_type = None\n"
        "sys.last_exc = None\n"
        "get_ipython().InteractiveTB.tb = None",
    )
