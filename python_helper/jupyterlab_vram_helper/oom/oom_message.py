"""Recognise an out-of-memory error from its class name and message text, and
read the numbers the message carries.

The message is the only record of the allocator's state *at the instant of
failure*: by the time the kernel reads the device again, the failing cell's
frames are gone and the numbers have moved. So the formats below follow the
libraries' own format strings, version by version:

* PyTorch's CUDA caching allocator (c10/cuda/CUDACachingAllocator.cpp):
  - <= 1.3:  ``CUDA out of memory. Tried to allocate 12.50 MiB (GPU 0; 10.92 GiB
    total capacity; 8.57 MiB already allocated; 9.28 GiB free; 4.68 MiB cached)``
  - 1.4-2.0: ``... free; [2.37 GiB allowed; ]14.73 GiB reserved in total by PyTorch)``
    (1.10+ appends a hint about max_split_size_mb)
  - 2.1:     ``... Tried to allocate 496.00 MiB. GPU 0 has a total capacty of 14.75 GiB
    of which 235.06 MiB is free. [Process 20398 has 14.52 GiB memory in use. ]
    [Including non-PyTorch memory, this process has ... memory in use. ]
    [17.69 GiB allowed; ]Of the allocated memory 14.06 GiB is allocated by PyTorch,
    [with 4.00 GiB allocated in private pools (e.g., CUDA Graphs), ]and 330.42 MiB
    is reserved by PyTorch but unallocated.`` (2.1.x spells "capacty"; 2.2 fixed
    the typo and changed the hint to expandable_segments; ROCm builds say "HIP")
  - the ``backend:cudaMallocAsync`` allocator: ``Allocation on device 0 would
    exceed allowed memory. (out of memory)`` and a table of figures.
* cuBLAS/cuDNN/cuSOLVER/cuFFT/cuSPARSE ``*_ALLOC_FAILED`` status codes (cuDNN 9:
  ``CUDNN_STATUS_INTERNAL_ERROR_DEVICE_ALLOCATION_FAILED``): a library could not
  get workspace memory (usually straight from cudaMalloc, outside PyTorch's
  cache); no numbers.
* TensorFlow: ``OOM when allocating tensor with shape[10000,10000] and type float
  on /job:localhost/replica:0/task:0/device:GPU:0 by allocator GPU_0_bfc``.
* host memory: NumPy ``Unable to allocate 7.45 GiB for an array with shape
  (1000000000,) and data type float64``, PyTorch's CPU allocator ``DefaultCPUAllocator:
  can't allocate memory: you tried to allocate 1125899906842624 bytes``, and a bare
  ``MemoryError``.
* a DataLoader worker killed by the out-of-memory killer, as torch's SIGCHLD
  handler words it (torch/csrc/DataLoader.cpp): ``DataLoader worker (pid 4312) is
  killed by signal: Killed.`` (the signal's name as ``strsignal`` gives it). Only
  SIGKILL is read as running out of host memory: it is what the kernel's
  out-of-memory killer sends; a "Bus error" is shared memory, not RAM.

Sizes are printed by PyTorch's ``format_size`` (and NumPy's ``_size_to_string``)
in 1024 multiples with two decimals ("20.00 MiB") or three significant digits
("201. GiB"), so a parsed byte count is approximate to that precision: 14.52 GiB
is known to about 5 MiB. Where the exact count can be derived (a NumPy or
TensorFlow shape and dtype), it is.

The functions here are pure: they import no framework and keep nothing. The
input is capped and every pattern is anchored on literal text with bounded
repetitions, so a megabyte of garbage costs milliseconds and never raises.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import TypedDict


class OomProcess(TypedDict):
    """A process that an out-of-memory message names, with the memory it used."""

    pid: int
    # This is None where the driver reported no figure for the process.
    used_bytes: int | None


class OomMessageFacts(TypedDict):
    """What an out-of-memory error message says, read from its text."""

    # The kind is one of the KIND_* constants below.
    kind: str
    # The CUDA library whose workspace allocation failed ("cuBLAS", "cuDNN",
    # "cuSOLVER", "cuFFT" or "cuSPARSE"), or None when no library is named.
    library: str | None
    # The framework whose allocation failed, where the message says so: one of
    # the FRAMEWORK_* constants below, or None for a bare MemoryError or a CUDA
    # library's status code. It matters because the remedies differ: a NumPy
    # array is not made smaller by mixed precision.
    framework: str | None
    # The device's index as the failing process numbers its devices, so
    # CUDA_VISIBLE_DEVICES applies to it.
    device_index: int | None
    requested_bytes: int | None
    total_bytes: int | None
    free_bytes: int | None
    allocated_bytes: int | None
    # The figure "reserved in total by PyTorch" that torch 2.0 and earlier
    # print. For torch 1.3 and earlier it is the allocated figure plus the
    # "cached" one.
    reserved_bytes: int | None
    reserved_unallocated_bytes: int | None
    # NVML's figure for this process, which torch 2.1 and later print.
    process_in_use_bytes: int | None
    # The other processes on the device as NVML lists them, which torch 2.1
    # and later print.
    other_processes: list[OomProcess]
    # The per-process memory-fraction limit, when one is set.
    allowed_bytes: int | None
    # The DataLoader workers the message says were killed, and the signal's
    # name, for that message only ([] and None otherwise).
    killed_worker_pids: list[int]
    worker_signal: str | None


# PyTorch's CUDA (or ROCm/HIP) allocator failed, or a bare cudaMalloc did.
KIND_CUDA = "cuda"
# A CUDA library could not allocate its workspace.
KIND_CUDA_LIBRARY = "cuda_library"
# TensorFlow's GPU allocator failed.
KIND_TENSORFLOW = "tensorflow"
# Host RAM ran out: a MemoryError, NumPy, PyTorch's CPU allocator, or
# TensorFlow on the CPU.
KIND_HOST = "host"
# The next two are devices whose memory the helper cannot read, since there is
# no NVML and there are no allocator figures for them, so the request that the
# message states is all there is. KIND_MPS is PyTorch on Apple's Metal (MPS),
# and KIND_XLA is JAX (XLA) on a GPU or TPU.
KIND_MPS = "mps"
KIND_XLA = "xla"

FRAMEWORK_TORCH = "torch"
FRAMEWORK_TENSORFLOW = "tensorflow"
FRAMEWORK_NUMPY = "numpy"
FRAMEWORK_JAX = "jax"

# Only this much of a message is scanned. Every format above puts its figures
# in a few hundred characters, but a wrapper may put a whole traceback before
# them (nn.DataParallel's replica errors, Keras's graph execution errors);
# what comes after this is not looked at.
MAX_SCANNED_CHARS = 65536
# At most this many processes are read from one message. NVML lists every
# process on the device, and a busy shared device could make the list long.
MAX_PROCESSES = 64
# Larger counts are not memory: NVML reports NVML_VALUE_NOT_AVAILABLE (2**64 - 1)
# for a process's usage under WSL2 and Windows WDDM, which torch prints as
# "17179869184.00 GiB". 2**60 bytes (1 EiB) is far beyond any device or host.
IMPLAUSIBLE_BYTES = 1 << 60
# A tensor shape with more dimensions than this is not a shape we trust.
MAX_SHAPE_DIMS = 64

_UNIT_BYTES = {
    "bytes": 1,
    # Torch's MPS allocator prints "KB", "MB" and "GB" but divides by 1024, so
    # these units are read as powers of 1024 too.
    "KB": 1 << 10,
    "MB": 1 << 20,
    "GB": 1 << 30,
    "TB": 1 << 40,
    "PB": 1 << 50,
    "EB": 1 << 60,
}

# Messages are sometimes re-wrapped when they are quoted, so a space in a
# pattern stands for a short run of any whitespace.
_WS = r"\s{1,6}"
# A size starts where a number starts: the look-behind keeps a long run of
# digits from being tried at every position inside it.
_SIZE = r"(?<![\d.])(\d{1,24}(?:\.\d{0,6})?)\s?(bytes|[KMGTPE]i?B)\b"


def _rx(pattern: str, flags: int = 0) -> re.Pattern[str]:
    """Compile ``pattern`` with every single space standing for a short run of whitespace."""
    return re.compile(pattern.replace(" ", _WS), flags)


# --- PyTorch caching allocator (CUDA and HIP) -------------------------------------------
_TORCH_OOM = _rx(r"\b(?:CUDA|HIP) out of memory")
_REQUESTED = _rx(r"Tried to allocate " + _SIZE)
# These read the wording of torch 2.1 and later.
_NEW_DEVICE = _rx(r"\bGPU (\d{1,4}) has a total capac")
# Torch 2.1.x spells the word "capacty", so the "i" is optional.
_NEW_TOTAL = _rx(r"total capaci?ty of " + _SIZE)
_NEW_FREE = _rx(r"of which " + _SIZE + r" is free")
_NEW_ALLOCATED = _rx(r"Of the allocated memory " + _SIZE + r" is allocated by PyTorch")
_NEW_RESERVED_UNALLOCATED = _rx(_SIZE + r" is reserved by PyTorch but unallocated")
_THIS_PROCESS = _rx(r"this process has " + _SIZE + r" memory in use")
_OTHER_PROCESS = _rx(r"\bProcess (\d{1,10}) has " + _SIZE + r" memory in use")
# These read the wording of torch 2.0 and earlier.
_OLD_DEVICE = _rx(r"\(GPU (\d{1,4});")
_OLD_TOTAL = _rx(_SIZE + r" total capacity")
_OLD_ALLOCATED = _rx(_SIZE + r" already allocated")
_OLD_FREE = _rx(_SIZE + r" free;")
# The case is ignored because R's torch package prints "Pytorch".
_OLD_RESERVED = _rx(_SIZE + r" reserved in total by PyTorch", re.IGNORECASE)
# Torch 1.3 and earlier print a "cached" figure, which is the reserved memory
# minus the allocated memory.
_OLD_CACHED = _rx(_SIZE + r" cached\)")
# Both wordings print "X allowed; ". Torch 2.0 and earlier put it before the
# reserved figure, and later versions put it before "Of the allocated memory".
_ALLOWED = _rx(_SIZE + r" allowed;")

# --- PyTorch's cudaMallocAsync backend ---------------------------------------------------
_ASYNC_OOM = _rx(r"Allocation on device(?: (\d{1,4}))?(?: would exceed allowed memory)?")
_ASYNC_ALLOCATED = _rx(r"Currently allocated\s{0,40}: " + _SIZE)
_ASYNC_REQUESTED = _rx(r"\bRequested\s{0,40}: " + _SIZE)
_ASYNC_TOTAL = _rx(r"Device limit\s{0,40}: " + _SIZE)
_ASYNC_FREE = _rx(r"Free \(according to CUDA\)\s{0,40}: " + _SIZE)
_ASYNC_ALLOWED = _rx(r"PyTorch limit \(set by user-supplied memory fraction\)\s{0,40}: " + _SIZE)

# --- CUDA libraries ----------------------------------------------------------------------
_LIBRARY_TOKENS: tuple[tuple[str, str], ...] = (
    ("CUBLAS_STATUS_ALLOC_FAILED", "cuBLAS"),
    ("CUDNN_STATUS_ALLOC_FAILED", "cuDNN"),
    ("CUSOLVER_STATUS_ALLOC_FAILED", "cuSOLVER"),
    ("CUFFT_ALLOC_FAILED", "cuFFT"),
    ("CUSPARSE_STATUS_ALLOC_FAILED", "cuSPARSE"),
    # cuDNN 9, which PyTorch 2.3 and later use, renamed the status.
    ("CUDNN_STATUS_INTERNAL_ERROR_DEVICE_ALLOCATION_FAILED", "cuDNN"),
)
# This cuDNN 9 status means that cuDNN could not get host memory, so it is host
# RAM that ran out, not the device's memory.
_LIBRARY_HOST_TOKEN = "CUDNN_STATUS_INTERNAL_ERROR_HOST_ALLOCATION_FAILED"

# --- TensorFlow --------------------------------------------------------------------------
_TF_OOM = _rx(
    r"OOM when allocating tensor (?:with|of) shape\s?\[([0-9,\s]{0,600})\]"
    r"(?: and type (\w{1,32}))?(?: on (\S{1,200}))?(?: by allocator (\w{1,64}))?"
)
_TF_DEVICE = re.compile(r"(?:device:|/)(?:XLA_)?(GPU|CPU|gpu|cpu):(\d{1,4})")
_TF_ALLOCATOR_DEVICE = re.compile(r"^GPU_(\d{1,4})_")
# TensorFlow's DataTypeString names and their sizes.
_TF_DTYPE_BYTES = {
    "float": 4,
    "double": 8,
    "half": 2,
    "bfloat16": 2,
    "int8": 1,
    "int16": 2,
    "int32": 4,
    "int64": 8,
    "uint8": 1,
    "uint16": 2,
    "uint32": 4,
    "uint64": 8,
    "bool": 1,
    "complex64": 8,
    "complex128": 16,
    "qint8": 1,
    "quint8": 1,
    "qint16": 2,
    "quint16": 2,
    "qint32": 4,
    "float8_e5m2": 1,
    "float8_e4m3fn": 1,
}

# --- host --------------------------------------------------------------------------------
# NumPy >= 1.18 prints the size; 1.17 printed "Unable to allocate array with shape".
_NUMPY = _rx(
    r"Unable to allocate (?:" + _SIZE + r" for an array|array) with shape "
    r"\(([0-9,\s]{0,600})\) and data type ([\w<>|=\[\]]{1,40})"
)
_NUMPY_DTYPE_BYTES = {
    "bool": 1,
    "int8": 1,
    "uint8": 1,
    "byte": 1,
    "ubyte": 1,
    "int16": 2,
    "uint16": 2,
    "float16": 2,
    "half": 2,
    "int32": 4,
    "uint32": 4,
    "float32": 4,
    "single": 4,
    "int64": 8,
    "uint64": 8,
    "float64": 8,
    "double": 8,
    "complex64": 8,
    "object": 8,
    "complex128": 16,
    "float128": 16,
    "longdouble": 16,
    "complex256": 32,
}
_NUMPY_SIZED_DTYPE = re.compile(r"^(?:datetime64|timedelta64)(?:\[\w{1,4}\])?$")
_CPU_ALLOCATOR = _rx(
    r"DefaultCPUAllocator: (?:can't allocate memory|not enough memory): "
    r"you tried to allocate (\d{1,24})\s?bytes"
)

# --- devices the helper cannot read --------------------------------------------------
# PyTorch's MPS allocator (MPSAllocator.mm in torch/csrc/mps) words its error as
# "MPS backend out of memory (MPS allocated: 1.2 GB, other allocations: 2 MB,
# max allowed: 18.13 GB). Tried to allocate 256.00 MB on private pool."
_MPS_OOM = _rx(r"MPS backend out of memory")
_MPS_ALLOCATED = _rx(r"MPS allocated: " + _SIZE)
_MPS_ALLOWED = _rx(r"max allowed: " + _SIZE)
# XLA, as JAX uses it, words its error as "RESOURCE_EXHAUSTED: Out of memory
# while trying to allocate 17179869184 bytes."
_XLA_OOM = _rx(r"RESOURCE_EXHAUSTED: Out of memory (?:while trying to allocate|allocating) (\d{1,24}) bytes")

# --- a device allocation that failed with no figures -------------------------------------
_BARE_DEVICE_OOM = _rx(
    r"(?:CUDA error: out of memory|CUDA driver error: out of memory|"
    r"cuda runtime error \(2\) : out of memory|CUDA_ERROR_OUT_OF_MEMORY|cudaErrorMemoryAllocation|"
    r"HIP error: out of memory|hipErrorOutOfMemory|"
    r"CUDA ran out of memory outside PyTorch's allocator)"
)

_HOST_TYPES = frozenset({"MemoryError", "_ArrayMemoryError"})

# --- a DataLoader worker the out-of-memory killer took ---------------------------------
_WORKER_KILLED = _rx(r"DataLoader worker \(pid (\d{1,10})\) is killed by signal: (Killed)\b")


def parse_oom_message(type_name: str, message: str) -> OomMessageFacts | None:
    """The facts an out-of-memory error states, or None if it is not one.

    ``type_name`` is the exception's class name (qualified or not:
    "OutOfMemoryError", "torch.OutOfMemoryError", "RuntimeError", "MemoryError",
    "ResourceExhaustedError"); ``message`` is ``str(exception)``.
    """
    try:
        return _parse(str(type_name or ""), str(message or ""))
    except Exception:
        # A diagnosis aid must never add a second error to the first.
        return None


def _parse(type_name: str, message: str) -> OomMessageFacts | None:
    short_type = type_name.rsplit(".", 1)[-1]
    text = message[:MAX_SCANNED_CHARS]
    readers = (_torch_allocator, _async_allocator, _cuda_library, _tensorflow, _numpy, _cpu_allocator, _mps, _xla)
    for reader in (*readers, _worker_killed):
        facts = reader(text, short_type)
        if facts is not None:
            return facts
    if _BARE_DEVICE_OOM.search(text):
        return _facts(KIND_CUDA)
    if short_type in _HOST_TYPES:
        return _facts(KIND_HOST)
    return None


def _facts(kind: str, library: str | None = None, framework: str | None = None) -> OomMessageFacts:
    return {
        "kind": kind,
        "library": library,
        "framework": framework,
        "device_index": None,
        "requested_bytes": None,
        "total_bytes": None,
        "free_bytes": None,
        "allocated_bytes": None,
        "reserved_bytes": None,
        "reserved_unallocated_bytes": None,
        "process_in_use_bytes": None,
        "other_processes": [],
        "allowed_bytes": None,
        "killed_worker_pids": [],
        "worker_signal": None,
    }


def _torch_allocator(text: str, type_name: str) -> OomMessageFacts | None:
    if "out of memory" not in text or _TORCH_OOM.search(text) is None:
        return None
    facts = _facts(KIND_CUDA, framework=FRAMEWORK_TORCH)
    facts["requested_bytes"] = _size(_REQUESTED, text)
    facts["allowed_bytes"] = _size(_ALLOWED, text)
    if _new_torch_format(text):
        facts["device_index"] = _int(_NEW_DEVICE, text)
        facts["total_bytes"] = _size(_NEW_TOTAL, text)
        facts["free_bytes"] = _size(_NEW_FREE, text)
        facts["allocated_bytes"] = _size(_NEW_ALLOCATED, text)
        facts["reserved_unallocated_bytes"] = _size(_NEW_RESERVED_UNALLOCATED, text)
        facts["process_in_use_bytes"] = _size(_THIS_PROCESS, text)
        facts["other_processes"] = list(_processes(text))
    else:
        # This is the wording of torch 2.0 and earlier.
        facts["device_index"] = _int(_OLD_DEVICE, text)
        facts["total_bytes"] = _size(_OLD_TOTAL, text)
        facts["free_bytes"] = _size(_OLD_FREE, text)
        allocated = facts["allocated_bytes"] = _size(_OLD_ALLOCATED, text)
        reserved = _size(_OLD_RESERVED, text)
        cached = _size(_OLD_CACHED, text)
        if reserved is None and cached is not None and allocated is not None:
            # Torch 1.3 and earlier printed "cached" for what the allocator
            # held but had not allocated, so the reserved total is the sum.
            reserved = allocated + cached
        facts["reserved_bytes"] = reserved
        if cached is not None:
            facts["reserved_unallocated_bytes"] = cached
        elif allocated is not None and reserved is not None:
            facts["reserved_unallocated_bytes"] = max(0, reserved - allocated)
    return facts


def _new_torch_format(text: str) -> bool:
    """Whether ``text`` is the caching allocator's message as torch 2.1 and later word it."""
    return _NEW_TOTAL.search(text) is not None or "Of the allocated memory" in text


def old_torch_message(message: str) -> bool:
    """Whether ``message`` is PyTorch's caching allocator's message in the format
    of torch 2.0 and earlier, which torch 2.1 changed.

    If it is, the torch that raised it predates the allocator options that 2.1
    added, such as expandable_segments, so advice to use them would not apply.
    """
    try:
        text = str(message or "")[:MAX_SCANNED_CHARS]
        return (
            _TORCH_OOM.search(text) is not None
            and not _new_torch_format(text)
            and (_OLD_TOTAL.search(text) is not None or _OLD_RESERVED.search(text) is not None)
        )
    except Exception:
        return False


def _async_allocator(text: str, type_name: str) -> OomMessageFacts | None:
    if "Allocation on device" not in text:
        return None
    match = _ASYNC_OOM.search(text)
    # The phrase "Allocation on device" alone is too common, so the message must
    # also say that it would exceed the allowed memory, or the error must be
    # raised as an out-of-memory error.
    if match is None or ("would exceed allowed memory" not in text and not type_name.endswith("OutOfMemoryError")):
        return None
    facts = _facts(KIND_CUDA, framework=FRAMEWORK_TORCH)
    facts["device_index"] = int(match.group(1)) if match.group(1) is not None else None
    facts["allocated_bytes"] = _size(_ASYNC_ALLOCATED, text)
    facts["requested_bytes"] = _size(_ASYNC_REQUESTED, text)
    facts["total_bytes"] = _size(_ASYNC_TOTAL, text)
    facts["free_bytes"] = _size(_ASYNC_FREE, text)
    # Without a fraction set the limit is printed as 2**64 - 1, which _size drops.
    facts["allowed_bytes"] = _size(_ASYNC_ALLOWED, text)
    return facts


def _cuda_library(text: str, type_name: str) -> OomMessageFacts | None:
    if "ALLOC_FAILED" not in text and "ALLOCATION_FAILED" not in text:
        return None
    if _LIBRARY_HOST_TOKEN in text:
        return _facts(KIND_HOST)
    for token, library in _LIBRARY_TOKENS:
        if token in text:
            return _facts(KIND_CUDA_LIBRARY, library)
    return None


def _tensorflow(text: str, type_name: str) -> OomMessageFacts | None:
    if "OOM when allocating tensor" not in text:
        return None
    match = _TF_OOM.search(text)
    if match is None:
        return None
    shape, dtype, device, allocator = match.groups()
    index: int | None = None
    on_cpu = False
    device_match = _TF_DEVICE.search(device or "")
    if device_match is not None:
        on_cpu = device_match.group(1).lower() == "cpu"
        index = int(device_match.group(2))
    elif allocator is not None:
        allocator_match = _TF_ALLOCATOR_DEVICE.search(allocator)
        if allocator_match is not None:
            index = int(allocator_match.group(1))
        on_cpu = allocator.lower() == "cpu"
    # TensorFlow placed on the CPU exhausts host RAM, so it is diagnosed as host
    # memory.
    facts = _facts(KIND_HOST if on_cpu else KIND_TENSORFLOW, framework=FRAMEWORK_TENSORFLOW)
    facts["device_index"] = None if on_cpu else index
    elements = _elements(shape)
    itemsize = _TF_DTYPE_BYTES.get(dtype or "")
    if elements is not None and itemsize is not None:
        facts["requested_bytes"] = _plausible(elements * itemsize)
    return facts


def _numpy(text: str, type_name: str) -> OomMessageFacts | None:
    if "Unable to allocate" not in text:
        return None
    match = _NUMPY.search(text)
    if match is None:
        return None
    number, unit, shape, dtype = match.groups()
    facts = _facts(KIND_HOST, framework=FRAMEWORK_NUMPY)
    elements = _elements(shape)
    itemsize = _numpy_itemsize(dtype)
    if elements is not None and itemsize is not None:
        # The shape and dtype give the exact count, unlike the rounded size
        # that the message prints.
        facts["requested_bytes"] = _plausible(elements * itemsize)
    elif number is not None:
        facts["requested_bytes"] = _to_bytes(number, unit)
    return facts


def _cpu_allocator(text: str, type_name: str) -> OomMessageFacts | None:
    if "DefaultCPUAllocator" not in text:
        return None
    match = _CPU_ALLOCATOR.search(text)
    if match is None:
        return None
    facts = _facts(KIND_HOST, framework=FRAMEWORK_TORCH)
    facts["requested_bytes"] = _plausible(int(match.group(1)))
    return facts


def _mps(text: str, type_name: str) -> OomMessageFacts | None:
    if "MPS backend" not in text or _MPS_OOM.search(text) is None:
        return None
    facts = _facts(KIND_MPS, framework=FRAMEWORK_TORCH)
    facts["requested_bytes"] = _size(_REQUESTED, text)
    facts["allocated_bytes"] = _size(_MPS_ALLOCATED, text)
    facts["allowed_bytes"] = _size(_MPS_ALLOWED, text)
    return facts


def _xla(text: str, type_name: str) -> OomMessageFacts | None:
    if "RESOURCE_EXHAUSTED" not in text:
        return None
    match = _XLA_OOM.search(text)
    if match is None:
        return None
    facts = _facts(KIND_XLA, framework=FRAMEWORK_JAX)
    facts["requested_bytes"] = _plausible(int(match.group(1)))
    return facts


def _worker_killed(text: str, type_name: str) -> OomMessageFacts | None:
    if "DataLoader worker" not in text:
        return None
    pids = []
    signal = None
    for n, match in enumerate(_WORKER_KILLED.finditer(text)):
        if n >= MAX_PROCESSES:
            break
        pids.append(int(match.group(1)))
        signal = match.group(2)
    if not pids:
        return None
    facts = _facts(KIND_HOST, framework=FRAMEWORK_TORCH)
    facts["killed_worker_pids"] = pids
    facts["worker_signal"] = signal
    return facts


def _processes(text: str) -> Iterable[OomProcess]:
    for n, match in enumerate(_OTHER_PROCESS.finditer(text)):
        if n >= MAX_PROCESSES:
            return
        yield {"pid": int(match.group(1)), "used_bytes": _to_bytes(match.group(2), match.group(3))}


def _size(pattern: re.Pattern[str], text: str) -> int | None:
    match = pattern.search(text)
    return None if match is None else _to_bytes(match.group(1), match.group(2))


def _int(pattern: re.Pattern[str], text: str) -> int | None:
    match = pattern.search(text)
    return None if match is None else int(match.group(1))


def _to_bytes(number: str, unit: str) -> int | None:
    """The bytes in a printed size ("20.00 MiB", "201. GiB", "0 bytes"), as exact as
    the printed precision allows, or None for an unknown unit or an implausible
    count."""
    multiple = _UNIT_BYTES.get(unit.replace("i", ""))
    if multiple is None:
        return None
    return _plausible(round(float(number) * multiple))


def _plausible(n: int) -> int | None:
    return n if 0 <= n < IMPLAUSIBLE_BYTES else None


def _elements(shape: str | None) -> int | None:
    """The number of elements in a printed shape such as "10000,10000",
    "1000000000," or "" (a scalar), or None when the shape has too many
    dimensions or an implausible count."""
    if shape is None:
        return None
    dims = [d for d in re.split(r"[,\s]+", shape.strip()) if d]
    if len(dims) > MAX_SHAPE_DIMS:
        return None
    count = 1
    for d in dims:
        count *= int(d)
        if count >= IMPLAUSIBLE_BYTES:
            return None
    return count


def _numpy_itemsize(dtype: str) -> int | None:
    """The bytes per element of a NumPy dtype as its message prints it ("float64",
    "<U10", "|S5"), or None for a dtype whose size is not known here."""
    name = dtype.lstrip("<>|=")
    if name in _NUMPY_DTYPE_BYTES:
        return _NUMPY_DTYPE_BYTES[name]
    if _NUMPY_SIZED_DTYPE.match(name):
        return 8
    match = re.match(r"^([USV])(\d{1,9})$", name)
    # A "U" dtype counts UCS-4 characters of 4 bytes each, while "S" and "V"
    # count bytes.
    if match is not None:
        return int(match.group(2)) * (4 if match.group(1) == "U" else 1)
    return None
