"""The figures of the samples sent lately, so that a frontend that comes later has a timeline.

A page reload, a second browser tab or a notebook opened again after an hour
away opens a new comm to a kernel whose memory has a past: the browser kept
only what it received itself. The sampler adds here the charted figures of
every sample it sends (time, host RSS, and per GPU torch's allocated and
reserved bytes and NVML's per-process figure); a ``history`` request answers
with them, oldest first, in columns.

Kept small on purpose (it lives in the measured process): one packed row of
doubles per sample sent (samples are sent only when a figure moved, or as a
heartbeat), at most :data:`TIMELINE_ROWS` of them: about 80 bytes a row with
one GPU, about 300 KiB in all. Unknown figures are NaN in a row and ``null``
in the answer. While no comm is open the sampler reads nothing: the time it
stopped is kept as a row with every figure unknown, so the chart shows a gap
there rather than a line across it.
"""

from __future__ import annotations

import math
import struct
from collections import deque
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the message shapes, for annotations only (protocol_types.py)
    from ..protocol_types import GpuFigures, HostFigures, TimelineColumns

# 3,600 rows: an hour of samples that each moved at 1 Hz, six minutes at
# 10 Hz, ten hours of heartbeats.
TIMELINE_ROWS = 3600

_NAN = float("nan")
# A row: time, RSS, then (index, allocated, reserved, NVML process) per GPU.
_HEAD = 2
_PER_GPU = 4
_layouts: dict[int, struct.Struct] = {}


def _layout(values: int) -> struct.Struct:
    layout = _layouts.get(values)
    if layout is None:
        layout = _layouts[values] = struct.Struct(f"<{values}d")
    return layout


def _known(value: int | None) -> float:
    return _NAN if value is None else float(value)


def _json_number(value: float) -> int | None:
    return None if math.isnan(value) else int(value)


class SampleTimeline:
    """The charted figures of the last :data:`TIMELINE_ROWS` samples sent.

    Not thread-safe: the sampler adds under its lock, and the ``history``
    request copies the rows under the same lock (:meth:`Sampler.timeline_columns`)
    and turns them into columns outside it.
    """

    def __init__(self, capacity: int = TIMELINE_ROWS):
        self._rows: deque[bytes] = deque(maxlen=capacity)
        self._gap_open = True  # nothing kept yet: no gap to mark

    def __len__(self) -> int:
        return len(self._rows)

    def add(self, when: float, host: HostFigures, gpus: list[GpuFigures]) -> None:
        """Keep one sent sample's charted figures (``when``: the sample's ``time``)."""
        values: list[float] = [when, _known(host.get("rss_bytes"))]
        for gpu in gpus:
            torch = gpu.get("torch")
            nvml = gpu.get("nvml")
            values.append(float(gpu["index"]))
            if torch is None:
                values.append(_NAN)
                values.append(_NAN)
            else:
                values.append(_known(torch.get("allocated_bytes")))
                values.append(_known(torch.get("reserved_bytes")))
            values.append(_NAN if nvml is None else _known(nvml.get("process_used_bytes")))
        self._rows.append(_layout(len(values)).pack(*values))
        self._gap_open = False

    def mark_gap(self, when: float) -> None:
        """No comm is open from ``when`` on, so nothing is read: a row with every figure unknown."""
        if self._gap_open:
            return
        self._rows.append(_layout(_HEAD).pack(when, _NAN))
        self._gap_open = True

    def rows(self) -> list[bytes]:
        """A copy of the kept rows, oldest first, for :func:`timeline_columns`."""
        return list(self._rows)


def timeline_columns(packed: list[bytes]) -> TimelineColumns:
    """``packed`` rows (:meth:`SampleTimeline.rows`) as the ``history`` reply's ``timeline``:
    ``times``, ``rss_bytes`` and one entry per GPU seen, each with a value (or ``null``) per time."""
    rows = [_layout(len(row) // 8).unpack(row) for row in packed]
    count = len(rows)
    times: list[float] = []
    rss: list[int | None] = []
    gpus: dict[int, list[list[int | None]]] = {}
    for i, row in enumerate(rows):
        times.append(row[0])
        rss.append(_json_number(row[1]))
        for start in range(_HEAD, len(row), _PER_GPU):
            index = int(row[start])
            columns = gpus.get(index)
            if columns is None:
                columns = gpus[index] = [[None] * count, [None] * count, [None] * count]
            columns[0][i] = _json_number(row[start + 1])
            columns[1][i] = _json_number(row[start + 2])
            columns[2][i] = _json_number(row[start + 3])
    return {
        "times": times,
        "rss_bytes": rss,
        "gpus": [
            {
                "index": index,
                "allocated_bytes": columns[0],
                "reserved_bytes": columns[1],
                "process_used_bytes": columns[2],
            }
            for index, columns in sorted(gpus.items())
        ],
    }
