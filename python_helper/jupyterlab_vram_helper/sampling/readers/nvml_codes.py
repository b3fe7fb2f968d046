"""Turns NVML's answers that are not figures into words the wire carries.

Two things need that: a failed NVML call, which becomes the reason a figure is
null (the frontend words and translates the code), and the clocks event
(throttle) bitmask, which becomes the names of the reasons it holds. Both are
fixed by NVML's headers, not by a driver's mood, so they live apart from the
readers that meet them.
"""

from __future__ import annotations

from typing import Any

# These are NVML's return codes from nvml.h, as pynvml's NVMLError carries them
# in its ``value``.
NVML_ERROR_UNINITIALIZED = 1
NVML_ERROR_NOT_SUPPORTED = 3
NVML_ERROR_NO_PERMISSION = 4
NVML_ERROR_NOT_FOUND = 6
NVML_ERROR_FUNCTION_NOT_FOUND = 13
NVML_ERROR_GPU_IS_LOST = 15

_REASON_BY_CODE = {
    NVML_ERROR_NOT_SUPPORTED: "not_supported",
    # An older driver's library lacks the entry point, which for the user is the
    # same as "not supported".
    NVML_ERROR_FUNCTION_NOT_FOUND: "not_supported",
    NVML_ERROR_NO_PERMISSION: "no_permission",
    NVML_ERROR_GPU_IS_LOST: "gpu_lost",
    # The sample queries answer NOT_FOUND when the driver holds no sample since
    # the time asked for.
    NVML_ERROR_NOT_FOUND: "no_samples",
}

# These reasons will not change while the helper runs, so a call that gave one
# is not made again.
LASTING_REASONS = frozenset({"not_supported", "no_permission"})


def unavailable_reason(exc: BaseException) -> str:
    """The wire's reason for a figure whose NVML call raised ``exc``."""
    if isinstance(exc, (AttributeError, TypeError)):
        # The installed pynvml is older than the call: it lacks the function, or
        # the function takes other arguments.
        return "not_supported"
    reason = _REASON_BY_CODE.get(getattr(exc, "value", None))  # type: ignore[arg-type]
    return reason if reason is not None else "driver_error"


# These are the bits of nvmlClocksEventReason* (named nvmlClocksThrottleReason*
# in older headers), one by one, in nvml.h's order.
THROTTLE_REASON_BITS: tuple[tuple[int, str], ...] = (
    (0x001, "gpu_idle"),
    (0x002, "applications_clocks_setting"),
    (0x004, "sw_power_cap"),
    (0x008, "hw_slowdown"),
    (0x010, "sync_boost"),
    (0x020, "sw_thermal_slowdown"),
    (0x040, "hw_thermal_slowdown"),
    (0x080, "hw_power_brake_slowdown"),
    (0x100, "display_clock_setting"),
    (0x200, "board_limit"),
    (0x400, "reliability"),
)
_KNOWN_BITS = 0x7FF


def throttle_names(mask: int) -> list[str]:
    """Return the names of the reasons set in ``mask``.

    A bit that this table does not name reads ``bit_N``, so that a reason added
    by a newer driver still shows.
    """
    names = [name for bit, name in THROTTLE_REASON_BITS if mask & bit]
    unknown = mask & ~_KNOWN_BITS
    position = 0
    while unknown:
        if unknown & 1:
            names.append(f"bit_{position}")
        unknown >>= 1
        position += 1
    return names


def sample_value(value_type: int, value: Any) -> float | None:
    """Return the number in one of nvmlDeviceGetSamples' ``sampleValue`` unions.

    The union is read as its ``value_type`` says; an unknown type gives None.
    """
    field = _VALUE_FIELDS.get(value_type)
    if field is None:
        return None
    try:
        return float(getattr(value, field))
    except (AttributeError, TypeError, ValueError):
        return None


# This maps each nvmlValueType_t to the member of nvmlValue_t that holds the number.
_VALUE_FIELDS = {0: "dVal", 1: "uiVal", 2: "ulVal", 3: "ullVal", 4: "sllVal", 5: "siVal", 6: "usVal"}
