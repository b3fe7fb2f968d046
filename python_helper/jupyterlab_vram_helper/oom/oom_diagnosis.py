"""Work out why a cell ran out of memory: merge what the error message said
with what the kernel read afterwards, and name the likely causes.

The message's figures were taken at the instant of failure, so they win. The
state read after the failure fills in what the message lacks, since a cuBLAS
error carries no figures at all and a TensorFlow one carries only the request.

The causes are these:

* ``too_big``: the request could not fit even if this process held nothing
  but what it cannot give back (its CUDA context). It is larger than the
  device less what other processes hold, or larger than the memory-fraction
  limit. For host memory, it is larger than the machine's RAM.
* ``fragmentation``: PyTorch's cache holds at least the request as reserved
  but unallocated memory. In torch >= 2.1 the figure is taken after the
  allocator released every whole cached segment, so what remains is split
  segments the request could not use. For a library (cuBLAS, cuDNN, ...) that
  allocates outside PyTorch, any large cache is in its way.
* ``stale_references``: objects this notebook still references from earlier
  cells, the output cache or an earlier traceback would make room once freed.
  The names that the failing cell itself uses are not among them, because
  deleting those would not help that cell; oom_watch.py sets them apart.
* ``other_processes``: other processes or kernels hold enough of the device.
* ``child_processes``: processes this kernel started (a vLLM engine, pool or
  DataLoader workers, a spawned process) hold enough of the device. They are
  listed among the other processes, marked as the kernel's children, and
  their memory counts as what the kernel could get back: stopping them, or
  releasing the engine that started them, is this notebook's to do
  (oom_children.py).

Each cause carries ``gain_bytes``, which is what fixing it would make
available, and the causes are ranked by it. ``too_big`` has no gain and always
comes first when it applies. There is one other exception: when the request's
size is known and PyTorch's cache alone held that much, fragmentation comes
before the other causes whatever their gains. In that case the memory was this
process's already, in pieces too small, and that is why this allocation
failed. For example, on an H100 that a notebook had filled, deleting the
names would have freed three times what the cache held, yet the names were
not what the failure was about.

The functions here are pure and import no framework.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, TypedDict

from .oom_children import OomChild, mark_child
from .oom_message import KIND_CUDA, KIND_HOST, KIND_TENSORFLOW, OomMessageFacts, OomProcess

# The diagnosis's wire shape is generated from the protocol's schema (see
# protocol_types.py) and is needed only by type checkers.
if TYPE_CHECKING:
    # typing has NotRequired from Python 3.11 only.
    from typing_extensions import NotRequired

    from ..protocol_types import OomCause, OomDiagnosis, OomStaleHolder


class OomState(TypedDict):
    """What the kernel read after the failure. Any figure may be None."""

    device_index: int | None
    # The device's total from NVML or torch, or the total RAM for host memory.
    total_bytes: int | None
    # NVML's free figure, or the available RAM for host memory.
    free_bytes: int | None
    # What torch's allocator had allocated when the state was read.
    allocated_bytes: int | None
    reserved_bytes: int | None
    num_alloc_retries: int | None
    # NVML's figure for this process, or its resident set size for host memory.
    process_in_use_bytes: int | None
    # The other processes on the device as NVML lists them, without this one.
    # It is None for host memory.
    other_processes: list[OomProcess] | None
    # The bytes on the failing device held by earlier cells' names and by
    # hidden references.
    stale_bytes: int | None
    # The holders of those bytes, largest first, at most STALE_HOLDERS_LISTED.
    stale_holders: list[OomStaleHolder]
    # The names that the failing cell itself uses, such as its model and its
    # optimizer. They are counted in neither of the two fields above, since
    # deleting them is no fix for that cell.
    in_use_holders: list[OomStaleHolder]
    # The kernel's own processes that NVML listed on the failing device, by pid
    # (oom_children.py); absent or empty where there are none.
    children: NotRequired[dict[int, OomChild]]


class OomAllocationSites(TypedDict):
    """The diagnosis's ``allocation_sites`` key, which oom_watch.py adds to the
    result of :func:`diagnose`. It lists the notebook lines that held the most
    on the failing device at the failure, as allocation_sites.py finds them."""

    # False when recording is off, so that nothing could be said. The UI then
    # offers to turn it on.
    recording: bool
    # The site dicts of allocation_sites.py, largest first, at most
    # OOM_SITES_LISTED of them.
    sites: list[dict[str, Any]]


CAUSE_TOO_BIG = "too_big"
CAUSE_FRAGMENTATION = "fragmentation"
CAUSE_STALE_REFERENCES = "stale_references"
CAUSE_OTHER_PROCESSES = "other_processes"
CAUSE_CHILD_PROCESSES = "child_processes"
# Equal gains rank in this order, so that the cheapest fix comes first:
# empty_cache or expandable segments, then deleting names, then the kernel's
# own processes, then someone else's process.
_TIE_ORDER = (CAUSE_FRAGMENTATION, CAUSE_STALE_REFERENCES, CAUSE_CHILD_PROCESSES, CAUSE_OTHER_PROCESSES)

MIB = 1 << 20

# When the request's size is unknown (a cuBLAS/cuDNN ALLOC_FAILED, a bare
# "CUDA error: out of memory"), a cause is named only if it holds a share of
# the device worth freeing. That is 5% of the device, or for the cache 256 MiB,
# which is the order of a cuBLAS or cuDNN workspace, the memory that such
# libraries fail to get.
UNKNOWN_REQUEST_SHARE = 0.05
UNKNOWN_REQUEST_MIN_FRAGMENTATION_BYTES = 256 * MIB

# A process list that, with the free memory and PyTorch's reservation, adds up
# to more than the device by this much must count this process twice. Torch
# names this process by getpid(), but in a container (Colab, or Docker without
# --pid=host) NVML reports the host's pid, so a line such as "Process 20398 has
# 14.52 GiB" can be this process. The slack covers the rounding of the printed
# figures, which is about 5 MiB either way per figure.
ACCOUNTING_SLACK_SHARE = 0.02
ACCOUNTING_SLACK_MIN_BYTES = 128 * MIB
# A process is this one if it holds at least PyTorch's reservation, less this
# for rounding.
SELF_MATCH_SLACK_BYTES = 16 * MIB

MAX_LISTED_PROCESSES = 16
# At most this many holders are listed in a diagnosis. The sidebar offers to
# delete each one, so only the largest are worth showing.
STALE_HOLDERS_LISTED = 5


def diagnose(facts: OomMessageFacts | None, state: OomState) -> OomDiagnosis:
    """Merge the message's figures with the state read after the failure, and rank the causes.

    When ``facts`` is None, because nothing could be read from the message, the
    error is treated as a device error with no figures.
    """
    kind = facts["kind"] if facts is not None else KIND_CUDA
    host = kind == KIND_HOST

    def message(key: str) -> int | None:
        return facts.get(key) if facts is not None else None  # type: ignore[return-value]

    def after(key: str) -> int | None:
        return state.get(key)  # type: ignore[return-value]

    requested = message("requested_bytes")
    total = _first(message("total_bytes"), after("total_bytes"))
    free = _first(message("free_bytes"), after("free_bytes"))
    allocated = _first(message("allocated_bytes"), after("allocated_bytes"))
    process_in_use = _first(message("process_in_use_bytes"), after("process_in_use_bytes"))
    allowed = message("allowed_bytes")

    reserved_unallocated: int | None = None
    # PyTorch's whole reservation, as at the failure where the message says it.
    reserved: int | None = None
    if not host:
        reserved_unallocated = message("reserved_unallocated_bytes")
        reserved = message("reserved_bytes")
        if reserved is None and message("allocated_bytes") is not None and reserved_unallocated is not None:
            reserved = message("allocated_bytes") + reserved_unallocated  # type: ignore[operator]
        state_reserved, state_allocated = after("reserved_bytes"), after("allocated_bytes")
        if reserved_unallocated is None and state_reserved is not None and state_allocated is not None:
            reserved_unallocated = max(0, state_reserved - state_allocated)
        if reserved is None:
            reserved = state_reserved

    others, self_in_list = _other_processes(facts, state, host, total, free, reserved)
    children = state.get("children") or {}
    if (others is None or host) and children:
        # No list names the device's processes (nothing lists the host's), but the tree's last
        # reading does for the children.
        others = [{"pid": c["pid"], "used_bytes": c["used_bytes"]} for c in children.values()]
    if process_in_use is None:
        process_in_use = self_in_list
    if host:
        other_bytes = (
            max(0, total - free - process_in_use)
            if total is not None and free is not None and process_in_use is not None
            else None
        )
    elif others is None:
        other_bytes = None
    else:
        known = [p["used_bytes"] for p in others if p["used_bytes"] is not None]
        other_bytes = sum(known) if known or not others else None

    child_bytes = sum(p["used_bytes"] or 0 for p in others or [] if p["pid"] in children)
    # What the kernel's children hold, it can get back: only the rest is someone else's.
    strangers = None if other_bytes is None else max(0, other_bytes - child_bytes)
    stale = after("stale_bytes")
    if not host and stale is not None and allocated is not None:
        # The message's allocated figure is printed rounded (78.00 GiB), so
        # what references hold is capped at it, to stay within the allocated
        # figure shown beside it.
        stale = min(stale, allocated)
    capacity = _capacity(kind, total, reserved, process_in_use, strangers, allowed)
    causes = _causes(
        kind=kind,
        requested=requested,
        capacity=capacity,
        total=total,
        free=free,
        reserved=reserved,
        reserved_unallocated=reserved_unallocated,
        other_bytes=strangers,
        child_bytes=child_bytes,
        allowed=allowed,
        stale=stale,
    )
    listed = sorted(others or [], key=lambda p: -(p["used_bytes"] or -1))[:MAX_LISTED_PROCESSES]
    listed_processes = [_listed(p, children) for p in listed]
    return {
        "kind": kind,
        "library": facts["library"] if facts is not None else None,
        "framework": facts.get("framework") if facts is not None else None,
        "device_index": _first(message("device_index"), after("device_index")),
        "requested_bytes": requested,
        "total_bytes": total,
        "free_bytes": free,
        "allocated_bytes": allocated,
        "reserved_unallocated_bytes": reserved_unallocated,
        "process_in_use_bytes": process_in_use,
        "other_processes_bytes": other_bytes,
        "other_processes": listed_processes,  # type: ignore[typeddict-item]
        "capacity_bytes": capacity,
        "allowed_bytes": allowed,
        "num_alloc_retries": after("num_alloc_retries"),
        "stale_bytes": stale,
        "stale_holders": list(state.get("stale_holders") or [])[:STALE_HOLDERS_LISTED],
        "in_use_holders": list(state.get("in_use_holders") or [])[:STALE_HOLDERS_LISTED],
        "causes": causes,
    }


def _listed(process: OomProcess, children: dict[int, OomChild]) -> dict[str, Any]:
    entry: dict[str, Any] = {"pid": process["pid"], "used_bytes": process["used_bytes"]}
    child = children.get(process["pid"])
    if child is not None:
        mark_child(entry, child)
    return entry


def _first(*values: int | None) -> int | None:
    for value in values:
        if value is not None:
            return value
    return None


def _other_processes(
    facts: OomMessageFacts | None,
    state: OomState,
    host: bool,
    total: int | None,
    free: int | None,
    reserved: int | None,
) -> tuple[list[OomProcess] | None, int | None]:
    """The other processes on the device, or None when they are unknown, and
    this process's bytes if it hid among them.

    The message's list, which is NVML's at the instant of failure, wins over
    the state's even when it is empty, because a message with NVML figures and
    no other process says that there was none.
    """
    if host:
        return [], None
    if facts is not None and (facts["process_in_use_bytes"] is not None or facts["other_processes"]):
        others = list(facts["other_processes"])
        names_self = facts["process_in_use_bytes"] is not None
    elif state.get("other_processes") is not None:
        others = list(state["other_processes"] or [])
        names_self = state.get("process_in_use_bytes") is not None
    else:
        return None, None
    if names_self or not others:
        return others, None
    return _split_self(others, total, free, reserved)


def _split_self(
    others: list[OomProcess], total: int | None, free: int | None, reserved: int | None
) -> tuple[list[OomProcess], int | None]:
    """Take this process out of a list that names it by another pid, as
    ACCOUNTING_SLACK_SHARE explains, and return its bytes as well."""
    if total is None or free is None or reserved is None or reserved <= 0:
        return others, None
    listed = sum(p["used_bytes"] or 0 for p in others)
    slack = max(int(total * ACCOUNTING_SLACK_SHARE), ACCOUNTING_SLACK_MIN_BYTES)
    if free + reserved + listed <= total + slack:
        return others, None
    candidates = [
        p for p in others if p["used_bytes"] is not None and p["used_bytes"] >= reserved - SELF_MATCH_SLACK_BYTES
    ]
    if not candidates:
        return others, None
    this = min(candidates, key=lambda p: p["used_bytes"] or 0)
    return [p for p in others if p is not this], this["used_bytes"]


def _capacity(
    kind: str,
    total: int | None,
    reserved: int | None,
    process_in_use: int | None,
    other_bytes: int | None,
    allowed: int | None,
) -> int | None:
    """The most this process could hold if it held nothing that it can give back,
    or None when the total is unknown."""
    if total is None:
        return None
    if kind == KIND_HOST:
        return total
    # This process's memory outside PyTorch's reservation (the CUDA context and
    # library handles) stays while the kernel lives. Under TensorFlow the
    # process's figure is TensorFlow's own pool, so no overhead is known.
    overhead = 0
    if kind != KIND_TENSORFLOW and process_in_use is not None and reserved is not None:
        overhead = max(0, process_in_use - reserved)
    capacity = max(0, total - (other_bytes or 0) - overhead)
    return min(capacity, allowed) if allowed is not None else capacity


def _causes(
    *,
    kind: str,
    requested: int | None,
    capacity: int | None,
    total: int | None,
    free: int | None,
    reserved: int | None,
    reserved_unallocated: int | None,
    other_bytes: int | None,
    child_bytes: int,
    allowed: int | None,
    stale: int | None,
) -> list[OomCause]:
    caching_allocator = kind not in (KIND_HOST, KIND_TENSORFLOW)
    known_request = requested is not None

    too_big = known_request and capacity is not None and requested > capacity  # type: ignore[operator]

    # With a memory-fraction limit, room on the device beyond the limit is no use.
    cap_room: int | None = None
    if allowed is not None and reserved is not None:
        cap_room = max(0, allowed - reserved)
    usable_free = free or 0
    if cap_room is not None:
        usable_free = min(usable_free, cap_room)
    cache = (reserved_unallocated or 0) if caching_allocator else 0

    found: list[OomCause] = []
    if caching_allocator and reserved_unallocated:
        if known_request:
            if reserved_unallocated >= requested:  # type: ignore[operator]
                found.append({"cause": CAUSE_FRAGMENTATION, "gain_bytes": reserved_unallocated})
        elif reserved_unallocated >= UNKNOWN_REQUEST_MIN_FRAGMENTATION_BYTES or (
            total is not None and reserved_unallocated >= UNKNOWN_REQUEST_SHARE * total
        ):
            found.append({"cause": CAUSE_FRAGMENTATION, "gain_bytes": reserved_unallocated})
    if stale:
        if not known_request or usable_free + cache + stale >= requested:  # type: ignore[operator]
            found.append({"cause": CAUSE_STALE_REFERENCES, "gain_bytes": stale})
    for cause, held in ((CAUSE_CHILD_PROCESSES, child_bytes), (CAUSE_OTHER_PROCESSES, other_bytes)):
        if held and _process_cause(held, requested, free, total, cap_room):
            found.append({"cause": cause, "gain_bytes": held})

    if not found and not too_big and known_request:
        # No single fix frees enough, but together they would, so each one that
        # contributes is named.
        parts = [
            (CAUSE_FRAGMENTATION, cache),
            (CAUSE_STALE_REFERENCES, stale or 0),
            (CAUSE_CHILD_PROCESSES, child_bytes if cap_room is None else 0),
            (CAUSE_OTHER_PROCESSES, (other_bytes or 0) if cap_room is None else 0),
        ]
        if free is not None and usable_free + sum(gain for _, gain in parts) >= requested:  # type: ignore[operator]
            found = [{"cause": cause, "gain_bytes": gain} for cause, gain in parts if gain > 0]

    found.sort(key=lambda c: (-(c["gain_bytes"] or 0), _TIE_ORDER.index(c["cause"])))
    if known_request and caching_allocator and reserved_unallocated is not None and reserved_unallocated >= requested:  # type: ignore[operator]
        # The sort is stable, so the other causes keep their order.
        found.sort(key=lambda c: c["cause"] != CAUSE_FRAGMENTATION)
    if too_big:
        found.insert(0, {"cause": CAUSE_TOO_BIG, "gain_bytes": None})
    return found


def _process_cause(held: int, requested: int | None, free: int | None, total: int | None, cap_room: int | None) -> bool:
    """Whether processes holding ``held`` bytes are a cause: their leaving would make room for the
    request (within a memory-fraction cap), or, with the request unknown, they hold a share worth freeing."""
    if requested is not None:
        return (free or 0) + held >= requested and (cap_room is None or cap_room >= requested)
    return total is not None and held >= UNKNOWN_REQUEST_SHARE * total
