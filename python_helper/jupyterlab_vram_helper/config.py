"""The helper's kernel-wide settings, validated against the limits that docs/protocol.md sets.

There is one :class:`SamplerConfig` per kernel. The sampler reads its
interval, threshold and heartbeat, and per-cell accounting
(cell_accounting.py) reads ``reset_peak_per_cell``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, NamedTuple

from .protocol import describe

# The message shapes in protocol_types.py are needed for annotations only.
if TYPE_CHECKING:
    from .protocol_types import ConfigDict

MIN_INTERVAL_S = 0.05
MAX_INTERVAL_S = 60.0
MAX_HEARTBEAT_S = 600.0
# How often a cluster's telemetry may be read (cluster/cluster_poller.py): a
# scheduler answers for every worker, so a reading is dearer than a sample.
MIN_CLUSTER_INTERVAL_S = 1.0
MAX_CLUSTER_INTERVAL_S = 60.0
# The frontend decodes JSON numbers as IEEE doubles, in which integers above
# 2**53 stop being exact, so a larger threshold could not round-trip.
MAX_THRESHOLD_BYTES = 2**53 - 1


class ConfigError(ValueError):
    """A config value outside the protocol's limits. Its message names the key."""


# Immutable records are NamedTuples, not dataclasses, because each dataclass
# costs the bootstrap about 0.5 to 1 ms to create, since it compiles its
# methods at import.
class SamplerConfig(NamedTuple):
    """The helper's sampling settings, one per kernel."""

    interval_s: float = 1.0
    change_threshold_bytes: int = 1 << 20
    heartbeat_s: float = 10.0
    # Whether torch's peak counters, and the kernel's peak RSS, are reset at
    # each cell's start, for an exact per-cell peak. Users who measure peaks
    # themselves turn it off, because the reset would overwrite their
    # measurement.
    reset_peak_per_cell: bool = True
    # Whether a Dask client or a Ray runtime the kernel already uses is looked
    # for and its telemetry read; with neither in use it costs one look into
    # sys.modules per sampler tick, so it is on unless the user turns it off.
    watch_cluster: bool = True
    cluster_interval_s: float = 2.0

    def to_dict(self) -> ConfigDict:
        return {
            "interval_s": self.interval_s,
            "change_threshold_bytes": self.change_threshold_bytes,
            "heartbeat_s": self.heartbeat_s,
            "reset_peak_per_cell": self.reset_peak_per_cell,
            "watch_cluster": self.watch_cluster,
            "cluster_interval_s": self.cluster_interval_s,
        }

    def updated(self, partial: Mapping[str, Any]) -> SamplerConfig:
        """This config with the keys of ``partial`` replaced, validated as a whole.

        It raises :class:`ConfigError` naming the first bad key. ``self`` is
        never modified, so a rejected update leaves the effective config
        unchanged.
        Unknown keys are rejected so that a typo does not pass silently.
        """
        if not isinstance(partial, Mapping):
            raise ConfigError(f"config must be an object, got {describe(partial)}")
        known = (
            "interval_s",
            "change_threshold_bytes",
            "heartbeat_s",
            "reset_peak_per_cell",
            "watch_cluster",
            "cluster_interval_s",
        )
        for key in partial:
            if key not in known:
                raise ConfigError(f"unknown config key {describe(key)} (expected one of {', '.join(known)})")
        changes: dict = {}
        if "interval_s" in partial:
            changes["interval_s"] = _seconds("interval_s", partial["interval_s"], MIN_INTERVAL_S, MAX_INTERVAL_S)
        if "change_threshold_bytes" in partial:
            changes["change_threshold_bytes"] = _byte_count("change_threshold_bytes", partial["change_threshold_bytes"])
        if "heartbeat_s" in partial:
            changes["heartbeat_s"] = _seconds("heartbeat_s", partial["heartbeat_s"], MIN_INTERVAL_S, MAX_HEARTBEAT_S)
        if "reset_peak_per_cell" in partial:
            changes["reset_peak_per_cell"] = _flag("reset_peak_per_cell", partial["reset_peak_per_cell"])
        if "watch_cluster" in partial:
            changes["watch_cluster"] = _flag("watch_cluster", partial["watch_cluster"])
        if "cluster_interval_s" in partial:
            changes["cluster_interval_s"] = _seconds(
                "cluster_interval_s", partial["cluster_interval_s"], MIN_CLUSTER_INTERVAL_S, MAX_CLUSTER_INTERVAL_S
            )
        result = self._replace(**changes)
        if result.heartbeat_s < result.interval_s:
            raise ConfigError(
                f"heartbeat_s must be at least interval_s ({_fmt(result.interval_s)}), got {_fmt(result.heartbeat_s)}"
            )
        return result

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> SamplerConfig:
        """A config made from the defaults with the keys of the partial ``data``, validated."""
        return cls().updated(data)


def _is_number(value: Any) -> bool:
    # bool is an int subclass, but `true` is not a number of seconds, so it is refused.
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _is_finite(value: Any) -> bool:
    # math.isfinite(10**400) raises OverflowError, and Python ints are always
    # finite, so ints are not passed to it.
    return isinstance(value, int) or math.isfinite(value)


def _fmt(value: float) -> str:
    return f"{value:g}"


def _seconds(key: str, value: Any, low: float, high: float) -> float:
    if not _is_number(value) or not _is_finite(value) or not low <= value <= high:
        raise ConfigError(f"{key} must be a number between {_fmt(low)} and {_fmt(high)}, got {describe(value)}")
    return float(value)


def _byte_count(key: str, value: Any) -> int:
    # 1048576.0 is accepted, because some JSON encoders produce it for integral
    # numbers, but 1.5 bytes is not.
    if not _is_number(value) or not _is_finite(value) or value != int(value) or not 0 <= value <= MAX_THRESHOLD_BYTES:
        raise ConfigError(f"{key} must be an integer between 0 and {MAX_THRESHOLD_BYTES}, got {describe(value)}")
    return int(value)


def _flag(key: str, value: Any) -> bool:
    # Only JSON true and false are accepted, so 1, "true" and null are refused.
    if not isinstance(value, bool):
        raise ConfigError(f"{key} must be true or false, got {describe(value)}")
    return value
