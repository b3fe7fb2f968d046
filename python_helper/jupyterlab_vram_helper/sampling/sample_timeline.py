"""The figures of the samples sent lately, so that a frontend that comes later has a timeline.

A page reload, a second browser tab, or a notebook opened again after an hour
away opens a new comm to a kernel whose memory has a past, while the browser
kept only what it received itself. The sampler adds here the charted figures
of every sample it sends: the time, the host RSS, and for each GPU torch's
allocated and reserved bytes and NVML's per-process figure. A ``history``
request answers with them, oldest first, in columns.

The timeline is kept small on purpose, because it lives in the measured
process. It holds one packed row of doubles per sample sent (samples are sent
only when a figure moved, or as a heartbeat), and at most
:data:`TIMELINE_ROWS` of them. That is about 80 bytes a row with one GPU, and
about 300 KiB in all. Unknown figures are NaN in a row and ``null`` in the
answer. While no comm is open the sampler reads nothing, so the time it
stopped is kept as a row with every figure unknown, and the chart shows a gap
there rather than a line across it.
"""

from __future__ import annotations

import math
import struct
from collections import deque
from typing import TYPE_CHECKING

# The message shapes in protocol_types.py are needed for annotations only.
if TYPE_CHECKING:
    from ..protocol_types import GpuFigures, HostFigures, TimelineColumns

# 3,600 rows hold an hour of samples that each moved at 1 Hz, six minutes of
# them at 10 Hz, or ten hours of heartbeats.
TIMELINE_ROWS = 3600

_NAN = float("nan")
# A row holds the time and the RSS, then for each GPU its index, torch's
# allocated and reserved bytes, and NVML's figure for this process.
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

    It is not thread-safe. The sampler adds rows under its lock, and the
    ``history`` request copies the rows under the same lock
    (:meth:`Sampler.timeline_columns`) and turns them into columns outside it.
    """

    def __init__(self, capacity: int = TIMELINE_ROWS):
        self._rows: deque[bytes] = deque(maxlen=capacity)
        # Nothing is kept yet, so there is no gap to mark.
        self._gap_open = True

    def __len__(self) -> int:
        return len(self._rows)

    def add(self, when: float, host: HostFigures, gpus: list[GpuFigures]) -> None:
        """Keep one sent sample's charted figures. ``when`` is the sample's ``time``."""
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
        """Note that no comm is open from ``when`` on, so nothing is read. The gap is
        kept as a row with every figure unknown, once per gap."""
        if self._gap_open:
            return
        self._rows.append(_layout(_HEAD).pack(when, _NAN))
        self._gap_open = True

    def rows(self) -> list[bytes]:
        """A copy of the kept rows, oldest first, for :func:`timeline_columns`."""
        return list(self._rows)


def timeline_columns(packed: list[bytes]) -> TimelineColumns:
    """Turn ``packed`` rows (from :meth:`SampleTimeline.rows`) into the ``history``
    reply's ``timeline``. It holds ``times``, ``rss_bytes`` and one entry per
    GPU seen, each with a value, or ``null``, for every time."""
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
