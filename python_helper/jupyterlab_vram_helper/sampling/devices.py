"""Which GPUs the kernel sees, numbered as its CUDA runtime numbers them.

Once PyTorch has initialised CUDA, torch is the ground truth, because its
ordinals are what the user types in ``cuda:1``. Before that, the helper must
not touch CUDA, so it asks NVML and applies CUDA_VISIBLE_DEVICES itself, the
way the CUDA runtime (and ``torch.cuda._parse_visible_devices``) does. The
entries are integer ordinals or whole or partial ``GPU-`` UUIDs, parsing stops
at the first invalid entry, and a repeated device hides every device, also
where two UUID prefixes name the same one.

Before CUDA is initialised, the helper assumes that CUDA's ordinal order is
NVML's (PCI bus) order. That is true with CUDA_DEVICE_ORDER=PCI_BUS_ID and on
machines with one GPU model.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, NamedTuple

from .readers.nvml import NvmlDevice
from .readers.torch_cuda import cuda_initialized

# The message shapes in protocol_types.py are needed for annotations only.
if TYPE_CHECKING:
    from ..protocol_types import DeviceInfo

VisibleDevices = list[int] | list[str]


# This is a NamedTuple rather than a dataclass, for the reason that SamplerConfig
# gives (config.py).
class Device(NamedTuple):
    """One GPU that the kernel sees, numbered as its CUDA runtime numbers it."""

    # The CUDA ordinal in this process. The name is the protocol's; it hides
    # tuple.index, which nothing calls.
    index: int  # type: ignore[assignment]
    name: str | None
    total_bytes: int | None
    uuid: str | None
    nvml: NvmlDevice | None

    def to_info(self) -> DeviceInfo:
        return {"index": self.index, "name": self.name, "total_bytes": self.total_bytes, "uuid": self.uuid}


def parse_visible_devices(value: str | None) -> VisibleDevices | None:
    """CUDA_VISIBLE_DEVICES as ordinals or UUID prefixes, or ``None`` when it is
    unset, which means that every device is visible. A repeated entry gives an
    empty list, because it hides every device."""
    if value is None:
        return None
    value = value.strip()
    for prefix in ("GPU-", "MIG-"):
        if value.startswith(prefix):
            uuids: list[str] = []
            for entry in value.split(","):
                entry = entry.strip()
                if not entry.startswith(prefix):
                    break
                if entry in uuids:
                    return []
                uuids.append(entry)
            return uuids
    ordinals: list[int] = []
    for entry in value.split(","):
        number = _leading_int(entry.strip())
        if number is None or number < 0:
            break
        if number in ordinals:
            return []
        ordinals.append(number)
    return ordinals


def _leading_int(text: str) -> int | None:
    # This reads a number as strtoul does, so "1gpu" is 1 and "gpu1" is invalid.
    end = 0
    if text[:1] in ("+", "-"):
        end = 1
    # str.isdigit() would not do, because "²" is a digit to it, and int() refuses it.
    while end < len(text) and text[end] in "0123456789":
        end += 1
    digits = text[:end]
    if digits in ("", "+", "-"):
        return None
    return int(digits)


def visible_nvml_devices(visible: VisibleDevices | None, nvml_devices: Sequence[NvmlDevice]) -> list[NvmlDevice]:
    """The NVML devices that CUDA_VISIBLE_DEVICES leaves visible, in CUDA ordinal order."""
    if visible is None:
        return list(nvml_devices)
    result: list[NvmlDevice] = []
    for entry in visible:
        if isinstance(entry, int):
            if entry >= len(nvml_devices):
                # CUDA ignores an invalid ordinal and everything after it.
                break
            match: NvmlDevice | None = nvml_devices[entry]
        elif entry.startswith("MIG-"):
            # MIG instances are not NVML top-level devices, so only torch,
            # once CUDA is initialised, can say what the process sees.
            break
        else:
            candidates = [d for d in nvml_devices if d.uuid is not None and d.uuid.startswith(entry)]
            # A prefix that matches several devices is ambiguous, and CUDA
            # treats it as invalid.
            match = candidates[0] if len(candidates) == 1 else None
        if match is None:
            break
        if match in result:
            # One GPU under two spellings of its UUID ("GPU-9e8d35e3,GPU-9e8")
            # is a repeat, which hides every device, as a repeated string does.
            return []
        result.append(match)
    return result


def normalize_uuid(value: Any) -> str | None:
    """Give a device UUID the ``GPU-`` prefix that NVML and CUDA_VISIBLE_DEVICES
    use, since torch prints UUIDs bare, so that the two can be matched."""
    if value is None:
        return None
    text = str(value)
    if not text:
        return None
    if text.startswith(("GPU-", "MIG-")):
        return text
    return "GPU-" + text


def devices_from_torch(torch: Any, nvml_devices: Sequence[NvmlDevice], visible: VisibleDevices | None) -> list[Device]:
    """The devices as torch numbers them. Call it only when CUDA is initialised,
    because asking torch earlier would initialise CUDA."""
    by_uuid = {d.uuid: d for d in nvml_devices if d.uuid}
    by_order = visible_nvml_devices(visible, nvml_devices)
    devices = []
    for index in range(int(torch.cuda.device_count())):
        props = torch.cuda.get_device_properties(index)
        uuid = normalize_uuid(getattr(props, "uuid", None))
        nvml = by_uuid.get(uuid) if uuid else None
        if nvml is None and uuid is None and index < len(by_order):
            nvml = by_order[index]
        devices.append(
            Device(
                index=index,
                name=getattr(props, "name", None),
                total_bytes=_int_or_none(getattr(props, "total_memory", None)),
                uuid=uuid,
                nvml=nvml,
            )
        )
    return devices


def devices_from_nvml(nvml_devices: Sequence[NvmlDevice], visible: VisibleDevices | None) -> list[Device]:
    """List the GPUs from NVML, keeping only the visible ones and numbering them as CUDA will."""
    return [
        Device(index=i, name=d.name, total_bytes=d.total_bytes, uuid=d.uuid, nvml=d)
        for i, d in enumerate(visible_nvml_devices(visible, nvml_devices))
    ]


def devices_wait_for_cuda(visible_devices: str | None) -> bool:
    """Whether CUDA_VISIBLE_DEVICES names MIG instances. NVML's devices are their
    parent GPUs, so which devices the kernel sees is known only once CUDA starts."""
    visible = parse_visible_devices(visible_devices)
    return bool(visible) and isinstance(visible[0], str) and visible[0].startswith("MIG-")  # type: ignore[index,union-attr]


def enumerate_devices(
    torch: Any, nvml_devices: Sequence[NvmlDevice], environ: Mapping[str, str] = os.environ
) -> list[Device]:
    """List the GPUs the kernel sees, from PyTorch once it has initialised CUDA and from NVML before that."""
    visible = parse_visible_devices(environ.get("CUDA_VISIBLE_DEVICES"))
    if torch is not None and cuda_initialized(torch):
        return devices_from_torch(torch, nvml_devices, visible)
    return devices_from_nvml(nvml_devices, visible)


def _int_or_none(value: Any) -> int | None:
    return int(value) if isinstance(value, int) and not isinstance(value, bool) else None
