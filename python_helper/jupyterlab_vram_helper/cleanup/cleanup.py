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
    """What a listing keeps of ``obj``: its identity, and for an object without a
    weakref what tells it apart (listings.py): the storages it reached itself
    (its graphs' saved tensors left out) and weakrefs to the leaves it holds;
    ``items``: the budget its walk ran out of (None: walked whole)."""
    ref = weak_ref(obj)
    reached = frozenset(found.storages.keys() - graph_only.keys()) if ref is None else frozenset()
    leaves = tuple(leaf_refs(found))  # empty where ``ref`` tells it apart: no probes were collected
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
    """What an object reaches, walked as an ``inspect`` at ``depth`` walks it (listings.py)."""

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
        """``shell()``: the IPython shell (or None); ``read_figures()``: a SampleSource reading
        (the sampler's lock-protected one in the kernel)."""
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
        """Run the ``free`` actions; a step that raises is added to ``failures``
        (after a sticky CUDA error every CUDA call raises), never raised: a
        ``delete`` has removed names by then, and its reply must say so."""
        ran: list[str] = []
        collected: int | None = None
        empty: str | None = None  # not requested
        if "gc" in actions:  # first: what gc frees, empty_cache can return
            try:
                collected = int(gc.collect())
                ran.append("gc")
            except Exception as exc:  # a finaliser of the user's that raises past gc
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
        """``keep_listing=False``: for a caller that never deletes from it (the OOM
        diagnosis), so that it does not push a frontend's listing out."""
        start = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            result, listing, _held = self._inspect(max_entries, container_depth)
        if keep_listing:
            self._keep(listing)
        result["elapsed_ms"] = _ms(start)
        return result

    def held_references(self) -> dict[str, Any]:
        """For the out-of-memory diagnosis: an ``inspect`` result (not kept) with
        ``held_bytes_by_device``, what the names and the hidden holders hold
        together. A storage that ``x`` and ``Out[3]`` (and the last result) all
        hold is in several entries' figures but counts once here."""
        start = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            result, _listing, held = self._inspect(INSPECT_MAX_ENTRIES[2], INSPECT_CONTAINER_DEPTH[2])
        result["held_bytes_by_device"] = bytes_by_device(held)
        result["elapsed_ms"] = _ms(start)
        return result

    def _inspect(self, max_entries: int, depth: int) -> tuple[dict[str, Any], Listing, Storages]:
        """The listing, and every storage found (names and hidden holders), each once."""
        shell = self._shell()
        classes = Classes()
        budget = Budget()
        extra = Budget()  # what the names' minimum walks may take beyond ``budget``
        cut: dict[str, int] = {}  # name -> the items its walk was allowed, where it ran out
        sizer = Sizer(classes, budget)
        user_ns: dict[str, Any] = getattr(shell, "user_ns", None) or {}
        hidden_ns: dict[str, Any] = getattr(shell, "user_ns_hidden", None) or {}

        cache_labels = output_cache_labels(shell)  # id -> labels

        # 1. size every candidate name
        raw: list[tuple[str, Any, str, Found]] = []
        obj: Any = None
        for name, obj in list(user_ns.items()):
            if not isinstance(name, str) or reserved_name_reason(name) is not None:
                continue
            if name in hidden_ns and hidden_ns[name] is obj:
                continue  # put there by IPython, not by the user
            kind = classes.kind(obj)
            if kind == "skip":
                continue
            found = Found()
            if weak_ref(obj) is None:
                found.probes = []  # its leaves, to tell it apart from a later object at its address
            # Each name gets a walk of its own, at least MIN_ITEMS_PER_NAME items
            # even once a large dataset has spent the request's budget (bounded
            # again by as much over it); a walk that ran out is marked, and its
            # budget kept, so that ``delete`` walks it as far again.
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

        # 2. the memory graph-holding tensors keep alive: what their graphs saved
        # that no name holds directly (a weight saved for backward is the model's)
        graphs = {
            name: autograd_graph.walk_graphs(found.graph_roots, found.graph_tensors)
            for name, _obj, _kind, found in raw
            if found.graph_tensors
        }
        graph_only: dict[str, dict[StorageKey, int]] = {}
        if graphs:
            # An optimizer's parameters are held too: by the optimizer, even with the model gone.
            held_keys = {key for *_, found in raw for key in (*found.storages, *found.referenced)}
            for name, _obj, _kind, found in raw:
                if name in graphs:
                    graph_only[name] = autograd_graph.only_in_graph(graphs[name], held_keys)
                    found.storages.update(graph_only[name])  # deleting the name frees them too

        # 3. count each storage once, on the largest holder
        raw.sort(key=lambda r: (-r[3].total, r[0]))
        owner: dict[StorageKey, str] = {}
        sharers: dict[StorageKey, list[str]] = {}
        for name, _obj, _kind, found in raw:
            for key in found.storages:
                owner.setdefault(key, name)
                sharers.setdefault(key, []).append(name)
        # An optimizer refers to its parameters without counting them: they stay
        # the model's to count, but deleting the model frees none of them while
        # the optimizer stays. Each of the two says it shares them with the other.
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
            # What it reaches that another entry counts: a 0 B alias still names its bytes.
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
                    # Sized in part only (the request's walking budget ran out): it may hold more.
                    "truncated": name in cut,
                }
            )
            listing.names[name] = _listed(obj, found, graph_only.get(name, {}), cut.get(name))
        held: Storages = {}  # keys and sizes only
        for *_, found in raw:
            held.update(found.storages)
        del raw, obj  # no reference to user objects beyond this point
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
        """Caller checked: listing exists, names are strings, at most protocol.MAX_DELETE_NAMES."""
        start = time.perf_counter()
        listing = self._listings[listing_id]
        shell = self._shell()
        user_ns: dict[str, Any] | None = getattr(shell, "user_ns", None)
        if user_ns is None:
            user_ns = {}
        before = self.snapshot()

        refused: list[dict[str, Any]] = []
        accepted: list[str] = []
        # The objects the checks found, deleted only while each name is still
        # bound to its own: deleting one name can run user code (a __del__,
        # a weakref callback) that rebinds another. Let go of one by one.
        verified: dict[str, Any] = {}
        reach = _reach(listing.container_depth)
        cells_ran = listing.cells_ran_since(shell)
        for name in dict.fromkeys(names):  # de-duplicated, in order
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
            # What they hold now is not what the listing showed (an Out[] or a
            # traceback of a later cell): not what the user confirmed.
            refused.extend({"name": h, "reason": "cells ran since the listing", "hidden": True} for h in clearing)
            clearing = []
        done: list[str] = []  # the hidden holders cleared so far
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
                        # A step past removing the name (IPython's copies) failed:
                        # the name counts as deleted once it is out of the namespace.
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
                # What was deleted is deleted: the reply must say so, whatever asking about it raised.
                still_alive = [
                    {"name": name, "reason": f"could not tell whether its memory was freed ({type(exc).__name__})"}
                    for name in deleted
                ]
            release_probes(probes)  # what they kept goes now: before the figures after
            return {
                "deleted": deleted,
                "refused": refused,
                "cleared": done,
                "still_alive": still_alive,
                # Steps that raised after the deletes began: what they left undone
                # (the names above are gone whatever failed after them).
                "failures": failures,
                "before": before,
                "after": self.snapshot(),
                "elapsed_ms": _ms(start),
            }
        except KeyboardInterrupt:
            # Part of it is done and cannot be undone: the answer must say which part.
            # A name counts as deleted once it is out of the namespace (the
            # interrupt may land between that and the bookkeeping).
            gone = [name for name in accepted if name not in user_ns]
            raise RequestInterrupted(interrupted_delete_text(accepted, gone, clearing, done, free, freed)) from None
        finally:
            verified.clear()  # an interrupt must not leave user objects on this frame
            obj = None


# --- CUDA ---------------------------------------------------------------------------


def empty_cuda_cache(failures: list[dict[str, Any]] | None = None) -> str:
    """``torch.cuda.empty_cache()`` on every device whose allocator reserves memory.

    Never initialises CUDA; a device without reserved memory is skipped (switching
    to it could create a context there, and it has nothing to return). Each device
    is tried on its own: one in a failed state (a sticky CUDA error) leaves the
    others' caches to be returned. What failed is added to ``failures`` and the
    outcome reads ``"failed: GPU 0: RuntimeError: …"``; nothing is raised.
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
    """One entry of a ``delete`` reply's ``failures``: ``step`` is ``delete``
    (``target``: the name), ``clear`` (the hidden holder), ``gc`` or
    ``empty_cache`` (the GPU, or None)."""
    return {"step": step, "target": target, "error": error_text(exc)}


def error_text(exc: BaseException, limit: int = 300) -> str:
    """``RuntimeError: CUDA error: ...``, on one line and bounded (its str() may be user code that raises)."""
    name = type(exc).__name__
    head = error_head(exc, max(1, limit - len(name) - 2))
    return f"{name}: {head}" if head else name


# --- small helpers -----------------------------------------------------------------


def _type_name(obj: Any) -> str:
    # type's own descriptors: a metaclass's __getattribute__ or properties are user code
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
