"""The helper's comm side, which registers the comm target, keeps the open comms and dispatches their requests.

Every frontend (a notebook panel, a second browser tab, a console) opens its
own comm to the ``jupyterlab-vram`` target, and the channel keeps them all, so
that the sampler broadcasts to every one. Handlers run on the shell thread,
between cells, while broadcasts come from the sampler thread, hence the lock.

Nothing here raises into ipykernel or prints. A bad message is answered with
an ``error``, a bug is answered with an ``internal`` error and the kernel goes
on, and an interrupt (the user's, while a request runs) ends the request with
an ``interrupted`` error.

A message that the kernel's packer refuses, because of a lone surrogate in a
string (a name made with ``globals()['\\ud800']``, or a request id sent as a
JSON escape), goes again with U+FFFD in place of each. One that still cannot
go is answered with an ``internal`` error, so that a frontend waiting for a
reply never waits forever.
"""

from __future__ import annotations

import threading
import traceback
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ..config import ConfigError
from ..protocol import (
    COMM_TARGET,
    Request,
    RequestError,
    RequestInterrupted,
    describe,
    error_message,
    parse_open,
    parse_request,
    replaced_comm_ids,
    reply_message,
)
from ..sampling.sample import SampleSource
from ..sampling.sampler import Sampler
from .hello import hello_message
from .unsendable_text import ReplacedNames, without_surrogates

# The message shapes in protocol_types.py are needed for annotations only.
if TYPE_CHECKING:
    from ..protocol_types import ErrorMessage


# The estimate_memory request's answerer: (validated args, progress(stage, done, total, partial)) -> result.
EstimateMemory = Callable[[Mapping[str, Any], Callable[..., None]], dict[str, Any]]


def _data_of(msg: Any) -> Any:
    try:
        return msg["content"]["data"]
    except (KeyError, TypeError):
        return None


def _bug(what: str, exc: BaseException) -> str:
    summary = "".join(traceback.format_exception_only(type(exc), exc)).strip()
    return f"{what} failed: {summary}"


class Channel:
    """The helper's comm side: it registers the comm target, keeps every open comm and dispatches their requests."""

    def __init__(self, source: SampleSource, target_name: str = COMM_TARGET):
        self._source = source
        self._target_name = target_name
        self._sampler: Sampler | None = None
        self._record_series = ""
        self._manager: Any = None
        self._comms: list[Any] = []
        self._lock = threading.Lock()
        self._cell_history: Callable[[], list[Any]] = list
        # These are bound by the runtime. The first gives the cleanup.Cleanup,
        # and the third gives the allocation_sites.AllocationSites.
        self._cleanup: Callable[[], Any] | None = None
        self._notebook_names: Callable[[], dict[str, Any]] | None = None
        self._allocations: Callable[[], Any] | None = None
        self._stop_process: Callable[[int, int, float], dict[str, Any]] | None = None
        self._release_engine: Callable[[str, str | None, str | None, float], dict[str, Any]] | None = None
        self._estimate_memory: EstimateMemory | None = None
        self._cluster_action: Callable[[Mapping[str, Any]], dict[str, Any]] | None = None
        self._before_request: Callable[[], None] = lambda: None
        self.last_error: str | None = None
        # Maps a listing id to the names that the frontend sees differently from what they are;
        # it is used on the shell thread only, which handles both inspects and deletes.
        self._replaced_names = ReplacedNames()
        # The send failures already reported for messages that answer no request, so that each
        # is reported once rather than at every broadcast.
        self._told_unsent: set[str] = set()

    def bind(
        self,
        sampler: Sampler,
        cell_history: Callable[[], list[Any]] | None = None,
        cleanup: Callable[[], Any] | None = None,
        notebook_names: Callable[[], dict[str, Any]] | None = None,
        record_series: str = "",
        allocations: Callable[[], Any] | None = None,
        before_request: Callable[[], None] | None = None,
        stop_process: Callable[[int, int, float], dict[str, Any]] | None = None,
        release_engine: Callable[[str, str | None, str | None, float], dict[str, Any]] | None = None,
        estimate_memory: EstimateMemory | None = None,
        cluster_action: Callable[[Mapping[str, Any]], dict[str, Any]] | None = None,
    ) -> None:
        """Bind the sampler and the parts that answer requests.

        ``cell_history()`` returns the kept per-cell records, for ``history``
        requests. ``cleanup()`` returns the :class:`cleanup.Cleanup`, for
        ``free_memory``, ``inspect`` and ``delete``; it is asked for at the
        first such request. ``notebook_names()`` returns the result of a
        ``notebook_names`` request. ``record_series`` is the cell recorder's
        series, announced in ``hello``. ``allocations()`` returns the
        :class:`allocation_sites.AllocationSites`, asked for at the first
        ``record_allocations``, ``allocation_sites`` or ``allocation_snapshot``
        request. ``before_request()`` is called before each request is
        handled; it is the cell recorder's ``finish_records``, because what a
        request frees is not a cell's. ``stop_process(pid, start_time,
        timeout_s)`` returns the result of a ``stop_process`` request, and
        ``release_engine(mode, kind, name, timeout_s)`` that of a
        ``release_engine`` request. ``estimate_memory(args, progress)`` returns
        that of an ``estimate_memory`` request; ``progress(stage, done,
        total, partial=None)`` sends an ``estimate_progress`` message to the comm that asked.
        ``cluster_action(args)`` returns the result of a ``cluster_action`` request.
        """
        self._sampler = sampler
        self._record_series = record_series
        if cell_history is not None:
            self._cell_history = cell_history
        if cleanup is not None:
            self._cleanup = cleanup
        if notebook_names is not None:
            self._notebook_names = notebook_names
        if allocations is not None:
            self._allocations = allocations
        if before_request is not None:
            self._before_request = before_request
        if stop_process is not None:
            self._stop_process = stop_process
        if release_engine is not None:
            self._release_engine = release_engine
        if estimate_memory is not None:
            self._estimate_memory = estimate_memory
        if cluster_action is not None:
            self._cluster_action = cluster_action

    @property
    def sampler(self) -> Sampler:
        assert self._sampler is not None, "Channel.bind(sampler) was not called"
        return self._sampler

    # -- registration -------------------------------------------------------

    def register(self, manager: Any) -> None:
        self._manager = manager
        manager.register_target(self._target_name, self._on_open)

    def unregister(self) -> None:
        """Close this channel's comms, and remove its target if it is still this channel's."""
        for comm in self.targets():
            try:
                comm.close()
            except Exception:
                pass
        with self._lock:
            self._comms.clear()
        manager, self._manager = self._manager, None
        if manager is None:
            return
        try:
            # Bound methods of the same object compare equal but are not
            # identical, so == is the right test.
            if getattr(manager, "targets", {}).get(self._target_name) == self._on_open:
                manager.unregister_target(self._target_name, self._on_open)
        except Exception:
            pass

    # -- Outlet (used by the sampler) --------------------------------------

    def targets(self) -> Sequence[Any]:
        with self._lock:
            return tuple(self._comms)

    def send(self, target: Any, message: Mapping[str, Any]) -> None:
        self._send_encodable(target, message)

    def has_targets(self) -> bool:
        return bool(self._comms)

    def broadcast(self, message: Mapping[str, Any]) -> None:
        """Send one message to every open comm. It may be called from any thread, and never raises."""
        for comm in self.targets():
            self._send_quietly(comm, message)

    def report_error(self, message: str) -> None:
        self.last_error = message
        for comm in self.targets():
            self._send_quietly(comm, error_message("internal", message))

    # -- handlers -----------------------------------------------------------

    def _on_open(self, comm: Any, msg: Any) -> None:
        try:
            self._open(comm, _data_of(msg))
        except KeyboardInterrupt:
            # ipykernel logs an interrupt that lands here, and the kernel goes on.
            raise
        except BaseException as exc:
            # A SystemExit or GeneratorExit is caught too (see _on_msg), because letting it
            # propagate would end the kernel.
            text = _bug("opening the comm", exc)
            self.last_error = text
            self._send_quietly(comm, error_message("internal", text))

    def _open(self, comm: Any, data: Any) -> None:
        problems: list[ErrorMessage] = []
        try:
            request = parse_open(data)
            if request.config is not None:
                self.sampler.configure(request.config)
        except RequestError as exc:
            problems.append(exc.to_message())
        except ConfigError as exc:
            problems.append(error_message("invalid_config", str(exc)))
        try:
            self._close_replaced(replaced_comm_ids(data), comm)
        except RequestError as exc:
            problems.append(exc.to_message())

        comm.on_msg(lambda m, c=comm: self._on_msg(c, m))
        comm.on_close(lambda m, c=comm: self._forget(c))
        # NVML starts with the first comm rather than at install, so that a kernel that nobody
        # watches pays nothing for it.
        self._source.nvml.start()

        def announce() -> None:
            # This runs under the sampler's lock, so the hello precedes every sample. It goes
            # out before the comm joins the broadcast targets, so that nothing broadcast from
            # another thread (a cell's record, a problem in the hooks) comes before it. That
            # order matters because the frontend asks for the history when it gets the hello.
            self._send_quietly(comm, hello_message(self._source, self.sampler.config, self._record_series))
            with self._lock:
                self._comms.append(comm)
            for problem in problems:
                self._send_quietly(comm, problem)

        self.sampler.emit([comm], "initial", before=announce)
        self.sampler.wake()

    def _close_replaced(self, comm_ids: list[str], new: Any) -> None:
        """Close the comms that a frontend left open and replaces with ``new``,
        because nothing reads them any more, and every sample sent to them
        costs the kernel as much as one sent to a live comm."""
        if not comm_ids:
            return
        wanted = set(comm_ids)
        with self._lock:
            replaced = [c for c in self._comms if c is not new and getattr(c, "comm_id", None) in wanted]
            self._comms = [c for c in self._comms if c not in replaced]
        for old in replaced:
            try:
                old.close()
            except Exception:
                pass

    def _forget(self, comm: Any) -> None:
        with self._lock:
            self._comms = [c for c in self._comms if c is not comm]

    def _on_msg(self, comm: Any, msg: Any) -> None:
        data = _data_of(msg)
        request_id = data.get("request_id") if isinstance(data, dict) else None
        if not isinstance(request_id, str):
            request_id = None
        try:
            request = parse_request(data)
            request_id = request.request_id
            self._finish_cells()
            self._dispatch(comm, request)
        except RequestError as exc:
            self._send_quietly(comm, exc.to_message())
        except ConfigError as exc:
            self._send_quietly(comm, error_message("invalid_config", str(exc), request_id))
        except Exception as exc:
            text = _bug("handling the request", exc)
            self.last_error = text
            self._send_quietly(comm, error_message("internal", text, request_id))
        except KeyboardInterrupt as exc:
            # The user interrupted the kernel while it handled a request (a long
            # inspect or allocation listing). The interrupt has done its work,
            # stopping the request; ipykernel would only log it. The frontend
            # still waits for an answer: it gets one, saying what was done.
            if isinstance(exc, RequestInterrupted) and str(exc):
                text = str(exc)
            else:
                kind = data.get("type") if isinstance(data, dict) else None
                text = f"the {describe(kind)} request was interrupted before it finished"
            self._send_quietly(comm, error_message("interrupted", text, request_id))
        except BaseException as exc:
            # SystemExit or GeneratorExit. A request never runs the user's cell
            # code, only the helper's reads, and those call methods of user
            # objects (a __sizeof__ while sizing, a __del__ when a delete lets go
            # of one): an exit raised there is an accident of such a method, not
            # the user asking the kernel to exit (exit() in a cell never passes
            # through here). Raised on, it would end the kernel's process and
            # leave the frontend without an answer.
            text = _bug("handling the request", exc)
            self.last_error = text
            self._send_quietly(comm, error_message("internal", text, request_id))

    def _finish_cells(self) -> None:
        # Finish the ended cells' records before the request can change memory. A failure
        # there is for the recorder to report, not for this request.
        try:
            self._before_request()
        except Exception:
            pass

    def _dispatch(self, comm: Any, request: Request) -> None:
        handler: dict[str, Callable[[Any, Request], dict[str, Any]]] = {
            "configure": self._configure,
            "snapshot": self._snapshot,
            "ping": self._ping,
            "history": self._history,
            "free_memory": self._free_memory,
            "inspect": self._inspect,
            "delete": self._delete,
            "notebook_names": self._names,
            "record_allocations": self._record_allocations,
            "allocation_sites": self._allocation_sites,
            "allocation_snapshot": self._allocation_snapshot,
            "stop_process": self._stop,
            "release_engine": self._release,
            "estimate_memory": self._estimate,
            "cluster_action": self._cluster,
        }
        result = handler[request.type](comm, request)
        self._send_quietly(comm, reply_message(request, result))

    def _configure(self, comm: Any, request: Request) -> dict[str, Any]:
        assert request.config is not None
        config = self.sampler.configure(request.config)
        return {"config": config.to_dict()}

    def _snapshot(self, comm: Any, request: Request) -> dict[str, Any]:
        return {"seq": self.sampler.emit([comm], "snapshot")}

    def _ping(self, comm: Any, request: Request) -> dict[str, Any]:
        return {}

    def _history(self, comm: Any, request: Request) -> dict[str, Any]:
        return {"records": self._cell_history(), "timeline": self.sampler.timeline_columns()}

    def _cleanup_or_fail(self, request: Request) -> Any:
        if self._cleanup is None:
            raise RequestError("internal", f"{request.type!r} is not available in this helper", request.request_id)
        return self._cleanup()

    def _free_memory(self, comm: Any, request: Request) -> dict[str, Any]:
        assert request.args is not None
        return self._cleanup_or_fail(request).free_memory(list(request.args["actions"]))

    def _inspect(self, comm: Any, request: Request) -> dict[str, Any]:
        assert request.args is not None
        result = self._cleanup_or_fail(request).inspect(request.args["max_entries"], request.args["container_depth"])
        self._replaced_names.note(result)
        return result

    def _delete(self, comm: Any, request: Request) -> dict[str, Any]:
        assert request.args is not None
        cleanup = self._cleanup_or_fail(request)
        args = request.args
        if not cleanup.has_listing(args["listing_id"]):
            raise RequestError(
                "stale_listing",
                f"listing {describe(args['listing_id'])} is not kept any more (the kernel keeps the last "
                "few listings); inspect again. Nothing was deleted",
                request.request_id,
            )
        names, refused = self._replaced_names.split(args["listing_id"], args["names"])
        result = cleanup.delete(args["listing_id"], names, args["hidden"], args["free"])
        if refused:
            result["refused"] = refused + list(result.get("refused", []))
        return result

    def _names(self, comm: Any, request: Request) -> dict[str, Any]:
        if self._notebook_names is None:
            raise RequestError("internal", f"{request.type!r} is not available in this helper", request.request_id)
        return self._notebook_names()

    def _allocations_or_fail(self, request: Request) -> Any:
        if self._allocations is None:
            raise RequestError("internal", f"{request.type!r} is not available in this helper", request.request_id)
        return self._allocations()

    def _record_allocations(self, comm: Any, request: Request) -> dict[str, Any]:
        assert request.args is not None
        args = request.args
        return self._allocations_or_fail(request).set_recording(
            args["enabled"], args["host_frames"], args["gpu_max_entries"]
        )

    def _allocation_sites(self, comm: Any, request: Request) -> dict[str, Any]:
        assert request.args is not None
        return self._allocations_or_fail(request).sites(request.args["max_sites"])

    def _allocation_snapshot(self, comm: Any, request: Request) -> dict[str, Any]:
        return self._allocations_or_fail(request).gpu_snapshot()

    def _stop(self, comm: Any, request: Request) -> dict[str, Any]:
        assert request.args is not None
        if self._stop_process is None:
            raise RequestError("internal", f"{request.type!r} is not available in this helper", request.request_id)
        args = request.args
        return self._stop_process(args["pid"], args["start_time"], args["timeout_s"])

    def _release(self, comm: Any, request: Request) -> dict[str, Any]:
        assert request.args is not None
        if self._release_engine is None:
            raise RequestError("internal", f"{request.type!r} is not available in this helper", request.request_id)
        args = request.args
        return self._release_engine(args["mode"], args["kind"], args["name"], args["timeout_s"])

    def _cluster(self, comm: Any, request: Request) -> dict[str, Any]:
        assert request.args is not None
        if self._cluster_action is None:
            raise RequestError("internal", f"{request.type!r} is not available in this helper", request.request_id)
        try:
            return self._cluster_action(request.args)
        except RequestError as exc:
            # The answerer refuses without knowing the request's id (a cluster that went).
            exc.request_id = exc.request_id or request.request_id
            raise

    def _estimate(self, comm: Any, request: Request) -> dict[str, Any]:
        assert request.args is not None
        if self._estimate_memory is None:
            raise RequestError("internal", f"{request.type!r} is not available in this helper", request.request_id)

        def progress(stage: str, done: int, total: int, partial: Mapping[str, Any] | None = None) -> None:
            message: dict[str, Any] = {
                "type": "estimate_progress",
                "request_id": request.request_id,
                "stage": stage,
                "done": max(0, done),
                "total": max(1, total),
            }
            if partial is not None:
                message["partial"] = partial
            self._send_quietly(comm, message)

        return self._estimate_memory(request.args, progress)

    def _send_encodable(self, comm: Any, message: Mapping[str, Any]) -> None:
        """Send ``message``. If the packer refuses it, it goes again with its lone
        surrogates replaced (:func:`without_surrogates`). This raises when the
        message cannot go either way."""
        try:
            comm.send(data=message)
            return
        except Exception as exc:
            refused = exc
        # Surrogates are looked for only after a failure, because walking every message would
        # cost each sample. A surrogate in the packer's surrogateescape range (U+DC80 to U+DCFF)
        # goes out as an invalid byte, which the readers decode as U+FFFD, so only the others
        # make the send fail.
        changed: set[str] = set()
        clean = without_surrogates(message, changed)
        if not changed:
            raise refused
        comm.send(data=clean)
        self.last_error = (
            f"sending a message failed: {type(refused).__name__}; "
            "sent with U+FFFD in place of the characters that could not be encoded"
        )

    def _send_quietly(self, comm: Any, message: Mapping[str, Any]) -> None:
        try:
            self._send_encodable(comm, message)
        except Exception as exc:
            text = _bug("sending a message", exc)
            self.last_error = text
            self._tell_unsent(comm, message, text)

    def _tell_unsent(self, comm: Any, message: Mapping[str, Any], text: str) -> None:
        """Send an ``internal`` error in place of a message that could not be sent
        at all. It carries the message's request id, so that a request still
        gets its answer."""
        try:
            request_id = message.get("request_id") if isinstance(message, Mapping) else None
            request_id = without_surrogates(request_id, set()) if isinstance(request_id, str) else None
            if request_id is None:
                if text in self._told_unsent or len(self._told_unsent) >= 32:
                    return
                self._told_unsent.add(text)
            comm.send(data=error_message("internal", without_surrogates(text, set()), request_id))
        except Exception:
            # The comm itself is gone, and last_error already says why.
            pass
