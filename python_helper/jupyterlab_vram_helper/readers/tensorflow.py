"""TensorFlow's GPU allocator, read only after TF initialised its devices.

``get_memory_info`` (and anything that lists logical devices) initialises the
TF runtime, which by default maps almost all GPU memory and freezes the device
configuration. So the helper first checks, without side effects, whether the
eager context already exists and is initialised, and defaults to "not
initialised" whenever it cannot tell.
"""

from __future__ import annotations

import re
import sys
from typing import TYPE_CHECKING, Any, Dict, Optional

if TYPE_CHECKING:  # the message shapes, for annotations only (protocol_types.py)
    from ..protocol_types import TensorflowGpuFigures, TensorflowInfo, TensorflowState


_GPU_NAME = re.compile(r"(?:^|/)device:GPU:(\d+)$|^GPU:(\d+)$")


def loaded_tensorflow() -> Any:
    return sys.modules.get("tensorflow")


def gpus_initialized() -> bool:
    """True only if TF's eager context exists and has been initialised.

    Reads the module global ``tensorflow.python.eager.context._context``
    directly: calling ``context()`` would create it. ``_context_handle`` is set
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
    if tf is None:
        return {"imported": False, "gpus_initialized": False}
    return {"imported": True, "gpus_initialized": gpus_initialized()}


def tensorflow_info(tf: Any) -> Optional[TensorflowInfo]:
    if tf is None:
        return None
    version = getattr(tf, "__version__", None)
    return {"version": None if version is None else str(version), "gpus_initialized": gpus_initialized()}


def read_gpus(tf: Any) -> Dict[int, TensorflowGpuFigures]:
    """Per GPU index, TF's current/peak allocated bytes; empty unless initialised.

    TF numbers its GPUs as the CUDA runtime does (after CUDA_VISIBLE_DEVICES),
    so ``GPU:i`` is CUDA ordinal ``i`` unless the user hid devices with
    ``tf.config.set_visible_devices`` (not mapped here).
    """
    if tf is None or not gpus_initialized():
        return {}
    context_module = sys.modules["tensorflow.python.eager.context"]
    ctx = context_module._context
    result: Dict[int, TensorflowGpuFigures] = {}
    for device in ctx.list_logical_devices("GPU"):  # initialised: no side effect
        match = _GPU_NAME.search(device.name)
        if match is None:
            continue
        index = int(match.group(1) or match.group(2))
        try:
            info = tf.config.experimental.get_memory_info(f"GPU:{index}")
            result[index] = {"current_bytes": int(info["current"]), "peak_bytes": int(info["peak"])}
        except Exception:
            result[index] = {"current_bytes": None, "peak_bytes": None}
    return result
