"""One-click cleanup, which answers the ``free_memory``, ``inspect`` and ``delete`` requests (docs/protocol.md).

Runs on the shell thread, between cells (comm requests wait for the running
cell). Never imports torch, never initialises CUDA, never prints, and never
keeps a strong reference to a user object once a request is answered: a
listing keeps names, ``id()``s, weakrefs and storage keys only.

Deleting is by name and identity: a name is deleted only if the listing the
frontend shows has it AND it still points to the same object. Names are data;
nothing is ever compiled or executed.

The parts of the cleanup live beside this file: namespace_surgery.py (removing
names and clearing hidden holders), hidden_references.py (what the hidden
holders hold) and referrers.py (what still holds an object after ``delete``).
They load with this module, on the first cleanup request, never at bootstrap.
"""

from __future__ import annotations

import gc
import time
import uuid
import warnings
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

from ..oom.cell_outcome import error_head
from ..protocol import HIDDEN_HOLDER_KINDS, INSPECT_CONTAINER_DEPTH, INSPECT_MAX_ENTRIES, RequestInterrupted
from ..sampling.readers import torch_cuda
from ..sampling.safe_reads import type_module, type_name, type_qualname
from . import autograd_graph, holder_summaries
from .hidden_references import hidden_holders, output_cache_labels
from .holders import Budget, Classes, Found, Sizer
from .listings import (
    ListedName,
    Listing,
    Reach,
    interrupted_delete_text,
    refusal,
    reserved_name_reason,
    still_alive_after_delete,
)
from .namespace_surgery import CLEARERS, NameRebound, Probe, detach, leaf_refs, release_probes, weak_ref
from .storages import StorageKey, Storages, bytes_by_device

KEPT_LISTINGS = 4
MIN_ITEMS_PER_NAME = 2000


def _listed(obj: Any, found: Found, graph_only: dict[StorageKey, int], items: int | None) -> ListedName:
    """Return what a listing keeps of ``obj``.

    It keeps the object's identity and, for an object without a weakref, what
    tells it apart from a later object at the same address (see listings.py):
    the storages it reached itself, leaving out its graphs' saved tensors, and
    weakrefs to the leaves it holds. ``items`` is the budget that its walk ran
    out of, or None when it was walked whole.
    """
    ref = weak_ref(obj)
    reached = frozenset(found.storages.keys() - graph_only.keys()) if ref is None else frozenset()
    # This is empty where ``ref`` tells the object apart, because no probes were collected then.
    leaves = tuple(leaf_refs(found))
    return ListedName(
        id(obj),
        ref,
        type_name(type(obj)),
        frozenset(found.storages),
        reached,
        leaves,
        frozenset(found.referenced),
        items,
    )


def _reach(depth: int) -> Reach:
    """Return a function that finds what an object reaches, walked as an ``inspect`` at ``depth`` walks it.

    listings.py uses it to tell whether a name still holds the object that was listed.
    """

    def reach(obj: Any, items: int | None = None) -> frozenset:
        found = Found()
        Sizer(Classes(), Budget() if items is None else Budget(items)).walk(obj, found, depth, objects=True)
        return frozenset(found.storages)

    return reach


def _ms(start: float) -> float:
    return round((time.perf_counter() - start) * 1000.0, 3)


class Cleanup:
    """The one-click cleanup of a kernel: it answers the ``free_memory``, ``inspect`` and ``delete`` requests."""

    def __init__(self, source: Any, shell: Callable[[], Any], read_figures: Callable[[], Any] | None = None):
        """Create the cleanup for one kernel.

        ``shell()`` returns the IPython shell, or None. ``read_figures()`` reads
        the memory figures as a SampleSource does; in the kernel it is the
        sampler's reading, which takes the sampler's lock.
        """
        self._source = source
        self._shell = shell
        self._read_figures = read_figures if read_figures is not None else source.read
        self._listings: OrderedDict[str, Listing] = OrderedDict()
        self._counter = 0

    # -- snapshot ---------------------------------------------------------

    def snapshot(self) -> dict[str, Any]:
        figures = self._read_figures()
        gpus = []
        for gpu in figures.get("gpus", []):
            t = gpu.get("torch") or {}
            n = gpu.get("nvml") or {}
            gpus.append(
                {
                    "index": gpu["index"],
                    "allocated_bytes": t.get("allocated_bytes"),
                    "reserved_bytes": t.get("reserved_bytes"),
                    "nvml_used_bytes": n.get("used_bytes"),
                }
            )
        return {"host": {"rss_bytes": figures.get("host", {}).get("rss_bytes")}, "gpus": gpus}

    # -- free_memory --------------------------------------------------------

    def free_memory(self, actions: list[str]) -> dict[str, Any]:
        start = time.perf_counter()
        before = self.snapshot()
        failures: list[dict[str, Any]] = []
        ran, collected, empty = self._free(actions, failures)
        return {
            "actions_run": ran,
            "gc_collected": collected,
            "empty_cache": empty,  # "failed: GPU 0: …" says what failed
            "failures": failures,  # as a delete's: a gc that raised is said, not dropped
            "before": before,
            "after": self.snapshot(),
            "elapsed_ms": _ms(start),
        }

    def _free(self, actions: list[str], failures: list[dict[str, Any]]) -> tuple[list[str], int | None, str | None]:
        """Run the ``free`` actions.

        A step that raises is added to ``failures`` rather than raised; after a
        sticky CUDA error every CUDA call raises. A ``delete`` has removed names
        by then, and its reply must still say so.
        """
        ran: list[str] = []
        collected: int | None = None
        empty: str | None = None  # None means that empty_cache was not requested.
        # gc runs first, because what gc frees is what empty_cache can then return.
        if "gc" in actions:
            try:
                collected = int(gc.collect())
                ran.append("gc")
            except Exception as exc:  # A finaliser of the user's may raise past gc.
                failures.append(failure("gc", None, exc))
        if "empty_cache" in actions:
            empty = empty_cuda_cache(failures)
            ran.append("empty_cache")
        return ran, collected, empty

    # -- inspect --------------------------------------------------------------

    def inspect(
        self,
        max_entries: int = INSPECT_MAX_ENTRIES[2],
        container_depth: int = INSPECT_CONTAINER_DEPTH[2],
        keep_listing: bool = True,
    ) -> dict[str, Any]:
        """List what holds memory in the user's namespace.

        A caller that never deletes from the listing, such as the OOM diagnosis,
        passes ``keep_listing=False``, so that its listing does not push a
        frontend's listing out of the kept ones.
        """
        start = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            result, listing, _held = self._inspect(max_entries, container_depth)
        if keep_listing:
            self._keep(listing)
        result["elapsed_ms"] = _ms(start)
        return result

    def held_references(self) -> dict[str, Any]:
        """Return an ``inspect`` result for the out-of-memory diagnosis, without keeping it.

        The result also has ``held_bytes_by_device``, what the names and the
        hidden holders hold together. A storage that ``x``, ``Out[3]`` and the
        last result all hold is in several entries' figures, but it counts only
        once there.
        """
        start = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            result, _listing, held = self._inspect(INSPECT_MAX_ENTRIES[2], INSPECT_CONTAINER_DEPTH[2])
        result["held_bytes_by_device"] = bytes_by_device(held)
        result["elapsed_ms"] = _ms(start)
        return result

    def _inspect(self, max_entries: int, depth: int) -> tuple[dict[str, Any], Listing, Storages]:
        """Return the listing, and every storage found for the names and hidden holders, each once."""
        shell = self._shell()
        classes = Classes()
        budget = Budget()
        # What the names' minimum walks may take beyond ``budget``.
        extra = Budget()
        # For each name whose walk ran out, the number of items that its walk was allowed.
        cut: dict[str, int] = {}
        sizer = Sizer(classes, budget)
        user_ns: dict[str, Any] = getattr(shell, "user_ns", None) or {}
        hidden_ns: dict[str, Any] = getattr(shell, "user_ns_hidden", None) or {}

        # Maps an object's id to its labels in the output cache.
        cache_labels = output_cache_labels(shell)

        # 1. Size every candidate name.
        raw: list[tuple[str, Any, str, Found]] = []
        obj: Any = None
        for name, obj in list(user_ns.items()):
            if not isinstance(name, str) or reserved_name_reason(name) is not None:
                continue
            if name in hidden_ns and hidden_ns[name] is obj:
                continue  # IPython put it there, not the user.
            kind = classes.kind(obj)
            if kind == "skip":
                continue
            found = Found()
            if weak_ref(obj) is None:
                # Its leaves are collected, to tell it apart from a later object at its address.
                found.probes = []
            # Each name gets a walk of its own of at least MIN_ITEMS_PER_NAME items, even
            # once a large dataset has spent the request's budget; the ``extra`` budget
            # bounds how far beyond it these walks may go. A walk that ran out is marked,
            # and its budget kept, so that ``delete`` walks it exactly as far again.
            allowed = budget.left if extra.left <= 0 else max(budget.left, MIN_ITEMS_PER_NAME)
            sizer.budget = Budget(allowed)
            sizer.walk(obj, found, depth, objects=True)
            used = allowed - sizer.budget.left
            over = max(0, used - budget.left)
            budget.take(min(used, budget.left))
            extra.take(min(over, extra.left))
            if sizer.budget.exhausted:
                budget.exhausted = True
                cut[name] = allowed
            if (
                kind in ("container", "object", "bytes")
                and not found.leaves()
                and not found.modules
                and not found.optimizers
            ):
                continue
            raw.append((name, obj, kind, found))

        # 2. Find the memory that graph-holding tensors keep alive: what their graphs saved
        # that no name holds directly. A weight saved for backward, for example, is the
        # model's to count.
        graphs = {
            name: autograd_graph.walk_graphs(found.graph_roots, found.graph_tensors)
            for name, _obj, _kind, found in raw
            if found.graph_tensors
        }
        graph_only: dict[str, dict[StorageKey, int]] = {}
        if graphs:
            # An optimizer's parameters count as held too, because the optimizer keeps them
            # alive even when the model is gone.
            held_keys = {key for *_, found in raw for key in (*found.storages, *found.referenced)}
            for name, _obj, _kind, found in raw:
                if name in graphs:
                    graph_only[name] = autograd_graph.only_in_graph(graphs[name], held_keys)
                    # Deleting the name frees these storages too.
                    found.storages.update(graph_only[name])

        # 3. Count each storage once, on the largest holder.
        raw.sort(key=lambda r: (-r[3].total, r[0]))
        owner: dict[StorageKey, str] = {}
        sharers: dict[StorageKey, list[str]] = {}
        for name, _obj, _kind, found in raw:
            for key in found.storages:
                owner.setdefault(key, name)
                sharers.setdefault(key, []).append(name)
        # An optimizer refers to its parameters without counting them, so that they stay
        # the model's to count. Deleting the model frees none of them while the optimizer
        # stays, though, so each of the two says that it shares them with the other.
        referenced: dict[str, Storages] = {}
        for name, _obj, _kind, found in raw:
            referenced[name] = {k: n for k, n in found.referenced.items() if k not in found.storages}
            for key in referenced[name]:
                sharers.setdefault(key, []).append(name)

        count = getattr(shell, "execution_count", None)
        listing = Listing(self._new_id(), depth, execution_count=count if type(count) is int else None)
        entries: list[dict[str, Any]] = []
        for name, obj, kind, found in raw:
            own = [k for k in found.storages if owner[k] == name]
            reached = {**found.storages, **{k: n for k, n in referenced[name].items() if k in owner}}
            shared = sorted({n for k in reached for n in sharers[k] if n != name})
            counted = bytes_by_device(found.storages, own)
            # These are what the name reaches but another entry counts; they are listed so
            # that a 0 B alias still says how many bytes it keeps alive.
            elsewhere = [k for k in reached if owner[k] != name]
            entries.append(
                {
                    "name": name,
                    "kind": "other" if kind == "object" else kind,
                    "type_name": _type_name(obj),
                    "summary": _summary(obj, kind, found),
                    "bytes_by_device": counted,
                    "total_bytes": sum(counted.values()),
                    "shared_with": shared,
                    "shared_bytes": sum(reached[k] for k in elsewhere),
                    "shared_bytes_by_device": bytes_by_device(reached, elsewhere),
                    "counted_under": sorted({owner[k] for k in elsewhere}),
                    "output_cache_refs": cache_labels.get(id(obj), []),
                    "deletable": True,
                    "refusal": None,
                    "graph_holding": graphs[name].summary(graph_only[name]) if name in graphs else None,
                    # The name was sized only in part, because the request's walking budget
                    # ran out, so it may hold more.
                    "truncated": name in cut,
                }
            )
            listing.names[name] = _listed(obj, found, graph_only.get(name, {}), cut.get(name))
        held: Storages = {}  # It keeps storage keys and sizes only.
        for *_, found in raw:
            held.update(found.storages)
        del raw, obj  # No reference to a user object may outlive this point.
        entries.sort(key=lambda e: (-e["total_bytes"], e["name"]))
        truncated = len(entries) > max_entries or budget.exhausted

        hidden = [
            h
            for h in hidden_holders(shell, Sizer(classes, Budget()), depth, set(owner), cache_labels, held, _summary)
            if h["total_bytes"] > 0
        ]
        return (
            {
                "listing_id": listing.listing_id,
                "elapsed_ms": 0.0,
                "truncated": truncated,
                "entries": entries[:max_entries],
                "hidden": hidden,
            },
            listing,
            held,
        )

    def _new_id(self) -> str:
        self._counter += 1
        return f"{self._counter}-{uuid.uuid4().hex[:8]}"

    def _keep(self, listing: Listing) -> None:
        self._listings[listing.listing_id] = listing
        while len(self._listings) > KEPT_LISTINGS:
            self._listings.popitem(last=False)

    def has_listing(self, listing_id: str) -> bool:
        return listing_id in self._listings

    # -- delete -----------------------------------------------------------------

    def delete(self, listing_id: str, names: list[str], hidden: list[str], free: list[str]) -> dict[str, Any]:
        """Delete the chosen names of a listing and clear the chosen hidden holders.

        The caller has already checked that the listing exists, that the names are
        strings, and that there are at most protocol.MAX_DELETE_NAMES of them.
        """
        start = time.perf_counter()
        listing = self._listings[listing_id]
        shell = self._shell()
        user_ns: dict[str, Any] | None = getattr(shell, "user_ns", None)
        if user_ns is None:
            user_ns = {}
        before = self.snapshot()

        refused: list[dict[str, Any]] = []
        accepted: list[str] = []
        # The objects that the checks found. Each is deleted only while its name is still
        # bound to it, because deleting one name can run user code (a __del__ or a weakref
        # callback) that rebinds another. They are let go of one by one.
        verified: dict[str, Any] = {}
        reach = _reach(listing.container_depth)
        cells_ran = listing.cells_ran_since(shell)
        for name in dict.fromkeys(names):  # This drops duplicates and keeps the order.
            reason = refusal(listing, user_ns, name, reach, cells_ran)
            if reason is None:
                accepted.append(name)
                verified[name] = user_ns[name]
            else:
                refused.append({"name": name, "reason": reason})

        probes: dict[str, list[Probe]] = {}
        deleted: list[str] = []
        failures: list[dict[str, Any]] = []
        clearing = [h for h in HIDDEN_HOLDER_KINDS if h in hidden]
        if clearing and cells_ran:
            # What the hidden holders hold now is not what the listing showed (it may be an
            # Out[] or a traceback of a later cell), so it is not what the user confirmed.
            refused.extend({"name": h, "reason": "cells ran since the listing", "hidden": True} for h in clearing)
            clearing = []
        done: list[str] = []  # These are the hidden holders cleared so far.
        freed = False
        obj: Any = None
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                for name in accepted:
                    obj = verified.pop(name)
                    try:
                        probes[name] = detach(shell, user_ns, name, expected=obj)
                    except NameRebound:
                        refused.append({"name": name, "reason": "rebound since the listing"})
                        continue
                    except Exception as exc:
                        # A step after removing the name, such as removing IPython's copies,
                        # failed. The name counts as deleted once it is out of the namespace.
                        failures.append(failure("delete", name, exc))
                        if name in user_ns:
                            continue
                    finally:
                        obj = None
                    deleted.append(name)
                for holder in clearing:
                    try:
                        CLEARERS[holder](shell)
                    except Exception as exc:
                        failures.append(failure("clear", holder, exc))
                        continue
                    done.append(holder)
                self._free(free, failures)
                freed = True

            try:
                still_alive = still_alive_after_delete(listing, user_ns, probes, shell, reach)
            except Exception as exc:
                # What was deleted stays deleted, so the reply must say so, whatever the
                # question about it raised.
                still_alive = [
                    {"name": name, "reason": f"could not tell whether its memory was freed ({type(exc).__name__})"}
                    for name in deleted
                ]
            # What the probes kept alive is let go now, before the figures after the delete are read.
            release_probes(probes)
            return {
                "deleted": deleted,
                "refused": refused,
                "cleared": done,
                "still_alive": still_alive,
                # These are the steps that raised after the deletes began, and so what they
                # left undone. The names above are gone, whatever failed after them.
                "failures": failures,
                "before": before,
                "after": self.snapshot(),
                "elapsed_ms": _ms(start),
            }
        except KeyboardInterrupt:
            # Part of the delete is done and cannot be undone, so the answer must say which
            # part. A name counts as deleted once it is out of the namespace, because the
            # interrupt may land between that and the bookkeeping.
            gone = [name for name in accepted if name not in user_ns]
            raise RequestInterrupted(interrupted_delete_text(accepted, gone, clearing, done, free, freed)) from None
        finally:
            verified.clear()  # An interrupt must not leave user objects on this frame.
            obj = None


# --- CUDA ---------------------------------------------------------------------------


def empty_cuda_cache(failures: list[dict[str, Any]] | None = None) -> str:
    """Call ``torch.cuda.empty_cache()`` on every device whose allocator reserves memory.

    It never initialises CUDA. A device without reserved memory is skipped,
    because switching to it could create a context there, and it has nothing to
    return. Each device is tried on its own, so that one in a failed state (a
    sticky CUDA error) does not keep the others' caches from being returned.
    What failed is added to ``failures``, and the outcome then reads
    ``"failed: GPU 0: RuntimeError: …"``; nothing is raised.
    """
    failures = [] if failures is None else failures
    errors: list[str] = []
    try:
        torch = torch_cuda.loaded_torch()
        if torch is None:
            return "skipped_torch_not_imported"
        if not torch_cuda.cuda_initialized(torch):
            return "skipped_cuda_not_initialized"
        count = torch_cuda.initialized_device_count(torch)
    except Exception as exc:
        failures.append(failure("empty_cache", None, exc))
        return f"failed: {error_text(exc)}"
    for index in range(count):
        try:
            counters = torch_cuda.allocator_counters(torch, index)
            if counters is None or not counters.reserved:
                continue
            with torch.cuda.device(index):
                torch.cuda.empty_cache()
        except Exception as exc:
            failures.append(failure("empty_cache", f"GPU {index}", exc))
            errors.append(f"GPU {index}: {error_text(exc)}")
    return "failed: " + "; ".join(errors) if errors else "done"


def failure(step: str, target: str | None, exc: BaseException) -> dict[str, Any]:
    """Return one entry of a ``delete`` reply's ``failures``.

    ``step`` is ``delete``, with the name as ``target``; ``clear``, with the
    hidden holder as ``target``; or ``gc`` or ``empty_cache``, with the GPU or
    None as ``target``.
    """
    return {"step": step, "target": target, "error": error_text(exc)}


def error_text(exc: BaseException, limit: int = 300) -> str:
    """Return an error as text such as ``RuntimeError: CUDA error: ...``, on one line and bounded.

    The exception's str() may be user code that raises; when it does, the text
    is the class name alone.
    """
    name = type(exc).__name__
    head = error_head(exc, max(1, limit - len(name) - 2))
    return f"{name}: {head}" if head else name


# --- small helpers -----------------------------------------------------------------


def _type_name(obj: Any) -> str:
    # The type's own descriptors are used, because a metaclass's __getattribute__ or
    # properties are user code.
    t = type(obj)
    module = type_module(t)
    name = type_qualname(t)
    return name if not isinstance(module, str) or module in ("builtins", "__main__") else f"{module}.{name}"


def _summary(obj: Any, kind: str, found: Found) -> str:
    try:
        if kind == "tensor":
            return holder_summaries.tensor_summary(obj)
        if kind == "ndarray":
            return holder_summaries.array_summary(obj)
        if kind == "bytes":
            return holder_summaries.bytes_summary(obj)
        if kind == "module":
            return holder_summaries.module_summary(obj, found)
        if kind == "optimizer":
            return holder_summaries.optimizer_summary(obj, found)
        if kind == "container":
            return f"{type_name(type(obj))} of {holder_summaries.contents_summary(found)}"
        if kind == "object":
            return f"{type_name(type(obj))} holding {holder_summaries.contents_summary(found)}"
    except Exception:
        pass
    return type_name(type(obj))
