"""Reads TensorFlow's GPU allocator, but only after TensorFlow has initialised its devices.

``get_memory_info`` (and anything that lists logical devices) initialises the
TF runtime, which by default maps almost all GPU memory and freezes the device
configuration. So the helper first checks, without side effects, whether the
eager context already exists and is initialised, and defaults to "not
initialised" whenever it cannot tell.

TensorFlow's logical ``GPU:k`` is not always CUDA ordinal ``k``. The user may
have hidden GPUs (with ``tf.config.set_visible_devices`` and only the second
card visible, ``GPU:0`` is ordinal 1), or split one into several logical
devices (with ``set_logical_device_configuration`` and two configurations,
``GPU:0`` and ``GPU:1`` are both on ordinal 0). TF builds its logical devices
from its own records in this order: each visible physical GPU in the order of
the physical list (``/physical_device:GPU:j``, where ``j`` is the CUDA ordinal
after CUDA_VISIBLE_DEVICES) gives as many logical devices as it has
configurations, or one, and a configuration may move its device with
``experimental_device_ordinal``. :func:`cuda_ordinals` reads the same records,
which are attributes of the initialised context, so nothing calls into TF,
and maps each logical device back.
"""

from __future__ import annotations

import re
import sys
from typing import TYPE_CHECKING, Any

# The message shapes in protocol_types.py are needed for annotations only.
if TYPE_CHECKING:
    from ...protocol_types import TensorflowGpuFigures, TensorflowInfo, TensorflowState


_GPU_NAME = re.compile(r"(?:^|/)device:GPU:(\d+)$|^GPU:(\d+)$")
# The pattern of a physical device's name, by device type, compiled once rather
# than at every sampler tick.
_PHYSICAL_NAMES = {kind: re.compile(rf"(?:^|/)physical_device:{kind}:(\d+)$") for kind in ("GPU", "CPU")}


def loaded_tensorflow() -> Any:
    """Return the TensorFlow module if the user imported it, without importing it."""
    return sys.modules.get("tensorflow")


def gpus_initialized() -> bool:
    """Whether TF's eager context exists and has been initialised.

    It reads the module global ``tensorflow.python.eager.context._context``
    directly, because calling ``context()`` would create the context. ``_context_handle`` is set
    by ``Context.ensure_initialized()``, which is where TF creates its devices.
    """
    context_module = sys.modules.get("tensorflow.python.eager.context")
    if context_module is None:
        return False
    ctx = getattr(context_module, "_context", None)
    if ctx is None:
        return False
    try:
        return getattr(ctx, "_context_handle", None) is not None
    except Exception:
        return False


def tensorflow_state(tf: Any) -> TensorflowState:
    """Report whether TensorFlow is imported and whether its GPUs are initialised."""
    if tf is None:
        return {"imported": False, "gpus_initialized": False}
    return {"imported": True, "gpus_initialized": gpus_initialized()}


def tensorflow_info(tf: Any) -> TensorflowInfo | None:
    """Return the TensorFlow version and GPU state for the ``hello`` message, or None without TensorFlow."""
    if tf is None:
        return None
    version = getattr(tf, "__version__", None)
    return {"version": None if version is None else str(version), "gpus_initialized": gpus_initialized()}


def read_gpus(tf: Any) -> dict[int, TensorflowGpuFigures]:
    """TF's current and peak allocated bytes for each CUDA ordinal, or nothing
    unless TF's GPUs are initialised.

    Where several logical devices share one card, their current bytes add up,
    but their peaks came at different moments, so the card's peak is unknown
    (None). Where TF's records cannot be read (:func:`cuda_ordinals`),
    ``GPU:k`` is taken as ordinal ``k``, as it is without hidden or split GPUs.
    """
    if tf is None or not gpus_initialized():
        return {}
    context_module = sys.modules["tensorflow.python.eager.context"]
    ctx = context_module._context
    logical = []
    # The context is initialised, so listing its devices has no side effect.
    for device in ctx.list_logical_devices("GPU"):
        match = _GPU_NAME.search(device.name)
        if match is not None:
            logical.append(int(match.group(1) or match.group(2)))
    ordinals = cuda_ordinals(ctx, len(logical))
    result: dict[int, TensorflowGpuFigures] = {}
    for index in logical:
        ordinal = ordinals[index] if ordinals is not None and index < len(ordinals) else index
        try:
            info = tf.config.experimental.get_memory_info(f"GPU:{index}")
            current: int | None = int(info["current"])
            peak: int | None = int(info["peak"])
        except Exception:
            current = peak = None
        seen = result.get(ordinal)
        if seen is None:
            result[ordinal] = {"current_bytes": current, "peak_bytes": peak}
        else:
            # This is a second logical device on the same card.
            both = seen["current_bytes"]
            seen["current_bytes"] = None if both is None or current is None else both + current
            seen["peak_bytes"] = None
    return result


def cuda_ordinals(ctx: Any, logical_count: int, device_type: str = "GPU") -> list[int] | None:
    """The CUDA ordinal of each logical GPU, so that ``GPU:k`` is on ``result[k]``,
    from TF's records of its physical devices, the visible ones and their
    logical configurations.

    A configuration's ``experimental_device_ordinal`` moves its logical device.
    Lower ordinals come first, and ties stay in physical order and then list
    order (as TF's LogicalDeviceConfiguration does, with an unset ordinal
    counting as 0), hence a stable sort. The result is None where those
    records are missing (in another TF release) or do not add up to
    ``logical_count`` (because TF left a device out, as it does a GPU below its
    minimum compute capability), since then nothing is known of the mapping.
    A ``device_type`` of "CPU" reads the same records of the CPUs, for tests.
    """
    try:
        physical = getattr(ctx, "_physical_devices", None)
        visible = getattr(ctx, "_visible_device_list", None)
        configurations = getattr(ctx, "_virtual_device_map", None)
        if not isinstance(physical, list) or not isinstance(visible, list) or not isinstance(configurations, dict):
            return None
        name = _PHYSICAL_NAMES[device_type]
        # Each entry is (TF's device ordinal, CUDA ordinal), in physical order
        # and then list order.
        placed: list[tuple[int, int]] = []
        for device in physical:
            if getattr(device, "device_type", None) != device_type or device not in visible:
                continue
            match = name.search(str(getattr(device, "name", "")))
            if match is None:
                return None
            ordinal = int(match.group(1))
            logical = configurations.get(device) or [None]
            placed += [(getattr(each, "experimental_device_ordinal", None) or 0, ordinal) for each in logical]
        # The sort is stable, so ties keep physical order, then list order.
        placed.sort(key=lambda entry: entry[0])
        return [ordinal for _, ordinal in placed] if len(placed) == logical_count else None
    except Exception:
        return None
