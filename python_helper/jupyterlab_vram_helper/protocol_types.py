"""The messages of the comm, as TypedDicts, for type checkers only.

They are generated from the protocol's JSON Schema (protocol/protocol.schema.json)
into protocol_generated.py, and this module gives them the names that the
helper's modules import. To change a message, change the schema and run
``npm run build:schema``.

The helper never imports this module at run time, only under
``typing.TYPE_CHECKING``, because creating dozens of TypedDicts, each of whose
string annotations typing compiles, would cost every kernel start several
milliseconds of its bootstrap.
"""

from __future__ import annotations

from .protocol_generated import CellError as CellError
from .protocol_generated import CellGpuLoad as CellGpuLoad
from .protocol_generated import CellGpuLoadUnavailable as CellGpuLoadUnavailable
from .protocol_generated import CellGpuMemory as CellGpuMemory
from .protocol_generated import CellHostMemory as CellHostMemory
from .protocol_generated import CellMemoryRecord as CellMemoryRecord
from .protocol_generated import CellProcessTree as CellProcessTree
from .protocol_generated import CellsMessage as CellsMessage
from .protocol_generated import ContainerMemory as ContainerFigures
from .protocol_generated import DeviceInfo as DeviceInfo
from .protocol_generated import ErrorMessage as ErrorMessage
from .protocol_generated import EstimateBreakdown as EstimateBreakdown
from .protocol_generated import EstimateCard as EstimateCard
from .protocol_generated import EstimateFailure as EstimateFailure
from .protocol_generated import EstimateMemoryRequest as EstimateMemoryRequest
from .protocol_generated import EstimateMemoryResult as EstimateMemoryResult
from .protocol_generated import EstimateProgressMessage as EstimateProgressMessage
from .protocol_generated import EstimateRow as EstimateRow
from .protocol_generated import EstimateVariant as EstimateVariant
from .protocol_generated import GpuLoad as GpuLoad
from .protocol_generated import GpuLoadUnavailable as GpuLoadUnavailable
from .protocol_generated import GpuProcessLoad as GpuProcessLoad
from .protocol_generated import GpuSample as GpuFigures
from .protocol_generated import HelloMessage as HelloMessage
from .protocol_generated import HelperConfig as ConfigDict
from .protocol_generated import HiddenGpus as HiddenGpus
from .protocol_generated import HostMemory as HostFigures
from .protocol_generated import NvmlGpuMemory as NvmlGpuFigures
from .protocol_generated import NvmlGpuProcess as NvmlProcess
from .protocol_generated import NvmlInfo as NvmlInfo
from .protocol_generated import OomCause as OomCause
from .protocol_generated import OomDataLoaderWorkers as OomDataLoaderWorkers
from .protocol_generated import OomDiagnosis as OomDiagnosis
from .protocol_generated import OomRelease as OomRelease
from .protocol_generated import OomStaleHolder as OomStaleHolder
from .protocol_generated import OomWorker as OomWorker
from .protocol_generated import ProcessTree as ProcessTree
from .protocol_generated import ProcessTreeTotals as ProcessTreeTotals
from .protocol_generated import Releasable as Releasable
from .protocol_generated import ReleasableProcess as ReleasableProcess
from .protocol_generated import ReleaseEngineResult as ReleaseEngineResult
from .protocol_generated import ReleaseOutcome as ReleaseOutcome
from .protocol_generated import ReleaseStep as ReleaseStep
from .protocol_generated import ReplyMessage as ReplyMessage
from .protocol_generated import SampleMessage as SampleMessage
from .protocol_generated import StopMemory as StopMemory
from .protocol_generated import StopProcessResult as StopProcessResult
from .protocol_generated import TensorflowGpuMemory as TensorflowGpuFigures
from .protocol_generated import TensorflowInfo as TensorflowInfo
from .protocol_generated import TensorflowState as TensorflowState
from .protocol_generated import TimelineColumns as TimelineColumns
from .protocol_generated import TimelineGpuColumns as TimelineGpuColumns
from .protocol_generated import TorchGpuMemory as TorchGpuFigures
from .protocol_generated import TorchInfo as TorchInfo
from .protocol_generated import TorchState as TorchState
from .protocol_generated import TreeGpuTotal as TreeGpuTotal
from .protocol_generated import TreeProcess as TreeProcess

__all__ = [
    "EstimateBreakdown",
    "EstimateCard",
    "EstimateFailure",
    "EstimateMemoryRequest",
    "EstimateMemoryResult",
    "EstimateProgressMessage",
    "EstimateRow",
    "EstimateVariant",
    "CellError",
    "CellGpuLoad",
    "CellGpuLoadUnavailable",
    "CellGpuMemory",
    "CellHostMemory",
    "CellMemoryRecord",
    "CellProcessTree",
    "CellsMessage",
    "ConfigDict",
    "ContainerFigures",
    "DeviceInfo",
    "ErrorMessage",
    "GpuFigures",
    "GpuLoad",
    "GpuLoadUnavailable",
    "GpuProcessLoad",
    "HelloMessage",
    "HiddenGpus",
    "HostFigures",
    "NvmlGpuFigures",
    "NvmlInfo",
    "NvmlProcess",
    "OomCause",
    "OomDataLoaderWorkers",
    "OomDiagnosis",
    "OomRelease",
    "OomStaleHolder",
    "OomWorker",
    "ProcessTree",
    "ProcessTreeTotals",
    "Releasable",
    "ReleasableProcess",
    "ReleaseEngineResult",
    "ReleaseOutcome",
    "ReleaseStep",
    "ReplyMessage",
    "SampleMessage",
    "StopMemory",
    "StopProcessResult",
    "TensorflowGpuFigures",
    "TensorflowInfo",
    "TensorflowState",
    "TimelineColumns",
    "TimelineGpuColumns",
    "TorchGpuFigures",
    "TorchInfo",
    "TorchState",
    "TreeGpuTotal",
    "TreeProcess",
]
